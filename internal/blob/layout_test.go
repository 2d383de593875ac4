package blob

import (
	"context"
	"errors"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestLayoutContainerEvents: a hierarchical account's container gets a
// namespace root with it and loses its tree with it; a flat account's
// does not get one; a root left from an earlier life of the name is
// replaced, not reused. (Moved from the dfs front end's container hook,
// which the layout replaces.)
func TestLayoutContainerEvents(t *testing.T) {
	ctx := context.Background()
	s, clk := dtService(t)
	n := ns.New(clk)
	hier := map[string]bool{"h": true}
	s.SetNamespace(n, func(a string) bool { return hier[a] })
	update := func(f func(tx kv.Tx) error) {
		t.Helper()
		if err := s.store.Update(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	lookup := func(acct, fs, path string) error {
		return s.store.View(ctx, func(tx kv.Tx) error {
			_, err := n.Lookup(tx, ns.FS{Account: acct, Filesystem: fs}, path, nil)
			return err
		})
	}
	hc, fc := ContainerRef{Account: "h", Container: "c"}, ContainerRef{Account: "f", Container: "c"}
	for _, ref := range []ContainerRef{hc, fc} {
		if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: ref}); err != nil {
			t.Fatal(err)
		}
	}
	if err := lookup("h", "c", ""); err != nil {
		t.Fatalf("hierarchical root: %v", err)
	}
	if err := lookup("f", "c", ""); !errors.Is(err, ns.ErrFilesystemNotFound) {
		t.Fatalf("flat account has a root: %v", err)
	}
	update(func(tx kv.Tx) error {
		_, err := n.Create(tx, ns.FS{Account: "h", Filesystem: "c"}, ns.CreateInput{Path: "d", Dir: true})
		return err
	})
	// A root the container's creation finds (left while the account was
	// flat, say) is detached: the new filesystem starts empty.
	update(func(tx kv.Tx) error { return s.layoutOf("h").containerCreated(tx, hc) })
	if err := lookup("h", "c", "d"); !errors.Is(err, ns.ErrPathNotFound) {
		t.Fatalf("old tree still reachable: %v", err)
	}
	for _, ref := range []ContainerRef{hc, fc} {
		if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: ref}); err != nil {
			t.Fatal(err)
		}
	}
	if err := lookup("h", "c", ""); !errors.Is(err, ns.ErrFilesystemNotFound) {
		t.Fatalf("root after delete: %v", err)
	}
	// A flat account's container detaches a tree left from a time the
	// account was hierarchical.
	update(func(tx kv.Tx) error {
		_, err := n.CreateFilesystem(tx, ns.FS{Account: "f", Filesystem: "old"}, ns.FilesystemInput{})
		return err
	})
	old := ContainerRef{Account: "f", Container: "old"}
	update(func(tx kv.Tx) error { return s.layoutOf("f").containerDeleted(tx, old) })
	if err := lookup("f", "old", ""); !errors.Is(err, ns.ErrFilesystemNotFound) {
		t.Fatalf("flat account's old root after delete: %v", err)
	}
}

// TestLayoutOfAllocatesNothing: choosing the layout is on every read's
// path (Get Blob), so it returns the service's two prebuilt layouts.
func TestLayoutOfAllocatesNothing(t *testing.T) {
	s, clk := dtService(t)
	s.SetNamespace(ns.New(clk), func(a string) bool { return a == "h" })
	var l Layout
	if n := testing.AllocsPerRun(100, func() { l = s.layoutOf("h"); l = s.layoutOf("f") }); n != 0 {
		t.Fatalf("layoutOf allocates %v times", n)
	}
	if _, ok := s.layoutOf("h").(*hierLayout); !ok {
		t.Fatal("h is not hierarchical")
	}
	if _, ok := l.(*flatLayout); !ok {
		t.Fatal("f is not flat")
	}
}
