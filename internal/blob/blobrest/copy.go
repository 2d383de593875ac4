package blobrest

import (
	"crypto/md5"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/blobtags"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// copySource parses x-ms-copy-source: a URL of a blob of this server,
// path-style or with the account in an Azure host name (see
// wire.SourcePath), optionally with ?snapshot=. The source may be in
// another account served here (acct differs from r.Account): see
// authorizeSource.
func copySource(r *req) (acct, container, name, snap string, err error) {
	raw := wire.Field(r.Header, "X-Ms-Copy-Source")
	u, perr := url.Parse(raw)
	// A URL, not a path: "/account/container/blob" (the form before
	// version 2012-02-12) is 400 InvalidHeaderValue, as the service
	// answers it (Azure/azure-storage-node#594).
	if perr != nil || u.Path == "" || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", "", "", "", azerr.InvalidHeader("x-ms-copy-source", raw)
	}
	path, _ := wire.SourcePath(u, "blob")
	segs := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 3)
	if len(segs) != 3 || segs[0] == "" || segs[1] == "" || segs[2] == "" {
		return "", "", "", "", azerr.New(azerr.InvalidSourceBlobURL)
	}
	snap = u.Query().Get("snapshot")
	if vid := u.Query().Get("versionid"); vid != "" && snap == "" {
		// A version as the source (restoring a version is copying it
		// onto the base blob): versionSource reads it back.
		if _, err := wire.ParseSnapshot(vid); err != nil {
			return "", "", "", "", azerr.InvalidHeader("x-ms-copy-source", raw)
		}
	}
	if snap != "" {
		t, err := wire.ParseSnapshot(snap)
		if err != nil {
			return "", "", "", "", azerr.InvalidHeader("x-ms-copy-source", raw)
		}
		snap = wire.FormatISO7(t)
	}
	return segs[0], segs[1], blobName(segs[2]), snap, nil
}

// authorizeSource authorizes the blob source acct/cont/name of a copy
// (Copy Blob, Put Blob From URL, Put Block From URL, Append Block From
// URL, Put Page From URL). A source of the request's own account is
// covered by its Shared Key; with a SAS on the destination, the source
// needs its own SAS or public access. A source in another account is
// read as Azure reads one (Copy Blob reference, "Authorization": the
// source blob in another account must be public or authorized by a
// SAS): its SAS is verified with that account's keys and stored access
// policies.
func (s *Service) authorizeSource(r *req, acct, cont, name string) error {
	if v := wire.Field(r.Header, "X-Ms-Copy-Source-Authorization"); v != "" {
		// The source read with the caller's Entra ID token (Copy Blob
		// From URL, Put Blob From URL, Put Block From URL:
		// "x-ms-copy-source-authorization ... Only the bearer scheme is
		// supported"); a valid token reads any account here, as it
		// grants the whole account in the basic OAuth mode.
		return r.VerifySourceBearer(v, acct, auth.Blob)
	}
	if acct == r.Account {
		return s.authorizeCopySource(r, cont, name)
	}
	other := *r.Request
	other.Account = acct
	u, err := url.Parse(wire.Field(r.Header, "X-Ms-Copy-Source"))
	if err != nil {
		return azerr.Newf(azerr.CannotVerifyCopySource, "The copy source URL is not valid.").WithStatus(http.StatusForbidden)
	}
	ok, err := s.sourceReadable(&other, cont, name, u.Query())
	if err != nil || ok {
		return err
	}
	// No container there (or no such account on this server): the
	// source does not exist, 404 as for a missing source blob.
	_, err = s.GetContainerACL(r.Context(), blob.GetContainerACLInput{Ref: blob.ContainerRef{Account: acct, Container: cont}})
	if azerr.Has(err, azerr.ContainerNotFound) {
		return azerr.Newf(azerr.CannotVerifyCopySource, "The specified blob does not exist.")
	}
	if err != nil {
		return err
	}
	return azerr.Newf(azerr.CannotVerifyCopySource, "The copy source in another account is not public and carries no SAS.").WithStatus(http.StatusForbidden)
}

// copyBlob is Copy Blob's and Copy Blob From URL's REST handler.
func (s *Service) copyBlob(r *req) (server.Response, error) {
	if err := wire.ValidBlobName(r.name); err != nil {
		return server.Response{}, err
	}
	in := blob.CopyBlobInput{Call: r.call(), Ref: r.ref(), CreateOnly: r.createOnly()}
	in.Source.URL = wire.Field(r.Header, "X-Ms-Copy-Source")
	if fsrc := s.fileCopySource(r); fsrc != nil {
		// A file of this account: the request's Shared Key authorizes
		// it, as it does a blob of the account; a SAS request needs a
		// SAS on the source.
		if err := fsrc.peer.AuthorizeCopySource(r.Request, fsrc.path, fsrc.q, true); err != nil {
			return server.Response{}, err
		}
		rd, err := fsrc.peer.CopySourceReader(fsrc.path, fsrc.q)
		if err != nil {
			return server.Response{}, err
		}
		in.Source.File = rd
	} else {
		acct, c, name, snap, err := copySource(r)
		if err != nil {
			return server.Response{}, err
		}
		if err := s.authorizeSource(r, acct, c, name); err != nil {
			return server.Response{}, err
		}
		in.Source.Blob = blob.BlobRef{Account: acct, Container: c, Blob: name, Snapshot: snap, VersionID: versionSource(r, snap)}
	}
	var err error
	if in.Sync, err = parseBoolHeader(r.Header, "X-Ms-Requires-Sync", "x-ms-requires-sync"); err != nil {
		return server.Response{}, err
	}
	conds, err := cond.Parse(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	in.Access = r.access(conds)
	if in.Source.Cond, err = cond.ParseSource(r.Header); err != nil {
		return server.Response{}, err
	}
	in.Source.LeaseID = wire.Field(r.Header, "X-Ms-Source-Lease-Id")
	if in.Metadata, err = wire.ParseMetadata(r.Header); err != nil {
		return server.Response{}, err
	}
	// Tags come from x-ms-tags; Copy Blob From URL may copy the source's
	// instead (x-ms-copy-source-tag-option: COPY).
	if in.Tags, in.CopyTags, err = tagsForCopy(r, in.Sync); err != nil {
		return server.Response{}, err
	}
	in.Tier = wire.Field(r.Header, "X-Ms-Access-Tier")
	if in.Immutability, err = writeImmutability(r.Header); err != nil {
		return server.Response{}, err
	}
	if v := wire.Field(r.Header, "X-Ms-Seal-Blob"); v != "" && !in.Sync {
		seal, err := strconv.ParseBool(v)
		if err != nil {
			return server.Response{}, azerr.InvalidHeader("x-ms-seal-blob", v)
		}
		in.Seal = &seal
	}
	if v := wire.Field(r.Header, "X-Ms-Source-Content-Md5"); v != "" && in.Sync {
		if in.SourceContentMD5, err = base64.StdEncoding.DecodeString(v); err != nil || len(in.SourceContentMD5) != md5.Size {
			return server.Response{}, azerr.InvalidHeader("x-ms-source-content-md5", v)
		}
	}
	out, err := s.CopyBlob(r.Context(), in)
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusAccepted, 6)
	setETag(&resp, out.ETag, out.LastModified)
	resp.Set("X-Ms-Copy-Id", out.CopyID)
	resp.Set("X-Ms-Copy-Status", out.CopyStatus)
	setVersionID(&resp, out.VersionID)
	if out.ContentMD5 != nil {
		resp.Set("Content-Md5", base64.StdEncoding.EncodeToString(out.ContentMD5))
	}
	return resp, nil
}

// abortCopyBlob: copies complete synchronously, so there is never a
// pending copy to abort (409 NoPendingCopyOperation), after the usual
// existence and lease checks.
func (s *Service) abortCopyBlob(r *req) (server.Response, error) {
	if wire.Field(r.Header, "X-Ms-Copy-Action") != "abort" {
		return server.Response{}, azerr.InvalidHeader("x-ms-copy-action", wire.Field(r.Header, "X-Ms-Copy-Action"))
	}
	id := r.q.Get("copyid")
	if id == "" {
		return server.Response{}, azerr.New(azerr.MissingRequiredQueryParameter).With("QueryParameterName", "copyid")
	}
	if err := s.AbortCopyBlob(r.Context(), blob.AbortCopyBlobInput{Call: r.call(), Ref: r.ref(), LeaseID: wire.Field(r.Header, "X-Ms-Lease-Id"), CopyID: id}); err != nil {
		return server.Response{}, err
	}
	// Not reached (AbortCopyBlob always refuses): the 200 net/http
	// answered when the handler wrote nothing.
	return server.Bodiless(http.StatusOK), nil
}

// tagsForCopy reads the tags of a copy's destination: x-ms-tags, or, when
// allowed and x-ms-copy-source-tag-option is COPY, the source's (copy
// true).
func tagsForCopy(r *req, copyAllowed bool) (tags blobtags.Tags, copy bool, err error) {
	if tags, err = requestTags(r); err != nil {
		return nil, false, err
	}
	switch opt := wire.Field(r.Header, "X-Ms-Copy-Source-Tag-Option"); {
	case opt == "", strings.EqualFold(opt, "REPLACE"):
		return tags, false, nil
	case strings.EqualFold(opt, "COPY") && copyAllowed:
		if tags != nil {
			return nil, false, azerr.Newf(azerr.InvalidHeaderValue, "x-ms-tags cannot be given with x-ms-copy-source-tag-option: COPY.").With("HeaderName", "x-ms-tags").With("HeaderValue", wire.Field(r.Header, "X-Ms-Tags"))
		}
		return nil, true, nil
	default:
		return nil, false, azerr.InvalidHeader("x-ms-copy-source-tag-option", opt)
	}
}
