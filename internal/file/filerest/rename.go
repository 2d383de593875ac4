package filerest

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Rename File and Rename Directory (version 2021-04-10 and later).
//
// The request's path is the destination; x-ms-file-rename-source names
// the source. A rename is one transaction that moves one entry record:
// a directory's children are keyed by its file ID, so they follow it
// without being touched, and the file ID (hence the handles, leases and
// snapshots' view of it) stays the same.

// renameSource parses x-ms-file-rename-source: the URL of the source in
// the request's share, as the SDKs send it (the source client's URL,
// possibly with its SAS) (azfile directory.Client.Rename sends
// d.URL()), or an absolute path "/account/share/path". It returns the
// source's path components and the URL's query.
func renameSource(r *req) ([]string, url.Values, error) {
	const name = "x-ms-file-rename-source"
	raw := r.Header.Get(name)
	if raw == "" {
		return nil, nil, azerr.MissingHeader(name)
	}
	u, err := url.Parse(raw)
	if err != nil || !strings.HasPrefix(u.Path, "/") {
		return nil, nil, azerr.InvalidHeader(name, raw)
	}
	// A rename moves live items only: a snapshot is read-only (the code
	// is inferred).
	if u.Query().Get("sharesnapshot") != "" {
		return nil, nil, azerr.New(azerr.ShareSnapshotOperationNotSupported)
	}
	segs := strings.SplitN(strings.TrimPrefix(u.Path, "/"), "/", 3)
	if len(segs) < 2 || segs[0] != r.Account {
		return nil, nil, azerr.InvalidHeader(name, raw)
	}
	// "This API does not support renaming a directory from one share to
	// another, or between storage accounts" (the .NET SDK's
	// ShareDirectoryClient.RenameAsync documentation); the code is inferred.
	if segs[1] != r.share {
		return nil, nil, azerr.Newf(azerr.InvalidInput, "The rename source must be in the destination's share.")
	}
	p := ""
	if len(segs) == 3 {
		p = strings.TrimSuffix(segs[2], "/")
	}
	if p == "" {
		// The share root cannot be renamed (the code is inferred).
		return nil, nil, azerr.Newf(azerr.InvalidInput, "The share root cannot be renamed.")
	}
	comps, err := splitPath(p, sourceAllowsTrailingDot(r.Header))
	return comps, u.Query(), err
}

// renameRequest holds the parsed headers of a rename.
type renameRequest struct {
	src         []string
	srcQuery    url.Values // the source URL's query (its SAS, if any)
	replace     bool
	ignoreRO    bool
	srcLease    string
	dstLease    string
	smb         *file.SMBRequest
	meta        map[string]string // nil: preserve
	contentType *string           // files only; nil: preserve
}

func parseRename(r *req, dir bool) (*renameRequest, error) {
	if err := requireEmptyBody(r); err != nil {
		return nil, err
	}
	rr := &renameRequest{srcLease: wire.Field(r.Header, "X-Ms-Source-Lease-Id"), dstLease: wire.Field(r.Header, "X-Ms-Destination-Lease-Id")}
	var err error
	if rr.src, rr.srcQuery, err = renameSource(r); err != nil {
		return nil, err
	}
	if rr.replace, err = flagHeader(r.Header, "x-ms-file-rename-replace-if-exists"); err != nil {
		return nil, err
	}
	if rr.ignoreRO, err = flagHeader(r.Header, "x-ms-file-rename-ignore-readonly"); err != nil {
		return nil, err
	}
	// Rename File,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/rename-file:
	// "If true, x-ms-file-rename-replace-if-exists must also be true"; the
	// code is inferred.
	if rr.ignoreRO && !rr.replace {
		return nil, azerr.InvalidHeader("x-ms-file-rename-ignore-readonly", "true")
	}
	// Absent SMB headers preserve the source's properties; the change
	// time becomes now, as for any metadata change.
	if rr.smb, err = parseSMB(r.Header, false); err != nil {
		return nil, err
	}
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return nil, err
	}
	if len(meta) > 0 {
		rr.meta = meta
	}
	// x-ms-content-type sets the renamed file's type; absent, it is preserved
	// (Rename File,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/rename-file).
	if vs := r.Header["X-Ms-Content-Type"]; !dir && len(vs) > 0 {
		rr.contentType = &vs[0]
	}
	return rr, nil
}

func (s *Service) renameFile(r *req) (server.Response, error) {
	return s.rename(r, false)
}

func (s *Service) renameDirectory(r *req) (server.Response, error) {
	return s.rename(r, true)
}

// rename moves the source (a file, or a directory when dir) to the
// request's path. Outcomes, in the order they are checked:
//
//   - source missing, or not of the operation's kind: 404
//     ResourceNotFound (azfile TestDirectoryRenameDefault et al.);
//   - destination parent missing: 404 ParentNotFound (azfile
//     TestDirectoryRenameParentNotFound);
//   - source leased (files): the source lease ID is required as for a
//     write (412 LeaseIdMissing / LeaseIdMismatchWithFileOperation) (Rename File);
//   - a directory moved into its own subtree: 400 InvalidInput (NTFS
//     refuses the move; the code is inferred);
//   - destination exists (another entry): without replace-if-exists 409
//     ResourceAlreadyExists (azfile TestDirectoryRenameIgnoreReadOnly);
//     a directory is never replaced, even with replace-if-exists: 409
//     ResourceAlreadyExists (microsoft/AzureStorageExplorer#6593, maintainer:
//     "the Rest rename API does not support overwriting a directory"; the
//     code is inferred); a read-only file needs ignore-readonly: ReadOnlyAttribute
//     (the same azfile test); a leased file needs the destination lease ID
//     (azfile TestDirectoryRenameDestLease). A file may be replaced by a directory
//     (azfile TestDirectoryRenameIgnoreReadOnly). The replaced file's data
//     references are released in the same transaction.
//
// Renaming an item onto its own path (or a case variant of it) changes
// only its name's case. The handler parses the headers; the rename is the
// domain's (domain.rename), the one SMB's FileRenameInformation uses.
func (s *Service) rename(r *req, dir bool) (server.Response, error) {
	rr, err := parseRename(r, dir)
	if err != nil {
		return server.Response{}, err
	}
	if r.sas != nil {
		if err := s.authorizeRenameSource(r, rr); err != nil {
			return server.Response{}, err
		}
	}
	out, err := s.f.Rename(r.Context(), file.RenameInput{Ref: refOf(r), Source: rr.src, Dir: dir, Replace: rr.replace, IgnoreReadOnly: rr.ignoreRO,
		SourceLease: rr.srcLease, DestLease: rr.dstLease, SMB: rr.smb, Meta: rr.meta, ContentType: rr.contentType})
	if err != nil {
		return server.Response{}, err
	}
	return entryWritten(out.Entry, http.StatusOK), nil
}

// renameSourceRule is what a SAS must grant on the source of a rename:
// the source is removed from its path, a write to it (inferred; azfile's
// TestDirectoryRenameUsingSAS renames with a share SAS of r, c, w).
var renameSourceRule = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "wd"}

// authorizeRenameSource authorizes the source of a SAS-authorized
// rename: the request's SAS covers only the destination, so the source
// must be covered by the SAS its URL carries (as the SDKs send it) or,
// without one, by the request's own SAS (a share or account SAS covers
// every path of the share; a file SAS signed for the destination fails
// verification for another path). Under Shared Key the account key
// authorizes both.
func (s *Service) authorizeRenameSource(r *req, rr *renameRequest) error {
	q := rr.srcQuery
	if !q.Has("sig") {
		q = r.URL.Query()
	}
	_, err := r.AuthorizeSourceSAS(q, server.SASTarget{Container: r.share, Path: strings.Join(rr.src, "/")}, s.policies(r, r.share), renameSourceRule)
	return err
}
