package datalake

import (
	"context"
	"errors"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
)

// TestContainerHook: a hierarchical account's container gets a namespace
// root with it and loses its tree with it; a flat account's does not get
// one; a root left from an earlier life of the name is replaced, not
// reused.
func TestContainerHook(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	hier := map[string]bool{"h": true}
	s := New(Config{Store: store, Hierarchical: func(a string) bool { return hier[a] }})
	update := func(f func(tx kv.Tx) error) {
		t.Helper()
		if err := store.Update(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	lookup := func(acct, fs, path string) error {
		return store.View(ctx, func(tx kv.Tx) error {
			_, err := s.ns.Lookup(tx, ns.FS{Account: acct, Filesystem: fs}, path, nil)
			return err
		})
	}
	update(func(tx kv.Tx) error { return s.ContainerCreated(tx, "h", "c") })
	update(func(tx kv.Tx) error { return s.ContainerCreated(tx, "f", "c") })
	if err := lookup("h", "c", ""); err != nil {
		t.Fatalf("hierarchical root: %v", err)
	}
	if err := lookup("f", "c", ""); !errors.Is(err, ns.ErrFilesystemNotFound) {
		t.Fatalf("flat account has a root: %v", err)
	}
	update(func(tx kv.Tx) error {
		_, err := s.ns.Create(tx, ns.FS{Account: "h", Filesystem: "c"}, ns.CreateInput{Path: "d", Dir: true})
		return err
	})
	// A root the container's creation finds (left while the account was
	// flat, say) is detached: the new filesystem starts empty.
	update(func(tx kv.Tx) error { return s.ContainerCreated(tx, "h", "c") })
	if err := lookup("h", "c", "d"); !errors.Is(err, ns.ErrPathNotFound) {
		t.Fatalf("old tree still reachable: %v", err)
	}
	update(func(tx kv.Tx) error { return s.ContainerDeleted(tx, "h", "c") })
	update(func(tx kv.Tx) error { return s.ContainerDeleted(tx, "f", "c") })
	if err := lookup("h", "c", ""); !errors.Is(err, ns.ErrFilesystemNotFound) {
		t.Fatalf("root after delete: %v", err)
	}
}

// TestNSErr: namespace errors keep their code, status and message.
func TestNSErr(t *testing.T) {
	for _, e := range []*ns.Error{ns.ErrFilesystemNotFound, ns.ErrPathNotFound, ns.ErrPathAlreadyExists, ns.ErrPathConflict, ns.ErrDirectoryNotEmpty,
		ns.ErrSourcePathNotFound, ns.ErrRenameDestParentAbsent, ns.ErrInvalidDestinationPath, ns.ErrInvalidRenameSource, ns.ErrSourceDestTypeMismatch,
		ns.ErrConditionNotMet, ns.ErrSourceConditionNotMet, ns.ErrPermissionMismatch, ns.ErrInvalidPath, ns.ErrInvalidContinuation, ns.ErrInvalidInput, ns.ErrFilesystemExists} {
		got, ok := azerr.As(nsErr(e))
		if !ok || got.Code != e.Code || got.Status != e.Status || got.Message != e.Message {
			t.Errorf("%v: %v", e, got)
		}
	}
	plain := errors.New("x")
	if nsErr(plain) != plain {
		t.Error("a non-namespace error changed")
	}
}
