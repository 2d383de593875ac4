package ns

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// componentLess is the depth-first order List uses: paths compared
// component by component.
func componentLess(a, b string) bool {
	return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/")) < 0
}

// names that stress the two orders: bytes below and above '/'.
var testNames = []string{"a", "a-b", "a.c", "a!", "ab", "a0", "b", "B", "a b", "z"}

func TestListOrderAndPages(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		rng := rand.New(rand.NewPCG(1, 2))
		for len(e.listAll("", true, 0)) < 60 {
			depth := 1 + rng.IntN(3)
			var parts []string
			for i := 0; i < depth; i++ {
				parts = append(parts, testNames[rng.IntN(len(testNames))])
			}
			p := strings.Join(parts, "/")
			_ = e.try(func(tx kv.Tx) error {
				_, err := e.ns.Create(tx, e.fs, CreateInput{Path: p, Dir: rng.IntN(2) == 0, MakeParents: true})
				return err
			})
		}
		all := e.listAll("", true, 0)
		if !sort.SliceIsSorted(all, func(i, j int) bool { return componentLess(all[i], all[j]) }) {
			t.Fatalf("not in depth-first order: %q", all)
		}
		// Every page size gives the same listing.
		for _, max := range []int{1, 2, 3, 7, 100} {
			if got := e.listAll("", true, max); !slices.Equal(got, all) {
				t.Fatalf("max %d: %q, want %q", max, got, all)
			}
		}
		// One level.
		var top []string
		for _, p := range all {
			if !strings.Contains(p, "/") {
				top = append(top, p)
			}
		}
		if got := e.listAll("/", false, 2); !slices.Equal(got, top) {
			t.Fatalf("one level: %q, want %q", got, top)
		}
		// A subdirectory.
		var dir string
		for _, p := range all {
			if n, _ := e.lookup(p); n.Dir && strings.Contains(p, "/") {
				dir = p
				break
			}
		}
		var under []string
		for _, p := range all {
			if strings.HasPrefix(p, dir+"/") {
				under = append(under, p)
			}
		}
		if got := e.listAll(dir, true, 1); !slices.Equal(got, under) {
			t.Fatalf("under %s: %q, want %q", dir, got, under)
		}
		// Errors.
		err := e.store.View(t.Context(), func(tx kv.Tx) error {
			_, err := e.ns.List(tx, e.fs, ListInput{Dir: "missing"})
			return err
		})
		wantCode(t, err, "PathNotFound")
		err = e.store.View(t.Context(), func(tx kv.Tx) error {
			_, err := e.ns.List(tx, e.fs, ListInput{Continuation: "%%%"})
			return err
		})
		wantCode(t, err, "InvalidQueryParameterValue")
		// A file lists as itself, recursively or not; it is one page.
		var file string
		for _, p := range all {
			if n, _ := e.lookup(p); !n.Dir && strings.Contains(p, "/") {
				file = p
				break
			}
		}
		for _, recursive := range []bool{false, true} {
			if got := e.listAll(file, recursive, 1); !slices.Equal(got, []string{file}) {
				t.Fatalf("listing file %s (recursive %v): %q", file, recursive, got)
			}
		}
		err = e.store.View(t.Context(), func(tx kv.Tx) error {
			_, err := e.ns.List(tx, e.fs, ListInput{Dir: file, Continuation: encodeContinuation(file)})
			return err
		})
		wantCode(t, err, "InvalidQueryParameterValue")
	})
}

// TestListContinuationUnderChanges lists a tree page by page while paths
// are created, deleted and renamed between pages: a path that existed
// throughout is returned exactly once, and no path twice.
func TestListContinuationUnderChanges(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		rng := rand.New(rand.NewPCG(3, 4))
		for i := 0; i < 150; i++ {
			p := strings.Join([]string{testNames[rng.IntN(len(testNames))], testNames[rng.IntN(len(testNames))], "f" + string(rune('a'+i%26))}, "/")
			e.mkfile(p, p)
		}
		initial := e.listAll("", true, 0)
		touched := map[string]bool{}
		seen := map[string]int{}
		tok := ""
		for round := 0; ; round++ {
			var page *ListOutput
			e.view(func(tx kv.Tx) error {
				var err error
				page, err = e.ns.List(tx, e.fs, ListInput{Recursive: true, MaxResults: 7, Continuation: tok})
				return err
			})
			for _, p := range page.Paths {
				seen[p.Path]++
			}
			if page.Continuation == "" {
				break
			}
			tok = page.Continuation
			// Mutate: create, delete or rename something random.
			cur := e.listAll("", true, 0)
			victim := cur[rng.IntN(len(cur))]
			switch rng.IntN(3) {
			case 0:
				p := testNames[rng.IntN(len(testNames))] + "/new" + string(rune('a'+round%26))
				_ = e.try(func(tx kv.Tx) error {
					_, err := e.ns.Create(tx, e.fs, CreateInput{Path: p, MakeParents: true})
					return err
				})
				markTouched(touched, p)
			case 1:
				e.update(func(tx kv.Tx) error {
					_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: victim, Recursive: true})
					return err
				})
				markTouched(touched, victim)
			case 2:
				dst := "r" + string(rune('a'+round%26)) + testNames[rng.IntN(len(testNames))]
				if e.try(func(tx kv.Tx) error {
					_, err := e.ns.Rename(tx, e.fs, RenameInput{Source: victim, Dest: dst})
					return err
				}) == nil {
					markTouched(touched, victim)
					markTouched(touched, dst)
				}
			}
		}
		for p, n := range seen {
			if n > 1 {
				t.Errorf("%s returned %d times", p, n)
			}
		}
		for _, p := range initial {
			if !isTouched(touched, p) && seen[p] != 1 {
				t.Errorf("%s existed throughout but was returned %d times", p, seen[p])
			}
		}
	})
}

// markTouched records that p (and so everything under it) changed.
func markTouched(touched map[string]bool, p string) { touched[p] = true }

// isTouched reports whether p or one of its ancestors changed.
func isTouched(touched map[string]bool, p string) bool {
	parts := strings.Split(p, "/")
	for i := range parts {
		if touched[strings.Join(parts[:i+1], "/")] {
			return true
		}
	}
	return false
}

func TestScanBlobsOrder(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		rng := rand.New(rand.NewPCG(5, 6))
		for i := 0; i < 80; i++ {
			depth := 1 + rng.IntN(3)
			var parts []string
			for j := 0; j < depth; j++ {
				parts = append(parts, testNames[rng.IntN(len(testNames))])
			}
			_ = e.try(func(tx kv.Tx) error {
				_, err := e.ns.Create(tx, e.fs, CreateInput{Path: strings.Join(parts, "/"), Dir: rng.IntN(3) == 0, MakeParents: true})
				return err
			})
		}
		all := e.listAll("", true, 0)
		sorted := slices.Clone(all)
		slices.Sort(sorted)
		scan := func(prefix, after string, limit int) []string {
			var out []string
			e.view(func(tx kv.Tx) error {
				return e.ns.ScanBlobs(tx, e.fs, prefix, after, func(p string, _ *Node) bool {
					out = append(out, p)
					return limit <= 0 || len(out) < limit
				})
			})
			return out
		}
		if got := scan("", "", 0); !slices.Equal(got, sorted) {
			t.Fatalf("byte order:\n got %q\nwant %q", got, sorted)
		}
		// Every prefix and resume point against brute force, including
		// names that do not exist.
		probes := append(slices.Clone(sorted), "", "a", "a/", "a-", "a/a", "a/a-b/", "ab/z", "a!/", "zz", "B/a")
		for _, prefix := range probes {
			for _, after := range probes {
				var want []string
				for _, p := range sorted {
					if strings.HasPrefix(p, prefix) && p > after {
						want = append(want, p)
					}
				}
				if got := scan(prefix, after, 0); !slices.Equal(got, want) {
					t.Fatalf("prefix %q after %q:\n got %q\nwant %q", prefix, after, got, want)
				}
			}
		}
		// Paging by resuming after the last name returned.
		var paged []string
		last := ""
		for {
			page := scan("", last, 3)
			if len(page) == 0 {
				break
			}
			paged = append(paged, page...)
			last = page[len(page)-1]
		}
		if !slices.Equal(paged, sorted) {
			t.Fatalf("paged: %q", paged)
		}
	})
}
