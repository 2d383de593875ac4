package ns

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

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
		for _, dir := range []string{"", "d", "d/c"} {
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

// FuzzListDeletedMarker: any marker of List Deleted Paths gives a page or
// 400 InvalidQueryParameterValue, and a page never repeats the entry the
// marker names.
func FuzzListDeletedMarker(f *testing.F) {
	f.Add("ZA.1")
	f.Add("")
	f.Add("not base64!.1")
	f.Add("ZA.")
	f.Add(".")
	store := mem.New()
	e := newEnv(f, store)
	e.mkfile("d/a", "x")
	e.mkfile("e", "y")
	for _, p := range []string{"d", "e"} {
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: p, Recursive: true, Retain: time.Hour})
			return err
		})
	}
	f.Fuzz(func(t *testing.T, marker string) {
		err := store.View(t.Context(), func(tx kv.Tx) error {
			page, _, err := e.ns.ListDeleted(tx, e.fs, ListDeletedInput{Marker: marker, Max: 1})
			if err == nil && len(page) > 0 && marker != "" {
				raw, _, _ := strings.Cut(marker, ".")
				if p, derr := base64.RawURLEncoding.DecodeString(raw); derr == nil && string(p) == page[0].Path && strings.HasSuffix(marker, "."+page[0].DeletionID) {
					t.Fatalf("%q: the page repeats the marker's entry", marker)
				}
			}
			return err
		})
		if err != nil && Code(err) != "InvalidQueryParameterValue" {
			t.Fatalf("%q: %v", marker, err)
		}
	})
}
