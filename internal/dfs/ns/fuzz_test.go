package ns

import (
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
)

// FuzzSplitPath: an accepted path has clean components that join back to
// the path without its outer slashes.
func FuzzSplitPath(f *testing.F) {
	for _, s := range []string{"", "/", "a/b", "/a//b/", "a/./b", "a/../b", "a\x00b", "dir/file.txt"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts, err := SplitPath(s)
		if err != nil {
			if Code(err) != "InvalidResourceName" {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		for _, p := range parts {
			if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "/\x00") {
				t.Fatalf("%q: bad component %q", s, p)
			}
		}
		if strings.Join(parts, "/") != strings.Trim(s, "/") {
			t.Fatalf("%q: %q", s, parts)
		}
	})
}

// FuzzListContinuation: any continuation token either resumes a listing
// or is 400 InvalidQueryParameterValue; never a panic or another error.
func FuzzListContinuation(f *testing.F) {
	f.Add(encodeContinuation("a/b"))
	f.Add(encodeContinuation(""))
	f.Add("not base64!")
	f.Add(encodeContinuation("d/"))
	store := mem.New()
	e := newEnv(f, store)
	e.mkfile("d/a/b", "x")
	e.mkfile("d/c", "y")
	f.Fuzz(func(t *testing.T, tok string) {
		for _, dir := range []string{"", "d"} {
			err := store.View(t.Context(), func(tx kv.Tx) error {
				_, err := e.ns.List(tx, e.fs, ListInput{Dir: dir, Recursive: true, Continuation: tok, MaxResults: 1})
				return err
			})
			if err != nil && Code(err) != "InvalidQueryParameterValue" {
				t.Fatalf("%q: %v", tok, err)
			}
		}
	})
}
