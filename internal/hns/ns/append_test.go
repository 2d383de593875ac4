package ns

import (
	"errors"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestAppendState: a file created with CreateInput.Append keeps its
// append state, which Set changes (with a new ETag) and a rename moves;
// Set refuses an append state for a block blob file or a directory
// (PathConflict), and a Create over the file makes a block blob file
// unless it asks for one.
func TestAppendState(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.mkdir("d")
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "d/log", Ref: []byte("r"), Append: &AppendState{}})
			return err
		})
		n, err := e.lookup("d/log")
		if err != nil || n.Append == nil || n.Append.Blocks != 0 || n.Append.Sealed {
			t.Fatalf("created: %+v %v", n, err)
		}
		before := n.ETag
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Set(tx, e.fs, SetInput{Path: "d/log", Content: &Content{Size: 3, Ref: []byte("r")}, Append: &AppendState{Blocks: 1}})
			return err
		})
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Set(tx, e.fs, SetInput{Path: "d/log", Append: &AppendState{Blocks: 1, Sealed: true}})
			return err
		})
		n, _ = e.lookup("d/log")
		if n.Size != 3 || n.Append.Blocks != 1 || !n.Append.Sealed || n.ETag == before {
			t.Fatalf("after Set: size %d state %+v etag %s (was %s)", n.Size, n.Append, n.ETag, before)
		}
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Rename(tx, e.fs, RenameInput{Source: "d/log", Dest: "moved"})
			return err
		})
		if n, err = e.lookup("moved"); err != nil || n.Append == nil || !n.Append.Sealed {
			t.Fatalf("after the rename: %+v %v", n, err)
		}
		e.mkfile("block", "rb")
		for _, p := range []string{"block", "d"} {
			err := e.try(func(tx kv.Tx) error {
				_, err := e.ns.Set(tx, e.fs, SetInput{Path: p, Append: &AppendState{Blocks: 1}})
				return err
			})
			if !errors.Is(err, ErrPathConflict) {
				t.Fatalf("append state on %s: %v", p, err)
			}
		}
		e.mkfile("moved", "new")
		if n, _ = e.lookup("moved"); n.Append != nil {
			t.Fatalf("a Create over an append file: %+v", n.Append)
		}
	})
}
