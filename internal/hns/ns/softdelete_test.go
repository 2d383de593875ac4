package ns

import (
	"context"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestSoftDeletedPaths: with a retention, a deleted file or directory
// (recursive too) is kept and listed under its path with a deletion id,
// Undelete restores it at its path (a directory with its content), 409
// PathAlreadyExists when the name is taken again, 404 while its parent
// is gone; when the retention ends it is no longer listed nor restorable
// and the collector reclaims it. Without a retention, deletes stay
// immediate.
func TestSoftDeletedPaths(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		const week = 7 * 24 * time.Hour
		del := func(p string, recursive bool, retain time.Duration) {
			t.Helper()
			e.update(func(tx kv.Tx) error {
				_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: p, Recursive: recursive, Retain: retain})
				return err
			})
		}
		list := func(in ListDeletedInput) ([]DeletedPath, string) {
			t.Helper()
			var out []DeletedPath
			var next string
			e.view(func(tx kv.Tx) error {
				var err error
				out, next, err = e.ns.ListDeleted(tx, e.fs, in)
				return err
			})
			return out, next
		}
		undelete := func(p, id string) error {
			return e.try(func(tx kv.Tx) error {
				_, err := e.ns.Undelete(tx, e.fs, p, id, nil)
				return err
			})
		}
		e.mkfile("d/a", "a")
		e.mkfile("d/sub/b", "b")
		e.mkfile("gone", "gone")
		del("gone", false, 0) // no retention: not kept
		del("d/a", false, week)
		e.clk.Advance(time.Second)
		del("d", true, week)
		got, next := list(ListDeletedInput{})
		if len(got) != 2 || got[0].Path != "d" || got[1].Path != "d/a" || next != "" || !got[0].Node.Dir {
			t.Fatalf("deleted: %+v %q", got, next)
		}
		if got[0].DeletionID == got[1].DeletionID || got[0].RemainingDays(e.clk.Now()) != 6 {
			t.Fatalf("ids %s %s, days %d", got[0].DeletionID, got[1].DeletionID, got[0].RemainingDays(e.clk.Now()))
		}
		page, next := list(ListDeletedInput{Max: 1})
		if len(page) != 1 || page[0].Path != "d" || next == "" {
			t.Fatalf("first page %+v %q", page, next)
		}
		if page, next = list(ListDeletedInput{Max: 1, Marker: next}); len(page) != 1 || page[0].Path != "d/a" || next != "" {
			t.Fatalf("second page %+v %q", page, next)
		}
		if page, _ = list(ListDeletedInput{Prefix: "d/"}); len(page) != 1 || page[0].Path != "d/a" {
			t.Fatalf("prefix d/: %+v", page)
		}
		dID, aID := got[0].DeletionID, got[1].DeletionID
		wantCode(t, undelete("d/a", aID), "PathNotFound") // its parent is deleted
		wantCode(t, undelete("d", "1"), "PathNotFound")   // no such deletion
		if err := undelete("d", dID); err != nil {
			t.Fatal(err)
		}
		if n, err := e.lookup("d/sub/b"); err != nil || string(n.Ref) != "b" {
			t.Fatalf("d/sub/b after undelete: %v %v", n, err)
		}
		e.mkfile("d/a", "new")
		wantCode(t, undelete("d/a", aID), "PathAlreadyExists")
		del("d/a", false, 0)
		if err := undelete("d/a", aID); err != nil {
			t.Fatal(err)
		}
		if n, err := e.lookup("d/a"); err != nil || string(n.Ref) != "a" {
			t.Fatalf("d/a after undelete: %v %v", n, err)
		}
		if got, _ := list(ListDeletedInput{}); len(got) != 0 {
			t.Fatalf("deleted after undeletes: %+v", got)
		}
		// Kept for the retention, then gone and collected.
		del("d", true, week)
		e.clk.Advance(week - time.Second)
		last, _ := list(ListDeletedInput{})
		if len(last) != 1 {
			t.Fatalf("before the end of retention: %+v", last)
		}
		if _, err := e.ns.Collect(context.Background(), e.store, 0, reclaimTx); err != nil {
			t.Fatal(err)
		}
		if r := e.reclaimed(); r["gone"] != 1 || r["new"] != 1 || r["a"] != 0 || r["b"] != 0 {
			t.Fatalf("reclaimed during retention: %v", r)
		}
		e.clk.Advance(time.Second)
		if got, _ := list(ListDeletedInput{}); len(got) != 0 {
			t.Fatalf("after the end of retention: %+v", got)
		}
		wantCode(t, undelete("d", last[0].DeletionID), "PathNotFound")
		if _, err := e.ns.Collect(context.Background(), e.store, 0, reclaimTx); err != nil {
			t.Fatal(err)
		}
		if r := e.reclaimed(); r["a"] != 1 || r["b"] != 1 {
			t.Fatalf("reclaimed after retention: %v", r)
		}
		e.noKeys(t, "dld", "dly", "dlg")
	})
}

// TestSoftDeletedPathsAccess: restoring a path is creating it again, so a
// caller needs write and execute on its parent (403 otherwise); the path
// comes back with its owner.
func TestSoftDeletedPathsAccess(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		alice := &acl.Principal{User: "alice"}
		bob := &acl.Principal{User: "bob"}
		e.mkdir("home")
		owner := "alice"
		e.update(func(tx kv.Tx) error {
			m := acl.Mode(0o755)
			if _, err := e.ns.Set(tx, e.fs, SetInput{Path: "", Permissions: &m}); err != nil {
				return err
			}
			_, err := e.ns.Set(tx, e.fs, SetInput{Path: "home", Owner: &owner, Permissions: &m})
			return err
		})
		e.update(func(tx kv.Tx) error {
			if _, err := e.ns.Create(tx, e.fs, CreateInput{Path: "home/f", Caller: alice}); err != nil {
				return err
			}
			_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: "home/f", Caller: alice, Retain: time.Hour})
			return err
		})
		var got []DeletedPath
		e.view(func(tx kv.Tx) error {
			var err error
			got, _, err = e.ns.ListDeleted(tx, e.fs, ListDeletedInput{})
			return err
		})
		if len(got) != 1 {
			t.Fatalf("deleted: %+v", got)
		}
		undelete := func(c Caller) error {
			return e.try(func(tx kv.Tx) error {
				_, err := e.ns.Undelete(tx, e.fs, "home/f", got[0].DeletionID, c)
				return err
			})
		}
		wantCode(t, undelete(bob), "AuthorizationPermissionMismatch")
		if err := undelete(alice); err != nil {
			t.Fatal(err)
		}
		if n, err := e.lookup("home/f"); err != nil || n.Owner != "alice" {
			t.Fatalf("restored: %v %v", n, err)
		}
	})
}
