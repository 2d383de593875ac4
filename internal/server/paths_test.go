package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestPathsSplit: the level and names of each path shape, for a flat
// service (Blob, File), one with sub-paths (Queue) and one trimming its
// paths (Data Lake).
func TestPathsSplit(t *testing.T) {
	const (
		account Level = 1 << iota
		first
		rest
		messages
		message
	)
	flat := &Paths{Account: account, First: first, Rest: rest}
	subs := &Paths{Account: account, First: first, Subs: []SubPath{{Name: "messages", Level: messages, Item: message}}}
	trim := &Paths{Account: account, First: first, Rest: rest, Trim: true}
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
