package ns

import (
	"testing"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestCPKKept: the SHA-256 of a customer-provided key given to Create
// is the node's; Set (metadata, content) and a rename keep it; a file
// created again at the name, or a directory created again, takes the
// new request's (none included), as a replacing write does.
func TestCPKKept(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		create := func(p string, dir bool, key string) {
			t.Helper()
			e.update(func(tx kv.Tx) error {
				_, err := e.ns.Create(tx, e.fs, CreateInput{Path: p, Dir: dir, MakeParents: true, CPK: key})
				return err
			})
		}
		keyOf := func(p string) string {
			t.Helper()
			n, err := e.lookup(p)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			return n.CPK
		}
		create("d/f", false, "k1")
		if keyOf("d/f") != "k1" || keyOf("d") != "" {
			t.Fatalf("after create: file %q, parent %q", keyOf("d/f"), keyOf("d"))
		}
		md := map[string]string{"a": "1"}
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Set(tx, e.fs, SetInput{Path: "d/f", Metadata: &md, Content: &Content{Size: 3, Ref: []byte("r")}})
			return err
		})
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Rename(tx, e.fs, RenameInput{Source: "d/f", Dest: "g"})
			return err
		})
		if keyOf("g") != "k1" {
			t.Fatalf("after set and rename: %q", keyOf("g"))
		}
		create("g", false, "")
		if keyOf("g") != "" {
			t.Fatalf("replaced without a key: %q", keyOf("g"))
		}
		create("d", true, "k2")
		if keyOf("d") != "k2" {
			t.Fatalf("directory created again with a key: %q", keyOf("d"))
		}
	})
}
