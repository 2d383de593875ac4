package ns

import (
	"errors"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestKeepFilesystem: kept under an alias, a filesystem's tree is gone
// from its name (and from Find Blobs by Tags) and whole under the alias;
// its soft-deleted paths move with MoveRetention and still end at their
// retention; restored under another name, its tagged files are found
// under that name; detached with DetachRoot and DropDeletedPaths, the
// collector leaves nothing.
func TestKeepFilesystem(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		const week = 7 * 24 * time.Hour
		e.mkfile("d/sub/a", "ra")
		e.mkfile("d/b", "rb")
		e.mkfile("gone", "rg")
		e.setTags("d/sub/a", map[string]string{"k": "v"})
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: "gone", Retain: week})
			return err
		})
		if got := e.findTagged(TagFilter{}, nil, 10); len(got) != 1 || got[0] != "fs1/d/sub/a" {
			t.Fatalf("tagged before: %v", got)
		}
		const alias = "fs1/0000000000000001"
		dld, dly := e.countKeys("dld"), e.countKeys("dly")
		e.update(func(tx kv.Tx) error {
			ok, err := KeepFilesystem(tx, e.fs, alias)
			if err == nil && !ok {
				t.Error("KeepFilesystem found no root")
			}
			if err != nil {
				return err
			}
			return moveDeleted(tx, e.fs, FS{e.fs.Account, alias})
		})
		if _, err := e.lookup("d/sub/a"); !errors.Is(err, ErrFilesystemNotFound) {
			t.Fatalf("kept filesystem's path under its name: %v", err)
		}
		if got := e.findTagged(TagFilter{}, nil, 10); len(got) != 0 {
			t.Fatalf("tagged while kept: %v", got)
		}
		kept := &env{t: t, store: e.store, ns: e.ns, clk: e.clk, fs: FS{e.fs.Account, alias}}
		if got := kept.listAll("", true, 0); len(got) != 4 {
			t.Fatalf("kept tree %v", got)
		}
		if n := e.countKeys("dld"); n != dld {
			t.Fatalf("%d soft-deleted records after the move, want %d", n, dld)
		}
		if n := e.countKeys("dly"); n != dly {
			t.Fatalf("%d retention entries after the move, want %d", n, dly)
		}
		// A filesystem of the name again, tagged too: independent.
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.CreateFilesystem(tx, e.fs, FilesystemInput{})
			return err
		})
		e.mkfile("new", "rn")
		e.setTags("new", map[string]string{"k": "v"})
		if got := e.findTagged(TagFilter{}, nil, 10); len(got) != 1 || got[0] != "fs1/new" {
			t.Fatalf("tagged with a new filesystem of the name: %v", got)
		}
		err := e.try(func(tx kv.Tx) error {
			_, err := RestoreFilesystem(tx, alias, e.fs)
			return err
		})
		wantCode(t, err, "FilesystemAlreadyExists")
		// Restored under another name: found there.
		other := FS{e.fs.Account, "fs2"}
		e.update(func(tx kv.Tx) error {
			if _, err := RestoreFilesystem(tx, alias, other); err != nil {
				return err
			}
			return moveDeleted(tx, FS{e.fs.Account, alias}, other)
		})
		if got := e.findTagged(TagFilter{}, nil, 10); len(got) != 2 || got[0] != "fs1/new" || got[1] != "fs2/d/sub/a" {
			t.Fatalf("tagged after the restore: %v", got)
		}
		restored := &env{t: t, store: e.store, ns: e.ns, clk: e.clk, fs: other}
		var dels []DeletedPath
		restored.view(func(tx kv.Tx) (err error) {
			dels, _, err = e.ns.ListDeleted(tx, other, ListDeletedInput{})
			return err
		})
		if len(dels) != 1 || dels[0].Path != "gone" {
			t.Fatalf("restored soft-deleted paths %+v", dels)
		}
		// Its retention still ends.
		e.clk.Advance(week + time.Second)
		if _, err := e.ns.Collect(t.Context(), e.store, 0, reclaimTx); err != nil {
			t.Fatal(err)
		}
		if n := e.countKeys("dld") + e.countKeys("dly"); n != 0 {
			t.Fatalf("%d soft-deleted records or entries after their retention", n)
		}
		if r := e.reclaimed(); r["rg"] != 1 {
			t.Fatalf("reclaimed %v", r)
		}

		// Detached in bounded steps: nothing is left.
		restored.update(func(tx kv.Tx) error {
			_, err := e.ns.Delete(tx, other, DeleteInput{Path: "d/b", Retain: week})
			return err
		})
		restored.update(func(tx kv.Tx) error {
			_, err := e.ns.Delete(tx, other, DeleteInput{Path: "d/sub", Recursive: true, Retain: week})
			return err
		})
		e.update(func(tx kv.Tx) error {
			if ok, err := DetachRoot(tx, other); err != nil || !ok {
				t.Errorf("DetachRoot: %v %v", ok, err)
			}
			if ok, err := DetachRoot(tx, other); err != nil || ok {
				t.Errorf("DetachRoot again: %v %v", ok, err)
			}
			for _, want := range []int{1, 1, 0} {
				if n, err := DropDeletedPaths(tx, other, 1); err != nil || n != want {
					t.Errorf("DropDeletedPaths: %d %v, want %d", n, err, want)
				}
			}
			return nil
		})
		if _, err := e.ns.Collect(t.Context(), e.store, 0, reclaimTx); err != nil {
			t.Fatal(err)
		}
		if r := e.reclaimed(); r["ra"] != 1 || r["rb"] != 1 || r["rg"] != 1 || r["rn"] != 0 {
			t.Fatalf("reclaimed %v", r)
		}
		e.noKeys(t, "dld", "dly", "dlg")
		if got := e.findTagged(TagFilter{}, nil, 10); len(got) != 1 || got[0] != "fs1/new" {
			t.Fatalf("tagged at the end: %v", got)
		}
	})
}

// moveDeleted moves every soft-deleted path of from to to, as the Blob
// layer's container move does in bounded steps.
func moveDeleted(tx kv.Tx, from, to FS) error {
	p := DeletedPathsPrefix(from)
	type rec struct{ k, v []byte }
	var recs []rec
	if err := tx.Scan(p, kv.PrefixEnd(p), 0, false, func(k, v []byte) bool {
		recs = append(recs, rec{append([]byte(nil), k...), append([]byte(nil), v...)})
		return true
	}); err != nil {
		return err
	}
	for _, r := range recs {
		nk := append(DeletedPathsPrefix(to), r.k[len(p):]...)
		if err := tx.Put(nk, r.v); err != nil {
			return err
		}
		if err := tx.Delete(r.k); err != nil {
			return err
		}
		if err := MoveRetention(tx, r.k, r.v, nk); err != nil {
			return err
		}
	}
	return nil
}
