package ns

import (
	"context"
	"fmt"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// benchRenameDir renames a directory of files back and forth, one
// transaction per rename, on the bolt and in-memory stores. The cost must
// not depend on files (docs/datalake.md records the figures).
func benchRenameDir(b *testing.B, files int) {
	for _, name := range []string{"bolt", "mem"} {
		b.Run(name, func(b *testing.B) {
			e := newEnv(b, backends(b)[name](b))
			e.update(func(tx kv.Tx) error {
				for i := 0; i < files; i++ {
					if _, err := e.ns.Create(tx, e.fs, CreateInput{Path: fmt.Sprintf("a/dir/f%05d", i), MakeParents: true, Ref: []byte("ref")}); err != nil {
						return err
					}
				}
				_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "b", Dir: true})
				return err
			})
			names := [2]string{"a/dir", "b/dir"}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				err := e.store.Update(ctx, func(tx kv.Tx) error {
					_, err := e.ns.Rename(tx, e.fs, RenameInput{Source: names[i%2], Dest: names[(i+1)%2]})
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRenameDir20(b *testing.B)   { benchRenameDir(b, 20) }
func BenchmarkRenameDir2000(b *testing.B) { benchRenameDir(b, 2000) }

// TestRenameCostIndependentOfSize checks the property the benchmarks
// measure without timing: a directory rename writes the same number of
// keys whatever the directory holds.
func TestRenameCostIndependentOfSize(t *testing.T) {
	writes := func(files int) int {
		e := newEnv(t, backends(t)["mem"](t))
		e.update(func(tx kv.Tx) error {
			for i := 0; i < files; i++ {
				if _, err := e.ns.Create(tx, e.fs, CreateInput{Path: fmt.Sprintf("a/dir/f%05d", i), MakeParents: true}); err != nil {
					return err
				}
			}
			return nil
		})
		var c countingTx
		e.update(func(tx kv.Tx) error {
			c.Tx = tx
			_, err := e.ns.Rename(&c, e.fs, RenameInput{Source: "a/dir", Dest: "moved"})
			return err
		})
		return c.reads + c.writes
	}
	small, large := writes(20), writes(2000)
	if small != large {
		t.Fatalf("rename of 20 files: %d key operations, of 2000: %d", small, large)
	}
}

type countingTx struct {
	kv.Tx
	reads, writes int
}

func (c *countingTx) Get(k []byte) ([]byte, error) { c.reads++; return c.Tx.Get(k) }
func (c *countingTx) Put(k, v []byte) error        { c.writes++; return c.Tx.Put(k, v) }
func (c *countingTx) Delete(k []byte) error        { c.writes++; return c.Tx.Delete(k) }
func (c *countingTx) Scan(s, e []byte, l int, r bool, fn func(k, v []byte) bool) error {
	return c.Tx.Scan(s, e, l, r, func(k, v []byte) bool { c.reads++; return fn(k, v) })
}
