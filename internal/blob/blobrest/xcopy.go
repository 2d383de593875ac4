package blobrest

import (
	"net/http"
	"net/url"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/copysrc"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
	"github.com/cerulean-storage/cerulean/internal/xcopy"
)

// Blobs as the source of the File service's copies (xcopy.Source), and
// files as the source of Copy Blob and the *FromURL writes (SetFilePeer).

var _ xcopy.Source = (*Service)(nil)

// SetFilePeer names the File service of this server, from which Copy
// Blob and the *FromURL writes may read a file.
func (s *Service) SetFilePeer(p *xcopy.Peer) { s.filePeer.Store(p) }

// AuthorizeCopySource implements xcopy.Source: a SAS on the source URL
// must grant reading the blob as Get Blob would; without one, the
// request's Shared Key (when sharedKey allows it) or the container's
// public access authorizes it (401 CannotVerifyCopySource otherwise, the
// status an anonymous read of a private blob gets). A blob of another
// account served here is read as Azure reads one: by its SAS, verified
// with that account's keys, or by public access (the request's Shared
// Key covers only its own account).
func (s *Service) AuthorizeCopySource(sr *server.Request, path string, q url.Values, sharedKey bool) error {
	acct, cont, name, err := xcopy.SplitPath(path)
	if err != nil {
		return err
	}
	name = blobName(name)
	if sharedKey && sr.Authenticated && !q.Has("sig") && acct == sr.Account {
		return nil
	}
	ok, err := s.sourceReadable(xcopy.In(sr, acct), cont, name, q)
	if err != nil || ok {
		return err
	}
	return copysrc.Failure(http.StatusUnauthorized, azerr.NoAuthenticationInformation, "Server failed to authenticate the request. The copy source must carry a shared access signature.")
}

// CopySourceReader implements xcopy.Source: the blob (or, with
// ?snapshot=, the snapshot) at path, read by the Blob domain
// (blob.Service.SourceReader).
func (s *Service) CopySourceReader(path string, q url.Values) (copysrc.Reader, error) {
	acct, cont, name, err := xcopy.SplitPath(path)
	if err != nil {
		return nil, err
	}
	snap := q.Get("snapshot")
	if snap != "" {
		t, err := wire.ParseSnapshot(snap)
		if err != nil {
			return nil, azerr.InvalidHeader("x-ms-copy-source", snap)
		}
		snap = wire.FormatISO7(t)
	}
	return s.SourceReader(blob.BlobRef{Account: acct, Container: cont, Blob: blobName(name), Snapshot: snap}), nil
}

// fileSource is a file of this server named by x-ms-copy-source, for
// Copy Blob and the *FromURL writes: nil when the source is a blob.
type fileSource struct {
	peer *xcopy.Peer
	path string
	q    url.Values
}

// fileCopySource returns the file x-ms-copy-source names, if it names one.
func (s *Service) fileCopySource(r *req) *fileSource {
	u, err := url.Parse(wire.Field(r.Header, "X-Ms-Copy-Source"))
	if err != nil {
		return nil
	}
	peer := s.filePeer.Load()
	path, ok := peer.Match(u)
	if !ok {
		return nil
	}
	return &fileSource{peer: peer, path: path, q: u.Query()}
}
