package ns

import (
	"context"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

const testLease = "c3b5a0e2-6a43-4d2f-9a51-0c7f6f0d1a11"

func wantAz(t testing.TB, err error, code string) {
	t.Helper()
	if e, ok := azerr.As(err); !ok || e.Code != code {
		t.Fatalf("error %v, want %s", err, code)
	}
}

// TestLeaseGuardsWrites: a node's lease, taken through Modify (which
// keeps the ETag), is checked by Set, Delete, Rename (source and
// destination) and Create over the item, with the Blob lease rules, kept
// across a write, and lapses on the clock.
func TestLeaseGuardsWrites(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.mkfile("f", "rf")
		e.mkfile("g", "rg")
		before, _ := e.lookup("f")
		acquire := func(p string) {
			e.update(func(tx kv.Tx) error {
				_, err := e.ns.Modify(tx, e.fs, p, nil, 0, func(n *Node, now time.Time) error {
					d := 15
					res, err := lease.Apply(n.Lease, lease.Request{Action: lease.ActionAcquire, ProposedID: testLease, Duration: &d}, lease.Blob, now)
					n.Lease = res.Lease
					return err
				})
				return err
			})
		}
		acquire("f")
		acquire("g")
		after, _ := e.lookup("f")
		if after.ETag != before.ETag || !after.Lease.Active(e.clk.Now()) {
			t.Fatalf("after Modify: etag %s → %s, lease %+v", before.ETag, after.ETag, after.Lease)
		}
		md := map[string]string{"k": "v"}
		set := func(id string) error {
			return e.try(func(tx kv.Tx) error {
				_, err := e.ns.Set(tx, e.fs, SetInput{Path: "f", Metadata: &md, LeaseID: id})
				return err
			})
		}
		wantAz(t, set(""), azerr.LeaseIDMissing)
		wantAz(t, set("5d0e3c55-1c4b-4d8e-8a55-7e2b1b7c9b22"), azerr.LeaseIDMismatchWithBlobOperation)
		if err := set(testLease); err != nil {
			t.Fatal(err)
		}
		if n, _ := e.lookup("f"); !n.Lease.Active(e.clk.Now()) {
			t.Fatal("a write dropped the active lease")
		}
		wantAz(t, e.try(func(tx kv.Tx) error {
			_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: "f"})
			return err
		}), azerr.LeaseIDMissing)
		wantAz(t, e.try(func(tx kv.Tx) error {
			_, err := e.ns.Rename(tx, e.fs, RenameInput{Source: "f", Dest: "h"})
			return err
		}), azerr.LeaseIDMissing)
		// The destination's lease, too.
		wantAz(t, e.try(func(tx kv.Tx) error {
			_, err := e.ns.Rename(tx, e.fs, RenameInput{Source: "f", Dest: "g", SourceLeaseID: testLease})
			return err
		}), azerr.LeaseIDMissing)
		wantAz(t, e.try(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "g"})
			return err
		}), azerr.LeaseIDMissing)
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Rename(tx, e.fs, RenameInput{Source: "f", Dest: "g", SourceLeaseID: testLease, LeaseID: testLease})
			return err
		})
		// The lease lapses on the clock: no id needed, an id is refused.
		e.clk.Advance(16 * time.Second)
		wantAz(t, e.try(func(tx kv.Tx) error {
			_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: "g", LeaseID: testLease})
			return err
		}), azerr.LeaseNotPresentWithBlobOperation)
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: "g"})
			return err
		})
	})
}

// TestExpiredIsGone: a file past its expiry is missing for every
// operation and every listing, and a new file at its name replaces it,
// its content going to the collector exactly once.
func TestExpiredIsGone(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.mkdir("d")
		e.mkfile("d/x", "old")
		e.mkfile("d/y", "keep")
		at := e.clk.Now().Add(10 * time.Second)
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Set(tx, e.fs, SetInput{Path: "d/x", Expiry: &at})
			return err
		})
		if got := e.listAll("d", true, 10); len(got) != 2 {
			t.Fatalf("before expiry: %v", got)
		}
		e.clk.Advance(10 * time.Second)
		if _, err := e.lookup("d/x"); Code(err) != "PathNotFound" {
			t.Fatalf("lookup of an expired file: %v", err)
		}
		if got := e.listAll("d", true, 10); len(got) != 1 {
			t.Fatalf("List after expiry: %v", got)
		}
		var scanned []string
		e.view(func(tx kv.Tx) error {
			return e.ns.ScanBlobs(tx, e.fs, "", "", func(p string, _ *Node) bool { scanned = append(scanned, p); return true })
		})
		if len(scanned) != 2 || scanned[0] != "d" || scanned[1] != "d/y" {
			t.Fatalf("ScanBlobs after expiry: %v", scanned)
		}
		md := map[string]string{}
		for name, op := range map[string]func(tx kv.Tx) error{
			"set":    func(tx kv.Tx) error { _, err := e.ns.Set(tx, e.fs, SetInput{Path: "d/x", Metadata: &md}); return err },
			"delete": func(tx kv.Tx) error { _, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: "d/x"}); return err },
			"modify": func(tx kv.Tx) error {
				_, err := e.ns.Modify(tx, e.fs, "d/x", nil, 0, func(*Node, time.Time) error { return nil })
				return err
			},
		} {
			if err := e.try(op); Code(err) != "PathNotFound" {
				t.Fatalf("%s of an expired file: %v", name, err)
			}
		}
		wantCode(t, e.try(func(tx kv.Tx) error {
			_, err := e.ns.Rename(tx, e.fs, RenameInput{Source: "d/x", Dest: "z"})
			return err
		}), "SourcePathNotFound")
		// A rename onto the expired name replaces it.
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Rename(tx, e.fs, RenameInput{Source: "d/y", Dest: "d/x"})
			return err
		})
		if _, err := e.ns.Collect(context.Background(), e.store, 0, reclaimTx); err != nil {
			t.Fatal(err)
		}
		if got := e.reclaimed(); got["old"] != 1 || got["keep"] != 0 {
			t.Fatalf("reclaimed %v", got)
		}
		if n, err := e.lookup("d/x"); err != nil || string(n.Ref) != "keep" {
			t.Fatalf("d/x after the rename: %v %v", n, err)
		}
	})
}

// TestExpiredFilesCollected: an expired file is gone for every operation
// at once — a directory holding only expired files is empty for a
// non-recursive delete and as a rename destination, and
// setAccessControlRecursive neither changes nor counts it — and the
// collector removes its record and reclaims its content through the
// expiry index, following a rename of the file and ignoring an expiry
// that was moved later.
func TestExpiredFilesCollected(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		setExpiry := func(p string, at time.Time) {
			t.Helper()
			e.update(func(tx kv.Tx) error {
				_, err := e.ns.Set(tx, e.fs, SetInput{Path: p, Expiry: &at})
				return err
			})
		}
		soon, later := e.clk.Now().Add(10*time.Second), e.clk.Now().Add(time.Hour)
		e.mkfile("d/a", "a")
		e.mkfile("d/b", "b")
		e.mkfile("t/c", "c")
		e.mkfile("r/f", "f")
		e.mkfile("late", "late")
		e.mkdir("src")
		for _, p := range []string{"d/a", "d/b", "t/c", "r/f", "late"} {
			setExpiry(p, soon)
		}
		setExpiry("late", later) // the first index entry becomes stale
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Rename(tx, e.fs, RenameInput{Source: "r/f", Dest: "moved"})
			return err
		})
		wantCode(t, e.try(func(tx kv.Tx) error {
			_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: "d"})
			return err
		}), "DirectoryNotEmpty")

		e.clk.Advance(10 * time.Second)
		var rec *SetACLRecursiveOutput
		a, err := acl.Parse("user::rwx,group::r-x,other::---")
		if err != nil {
			t.Fatal(err)
		}
		e.update(func(tx kv.Tx) error {
			var err error
			rec, err = e.ns.SetACLRecursive(tx, e.fs, SetACLRecursiveInput{Path: "t", Mode: ACLSet, ACL: a})
			return err
		})
		if rec.DirsSuccessful != 1 || rec.FilesSuccessful != 0 {
			t.Fatalf("setAccessControlRecursive over an expired file: %+v", rec)
		}
		// The rename destination t holds only an expired file: empty.
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Rename(tx, e.fs, RenameInput{Source: "src", Dest: "t"})
			return err
		})
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: "d"})
			return err
		})
		if _, err := e.ns.Collect(context.Background(), e.store, 0, reclaimTx); err != nil {
			t.Fatal(err)
		}
		got := e.reclaimed()
		for _, r := range []string{"a", "b", "c", "f"} {
			if got[r] != 1 {
				t.Fatalf("reclaimed %v: want %s once", got, r)
			}
		}
		if got["late"] != 0 {
			t.Fatalf("reclaimed %v: late is not expired", got)
		}
		if n, err := e.lookup("late"); err != nil || string(n.Ref) != "late" {
			t.Fatalf("late: %v %v", n, err)
		}
		// The record of the renamed file is gone, not only hidden, and the
		// expiry index holds the one entry still to come.
		e.view(func(tx kv.Tx) error {
			root, err := e.ns.root(tx, e.fs)
			if err != nil {
				return err
			}
			if _, err := tx.Get(childKey(e.fs.Account, root.ID, "moved")); err != kv.ErrNotFound {
				t.Fatalf("record of the expired file: %v", err)
			}
			n := 0
			p := kv.Key("dlx")
			if err := tx.Scan(p, kv.PrefixEnd(p), 0, false, func(_, _ []byte) bool { n++; return true }); err != nil {
				return err
			}
			if n != 1 {
				t.Fatalf("expiry index entries: %d", n)
			}
			return nil
		})
		e.clk.Advance(time.Hour)
		if _, err := e.ns.Collect(context.Background(), e.store, 0, reclaimTx); err != nil {
			t.Fatal(err)
		}
		if got := e.reclaimed(); got["late"] != 1 {
			t.Fatalf("reclaimed %v: want late once", got)
		}
	})
}

// TestExpiredFileInPlaceOfParent: an expired file where a create needs a
// parent directory is gone: without MakeParents the create is 404, with
// it the directory takes the name and the file's content is reclaimed.
func TestExpiredFileInPlaceOfParent(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.mkfile("x", "old")
		at := e.clk.Now().Add(time.Second)
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Set(tx, e.fs, SetInput{Path: "x", Expiry: &at})
			return err
		})
		wantCode(t, e.try(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "x/y"})
			return err
		}), "PathConflict")
		e.clk.Advance(time.Second)
		wantCode(t, e.try(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "x/y"})
			return err
		}), "PathNotFound")
		e.mkfile("src", "s")
		wantCode(t, e.try(func(tx kv.Tx) error {
			_, err := e.ns.Rename(tx, e.fs, RenameInput{Source: "src", Dest: "x/z"})
			return err
		}), "RenameDestinationParentPathNotFound")
		e.mkfile("x/y", "new")
		if n, err := e.lookup("x"); err != nil || !n.Dir {
			t.Fatalf("x: %v %v", n, err)
		}
		if _, err := e.ns.Collect(context.Background(), e.store, 0, reclaimTx); err != nil {
			t.Fatal(err)
		}
		if r := e.reclaimed(); r["old"] != 1 || r["new"] != 0 || r["s"] != 0 {
			t.Fatalf("reclaimed %v", r)
		}
	})
}
