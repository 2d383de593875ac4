package ns

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestEachFileAndEmpty: EachFile visits every live file below a
// directory, at every depth, and stops at fn's first error; an expired
// file is left out, and Empty and FilesystemEmpty count it as gone; a
// soft-deleted path keeps its filesystem from being empty.
func TestEachFileAndEmpty(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		fsEmpty := func() bool {
			t.Helper()
			var empty bool
			e.view(func(tx kv.Tx) (err error) {
				empty, err = e.ns.FilesystemEmpty(tx, e.fs)
				return err
			})
			return empty
		}
		if !fsEmpty() {
			t.Fatal("new filesystem not empty")
		}
		d := e.mkdir("d")
		e.mkfile("d/a", "1")
		e.mkfile("d/e/b", "2")
		e.mkdir("d/f")
		exp := e.mkfile("d/g", "3")
		at := e.clk.Now().Add(time.Minute)
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Set(tx, e.fs, SetInput{Path: "d/g", Expiry: &at, KeepVersion: true})
			return err
		})
		files := func() []string {
			t.Helper()
			var refs []string
			e.view(func(tx kv.Tx) error {
				return e.ns.EachFile(tx, e.fs, d, func(n *Node) error {
					refs = append(refs, string(n.Ref))
					return nil
				})
			})
			slices.Sort(refs)
			return refs
		}
		if got := files(); !slices.Equal(got, []string{"1", "2", "3"}) {
			t.Fatalf("files of d: %v", got)
		}
		e.clk.Advance(2 * time.Minute)
		if got := files(); !slices.Equal(got, []string{"1", "2"}) {
			t.Fatalf("files of d past %s's expiry: %v", exp.ID, got)
		}
		stop := errors.New("stop")
		calls := 0
		e.view(func(tx kv.Tx) error {
			if err := e.ns.EachFile(tx, e.fs, d, func(*Node) error { calls++; return stop }); err != stop || calls != 1 {
				t.Fatalf("EachFile stopping: %v after %d calls", err, calls)
			}
			if err := e.ns.EachFile(tx, e.fs, &Node{}, func(*Node) error { return stop }); err != nil {
				t.Fatalf("EachFile of a file: %v", err)
			}
			return nil
		})
		empty := func(p string) bool {
			t.Helper()
			var ok bool
			e.view(func(tx kv.Tx) error {
				n, err := e.ns.Lookup(tx, e.fs, p, nil)
				if err != nil {
					return err
				}
				ok, err = e.ns.Empty(tx, e.fs, n)
				return err
			})
			return ok
		}
		if empty("d") || !empty("d/f") {
			t.Fatal("Empty of d, d/f")
		}
		e.mkfile("d/f/h", "4")
		e.clk.Advance(time.Minute)
		if empty("d/f") {
			t.Fatal("d/f with a file")
		}
		if fsEmpty() {
			t.Fatal("filesystem with paths empty")
		}
		// A soft-deleted path keeps the filesystem from being empty.
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: "d", Recursive: true, Retain: time.Hour})
			return err
		})
		if fsEmpty() {
			t.Fatal("filesystem with a soft-deleted path empty")
		}
	})
}
