package filerest

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/copysrc"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
	"github.com/cerulean-storage/cerulean/internal/xcopy"
)

// maxCopySourceLen is the longest x-ms-copy-source accepted: "up to 2 KiB"
// (Copy File,
// https://learn.microsoft.com/en-us/rest/api/storageservices/copy-file, Put
// Range from URL).
const maxCopySourceLen = 2 << 10

// copySource is a parsed x-ms-copy-source naming a file of this account,
// or a blob (blob set): the domain's file.CopySource and what
// authorizing it takes.
type copySource struct {
	file.CopySource
	blob  *xcopy.Peer // the Blob service, when the source is a blob
	bpath string      // the blob's path-style path
	query url.Values
}

// parseCopySource reads x-ms-copy-source: a path-style URL of a file of this
// File service (/{account}/{share}/{path}, or with the account in an Azure
// host name: see wire.SourcePath), optionally of a share snapshot
// (?sharesnapshot=) and with a SAS. Trailing dots of the path follow
// x-ms-source-allow-trailing-dot. The source may be in another account
// served here (see authorizeCopySource); a source on another host (another
// server) cannot be read: 404 CannotVerifyCopySource (inferred). A blob of
// this server's Blob service is read
// through it (see xcopy): Copy File and Put Range From URL copy "a blob or
// file" (Copy File,
// https://learn.microsoft.com/en-us/rest/api/storageservices/copy-file).
func (s *Service) parseCopySource(r *req) (*copySource, error) {
	raw := wire.Field(r.Header, "X-Ms-Copy-Source")
	if raw == "" {
		return nil, azerr.MissingHeader("x-ms-copy-source")
	}
	if len(raw) > maxCopySourceLen {
		return nil, azerr.InvalidHeader("x-ms-copy-source", raw)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Path == "" {
		return nil, azerr.InvalidHeader("x-ms-copy-source", raw)
	}
	if peer := s.blobPeer.Load(); peer != nil {
		if bpath, ok := peer.Match(u); ok {
			q := u.Query()
			cs := &copySource{blob: peer, bpath: bpath, query: q}
			cs.Raw = raw
			if cs.Blob, err = peer.CopySourceReader(bpath, q); err != nil {
				return nil, err
			}
			return cs, nil
		}
	}
	path, azureHost := wire.SourcePath(u, "file")
	if !azureHost && !strings.EqualFold(u.Host, r.Host) {
		return nil, azerr.Newf(azerr.CannotVerifyCopySource, "The copy source is not a file of this File service; this server copies only from files of the same account.")
	}
	return newCopySource(raw, path, u.Query(), sourceAllowsTrailingDot(r.Header))
}

// newCopySource is the file at path ("/{account}/{share}/{path}", from
// the source URL raw whose query is q) as a copy source; trailing dots
// of the path are kept when trailingDot.
func newCopySource(raw, path string, q url.Values, trailingDot bool) (*copySource, error) {
	acct, sh, rest, err := xcopy.SplitPath(path)
	if err != nil {
		return nil, err
	}
	cs := &copySource{CopySource: file.CopySource{Raw: raw, Acct: acct, Share: sh}, query: q}
	if err := wire.ValidShareName(sh); err != nil {
		return nil, azerr.InvalidHeader("x-ms-copy-source", raw)
	}
	if cs.Comps, err = splitPath(rest, trailingDot); err != nil {
		return nil, azerr.InvalidHeader("x-ms-copy-source", raw)
	}
	cs.Path = strings.Join(cs.Comps, "/")
	if v := q.Get("sharesnapshot"); v != "" {
		t, err := wire.ParseSnapshot(v)
		if err != nil {
			return nil, azerr.InvalidHeader("x-ms-copy-source", raw)
		}
		cs.Snap = wire.FormatISO7(t)
	}
	return cs, nil
}

// at returns r addressed to the source file: its account, share and
// path, on the live share (the source's handles, locks and stored access
// policies are those of the live share).
func (cs *copySource) at(r *req) *req {
	sr := *r
	sr.Request = xcopy.In(r.Request, cs.Acct)
	sr.share, sr.path, sr.comps, sr.snap = cs.Share, cs.Path, cs.Comps, ""
	return &sr
}

// account is the account of the source: a file's, or a blob's.
func (cs *copySource) account() string {
	if cs.blob != nil {
		acct, _, _, _ := xcopy.SplitPath(cs.bpath)
		return acct
	}
	return cs.Acct
}

// authorizeCopySource authorizes reading the source of a copy. Copy File from
// a file of the same account is authorized by the request's Shared Key (Copy
// File, https://learn.microsoft.com/en-us/rest/api/storageservices/copy-file,
// "To copy a file to another file within the same storage account, you can
// use a shared key to authorize the source file"); a SAS on the request
// covers only the destination, so then (and always for Put Range from URL,
// whose source "must either be public or must be authorized via a shared
// access signature" (Put Range From URL,
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-range-from-url),
// and files are never public) the source URL must carry a SAS granting read.
// Without one: 401 CannotVerifyCopySource (Azure/azure-sdk-for-net#48992);
// with a SAS that fails: 403 CannotVerifyCopySource carrying the SAS failure
// (inferred). A SAS on the source URL is verified whenever present, under
// Shared Key too: the service reads the source with the credentials the
// source URL carries (inferred). A source of another account served here
// is read as Azure reads one: "If you're copying a file from another
// storage account, you must authorize the source file via a shared access
// signature" (Copy File), verified with that account's keys and policies;
// the request's Shared Key covers only its own account. An
// x-ms-copy-source-authorization bearer token ("Only the bearer scheme is
// supported for Microsoft Entra", Put Range From URL) authorizes the
// source in any account, as the token grants the whole account in the
// basic OAuth mode (a Blob source's token is checked for the Blob
// endpoint, a file's for the File endpoint).
func (s *Service) authorizeCopySource(r *req, cs *copySource, needSAS bool) error {
	if v := wire.Field(r.Header, "X-Ms-Copy-Source-Authorization"); v != "" {
		svc := auth.File
		if cs.blob != nil {
			svc = auth.Blob
		}
		return r.VerifySourceBearer(v, cs.account(), svc)
	}
	if cs.blob != nil {
		return cs.blob.AuthorizeCopySource(r.Request, cs.bpath, cs.query, !needSAS)
	}
	if cs.query.Has("sig") {
		// Verified as a File SAS of the source's account, also when a
		// blob copy reads the file.
		src := cs.at(r)
		_, err := src.AuthorizeForeignSourceSAS(auth.File, cs.query, server.SASTarget{Container: cs.Share, Path: cs.Path}, s.policies(src, cs.Share), sasRead)
		if err != nil {
			code := azerr.AuthenticationFailed
			if ae, ok := azerr.As(err); ok {
				code = ae.Code
			}
			return copysrc.Failure(http.StatusForbidden, code, "The copy source SAS does not authorize reading the source.")
		}
		return nil
	}
	if cs.Acct != r.Account {
		// Files are never public: without a SAS, a source in another
		// account is refused, 404 when there is no such share there (as
		// a blob source of another account, inferred).
		_, err := s.f.GetShareProperties(r.Context(), file.GetSharePropertiesInput{Ref: file.Ref{Account: cs.Acct, Share: cs.Share, Now: r.Now}})
		if azerr.Has(err, azerr.ShareNotFound) {
			return azerr.Newf(azerr.CannotVerifyCopySource, "The specified share does not exist.")
		}
		if err != nil {
			return err
		}
		needSAS = true
	}
	if needSAS {
		return copysrc.Failure(http.StatusUnauthorized, azerr.NoAuthenticationInformation, "Server failed to authenticate the request. The copy source must carry a shared access signature.")
	}
	return nil
}

// copyFile implements Copy File (PUT with x-ms-copy-source) from a file of
// this account, possibly in another share or a share snapshot. The copy
// completes inside one transaction: the destination (created, or replaced
// keeping its file ID and active lease) shares the source's data items, so
// the response already says x-ms-copy-status: success (202) (Copy File,
// https://learn.microsoft.com/en-us/rest/api/storageservices/copy-file, "202
// (Accepted), x-ms-copy-status: success — Copy operation finished
// successfully"). Content, its length and the HTTP properties come from the
// source (Copy File, "Copying properties and metadata"); metadata too unless
// the request gives x-ms-meta-* (same section; azfile
// TestFileStartCopyMetadataNil).
func (s *Service) copyFile(r *req) (server.Response, error) {
	cs, err := s.parseCopySource(r)
	if err != nil {
		return server.Response{}, err
	}
	if err := s.authorizeCopySource(r, cs, !r.Authenticated); err != nil {
		return server.Response{}, err
	}
	if err := requireEmptyBody(r); err != nil {
		return server.Response{}, err
	}
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	cp, err := parseCopySMB(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.f.CopyFile(r.Context(), file.CopyFileInput{Ref: refOf(r), Source: &cs.CopySource, Meta: meta, SMB: cp, NoReplace: createOnly(r)})
	if err != nil {
		return server.Response{}, err
	}
	resp := server.Bodiless(http.StatusAccepted)
	setETag(&resp, out.Entry)
	resp.Set("X-Ms-Copy-Id", out.CopyID)
	resp.Set("X-Ms-Copy-Status", "success")
	return resp, nil
}

// copyTimeHeaders are the headers of copySMB.times, in order.
var copyTimeHeaders = [3]string{"x-ms-file-creation-time", "x-ms-file-last-write-time", "x-ms-file-change-time"}

const headerPermCopyMode = "x-ms-file-permission-copy-mode"

// parseCopySMB reads the SMB headers of Copy File.
func parseCopySMB(h http.Header) (*file.CopySMB, error) {
	cp := &file.CopySMB{}
	switch v := strings.TrimSpace(h.Get("X-Ms-File-Attributes")); {
	case v == "":
	case strings.EqualFold(v, "source"):
		cp.AttrsSource = true
	default:
		a, ok := file.ParseAttributes(v)
		if !ok {
			return nil, azerr.InvalidHeader("x-ms-file-attributes", v)
		}
		cp.Attrs = &a
	}
	var err error
	if cp.SetArchive, err = boolHeader(h, "x-ms-file-copy-set-archive"); err != nil {
		return nil, err
	}
	if cp.IgnoreReadOnly, err = boolHeader(h, "x-ms-file-copy-ignore-readonly"); err != nil {
		return nil, err
	}
	cp.Perm, cp.PermKey = h.Get("X-Ms-File-Permission"), h.Get("X-Ms-File-Permission-Key")
	if cp.Perm != "" && cp.PermKey != "" {
		return nil, azerr.Newf(azerr.InvalidHeaderValue, "Only one of x-ms-file-permission and x-ms-file-permission-key may be specified.").With("HeaderName", "x-ms-file-permission")
	}
	switch mode := h.Get(headerPermCopyMode); strings.ToLower(mode) {
	case "source":
		// Inferred: A permission header contradicts copying the source's.
		if cp.Perm != "" || cp.PermKey != "" {
			return nil, azerr.Newf(azerr.InvalidHeaderValue, "x-ms-file-permission and x-ms-file-permission-key apply only with x-ms-file-permission-copy-mode: override.").With("HeaderName", headerPermCopyMode).With("HeaderValue", mode)
		}
		cp.PermSource = true
	case "override":
		// Copy File: x-ms-file-permission is "Required if
		// x-ms-file-permission-copy-mode is specified as override and
		// x-ms-file-permission-key is not specified"; (azfile
		// TestNegativeFileStartCopyOverrideMode) MissingRequiredHeader.
		if cp.Perm == "" && cp.PermKey == "" {
			return nil, azerr.MissingHeader("x-ms-file-permission")
		}
	case "":
	default:
		return nil, azerr.InvalidHeader(headerPermCopyMode, mode)
	}
	if strings.EqualFold(cp.Perm, "inherit") {
		cp.Perm = ""
	}
	if cp.Perm != "" {
		if len(cp.Perm) > maxPermHeader {
			return nil, azerr.Newf(azerr.InvalidHeaderValue, "The permission is larger than 8 KiB; use Create Permission and x-ms-file-permission-key.").With("HeaderName", "x-ms-file-permission")
		}
		if !file.ValidSDDL(cp.Perm) {
			return nil, azerr.New(azerr.FileInvalidPermission)
		}
	}
	if f := h.Get("X-Ms-File-Permission-Format"); f != "" && !strings.EqualFold(f, "sddl") {
		return nil, azerr.InvalidHeader("x-ms-file-permission-format", f)
	}
	for i, name := range copyTimeHeaders {
		if strings.EqualFold(strings.TrimSpace(h.Get(name)), "source") {
			cp.Times[i].Source = true
			continue
		}
		ft := readFileTime(h, name, "now")
		// Validate the value early; apply resolves it.
		if err := ft.Validate(); err != nil {
			return nil, err
		}
		cp.Times[i].Time = ft
	}
	return cp, nil
}

func boolHeader(h http.Header, name string) (bool, error) {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, azerr.InvalidHeader(name, v)
	}
	return b, nil
}

// abortCopyFile implements Abort Copy File (PUT ?comp=copy&copyid=... with
// x-ms-copy-action: abort). Copies complete inside their request, so no copy
// is ever pending: after the usual checks the answer is 409
// NoPendingCopyOperation (Abort Copy File,
// https://learn.microsoft.com/en-us/rest/api/storageservices/abort-copy-file,
// "Trying to cancel a copy that has completed, or failed, results in conflict
// error"; azfile TestStartCopyDefault expects 409). A copy ID that is not a
// GUID is 400 InvalidQueryParameterValue, checked before the file (azfile
// TestFileAbortCopyNoCopyStarted, on a file that does not exist).
func (s *Service) abortCopyFile(r *req) (server.Response, error) {
	switch action := wire.Field(r.Header, "X-Ms-Copy-Action"); {
	case action == "":
		return server.Response{}, azerr.MissingHeader("x-ms-copy-action")
	case !strings.EqualFold(action, "abort"):
		return server.Response{}, azerr.InvalidHeader("x-ms-copy-action", action)
	}
	id := r.q.Get("copyid")
	if id == "" {
		return server.Response{}, azerr.New(azerr.MissingRequiredQueryParameter).With("QueryParameterName", "copyid")
	}
	if _, ok := lease.ParseID(id); !ok {
		return server.Response{}, azerr.InvalidQuery("copyid", id)
	}
	if err := requireEmptyBody(r); err != nil {
		return server.Response{}, err
	}
	if _, err := s.f.AbortCopyFile(r.Context(), file.AbortCopyFileInput{Ref: refOf(r), CopyID: id}); err != nil {
		return server.Response{}, err
	}
	// Not reached (no copy is pending); net/http's answer to a handler
	// that wrote nothing, as before.
	return server.Bodiless(http.StatusOK), nil
}

// putRangeFromURL implements Put Range from URL (PUT ?comp=range with
// x-ms-copy-source; version 2019-02-02 and later) (Put Range from URL,
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-range-from-url):
// x-ms-write: update only, no body, a source range (x-ms-source-range) of the
// destination range's length and at most 4 MiB (413), inside the destination
// file (416 InvalidRange). The written range shares the source's data items
// instead of copying bytes. The source range is read once for its CRC64,
// which is returned (x-ms-content-crc64) and checked against
// x-ms-source-content-crc64 (400 Crc64Mismatch) and the
// x-ms-source-if-{,none-}match-crc64 conditions (412 SourceConditionNotMet:
// the status is Put Range From URL's, the code inferred); the destination is
// written only if the source range is still what was read, so the CRC64
// returned is always that of the bytes written.
func (s *Service) putRangeFromURL(r *req) (server.Response, error) {
	switch mode := wire.Field(r.Header, "X-Ms-Write"); {
	case mode == "":
		return server.Response{}, azerr.MissingHeader("x-ms-write")
	case !strings.EqualFold(mode, "update"):
		// Put Range From URL: "You must specify only update - request will
		// fail if called with clear".
		return server.Response{}, azerr.InvalidHeader("x-ms-write", mode)
	}
	if err := requireEmptyBody(r); err != nil {
		return server.Response{}, err
	}
	off, n, err := parseWriteRange(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	srcOff, err := sourceRange(r.Header, n)
	if err != nil {
		return server.Response{}, err
	}
	preserve, err := lastWriteMode(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	conds, err := parseCRCConditions(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	cs, err := s.parseCopySource(r)
	if err != nil {
		return server.Response{}, err
	}
	if err := s.authorizeCopySource(r, cs, true); err != nil {
		return server.Response{}, err
	}
	out, err := s.f.PutRangeFromURL(r.Context(), file.PutRangeFromURLInput{Ref: refOf(r), Offset: off, Length: n, SourceOffset: srcOff, Source: &cs.CopySource, Conditions: conds, PreserveLastWrite: preserve})
	if err != nil {
		return server.Response{}, err
	}
	e := out.Entry
	resp := server.Bodiless(http.StatusCreated)
	setETag(&resp, e)
	resp.Set("X-Ms-File-Last-Write-Time", formatTime(e.SMB.LastWrite))
	resp.Set("X-Ms-Content-Crc64", base64.StdEncoding.EncodeToString(out.CRC64))
	resp.Set("X-Ms-Request-Server-Encrypted", "true")
	return resp, nil
}

// sourceRange parses x-ms-source-range, which must be a closed range of
// the destination range's length n (Put Range From URL: "If the source range
// size does not match range (target range) size, the service returns status
// code 400").
func sourceRange(h http.Header, n int64) (int64, error) {
	const name = "x-ms-source-range"
	v := h.Get(name)
	if v == "" {
		return 0, azerr.MissingHeader(name)
	}
	rng, err := wire.ParseRange(http.Header{http.CanonicalHeaderKey(wire.HeaderXMsRange): {v}})
	if err != nil || rng == nil || rng.Open() {
		return 0, azerr.InvalidHeader(name, v)
	}
	if got := rng.End - rng.Start + 1; got != n {
		if got > file.MaxRangeWrite {
			// Put Range From URL: "If the source range size exceeds 4 MiB,
			// Azure Files returns status code 413".
			return 0, azerr.New(azerr.RequestBodyTooLarge)
		}
		return 0, azerr.InvalidHeader(name, v)
	}
	return rng.Start, nil
}

func parseCRCConditions(h http.Header) (file.CRCConditions, error) {
	var c file.CRCConditions
	for _, f := range []struct {
		name string
		dst  *[]byte
	}{
		{"x-ms-source-content-crc64", &c.Content},
		{"x-ms-source-if-match-crc64", &c.IfMatch},
		{"x-ms-source-if-none-match-crc64", &c.IfNoneMatch},
	} {
		v := h.Get(f.name)
		if v == "" {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(b) != 8 {
			return c, azerr.InvalidHeader(f.name, v)
		}
		*f.dst = b
	}
	return c, nil
}

var _ xcopy.Source = (*Service)(nil)

// SetBlobPeer names the Blob service of this server, from which Copy File
// and Put Range From URL may read a blob.
func (s *Service) SetBlobPeer(p *xcopy.Peer) { s.blobPeer.Store(p) }

// AuthorizeCopySource implements xcopy.Source for Copy Blob and the
// *FromURL blob writes reading a file: a SAS on the source URL must grant
// reading the file as Get File would; without one, the request's Shared
// Key, when sharedKey allows it (files are never public).
func (s *Service) AuthorizeCopySource(sr *server.Request, path string, q url.Values, sharedKey bool) error {
	r := &req{Request: sr, q: q}
	cs, err := newCopySource(path, path, q, false)
	if err != nil {
		return err
	}
	return s.authorizeCopySource(r, cs, !(sharedKey && sr.Authenticated))
}

// CopySourceReader implements xcopy.Source: the file at path, read as
// Copy File reads its source (share, parent and file must exist: 404
// CannotVerifyCopySource; SMB handles and byte-range locks must allow
// reading it), by the File domain (file.SourceReader).
func (s *Service) CopySourceReader(path string, q url.Values) (copysrc.Reader, error) {
	cs, err := newCopySource(path, path, q, false)
	if err != nil {
		return nil, err
	}
	return file.SourceReader(cs.CopySource).Mapped(func(err error) error {
		return copysrc.AsFailure(Answer(err))
	}), nil
}
