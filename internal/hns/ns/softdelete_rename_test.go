package ns

import (
	"context"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestRenameSoftDeletesDestination: with a retention, a rename onto an
// existing file or empty directory keeps the replaced destination as a
// soft-deleted path at the destination's name ("Soft delete for blobs",
// hierarchical namespace table, Path - Create that renames), restorable
// once the name is free and reclaimed after the retention; without one
// the destination goes to the collector at once; an expired destination
// is never kept.
func TestRenameSoftDeletesDestination(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		const week = 7 * 24 * time.Hour
		// Legacy mode: in posix mode a directory destination is moved
		// into, not replaced (Rename).
		rename := func(src, dst string, retain time.Duration) *RenameOutput {
			t.Helper()
			var out *RenameOutput
			e.update(func(tx kv.Tx) error {
				var err error
				out, err = e.ns.Rename(tx, e.fs, RenameInput{Source: src, Dest: dst, Mode: Legacy, Retain: func() (time.Duration, error) { return retain, nil }})
				return err
			})
			return out
		}
		deleted := func() []DeletedPath {
			t.Helper()
			var out []DeletedPath
			e.view(func(tx kv.Tx) error {
				var err error
				out, _, err = e.ns.ListDeleted(tx, e.fs, ListDeletedInput{})
				return err
			})
			return out
		}
		e.mkfile("src1", "s1")
		e.mkfile("dst", "old")
		if out := rename("src1", "dst", week); out.Replaced == nil || out.ReplacedDeletionID == "" {
			t.Fatalf("rename onto a file: %+v", out)
		}
		e.mkdir("srcdir")
		e.mkdir("dstdir")
		outDir := rename("srcdir", "dstdir", week)
		got := deleted()
		if len(got) != 2 || got[0].Path != "dst" || string(got[0].Node.Ref) != "old" || got[1].Path != "dstdir" || !got[1].Node.Dir ||
			got[1].DeletionID != outDir.ReplacedDeletionID {
			t.Fatalf("soft-deleted destinations: %+v", got)
		}
		// Restorable once the name is free.
		undelete := func(p, id string) error {
			return e.try(func(tx kv.Tx) error {
				_, err := e.ns.Undelete(tx, e.fs, p, id, nil)
				return err
			})
		}
		wantCode(t, undelete("dst", got[0].DeletionID), "PathAlreadyExists")
		rename("dst", "moved", 0)
		if err := undelete("dst", got[0].DeletionID); err != nil {
			t.Fatal(err)
		}
		if n, err := e.lookup("dst"); err != nil || string(n.Ref) != "old" {
			t.Fatalf("dst after undelete: %v %v", n, err)
		}
		// Without a retention: gone at once. An expired destination is not
		// kept even with one.
		e.mkfile("src2", "s2")
		if out := rename("src2", "moved", 0); out.ReplacedDeletionID != "" {
			t.Fatalf("rename without retention kept %q", out.ReplacedDeletionID)
		}
		e.mkfile("src3", "s3")
		e.update(func(tx kv.Tx) error {
			exp := e.clk.Now().Add(time.Second)
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "expiring", Ref: []byte("exp"), Expiry: exp})
			return err
		})
		e.clk.Advance(2 * time.Second)
		if out := rename("src3", "expiring", week); out.Replaced != nil || out.ReplacedDeletionID != "" {
			t.Fatalf("rename onto an expired file: %+v", out)
		}
		if got := deleted(); len(got) != 1 || got[0].Path != "dstdir" {
			t.Fatalf("soft-deleted after the undelete: %+v", got)
		}
		if _, err := e.ns.Collect(context.Background(), e.store, 0, reclaimTx); err != nil {
			t.Fatal(err)
		}
		if r := e.reclaimed(); r["s1"] != 1 || r["exp"] != 1 || r["old"] != 0 {
			t.Fatalf("reclaimed: %v", r)
		}
		e.clk.Advance(week)
		if got := deleted(); len(got) != 0 {
			t.Fatalf("after the retention: %+v", got)
		}
		if _, err := e.ns.Collect(context.Background(), e.store, 0, reclaimTx); err != nil {
			t.Fatal(err)
		}
		e.noKeys(t, "dld", "dly", "dlg")
	})
}
