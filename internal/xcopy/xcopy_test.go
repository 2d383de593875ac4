package xcopy

import (
	"net/url"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/copysrc"
	"github.com/cerulean-storage/cerulean/internal/server"
)

type nopSource struct{}

func (nopSource) AuthorizeCopySource(*server.Request, string, url.Values, bool) error { return nil }
func (nopSource) CopySourceReader(string, url.Values) (copysrc.Reader, error)         { return nil, nil }

func TestPeerMatch(t *testing.T) {
	p := &Peer{Source: nopSource{}, Kind: "blob", Port: "10000"}
	for _, c := range []struct {
		url, path string
		ok        bool
	}{
		{"http://127.0.0.1:10000/acct/c/b", "/acct/c/b", true},
		{"http://localhost:10000/acct/c/dir/b%20x?sv=1&sig=x", "/acct/c/dir/b x", true},
		{"https://acct.blob.core.windows.net/c/b", "/acct/c/b", true},
		{"https://ACCT.Blob.Core.Windows.Net:443/c/b", "/acct/c/b", true},
		{"http://127.0.0.1:10003/acct/s/f", "", false},
		{"https://acct.file.core.windows.net/s/f", "", false},
		{"https://acct.file.core.windows.net:10000/s/f", "", false},
		{"http://127.0.0.1/acct/c/b", "", false},
	} {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		path, ok := p.Match(u)
		if ok != c.ok || path != c.path {
			t.Errorf("Match(%s) = %q, %v; want %q, %v", c.url, path, ok, c.path, c.ok)
		}
	}
	var none *Peer
	if _, ok := none.Match(&url.URL{Host: "127.0.0.1:10000", Path: "/a/b/c"}); ok {
		t.Error("nil peer matched")
	}
}
