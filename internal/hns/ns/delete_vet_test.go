package ns

import (
	"errors"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestDeleteVet: DeleteInput.Vet sees the item after the conditions
// and the lease; its error comes back as is and nothing is removed;
// once it passes, the item is deleted.
func TestDeleteVet(t *testing.T) {
	refuse := errors.New("has snapshots")
	eachBackend(t, func(t *testing.T, e *env) {
		f := e.mkfile("d/f", "ref1")
		var seen []byte
		veto := func(n *Node) error { seen = n.ID; return refuse }
		// The conditions come first.
		err := e.try(func(tx kv.Tx) error {
			_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: "d/f", Cond: cond.Conditions{IfMatch: []string{`"0x1"`}}, Vet: veto})
			return err
		})
		wantCode(t, err, "ConditionNotMet")
		if seen != nil {
			t.Fatal("vetted before the conditions")
		}
		err = e.try(func(tx kv.Tx) error {
			_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: "d/f", Vet: veto})
			return err
		})
		if !errors.Is(err, refuse) || string(seen) != string(f.ID) {
			t.Fatalf("vetoed delete: %v (vetted %x)", err, seen)
		}
		if !e.exists("d/f") {
			t.Fatal("vetoed file deleted")
		}
		if n, err := e.reclaimedCount(); err != nil || n != 0 {
			t.Fatalf("garbage after a vetoed delete: %d %v", n, err)
		}
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: "d/f", Vet: func(*Node) error { return nil }})
			return err
		})
		if e.exists("d/f") {
			t.Fatal("file kept after the vet passed")
		}
	})
}

// reclaimedCount is the number of garbage records waiting.
func (e *env) reclaimedCount() (n int, err error) {
	e.view(func(tx kv.Tx) error {
		n, err = Garbage(tx)
		return nil
	})
	return n, err
}
