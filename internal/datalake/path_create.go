package datalake

import (
	"net/http"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// createPath is Path - Create of a file or directory
// (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/path/create),
// resource=file|directory: 201. Properties (x-ms-properties), content
// headers, permissions and umask, x-ms-acl, owner and group, a file's
// expiry, and the conditions (If-None-Match: * creates only when absent:
// 409 PathAlreadyExists). Missing parent directories are created with
// the path, as the service does: azcopy's BlobFS sender
// (ste/sender-blobFS.go, Prologue: "create" ... "could just let this call
// create the folder as needed") creates a file's parent directory before
// its ancestors, in parallel, relying on it.
// A file is created empty: its content comes with Path Update's append and
// flush. blobtype=appendblob makes the file an append blob (what Hadoop's
// ABFS driver sends for its append blob files, AbfsClient.createPath;
// see internal/blob/hns_append.go).
func (s *Service) createPath(r *req) (server.Response, error) {
	ans := &answer{}
	if !s.hier(r.Account) {
		return s.createPathFlat(r)
	}
	dir := r.q.Get("resource") == "directory"
	var appendBlob *ns.AppendState
	if bt := r.q.Get("blobtype"); bt != "" {
		if dir || !strings.EqualFold(bt, "appendblob") {
			return server.Response{}, azerr.InvalidQuery("blobtype", bt)
		}
		appendBlob = &ns.AppendState{}
	}
	md, err := parseProperties(r.Header.Get(hProperties))
	if err != nil {
		return server.Response{}, err
	}
	props, err := parseContentProps(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	perm, umask, a, err := parseACLHeaders(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	c, err := cond.Parse(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	expiry, hasExpiry, err := parseExpiry(wire.Field(r.Header, "X-Ms-Expiry-Option"), wire.Field(r.Header, "X-Ms-Expiry-Time"), r.Now)
	if err != nil {
		return server.Response{}, err
	}
	if hasExpiry && dir {
		return server.Response{}, azerr.New(azerr.ExpiryNotSupportedForDirectory)
	}
	owner, group := wire.Field(r.Header, "X-Ms-Owner"), wire.Field(r.Header, "X-Ms-Group")
	caller := r.caller()
	if caller != nil && ((owner != "" && owner != caller.User) || (group != "" && !caller.InGroup(group))) {
		// Naming another owner takes a superuser, another group the
		// owner's membership of it (Access control model in Azure Data
		// Lake Storage Gen2: "Set owner", "Set group"), as for
		// setAccessControl.
		return server.Response{}, azerr.New(azerr.AuthorizationPermissionMismatch)
	}
	acquire, err := parseCreateLease(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	in := ns.CreateInput{Path: r.path, Dir: dir, Cond: c, Metadata: md, Props: props, Permissions: perm, Umask: umask, ACL: a,
		Owner: owner, Group: group, Expiry: expiry, LeaseID: wire.Field(r.Header, "X-Ms-Lease-Id"), Acquire: acquire, Caller: caller,
		MakeParents: true, Replace: blob.PathOnline, Append: appendBlob, CPK: keySHA(r)}
	out, err := s.blob.CreatePath(r.Context(), blob.CreatePathInput{Call: r.callAs(), FS: r.fsOf(), Create: in})
	if err != nil {
		return server.Response{}, nsErr(err)
	}
	h := ans
	setETag(h, out.Node.ETag, out.Node.Modified)
	h.Set("Content-Length", "0")
	// For a directory too (azure-sdk-for-python's recorded
	// test_directory.py test_rename_from, x-ms-version 2021-08-06).
	h.Set("X-Ms-Request-Server-Encrypted", "true")
	setKeySHA(h, r)
	return ans.done(http.StatusCreated)
}

// keySHA is the SHA-256 of r's customer-provided key ("" for none): a
// file created with a key is written and read under it, and a directory
// keeps it for its metadata (azdatalake's recorded
// TestDirSetMetadataWithCPK and TestDirSetMetadataWithCPKNegative).
func keySHA(r *req) string {
	if r.cpk == nil {
		return ""
	}
	return r.cpk.SHA
}

// renamePath is Path - Create with x-ms-rename-source
// (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/path/create):
// the source, "/{filesystem}/{path}" of this account, moves to the URL's
// path in one transaction whatever it holds (ns.Rename: one entry
// rewritten), so the operation never needs a continuation. mode is posix
// (the default) or legacy; x-ms-source-if-* are conditions on the
// source, the usual conditions on the destination. A rename onto a file
// that has snapshots would delete them with it: 409 SnapshotsPresent, as
// Path - Delete of that file answers (blob.RefuseSnapshots), and nothing
// moves.
func (s *Service) renamePath(r *req) (server.Response, error) {
	ans := &answer{}
	srcFS, src, err := parseRenameSource(wire.Field(r.Header, "X-Ms-Rename-Source"), r.Account, !r.HostStyle)
	if err != nil {
		return server.Response{}, err
	}
	if err := s.authorizeRenameSource(r, srcFS, src); err != nil {
		return server.Response{}, err
	}
	mode := ns.Posix
	switch m := r.q.Get("mode"); {
	case m == "" || strings.EqualFold(m, "posix"):
	case strings.EqualFold(m, "legacy"):
		mode = ns.Legacy
	default:
		return server.Response{}, azerr.InvalidQuery("mode", m)
	}
	c, err := cond.Parse(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	sc, err := cond.ParseSource(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	in := ns.RenameInput{SourceFilesystem: srcFS, Source: src, Dest: r.path, Mode: mode, SourceCond: sc, Cond: c,
		SourceLeaseID: wire.Field(r.Header, "X-Ms-Source-Lease-Id"), LeaseID: wire.Field(r.Header, "X-Ms-Lease-Id"), Caller: r.caller()}
	out, err := s.blob.RenamePath(r.Context(), blob.RenamePathInput{Call: r.callAs(), FS: r.fsOf(), Rename: in})
	if err != nil {
		return server.Response{}, nsErr(err)
	}
	h := ans
	setETag(h, out.Node.ETag, out.Node.Modified)
	h.Set("Content-Length", "0")
	return ans.done(http.StatusCreated)
}
