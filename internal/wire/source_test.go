package wire

import (
	"net/url"
	"testing"
)

func TestSourcePath(t *testing.T) {
	for _, c := range []struct {
		raw, service, path string
		azure              bool
	}{
		{"http://127.0.0.1:10000/devstoreaccount1/c/b", "blob", "/devstoreaccount1/c/b", false},
		{"https://devstoreaccount1.blob.core.windows.net/c/b/x", "blob", "/devstoreaccount1/c/b/x", true},
		{"https://DevStoreAccount1.Blob.Core.Windows.Net:443/c/b", "blob", "/devstoreaccount1/c/b", true},
		{"https://acct.file.core.windows.net/share/d/f", "file", "/acct/share/d/f", true},
		{"https://acct.file.core.windows.net/share/f", "blob", "/share/f", false}, // another service
		{"https://a.b.blob.core.windows.net/c/b", "blob", "/c/b", false},
		{"https://blob.core.windows.net/c/b", "blob", "/c/b", false},
		{"https://evil.example/acct.blob.core.windows.net/c", "blob", "/acct.blob.core.windows.net/c", false},
	} {
		u, err := url.Parse(c.raw)
		if err != nil {
			t.Fatal(err)
		}
		p, azure := SourcePath(u, c.service)
		if p != c.path || azure != c.azure {
			t.Errorf("SourcePath(%q, %s) = %q, %v; want %q, %v", c.raw, c.service, p, azure, c.path, c.azure)
		}
	}
}
