package blobrest

import (
	"net/http"
	"net/url"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/kv"
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
	return xcopy.Failure(http.StatusUnauthorized, azerr.NoAuthenticationInformation, "Server failed to authenticate the request. The copy source must carry a shared access signature.")
}

// ReadCopySource implements xcopy.Source: the blob (or, with ?snapshot=,
// the snapshot) at path. Missing: 404 CannotVerifyCopySource; archived:
// 409 BlobArchived, as a read of it.
func (s *Service) ReadCopySource(tx kv.Tx, _ time.Time, path string, q url.Values) (*xcopy.Object, error) {
	acct, cont, name, err := xcopy.SplitPath(path)
	if err != nil {
		return nil, err
	}
	name = blobName(name)
	snap := q.Get("snapshot")
	if snap != "" {
		t, err := wire.ParseSnapshot(snap)
		if err != nil {
			return nil, azerr.InvalidHeader("x-ms-copy-source", snap)
		}
		snap = wire.FormatISO7(t)
	}
	b, err := s.ReadSource(tx, blob.BlobRef{Account: acct, Container: cont, Blob: name, Snapshot: snap})
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, xcopy.Failure(http.StatusNotFound, azerr.BlobNotFound, "The specified blob does not exist.")
	}
	if b.CPK != "" {
		// Written with a customer-provided key: its data items are
		// encrypted and a copy to a file sends no key (as Copy Blob).
		return nil, xcopy.Failure(http.StatusConflict, azerr.BlobUsesCustomerSpecifiedEncryption, azerr.New(azerr.BlobUsesCustomerSpecifiedEncryption).Message)
	}
	return &xcopy.Object{
		Size: b.Size, Parts: b.Parts, ETag: b.ETag, Created: b.Created, Modified: b.Modified, Meta: b.Meta,
		Props: xcopy.Props(b.Props),
	}, nil
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
	u, err := url.Parse(r.Header.Get("x-ms-copy-source"))
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

// object reads the file inside tx, at now, as a copy source: its content,
// HTTP properties and metadata, and the check, in the same transaction,
// that the range the copy reads is not locked.
func (f *fileSource) object(tx kv.Tx, now time.Time) (*blob.SourceObject, error) {
	o, err := f.peer.ReadCopySource(tx, now, f.path, f.q)
	if err != nil {
		return nil, err
	}
	return &blob.SourceObject{
		Size: o.Size, Parts: o.Parts, ETag: o.ETag, Created: o.Created, Modified: o.Modified, Meta: o.Meta,
		Props: blob.HTTPHeaders(o.Props), Readable: o.Readable,
	}, nil
}
