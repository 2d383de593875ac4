package server

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// The test levels: a flat service's three, Queue's two sub-path ones.
const (
	account Level = 1 << iota
	first
	rest
	messages
	message
)

// The three shapes of Paths: flat (Blob, File), with sub-paths (Queue),
// trimmed (Data Lake).
var (
	flat = &Paths{Account: account, First: first, Rest: rest}
	subs = &Paths{Account: account, First: first, Subs: []SubPath{{Name: "messages", Level: messages, Item: message}}}
	trim = &Paths{Account: account, First: first, Rest: rest, Trim: true}
)

// TestPathsSplit: the level and names of each path shape, for a flat
// service (Blob, File), one with sub-paths (Queue) and one trimming its
// paths (Data Lake).
func TestPathsSplit(t *testing.T) {
	for _, c := range []struct {
		p    *Paths
		path string
		want Path
	}{
		{flat, "/acct", Path{Level: account}},
		{flat, "/acct/", Path{Level: account}},
		{flat, "/acct//b", Path{Level: account}},
		{flat, "/acct/c", Path{Level: first, First: "c"}},
		{flat, "/acct/c/", Path{Level: first, First: "c"}},
		{flat, "/acct/c/b", Path{Level: rest, First: "c", Rest: "b"}},
		{flat, "/acct/c/dir/b/", Path{Level: rest, First: "c", Rest: "dir/b/"}},
		{flat, "/acct/c/a%2Fb", Path{Level: rest, First: "c", Rest: "a/b"}},
		{flat, "/acct/c//double//slashes", Path{Level: rest, First: "c", Rest: "/double//slashes"}},
		{subs, "/acct/q", Path{Level: first, First: "q"}},
		{subs, "/acct/q/messages", Path{Level: messages, First: "q", Rest: "messages"}},
		{subs, "/acct/q/messages/id", Path{Level: message, First: "q", Rest: "messages/id", Item: "id"}},
		{subs, "/acct/q/messages/", Path{First: "q", Rest: "messages/"}},
		{subs, "/acct/q/messages/id/x", Path{First: "q", Rest: "messages/id/x"}},
		{subs, "/acct/q/other", Path{First: "q", Rest: "other"}},
		{trim, "/acct/fs/", Path{Level: first, First: "fs"}},
		{trim, "/acct/fs//", Path{Level: first, First: "fs"}},
		{trim, "/acct/fs/dir/", Path{Level: rest, First: "fs", Rest: "dir"}},
		{trim, "/acct/fs/a/b", Path{Level: rest, First: "fs", Rest: "a/b"}},
	} {
		hr := httptest.NewRequest(http.MethodGet, "http://h"+c.path, nil)
		if got := c.p.Split(&Request{Request: hr}); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.path, got, c.want)
		}
	}
}

// FuzzPathsSplit: for any decoded path, Split gives one of the levels it
// was told of (or 0 below a first name with Subs), a first name only
// beyond the account level, the rest as the path's end after it (inside
// the path when trimmed), and an item only at an item level.
func FuzzPathsSplit(f *testing.F) {
	for _, p := range []string{"/acct", "/acct/c", "/acct/c/b/d", "/acct//x", "/acct/q/messages/id", "/acct/q/messages/", "/acct/fs//d//", "/"} {
		f.Add(p)
	}
	shapes := []*Paths{flat, subs, trim}
	f.Fuzz(func(t *testing.T, path string) {
		r := &Request{Request: &http.Request{URL: &url.URL{Path: path}}}
		for i, p := range shapes {
			got := p.Split(r)
			switch got.Level {
			case account:
				if got.First != "" || got.Rest != "" || got.Item != "" {
					t.Fatalf("shape %d, %q: names at the account level: %+v", i, path, got)
				}
				continue
			case first:
				if got.Rest != "" {
					t.Fatalf("shape %d, %q: a rest at the first level: %+v", i, path, got)
				}
			case rest, messages, message, 0:
				if got.Level == 0 && p.Subs == nil {
					t.Fatalf("shape %d, %q: no level without Subs", i, path)
				}
			default:
				t.Fatalf("shape %d, %q: level %d was never declared", i, path, got.Level)
			}
			if got.First == "" || strings.Contains(got.First, "/") {
				t.Fatalf("shape %d, %q: first name %q", i, path, got.First)
			}
			if held := strings.HasSuffix(path, "/"+got.First+"/"+got.Rest) || (p.Trim || got.Rest == "") && strings.Contains(path, got.Rest); !held {
				t.Fatalf("shape %d, %q: %+v is not what the path holds", i, path, got)
			}
			if (got.Item != "") != (got.Level == message) || strings.Contains(got.Item, "/") || !strings.HasSuffix(got.Rest, got.Item) {
				t.Fatalf("shape %d, %q: item %q at level %d", i, path, got.Item, got.Level)
			}
		}
	})
}
