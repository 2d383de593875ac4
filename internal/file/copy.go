package file

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc64"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
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
// or a blob (blob set).
type copySource struct {
	raw   string
	blob  *xcopy.Peer // the Blob service, when the source is a blob
	bpath string      // the blob's path-style path
	acct  string      // the source's account (the request's, or another served here)
	share string
	path  string   // share-relative, decoded
	comps []string // path split on "/"
	snap  string   // ?sharesnapshot=, normalized; "" for the live share
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
	raw := r.Header.Get("x-ms-copy-source")
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
			return &copySource{raw: raw, blob: peer, bpath: bpath, query: u.Query()}, nil
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
	cs := &copySource{raw: raw, acct: acct, share: sh, query: q}
	if err := wire.ValidShareName(sh); err != nil {
		return nil, azerr.InvalidHeader("x-ms-copy-source", raw)
	}
	if cs.comps, err = splitPath(rest, trailingDot); err != nil {
		return nil, azerr.InvalidHeader("x-ms-copy-source", raw)
	}
	cs.path = strings.Join(cs.comps, "/")
	if v := q.Get("sharesnapshot"); v != "" {
		t, err := wire.ParseSnapshot(v)
		if err != nil {
			return nil, azerr.InvalidHeader("x-ms-copy-source", raw)
		}
		cs.snap = wire.FormatISO7(t)
	}
	return cs, nil
}

// at returns r addressed to the source file: its account, share and
// path, on the live share (the source's handles, locks and stored access
// policies are those of the live share).
func (cs *copySource) at(r *req) *req {
	sr := *r
	sr.Request = xcopy.In(r.Request, cs.acct)
	sr.share, sr.path, sr.comps, sr.snap = cs.share, cs.path, cs.comps, ""
	return &sr
}

// account is the account of the source: a file's, or a blob's.
func (cs *copySource) account() string {
	if cs.blob != nil {
		acct, _, _, _ := xcopy.SplitPath(cs.bpath)
		return acct
	}
	return cs.acct
}

// sourceFailure reports a failure to read a copy source the way the
// service reports them for the *FromURL operations: CannotVerifyCopySource
// with the source's status, and the source's status and code as details
// (Azure/azure-sdk-for-net#48992, a 401 CannotVerifyCopySource with
// CopySourceStatusCode 401 and CopySourceErrorCode
// NoAuthenticationInformation).
func sourceFailure(status int, code, msg string) *azerr.Error {
	return azerr.Newf(azerr.CannotVerifyCopySource, "%s", msg).WithStatus(status).
		With("CopySourceStatusCode", strconv.Itoa(status)).
		With("CopySourceErrorCode", code)
}

// asSourceFailure wraps an Azure error met while reading a copy source
// into sourceFailure; other errors pass unchanged.
func asSourceFailure(err error) error {
	ae, ok := azerr.As(err)
	if !ok || ae.Code == azerr.CannotVerifyCopySource {
		return err
	}
	return sourceFailure(ae.Status, ae.Code, ae.Message)
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
	if v := r.Header.Get("x-ms-copy-source-authorization"); v != "" {
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
		_, err := src.AuthorizeForeignSourceSAS(auth.File, cs.query, server.SASTarget{Container: cs.share, Path: cs.path}, s.policies(src, cs.share), sasRead)
		if err != nil {
			code := azerr.AuthenticationFailed
			if ae, ok := azerr.As(err); ok {
				code = ae.Code
			}
			return sourceFailure(http.StatusForbidden, code, "The copy source SAS does not authorize reading the source.")
		}
		return nil
	}
	if cs.acct != r.Account {
		// Files are never public: without a SAS, a source in another
		// account is refused, 404 when there is no such share there (as
		// a blob source of another account, inferred).
		err := s.store.View(r.Context(), func(tx kv.Tx) error {
			_, err := loadShare(tx, cs.acct, cs.share, "")
			return err
		})
		if azerr.Has(err, azerr.ShareNotFound) {
			return azerr.Newf(azerr.CannotVerifyCopySource, "The specified share does not exist.")
		}
		if err != nil {
			return err
		}
		needSAS = true
	}
	if needSAS {
		return sourceFailure(http.StatusUnauthorized, azerr.NoAuthenticationInformation, "Server failed to authenticate the request. The copy source must carry a shared access signature.")
	}
	return nil
}

// loadCopySource resolves the source file of a copy inside tx at the
// request's time now, as a read of it would: 404 ShareNotFound,
// ParentNotFound or ResourceNotFound (azfile
// TestFileStartCopySourceNonExistent expects ResourceNotFound), and the
// source's SMB handles must allow reading it. cs was parsed and
// authorized before the transaction.
func loadCopySource(tx kv.Tx, now time.Time, cs *copySource) (*Entry, error) {
	if cs.blob != nil {
		return loadBlobSource(tx, now, cs)
	}
	if _, err := loadShare(tx, cs.acct, cs.share, cs.snap); err != nil {
		return nil, err
	}
	_, e, err := walk(tx, cs.acct, cs.share, cs.snap, cs.comps)
	if err != nil {
		return nil, err
	}
	if e == nil || e.Dir {
		return nil, azerr.New(azerr.ResourceNotFound)
	}
	if cs.snap == "" {
		// Handles are those of the source's live share.
		if err := handlesAt(tx, now, cs.acct, cs.share, "", e, handle.OpCopyFileSource); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// loadBlobSource reads the blob cs names as the file a copy of it makes:
// its content, HTTP properties and metadata; as SMB properties (which a
// blob lacks, and "source" copy modes take), its creation time, its last
// modification as last write and change time, and the Archive attribute.
func loadBlobSource(tx kv.Tx, now time.Time, cs *copySource) (*Entry, error) {
	o, err := cs.blob.ReadCopySource(tx, now, cs.bpath, cs.query)
	if err != nil {
		return nil, err
	}
	return &Entry{
		Size: o.Size, Parts: o.Parts, ETag: o.ETag, Created: o.Created, Modified: o.Modified, Meta: o.Meta,
		Props: Props(o.Props),
		SMB:   SMBProps{Attrs: AttrArchive, Created: o.Created, LastWrite: o.Modified, Changed: o.Modified},
	}, nil
}

// checkSourceLocks refuses reading n bytes from off of a copy source
// src (a file of the live share cs names) that an SMB open has locked
// exclusively: 409 FileLockConflict, as Get File of that range: a copy
// reads its source as Get File does (inferred). It is the domain's
// checkRange for an open-less caller at the source, at now.
func checkSourceLocks(tx kv.Tx, now time.Time, cs *copySource, src *Entry, off, n int64) error {
	if cs.snap != "" || cs.blob != nil {
		return nil
	}
	c := caller{acct: cs.acct, share: cs.share}
	return domain{}.checkRange(tx, now, &c, src, off, n, false)
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
func (s *Service) copyFile(w http.ResponseWriter, r *req) error {
	cs, err := s.parseCopySource(r)
	if err != nil {
		return err
	}
	if err := s.authorizeCopySource(r, cs, !r.Authenticated); err != nil {
		return err
	}
	if err := requireEmptyBody(r); err != nil {
		return err
	}
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return err
	}
	cp, err := parseCopySMB(r.Header)
	if err != nil {
		return err
	}
	c := restCaller(r)
	in := &copyIn{src: cs, meta: meta, smb: cp, copyID: lease.NewID(), noReplace: createOnly(r)}
	e, err := s.dom().copyFile(r.Context(), &c, in)
	if err != nil {
		return err
	}
	setETag(w, e)
	h := w.Header()
	h.Set("x-ms-copy-id", in.copyID)
	h.Set("x-ms-copy-status", "success")
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// copyIn is a Copy File: its source, parsed and authorized before the
// transaction, and the destination's parsed request.
type copyIn struct {
	src    *copySource
	meta   map[string]string // x-ms-meta-*; none: the source's
	smb    *copySMB
	copyID string
	// noReplace, when not nil, is the answer for an existing
	// destination (a SAS that grants create but not write: createOnly).
	noReplace error
}

// copyFile copies in.src to c's path in one transaction and returns the
// destination: the source must be readable (loadCopySource: it exists,
// its opens' share modes allow reading it; then its byte-range locks),
// the share's quota must hold it, an existing destination must be a file
// that passes admit (opCopyFileDest: its lease, the share modes of its
// opens) and is not read-only unless x-ms-file-copy-ignore-readonly; a
// new destination refuses a lease ID (Copy File: "If the client
// specifies a lease ID on a file that doesn't yet exist, Azure Files
// returns status code 412"). The replaced destination keeps its file ID,
// creation time, SMB properties (for the "source"-less modes) and active
// lease.
func (d domain) copyFile(ctx context.Context, c *caller, in *copyIn) (*Entry, error) {
	cs, cp := in.src, in.smb
	var e *Entry
	err := d.s.store.Update(ctx, func(tx kv.Tx) error {
		now := d.now(c)
		t, err := resolvePath(tx, c.acct, c.share, c.snap, c.path)
		if err != nil {
			return err
		}
		src, err := loadCopySource(tx, now, cs)
		if err != nil {
			return err
		}
		if err := checkSourceLocks(tx, now, cs, src, 0, src.Size); err != nil {
			return err
		}
		if err := checkQuota(t.share, src.Size); err != nil {
			return err
		}
		old := t.e
		var oldParts []extent.Part
		switch {
		case old != nil && old.Dir:
			// Inferred: As Create File over a directory: the service answers
			// the mirror case (Create Directory over a file) with 409
			// ResourceTypeMismatch (microsoft/vscode-azurestorage#848).
			return azerr.New(azerr.ResourceTypeMismatch)
		case old != nil:
			if in.noReplace != nil {
				return in.noReplace
			}
			if err := d.admit(tx, now, c, old, &opCopyFileDest); err != nil {
				return err
			}
			// Copy File: "a previous file at the destination with the ReadOnly
			// attribute set causes the copy operation to fail";
			// (azfile TestNegativeFileStartCopyDestReadOnly) ReadOnlyAttribute.
			if old.SMB.Attrs&AttrReadOnly != 0 && !cp.ignoreReadOnly {
				return refuse(byReadOnly, azerr.New(azerr.ReadOnlyAttribute))
			}
			oldParts = old.Parts
			e = &Entry{Name: old.Name, ID: old.ID, Parent: old.Parent, Created: old.Created, SMB: old.SMB, Lease: lease.OnWrite(old.Lease, now)}
		default:
			// Copy File: "If the client specifies a lease ID on a file that
			// doesn't yet exist, Azure Files returns status code 412".
			if err := lease.CheckWrite(lease.Lease{}, c.leaseID, lease.File, now); err != nil {
				return err
			}
			id, err := freshID(tx, c.acct, c.share)
			if err != nil {
				return err
			}
			e = &Entry{Name: c.path[len(c.path)-1], ID: id, Parent: t.parent.ID, Created: now}
		}
		e.Size, e.Props, e.Meta = src.Size, src.Props, src.Meta
		if len(in.meta) > 0 {
			e.Meta = in.meta
		}
		e.Parts = append([]extent.Part(nil), src.Parts...)
		if err := cp.apply(tx, now, c.acct, c.share, cs.share, e, src, t.parent.SMB.PermKey); err != nil {
			return err
		}
		e.Copy = &CopyInfo{ID: in.copyID, Source: cs.raw, Status: "success", Progress: copyProgress(src.Size), Completion: now}
		touch(e, now)
		if err := extent.AdjustRefs(tx, now, oldParts, e.Parts); err != nil {
			return err
		}
		return putEntry(tx, c.acct, c.share, "", e)
	})
	return e, err
}

func copyProgress(n int64) string {
	v := strconv.FormatInt(n, 10)
	return v + "/" + v
}

// copySMB holds the SMB headers of Copy File (Copy File,
// https://learn.microsoft.com/en-us/rest/api/storageservices/copy-file,
// version 2019-07-07 and later); each property can be taken from the source.
type copySMB struct {
	// times are x-ms-file-creation-time, x-ms-file-last-write-time and
	// x-ms-file-change-time: "source", or a fileTime (default "now").
	times          [3]copyTime
	attrs          *Attributes // x-ms-file-attributes; nil: default or source
	attrsSource    bool
	setArchive     bool // x-ms-file-copy-set-archive
	ignoreReadOnly bool // x-ms-file-copy-ignore-readonly
	permSource     bool // x-ms-file-permission-copy-mode: source
	perm           string
	permKey        string
}

// copyTime is one time header of Copy File.
type copyTime struct {
	source bool
	ft     fileTime
}

// copyTimeHeaders are the headers of copySMB.times, in order.
var copyTimeHeaders = [3]string{"x-ms-file-creation-time", "x-ms-file-last-write-time", "x-ms-file-change-time"}

const headerPermCopyMode = "x-ms-file-permission-copy-mode"

// parseCopySMB reads the SMB headers of Copy File.
func parseCopySMB(h http.Header) (*copySMB, error) {
	cp := &copySMB{}
	switch v := strings.TrimSpace(h.Get("x-ms-file-attributes")); {
	case v == "":
	case strings.EqualFold(v, "source"):
		cp.attrsSource = true
	default:
		a, ok := ParseAttributes(v)
		if !ok {
			return nil, azerr.InvalidHeader("x-ms-file-attributes", v)
		}
		cp.attrs = &a
	}
	var err error
	if cp.setArchive, err = boolHeader(h, "x-ms-file-copy-set-archive"); err != nil {
		return nil, err
	}
	if cp.ignoreReadOnly, err = boolHeader(h, "x-ms-file-copy-ignore-readonly"); err != nil {
		return nil, err
	}
	cp.perm, cp.permKey = h.Get("x-ms-file-permission"), h.Get("x-ms-file-permission-key")
	if cp.perm != "" && cp.permKey != "" {
		return nil, azerr.Newf(azerr.InvalidHeaderValue, "Only one of x-ms-file-permission and x-ms-file-permission-key may be specified.").With("HeaderName", "x-ms-file-permission")
	}
	switch mode := h.Get(headerPermCopyMode); strings.ToLower(mode) {
	case "source":
		// Inferred: A permission header contradicts copying the source's.
		if cp.perm != "" || cp.permKey != "" {
			return nil, azerr.Newf(azerr.InvalidHeaderValue, "x-ms-file-permission and x-ms-file-permission-key apply only with x-ms-file-permission-copy-mode: override.").With("HeaderName", headerPermCopyMode).With("HeaderValue", mode)
		}
		cp.permSource = true
	case "override":
		// Copy File: x-ms-file-permission is "Required if
		// x-ms-file-permission-copy-mode is specified as override and
		// x-ms-file-permission-key is not specified"; (azfile
		// TestNegativeFileStartCopyOverrideMode) MissingRequiredHeader.
		if cp.perm == "" && cp.permKey == "" {
			return nil, azerr.MissingHeader("x-ms-file-permission")
		}
	case "":
	default:
		return nil, azerr.InvalidHeader(headerPermCopyMode, mode)
	}
	if strings.EqualFold(cp.perm, "inherit") {
		cp.perm = ""
	}
	if cp.perm != "" {
		if len(cp.perm) > maxPermHeader {
			return nil, azerr.Newf(azerr.InvalidHeaderValue, "The permission is larger than 8 KiB; use Create Permission and x-ms-file-permission-key.").With("HeaderName", "x-ms-file-permission")
		}
		if !validSDDL(cp.perm) {
			return nil, azerr.New(azerr.FileInvalidPermission)
		}
	}
	if f := h.Get("x-ms-file-permission-format"); f != "" && !strings.EqualFold(f, "sddl") {
		return nil, azerr.InvalidHeader("x-ms-file-permission-format", f)
	}
	for i, name := range copyTimeHeaders {
		if strings.EqualFold(strings.TrimSpace(h.Get(name)), "source") {
			cp.times[i].source = true
			continue
		}
		ft := readFileTime(h, name, "now")
		// Validate the value early; apply resolves it.
		if _, err := ft.resolve(time.Time{}, time.Unix(0, 0)); err != nil {
			return nil, err
		}
		cp.times[i].ft = ft
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

// apply sets the SMB properties of the copy e of src (in share srcShare)
// inside tx. e.SMB holds the replaced file's properties, or zero for a new
// file. Without a header a property takes its Create File default: times
// "now", attributes Archive, the parent's permission (inferred; azfile's
// TestFileStartCopySourceCreationTime sees the destination's times and
// attributes differ from the source's when not asked for).
func (cp *copySMB) apply(tx kv.Tx, now time.Time, acct, dstShare, srcShare string, e, src *Entry, parentKey string) error {
	old := e.SMB
	var err error
	times := [3]struct {
		dst      *time.Time
		src, old time.Time
	}{
		{&e.SMB.Created, src.SMB.Created, old.Created},
		{&e.SMB.LastWrite, src.SMB.LastWrite, old.LastWrite},
		{&e.SMB.Changed, src.SMB.Changed, old.Changed},
	}
	for i, t := range times {
		if cp.times[i].source {
			*t.dst = t.src
			continue
		}
		if *t.dst, err = cp.times[i].ft.resolve(now, t.old); err != nil {
			return err
		}
	}
	switch {
	case cp.attrsSource:
		e.SMB.Attrs = src.SMB.Attrs
	case cp.attrs != nil:
		e.SMB.Attrs = *cp.attrs
	default:
		e.SMB.Attrs = AttrArchive
	}
	if cp.setArchive {
		// Copy File, x-ms-file-copy-set-archive: "whether the Archive
		// attribute should be set, irrespective
		// of the x-ms-file-attributes header value".
		e.SMB.Attrs |= AttrArchive
	}
	e.SMB.Attrs &^= AttrDirectory
	switch {
	case cp.permSource:
		e.SMB.PermKey, err = copyPermission(tx, acct, srcShare, dstShare, src.SMB.PermKey, parentKey)
		return err
	case cp.perm != "":
		e.SMB.PermKey, err = storePermission(tx, acct, dstShare, cp.perm)
		return err
	case cp.permKey != "":
		sddl, err := loadPermission(tx, acct, dstShare, cp.permKey)
		if err != nil {
			return err
		}
		if sddl == "" {
			return azerr.New(azerr.FileInvalidPermissionKey)
		}
		e.SMB.PermKey = cp.permKey
	default:
		e.SMB.PermKey = parentKey
	}
	return nil
}

// copyPermission returns the key, in share dst, of the permission stored
// under key in share src (permissions are kept per share). A key missing
// from src falls back to def (inferred).
func copyPermission(tx kv.Tx, acct, src, dst, key, def string) (string, error) {
	if src == dst {
		return key, nil
	}
	sddl, err := loadPermission(tx, acct, src, key)
	if err != nil || sddl == "" {
		return def, err
	}
	return storePermission(tx, acct, dst, sddl)
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
func (s *Service) abortCopyFile(w http.ResponseWriter, r *req) error {
	switch action := r.Header.Get("x-ms-copy-action"); {
	case action == "":
		return azerr.MissingHeader("x-ms-copy-action")
	case !strings.EqualFold(action, "abort"):
		return azerr.InvalidHeader("x-ms-copy-action", action)
	}
	id := r.q.Get("copyid")
	if id == "" {
		return azerr.New(azerr.MissingRequiredQueryParameter).With("QueryParameterName", "copyid")
	}
	if _, ok := lease.ParseID(id); !ok {
		return azerr.InvalidQuery("copyid", id)
	}
	if err := requireEmptyBody(r); err != nil {
		return err
	}
	// Abort Copy File: x-ms-lease-id is "Required if the destination
	// file has an active lease": the domain's checks of a write.
	c := restCaller(r)
	return s.store.View(r.Context(), func(tx kv.Tx) error {
		d := s.dom()
		t, err := d.load(tx, r.Now, &c, false)
		if err != nil {
			return err
		}
		if err := d.admit(tx, r.Now, &c, t.e, &opAbortCopyFile); err != nil {
			return err
		}
		return azerr.New(azerr.NoPendingCopyOperation)
	})
}

// errSourceChanged makes putRangeFromURL read its source again: the source
// range changed between reading its bytes and writing the destination.
var errSourceChanged = errors.New("copy source changed while it was read")

// putRangeFromURLAttempts bounds the optimistic attempts; the last one
// reads the source inside the write transaction. A variable so a test can
// force that path (export_test.go).
var putRangeFromURLAttempts = 5

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
func (s *Service) putRangeFromURL(w http.ResponseWriter, r *req) error {
	switch mode := r.Header.Get("x-ms-write"); {
	case mode == "":
		return azerr.MissingHeader("x-ms-write")
	case !strings.EqualFold(mode, "update"):
		// Put Range From URL: "You must specify only update - request will
		// fail if called with clear".
		return azerr.InvalidHeader("x-ms-write", mode)
	}
	if err := requireEmptyBody(r); err != nil {
		return err
	}
	off, n, err := parseWriteRange(r.Header)
	if err != nil {
		return err
	}
	srcOff, err := sourceRange(r.Header, n)
	if err != nil {
		return err
	}
	preserve, err := lastWriteMode(r.Header)
	if err != nil {
		return err
	}
	conds, err := parseCRCConditions(r.Header)
	if err != nil {
		return err
	}
	cs, err := s.parseCopySource(r)
	if err != nil {
		return err
	}
	if err := s.authorizeCopySource(r, cs, true); err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		// Optimistically, the source range is read outside the write
		// transaction, which then checks it is unchanged. The last attempt
		// reads it inside the write transaction, so a source rewritten
		// without pause cannot starve the request.
		final := attempt == putRangeFromURLAttempts
		var want []extent.Part
		var crc []byte
		if !final {
			var inline map[string][]byte
			err := s.store.View(r.Context(), func(tx kv.Tx) (err error) {
				want, inline, err = readSourceRange(tx, r.Now, cs, srcOff, n)
				return err
			})
			if err != nil {
				return err
			}
			if crc, err = s.rangeCRC64(r.Context(), want, inline, srcOff, n); err != nil {
				return err
			}
			if err := conds.check(crc); err != nil {
				return err
			}
		}
		ctx, now := r.Context(), r.Now
		from := func(tx kv.Tx) ([]extent.Part, error) {
			got, inline, err := readSourceRange(tx, now, cs, srcOff, n)
			if err != nil {
				return nil, err
			}
			if final {
				// Every inline item is prefetched, so reading does not
				// open another transaction.
				if crc, err = s.rangeCRC64(ctx, got, inline, srcOff, n); err != nil {
					return nil, err
				}
				if err := conds.check(crc); err != nil {
					return nil, err
				}
			} else if !extent.SameParts(got, want) {
				return nil, errSourceChanged
			}
			return got, nil
		}
		c := restCaller(r)
		e, err := s.dom().writeRange(r.Context(), &c, &writeIn{op: &opPutRangeFromURL, off: off, n: n, from: from, shift: off - srcOff, preserveLastWrite: preserve})
		if errors.Is(err, errSourceChanged) {
			continue
		}
		if err != nil {
			return err
		}
		setETag(w, e)
		h := w.Header()
		h.Set("x-ms-file-last-write-time", formatTime(e.SMB.LastWrite))
		h.Set("x-ms-content-crc64", base64.StdEncoding.EncodeToString(crc))
		h.Set("x-ms-request-server-encrypted", "true")
		w.WriteHeader(http.StatusCreated)
		return nil
	}
}

// readSourceRange resolves the source of Put Range from URL inside tx and
// returns its parts covering [off, off+n) and their inline items: all of
// them, since the range is at most 4 MiB (see extent.Prefetch).
func readSourceRange(tx kv.Tx, now time.Time, cs *copySource, off, n int64) ([]extent.Part, map[string][]byte, error) {
	src, err := loadCopySource(tx, now, cs)
	if err != nil {
		return nil, nil, asSourceFailure(err)
	}
	if off+n > src.Size {
		return nil, nil, azerr.Newf(azerr.InvalidRange, "The source range is beyond the end of the source file.")
	}
	if err := checkSourceLocks(tx, now, cs, src, off, n); err != nil {
		return nil, nil, asSourceFailure(err)
	}
	parts := extent.Within(src.Parts, off, n)
	inline, err := extent.Prefetch(tx, parts, off, n)
	if err != nil {
		return nil, nil, err
	}
	return parts, inline, nil
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
		if got > maxRangeWrite {
			// Put Range From URL: "If the source range size exceeds 4 MiB,
			// Azure Files returns status code 413".
			return 0, azerr.New(azerr.RequestBodyTooLarge)
		}
		return 0, azerr.InvalidHeader(name, v)
	}
	return rng.Start, nil
}

// crcConditions are the CRC64 headers of Put Range from URL, each 8 bytes
// (little endian, as azfile encodes them) or nil.
type crcConditions struct {
	content, ifMatch, ifNoneMatch []byte
}

func parseCRCConditions(h http.Header) (crcConditions, error) {
	var c crcConditions
	for _, f := range []struct {
		name string
		dst  *[]byte
	}{
		{"x-ms-source-content-crc64", &c.content},
		{"x-ms-source-if-match-crc64", &c.ifMatch},
		{"x-ms-source-if-none-match-crc64", &c.ifNoneMatch},
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

// check compares the CRC64 of the source range with the conditions.
func (c crcConditions) check(crc []byte) error {
	if c.content != nil && !bytes.Equal(c.content, crc) {
		// The detail names are those of Blob's Crc64Mismatch (azure-sdk-for-js
		// recording "stageBlock with invalid CRC64 should fail"): one error
		// code, one body shape.
		return azerr.New(azerr.CRC64Mismatch).
			With("UserSpecifiedCrc", base64.StdEncoding.EncodeToString(c.content)).
			With("ServerCalculatedCrc", base64.StdEncoding.EncodeToString(crc))
	}
	if c.ifMatch != nil && !bytes.Equal(c.ifMatch, crc) || c.ifNoneMatch != nil && bytes.Equal(c.ifNoneMatch, crc) {
		return azerr.New(azerr.SourceConditionNotMet)
	}
	return nil
}

// rangeCRC64 reads bytes [off, off+n) of content made of parts and returns
// their CRC64 (8 bytes, little endian).
func (s *Service) rangeCRC64(ctx context.Context, parts []extent.Part, inline map[string][]byte, off, n int64) ([]byte, error) {
	rd := s.data.NewReader(ctx, parts, inline, off, n)
	defer rd.Close()
	h := crc64.New(extent.CRC64Table)
	if _, err := io.CopyN(h, rd, n); err != nil {
		return nil, err
	}
	return binary.LittleEndian.AppendUint64(nil, h.Sum64()), nil
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

// ReadCopySource implements xcopy.Source: the file at path, read as Copy
// File reads its source (share, parent and file must exist: 404
// CannotVerifyCopySource; SMB handles and byte-range locks must allow
// reading it).
func (s *Service) ReadCopySource(tx kv.Tx, now time.Time, path string, q url.Values) (*xcopy.Object, error) {
	cs, err := newCopySource(path, path, q, false)
	if err != nil {
		return nil, err
	}
	e, err := loadCopySource(tx, now, cs)
	if err != nil {
		return nil, asSourceFailure(err)
	}
	return &xcopy.Object{
		Size: e.Size, Parts: e.Parts, ETag: e.ETag, Created: e.SMB.Created, Modified: e.Modified, Meta: e.Meta,
		Props: xcopy.Props(e.Props),
		Readable: func(off, n int64) error {
			return asSourceFailure(checkSourceLocks(tx, now, cs, e, off, n))
		},
	}, nil
}
