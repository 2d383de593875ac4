package ns

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestScanDeletedPositions: ScanDeleted lists the retained deletions in
// path order (ids in order within a path) from every position a listing
// resumes at: all deletions of a path, those after one id, the paths
// after a folded prefix; a prefix bounds it; deletions past their
// retention are left out. LatestDeletion is the most recent retained
// deletion of exactly one path.
func TestScanDeletedPositions(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		const week = 7 * 24 * time.Hour
		del := func(p string, retain time.Duration) {
			t.Helper()
			e.clk.Advance(time.Second)
			e.update(func(tx kv.Tx) error {
				_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: p, Recursive: true, Retain: retain})
				return err
			})
		}
		e.mkfile("a", "1")
		del("a", week)
		e.mkfile("a", "2")
		del("a", week)
		e.mkfile("a", "3")
		del("a", time.Hour) // ends before the others
		e.mkfile("ab", "x")
		del("ab", week)
		e.mkfile("a/b", "y") // a directory a again
		del("a/b", week)
		e.mkfile("c", "z")
		del("c", week)
		scan := func(prefix, from, after string) (got []string, ids []string) {
			t.Helper()
			e.view(func(tx kv.Tx) error {
				got, ids = nil, nil
				return e.ns.ScanDeleted(tx, e.fs, prefix, from, after, func(d DeletedPath) bool {
					got = append(got, fmt.Sprintf("%s@%s", d.Path, d.Node.Ref))
					ids = append(ids, d.DeletionID)
					return true
				})
			})
			return got, ids
		}
		all, ids := scan("", "", "")
		if strings.Join(all, ",") != "a@1,a@2,a@3,a/b@y,ab@x,c@z" {
			t.Fatalf("all: %v", all)
		}
		if got, _ := scan("", "a", ids[0]); strings.Join(got, ",") != "a@2,a@3,a/b@y,ab@x,c@z" {
			t.Fatalf("after a's first deletion: %v", got)
		}
		if got, _ := scan("", "a", ""); strings.Join(got, ",") != strings.Join(all, ",") {
			t.Fatalf("from a: %v", got)
		}
		if got, _ := scan("", "a/\xff", ""); strings.Join(got, ",") != "ab@x,c@z" {
			t.Fatalf("after the prefix a/: %v", got)
		}
		if got, _ := scan("a", "", ""); strings.Join(got, ",") != "a@1,a@2,a@3,a/b@y,ab@x" {
			t.Fatalf("prefix a: %v", got)
		}
		if got, _ := scan("a/", "a", ids[2]); strings.Join(got, ",") != "a/b@y" {
			t.Fatalf("prefix a/ after a: %v", got)
		}
		latest := func(p string) string {
			var id string
			e.view(func(tx kv.Tx) (err error) {
				id, err = e.ns.LatestDeletion(tx, e.fs, p)
				return err
			})
			return id
		}
		if got := latest("a"); got != ids[2] {
			t.Fatalf("latest of a: %s, want %s", got, ids[2])
		}
		e.clk.Advance(2 * time.Hour) // the third deletion of a is no longer retained
		if got := latest("a"); got != ids[1] {
			t.Fatalf("latest of a after an hour: %s, want %s", got, ids[1])
		}
		if got, _ := scan("", "", ""); strings.Join(got, ",") != "a@1,a@2,a/b@y,ab@x,c@z" {
			t.Fatalf("after an hour: %v", got)
		}
		if got := latest("none"); got != "" {
			t.Fatalf("latest of none: %q", got)
		}
	})
}
