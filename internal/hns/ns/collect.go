package ns

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Reclaim is called by Collect, inside the collector's transaction, with
// the content reference of every file that is gone (deleted, replaced, or
// inside a deleted directory): the Blob layer releases what it refers to
// in the same transaction, so a crash leaves both or neither done.
type Reclaim func(tx kv.Tx, ref []byte) error

// CollectBatch is how many records one collector transaction removes.
const CollectBatch = 256

// Collect reclaims detached nodes until none is left: each step is one
// transaction that takes the first garbage record, removes up to batch of
// the children still keyed under it (a child directory becomes a garbage
// record of its own, a child file's content goes to reclaim), and removes
// the record itself once it has no children. A crash between steps leaves
// a consistent state that the next Collect continues from: a garbage
// record stays until the last of its children is gone.
//
// Nothing reachable is reclaimed: a garbage record is written in the
// transaction that removes the entry naming its node (Delete, Rename and
// Create over an existing item, DeleteFilesystem), node ids are random
// 128-bit values never reused, and no operation can add a child to a node
// that is not reachable from its filesystem's root (they all find the
// parent by walking from the root in the same transaction).
//
// Files whose expiry has passed are removed first, through the expiry
// index (expireStep): they are already gone for every operation, and
// their records and content are reclaimed here without waiting for their
// name to be reused or their directory to be deleted. Soft-deleted paths
// whose retention has ended become garbage records next (retainStep).
//
// It returns the number of transactions that changed something.
func (s *Namespace) Collect(ctx context.Context, store kv.Store, batch int, reclaim Reclaim) (int, error) {
	steps := 0
	for {
		if err := ctx.Err(); err != nil {
			return steps, err
		}
		did, err := s.CollectStep(ctx, store, batch, reclaim)
		if err != nil {
			return steps, err
		}
		if !did {
			return steps, nil
		}
		steps++
	}
}

// CollectStep runs one transaction of Collect; false when there was
// nothing to do. The background reclaimer (internal/reclaim) calls it
// step by step.
func (s *Namespace) CollectStep(ctx context.Context, store kv.Store, batch int, reclaim Reclaim) (bool, error) {
	if batch <= 0 {
		batch = CollectBatch
	}
	var did bool
	now := s.now()
	err := store.Update(ctx, func(tx kv.Tx) error {
		var err error
		if did, err = expireStep(tx, now, batch, reclaim); err != nil || did {
			return err
		}
		if did, err = retainStep(tx, now, batch); err != nil || did {
			return err
		}
		did, err = collectStep(tx, batch, reclaim)
		return err
	})
	return did, err
}

// collectStep does one step of Collect in tx; false when there was no
// garbage.
func collectStep(tx kv.Tx, batch int, reclaim Reclaim) (bool, error) {
	p := kv.Key("dlg")
	var gk []byte
	var g garbage
	var derr error
	if err := tx.Scan(p, kv.PrefixEnd(p), 1, false, func(k, v []byte) bool {
		gk = append([]byte(nil), k...)
		derr = kv.DecodeJSON(k, v, &g)
		return false
	}); err != nil {
		return false, err
	}
	if derr != nil {
		return false, derr
	}
	if gk == nil {
		return false, nil
	}
	parts, ok := kv.Split(gk)
	if !ok || len(parts) != 3 {
		return false, errBadKey(gk)
	}
	acct, id := parts[1], []byte(parts[2])
	if !g.Dir {
		if len(g.Ref) > 0 && reclaim != nil {
			if err := reclaim(tx, g.Ref); err != nil {
				return false, err
			}
		}
		if err := forget(tx, acct, id, nil); err != nil {
			return false, err
		}
		return true, tx.Delete(gk)
	}
	ns := &Namespace{}
	kids, err := ns.children(tx, FS{Account: acct}, &Node{ID: id}, "", batch)
	if err != nil {
		return false, err
	}
	for _, k := range kids {
		switch {
		case k.node.Dir:
			if err := kv.PutJSON(tx, garbageKey(acct, k.node.ID), garbage{Dir: true}); err != nil {
				return false, err
			}
		case len(k.node.Ref) > 0 && reclaim != nil:
			if err := reclaim(tx, k.node.Ref); err != nil {
				return false, err
			}
		}
		if !k.node.Dir {
			if err := forget(tx, acct, k.node.ID, k.node); err != nil {
				return false, err
			}
		}
		if err := tx.Delete(k.key); err != nil {
			return false, err
		}
	}
	if len(kids) < batch {
		if err := forget(tx, acct, id, nil); err != nil {
			return false, err
		}
		if err := tx.Delete(gk); err != nil {
			return false, err
		}
	}
	return true, nil
}

// expireStep removes up to batch files whose expiry is at or before now,
// reading the expiry index from its start; false when no entry was due.
// An entry whose key no longer holds that node, expired at now (renamed,
// replaced, deleted, or given another expiry), is dropped alone.
func expireStep(tx kv.Tx, now time.Time, batch int, reclaim Reclaim) (bool, error) {
	p := kv.Key("dlx")
	end := kv.Key("dlx", fmt.Sprintf("%016x", now.UnixNano()+1))
	type due struct{ key, at []byte }
	var todo []due
	if err := tx.Scan(p, end, batch, false, func(k, v []byte) bool {
		todo = append(todo, due{key: bytes.Clone(k), at: bytes.Clone(v)})
		return true
	}); err != nil {
		return false, err
	}
	for _, d := range todo {
		parts, ok := kv.Split(d.key)
		if !ok || len(parts) != 4 {
			return false, errBadKey(d.key)
		}
		v, err := tx.Get(d.at)
		if err != nil && !errors.Is(err, kv.ErrNotFound) {
			return false, err
		}
		if err == nil {
			var n Node
			if err := kv.DecodeJSON(d.at, v, &n); err != nil {
				return false, err
			}
			if string(n.ID) == parts[3] && n.Expired(now) {
				if len(n.Ref) > 0 && reclaim != nil {
					if err := reclaim(tx, n.Ref); err != nil {
						return false, err
					}
				}
				if err := tx.Delete(d.at); err != nil {
					return false, err
				}
				if err := forget(tx, parts[2], n.ID, &n); err != nil {
					return false, err
				}
			}
		}
		if err := tx.Delete(d.key); err != nil {
			return false, err
		}
	}
	return len(todo) > 0, nil
}

// Garbage reports how many garbage records are waiting (for tests and
// metrics).
func Garbage(tx kv.Tx) (int, error) {
	p := kv.Key("dlg")
	n := 0
	err := tx.Scan(p, kv.PrefixEnd(p), 0, false, func(_, _ []byte) bool { n++; return true })
	return n, err
}
