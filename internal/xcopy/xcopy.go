// Package xcopy lets a copy in one storage service read its source from
// another service of the same server: Copy File and Put Range From URL
// from a blob, Copy Blob and the *FromURL blob writes from a file (what
// azcopy does between Blob and Files). It is the front ends' half: which
// URL names the other service (Peer), authorizing it, and resolving it
// into the other domain's copysrc.Reader, which the copy calls inside its
// own transaction.
package xcopy

import (
	"net"
	"net/url"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/copysrc"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Source is a service whose objects copies may read.
type Source interface {
	// AuthorizeCopySource checks that r may read the object at path
	// (path-style, "/{account}/…", decoded) given the source URL's query
	// q: a SAS on q is verified as one of the source's service; without
	// one, sharedKey says whether the request's own Shared Key authorizes
	// a source of its account. Failures are CannotVerifyCopySource.
	AuthorizeCopySource(r *server.Request, path string, q url.Values, sharedKey bool) error
	// CopySourceReader resolves the object at path (as for
	// AuthorizeCopySource) given the source URL's query q, which
	// AuthorizeCopySource has authorized, into the reader a copy calls
	// inside its transaction; nothing of the request is read inside it.
	// The caller checks the range it reads with Object.Readable.
	CopySourceReader(path string, q url.Values) (copysrc.Reader, error)
}

// Peer is another service of this server, reachable for copies.
type Peer struct {
	Source
	Kind string // "blob" or "file": its Azure host is {account}.{Kind}.core.windows.net
	Port string // the port it listens on
}

// Match reports whether u names an object of p, and returns its
// path-style path: u's host is p's Azure host name, or any host with p's
// port (a client reaches this server by many names: 127.0.0.1,
// localhost, a container's name).
func (p *Peer) Match(u *url.URL) (string, bool) {
	if p == nil || p.Source == nil {
		return "", false
	}
	if path, azure := wire.SourcePath(u, p.Kind); azure {
		return path, true
	}
	if _, port, err := net.SplitHostPort(u.Host); err == nil && port == p.Port && !strings.HasSuffix(strings.ToLower(u.Hostname()), ".core.windows.net") {
		return u.Path, true
	}
	return "", false
}

// SplitPath splits a path-style source path "/{account}/{top}/{rest}"
// (top a container or share, rest a blob name or file path, all three
// non-empty). The account may be another than the request's: Copy Blob
// and Copy File read "a blob or file in any account" authorized by its
// SAS (Copy Blob,
// https://learn.microsoft.com/en-us/rest/api/storageservices/copy-blob;
// Copy File, https://learn.microsoft.com/en-us/rest/api/storageservices/copy-file),
// so each source decides how a source of another account is authorized.
func SplitPath(path string) (acct, top, rest string, err error) {
	segs := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 3)
	if len(segs) != 3 || segs[0] == "" || segs[1] == "" || segs[2] == "" {
		return "", "", "", azerr.InvalidHeader("x-ms-copy-source", path)
	}
	return segs[0], segs[1], segs[2], nil
}

// In returns r as a request of account acct (itself when acct is r's):
// a copy source of another account served here is authorized with that
// account's keys and stored access policies, and read from its data.
func In(r *server.Request, acct string) *server.Request {
	if acct == r.Account {
		return r
	}
	o := *r
	o.Account = acct
	return &o
}
