package blob

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestListPathIncludeDeletedPages: List Blobs with include=deleted on a
// hierarchical account, over random trees of live and soft-deleted paths
// (names chosen so that byte order and tree order differ: a, a-b, a/x),
// lists exactly the live paths and the retained deletions, each name's
// live path before its deletions, in byte order of names; pages of every
// size, with and without a delimiter and a prefix, list what one page
// lists, each prefix once.
func TestListPathIncludeDeletedPages(t *testing.T) {
	for seed := range uint64(listSeeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { listIncludeDeleted(t, seed) })
	}
}

// listSeeds is how many random trees TestListPathIncludeDeletedPages
// lists.
var listSeeds = 8

func listIncludeDeleted(t *testing.T, seed uint64) {
	s, n, _ := hnsEnv(t)
	ctx := context.Background()
	fs := ns.FS{Account: "acct", Filesystem: "fs"}
	rng := rand.New(rand.NewPCG(seed, 21))
	names := []string{"a", "a-b", "a/x", "a/x/y", "a/z", "b", "b/a", "b-", "c/d/e", "c/d-"}
	const week = 7 * 24 * time.Hour
	for range 60 {
		// Drawn outside the transaction: a store may run its function
		// more than once (kv.Twice).
		p, del := names[rng.IntN(len(names))], rng.IntN(3) == 0
		err := s.store.Update(ctx, func(tx kv.Tx) error {
			if del {
				_, err := n.Delete(tx, fs, ns.DeleteInput{Path: p, Recursive: true, Retain: week})
				return err
			}
			_, err := n.Create(tx, fs, ns.CreateInput{Path: p, MakeParents: true})
			return err
		})
		if err != nil && !strings.Contains(err.Error(), "PathNotFound") && !strings.Contains(err.Error(), "PathConflict") {
			t.Fatal(err)
		}
		s.clock.(*clock.Fake).Advance(time.Millisecond)
	}
	// The model: every live path and retained deletion, a name's live
	// path first, then its deletions in id order.
	type entry struct{ name, id string }
	var want []entry
	err := s.store.View(ctx, func(tx kv.Tx) error {
		if err := n.ScanBlobs(tx, fs, "", "", func(name string, _ *ns.Node) bool {
			want = append(want, entry{name, ""})
			return true
		}); err != nil {
			return err
		}
		return n.ScanDeleted(tx, fs, "", "", "", func(d ns.DeletedPath) bool {
			want = append(want, entry{d.Path, d.DeletionID})
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortStableFunc(want, func(a, b entry) int {
		return cmp.Or(strings.Compare(a.name, b.name), cmp.Compare(len(a.id), len(b.id)), strings.Compare(a.id, b.id))
	})
	deleted := 0
	for _, w := range want {
		if w.id != "" {
			deleted++
		}
	}
	if deleted < 5 || len(want)-deleted < 5 {
		t.Fatalf("a weak tree: %d live, %d deleted", len(want)-deleted, deleted)
	}
	list := func(prefix, delim string, max int) []string {
		t.Helper()
		var got []string
		marker := ""
		for {
			out, err := s.ListBlobs(ctx, ListBlobsInput{Ref: ContainerRef{Account: "acct", Container: "fs"}, Prefix: prefix, Delimiter: delim,
				Marker: marker, MaxResults: max, Include: ListBlobsInclude{Deleted: true}})
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range out.Items {
				switch {
				case it.IsPrefix:
					got = append(got, it.Name+"(prefix)")
				case it.Deleted:
					got = append(got, it.Name+"@"+it.DeletionID)
				default:
					got = append(got, it.Name)
				}
			}
			if out.NextMarker == "" {
				return got
			}
			if len(out.Items) != max {
				t.Fatalf("a page of %d with a next marker", len(out.Items))
			}
			marker = out.NextMarker
		}
	}
	var flat []string
	for _, w := range want {
		if w.id == "" {
			flat = append(flat, w.name)
		} else {
			flat = append(flat, w.name+"@"+w.id)
		}
	}
	for _, max := range []int{1, 2, 3, 7, 5000} {
		if got := list("", "", max); !slices.Equal(got, flat) {
			t.Fatalf("pages of %d:\n got %v\nwant %v", max, got, flat)
		}
	}
	for _, pd := range []struct{ prefix, delim string }{{"", "/"}, {"a", "/"}, {"a/", "/"}, {"c/", "/"}, {"a", "-"}} {
		one := list(pd.prefix, pd.delim, 5000)
		seen := map[string]bool{}
		for _, g := range one {
			if strings.HasSuffix(g, "(prefix)") {
				if seen[g] {
					t.Fatalf("%+v: %s twice in %v", pd, g, one)
				}
				seen[g] = true
			}
		}
		for _, max := range []int{1, 2, 3} {
			if got := list(pd.prefix, pd.delim, max); !slices.Equal(got, one) {
				t.Fatalf("%+v, pages of %d:\n got %v\nwant %v", pd, max, got, one)
			}
		}
	}
}
