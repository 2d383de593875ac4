package file

import (
	"context"

	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// leaseOut is what a lease action returns: the lease package's result
// (status, lease ID and time to answer with) and the stored file (e) or
// share (sh), whose ETag and Last-Modified a lease action does not
// change.
type leaseOut struct {
	res lease.Result
	e   *Entry
	sh  *Share
}

// leaseFile applies lease action lr to c's file in one transaction
// (Lease File,
// https://learn.microsoft.com/en-us/rest/api/storageservices/lease-file):
// the file must exist (404 ResourceNotFound and resolve's errors), the
// live SMB opens' share modes are checked as for every REST operation
// (handle.OpLeaseFileAcquire: 409 SharingViolation while an open has
// Write or Delete access; handle.OpLeaseFileOther for the other actions;
// 409 DeletePending), then lease.Apply decides the action against the
// stored lease (kind File). The lease request's own ID is lr's, not a
// write's lease check (admit). ETag and Last-Modified stay.
func (d domain) leaseFile(ctx context.Context, c *caller, lr lease.Request) (leaseOut, error) {
	op := handle.OpLeaseFileOther
	if lr.Action == lease.ActionAcquire {
		op = handle.OpLeaseFileAcquire
	}
	var out leaseOut
	err := d.s.store.Update(ctx, func(tx kv.Tx) error {
		now := d.now(c)
		t, err := d.load(tx, now, c, false)
		if err != nil {
			return err
		}
		e := t.e
		if err := handlesAt(tx, now, c.acct, c.share, c.snap, e, op); err != nil {
			return err
		}
		res, err := lease.Apply(e.Lease, lr, lease.File, now)
		if err != nil {
			return err
		}
		e.Lease = res.Lease
		out = leaseOut{res: res, e: e}
		return putEntry(tx, c.acct, c.share, "", e)
	})
	return out, err
}

// leaseShare applies lease action lr to c's share, or its snapshot, in
// one transaction (Lease Share,
// https://learn.microsoft.com/en-us/rest/api/storageservices/lease-share):
// the container lease state machine (15–60 s or infinite, renew, break
// periods) with the …WithShareOperation codes (lease.Apply, kind Share).
// ETag and Last-Modified stay.
func (d domain) leaseShare(ctx context.Context, c *caller, lr lease.Request) (leaseOut, error) {
	var out leaseOut
	sh, err := d.updateShare(ctx, c, false, func(_ kv.Tx, sh *Share) error {
		res, err := lease.Apply(sh.Lease, lr, lease.Share, d.now(c))
		sh.Lease = res.Lease
		out.res = res
		return err
	})
	out.sh = sh
	return out, err
}
