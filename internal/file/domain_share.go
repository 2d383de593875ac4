package file

import (
	"context"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// readShare loads c's share (or snapshot) for a read by an operation the
// share lease does not gate: a lease ID, when sent, must match
// (shareLeaseRead).
func (d domain) readShare(ctx context.Context, c *caller) (*Share, error) {
	var sh *Share
	err := d.s.store.View(ctx, func(tx kv.Tx) (err error) {
		sh, err = loadShare(tx, c.acct, c.share, c.snap)
		return err
	})
	if err != nil {
		return nil, err
	}
	return sh, shareLeaseRead(sh, c)
}

// updateShare is the read-modify-write of c's share (or snapshot)
// record in one transaction; fn edits it and applies the lease rule.
// With touch the write gets a new ETag and Last-Modified (lease actions
// do not).
func (d domain) updateShare(ctx context.Context, c *caller, touch bool, fn func(tx kv.Tx, sh *Share) error) (*Share, error) {
	var sh *Share
	err := d.s.store.Update(ctx, func(tx kv.Tx) (err error) {
		sh, err = loadShare(tx, c.acct, c.share, c.snap)
		if err != nil {
			return err
		}
		if err := fn(tx, sh); err != nil {
			return err
		}
		if touch {
			now := d.now(c)
			sh.Modified, sh.ETag = now, newETag(now)
		}
		return kv.PutJSON(tx, shareKey(c.acct, c.share, c.snap), sh)
	})
	return sh, err
}
