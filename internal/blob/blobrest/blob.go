package blobrest

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
	"github.com/cerulean-storage/cerulean/internal/xsm"
)

// sendsContentHeaders reports whether any x-ms-blob-content-* or
// x-ms-blob-cache-control header is present.
func sendsContentHeaders(h http.Header) bool {
	for _, name := range []string{"x-ms-blob-content-type", "x-ms-blob-content-encoding", "x-ms-blob-content-language",
		"x-ms-blob-content-disposition", "x-ms-blob-cache-control", "x-ms-blob-content-md5"} {
		if _, ok := h[http.CanonicalHeaderKey(name)]; ok {
			return true
		}
	}
	return false
}

// parseProps reads the x-ms-blob-content-* headers.
func parseProps(h http.Header) (blob.HTTPHeaders, error) {
	p := blob.HTTPHeaders{
		ContentType:        h.Get("X-Ms-Blob-Content-Type"),
		ContentEncoding:    h.Get("X-Ms-Blob-Content-Encoding"),
		ContentLanguage:    h.Get("X-Ms-Blob-Content-Language"),
		ContentDisposition: h.Get("X-Ms-Blob-Content-Disposition"),
		CacheControl:       h.Get("X-Ms-Blob-Cache-Control"),
	}
	// x-ms-blob-content-md5 is a stored property, kept and returned as
	// given whatever its length (azure-sdk-for-js recording
	// "setHTTPHeaders with all parameters set" stores 4 bytes); only Put
	// Blob checks it against the content (see blobMD5). A value that is
	// not base64 is 400 InvalidMd5, as for Content-MD5 ("The MD5 value
	// specified in the request is invalid", Common REST API error codes).
	if v := h.Get("X-Ms-Blob-Content-Md5"); v != "" {
		md, err := base64.StdEncoding.DecodeString(v)
		if err != nil || strings.ContainsAny(v, "\r\n") {
			return p, azerr.New(azerr.InvalidMD5)
		}
		p.ContentMD5 = md
	}
	return p, nil
}

// parseChecksums reads the transactional checksums of a write with
// a body (Put Blob, Put Block, Append Block, Put Page) before the body is
// read: Content-MD5 and x-ms-content-crc64 together are 400 (each
// operation's reference: "If both ... are present, the request fails with
// a 400 (Bad Request)"; the message is the one azure-sdk-for-java's
// BlobContentValidation upload tests expect from the service, the code
// the Azure Storage Emulator's for it, in its CommonStatusEntries), a
// malformed Content-MD5 is 400 InvalidMd5 and a malformed
// x-ms-content-crc64 400 InvalidCrc64.
func parseChecksums(h http.Header) (blob.Checksums, error) {
	if h.Get("Content-Md5") != "" && h.Get("X-Ms-Content-Crc64") != "" {
		return blob.Checksums{}, azerr.New(azerr.BothCRC64AndMD5HeaderPresent)
	}
	return server.ParseDigests(h)
}

// echoDigests sets the Content-MD5 and x-ms-content-crc64 of a write's
// response: the digests of the content stored (nil: not sent).
// ParseChecksums reads Content-MD5 and x-ms-content-crc64 of a content
// write, for front ends that write through the domain (the dfs
// endpoint's append).
func ParseChecksums(h http.Header) (blob.Checksums, error) { return parseChecksums(h) }

func echoDigests(resp *server.Response, md5, crc64 []byte) {
	server.SetDigestHeaders(resp, extent.Digests{MD5: md5, CRC64: crc64})
}

// blobMD5 reads the x-ms-blob-content-md5 of Put Blob (block blob): on
// Put Blob it is checked against the content as Content-MD5 is, and
// takes its place when both are sent (the service's answer in
// Azure/azure-storage-ruby#64: "For creating a block blob, Content-MD5
// and x-ms-blob-content-md5 are interchangeable"), so it must be a
// 128-bit MD5 (400 InvalidMd5 otherwise, "The MD5 value must be 128 bits
// and Base64-encoded", Common REST API error codes), and it cannot come
// with x-ms-content-crc64.
func blobMD5(h http.Header) ([]byte, error) {
	v := h.Get("X-Ms-Blob-Content-Md5")
	if v == "" {
		return nil, nil
	}
	if h.Get("X-Ms-Content-Crc64") != "" {
		return nil, azerr.New(azerr.BothCRC64AndMsMD5HeaderPresent)
	}
	return wire.ParseContentMD5(v)
}

// putBlob is Put Blob's REST handler: parse, PutBlob, render.
func (s *Service) putBlob(r *req) (server.Response, error) {
	if err := wire.ValidBlobName(r.name); err != nil {
		return server.Response{}, err
	}
	typ := wire.Field(r.Header, "X-Ms-Blob-Type")
	switch typ {
	case blob.BlockBlob, blob.PageBlob, blob.AppendBlob:
	case "":
		return server.Response{}, azerr.MissingHeader("x-ms-blob-type")
	default:
		return server.Response{}, azerr.InvalidHeader("x-ms-blob-type", typ)
	}
	nb, conds, err := parseNewBlob(r, typ)
	if err != nil {
		return server.Response{}, err
	}
	in := blob.PutBlobInput{Call: r.call(), Ref: r.ref(), Type: typ, Access: r.access(conds), CreateOnly: r.createOnly(), NewBlob: nb,
		CheckFirst: strings.EqualFold(wire.Field(r.Header, "Expect"), "100-continue")}
	switch typ {
	case blob.BlockBlob:
		blobMD, err := blobMD5(r.Header)
		if err != nil {
			return server.Response{}, err
		}
		if in.Checksums, err = parseChecksums(r.Header); err != nil {
			return server.Response{}, err
		}
		// x-ms-blob-content-md5, when sent, is the digest the content is
		// checked against, in place of Content-MD5.
		if blobMD != nil {
			in.Checksums.MD5, in.Checksums.MD5Text = blobMD, wire.Field(r.Header, "X-Ms-Blob-Content-Md5")
		}
		if in.Length, err = contentLength(r); err != nil {
			return server.Response{}, err
		}
		in.Body = r.Body
	case blob.PageBlob:
		if r.ContentLength > 0 {
			return server.Response{}, azerr.InvalidHeader("Content-Length", strconv.FormatInt(r.ContentLength, 10))
		}
		size, err := parseSizeHeader(r.Header, "x-ms-blob-content-length", true)
		if err != nil {
			return server.Response{}, err
		}
		if size%512 != 0 {
			return server.Response{}, azerr.InvalidHeader("x-ms-blob-content-length", wire.Field(r.Header, "X-Ms-Blob-Content-Length"))
		}
		in.Size = size
		if v := wire.Field(r.Header, "X-Ms-Blob-Sequence-Number"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return server.Response{}, azerr.InvalidHeader("x-ms-blob-sequence-number", v)
			}
			in.SequenceNumber = n
		}
	case blob.AppendBlob:
		if r.ContentLength > 0 {
			return server.Response{}, azerr.InvalidHeader("Content-Length", strconv.FormatInt(r.ContentLength, 10))
		}
	}
	out, err := s.PutBlob(r.Context(), in)
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusCreated, 6)
	setETag(&resp, out.ETag, out.LastModified)
	echoDigests(&resp, out.ContentMD5, out.ContentCRC64)
	resp.Set("X-Ms-Request-Server-Encrypted", strconv.FormatBool(out.ServerEncrypted))
	setVersionID(&resp, out.VersionID)
	return resp, nil
}

// parseNewBlob reads what a write creating a whole blob of type typ
// (Put Blob, Put Block List, Put Blob From URL) says of it: metadata,
// HTTP properties, tier and tags; and the write conditions.
func parseNewBlob(r *req, typ string) (blob.NewBlob, cond.Conditions, error) {
	var nb blob.NewBlob
	var conds cond.Conditions
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return nb, conds, err
	}
	p, err := parseProps(r.Header)
	if err != nil {
		return nb, conds, err
	}
	if p.ContentType == "" {
		p.ContentType = "application/octet-stream"
	}
	if conds, err = cond.Parse(r.Header); err != nil {
		return nb, conds, err
	}
	tier, err := requestTier(r.Header, typ)
	if err != nil {
		return nb, conds, err
	}
	tags, err := requestTags(r)
	if err != nil {
		return nb, conds, err
	}
	im, err := writeImmutability(r.Header)
	if err != nil {
		return nb, conds, err
	}
	return blob.NewBlob{HTTPHeaders: p, Metadata: meta, Tier: tier, Tags: tags, Immutability: im}, conds, nil
}

func parseSizeHeader(h http.Header, name string, required bool) (int64, error) {
	v := h.Get(name)
	if v == "" {
		if required {
			return 0, azerr.MissingHeader(name)
		}
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, azerr.InvalidHeader(name, v)
	}
	return n, nil
}

// blobHeaders is room for the headers of a Get Blob or Get Blob
// Properties answer, metadata aside: the read's dozen or more headers
// set with one allocation.
const blobHeaders = 20

// writeBlobHeaders sets the properties every Get Blob / Get Blob
// Properties response carries.
func writeBlobHeaders(h *server.Response, p *blob.BlobProperties, r *req) {
	h.Set("Etag", p.ETag)
	h.Set("Last-Modified", wire.FormatHTTPDate(p.LastModified))
	h.Set("X-Ms-Creation-Time", wire.FormatHTTPDate(p.CreationTime))
	h.Set("X-Ms-Blob-Type", p.Type)
	// Set Blob Properties without x-ms-blob-content-type clears the stored
	// type, and reads then carry no Content-Type at all (azure-sdk-for-js
	// recording "setHTTPHeaders with default parameters": Get Blob
	// Properties after it answers without one). Render keeps net/http
	// from sniffing one for the content.
	if ct := p.HTTPHeaders.ContentType; ct != "" {
		h.Set("Content-Type", ct)
	}
	if p.HTTPHeaders.ContentEncoding != "" {
		h.Set("Content-Encoding", p.HTTPHeaders.ContentEncoding)
	}
	if p.HTTPHeaders.ContentLanguage != "" {
		h.Set("Content-Language", p.HTTPHeaders.ContentLanguage)
	}
	if p.HTTPHeaders.ContentDisposition != "" {
		h.Set("Content-Disposition", p.HTTPHeaders.ContentDisposition)
	}
	if p.HTTPHeaders.CacheControl != "" {
		h.Set("Cache-Control", p.HTTPHeaders.CacheControl)
	}
	server.ApplySASOverrides(h, r.sas)
	setMetadata(h, p.Metadata)
	if p.HasLease {
		writeEffectiveLease(h, p.Lease)
	}
	h.Set("X-Ms-Server-Encrypted", strconv.FormatBool(p.ServerEncrypted))
	h.Set("Accept-Ranges", "bytes")
	writeVersion(h, p)
	if pp := p.Path; pp != nil {
		// A path of a hierarchical account: what azdatalake's path
		// GetProperties reads from Get Blob Properties (FormatGetPropertiesResponse).
		rt := "file"
		if pp.Dir {
			rt = "directory"
		}
		h.Set("X-Ms-Resource-Type", rt)
		h.Set("X-Ms-Owner", pp.Owner)
		h.Set("X-Ms-Group", pp.Group)
		h.Set("X-Ms-Permissions", pp.Permissions)
		h.Set("X-Ms-Acl", pp.ACL)
		if !pp.Expiry.IsZero() {
			h.Set("X-Ms-Expiry-Time", wire.FormatHTTPDate(pp.Expiry))
		}
	}
	if p.TagCount > 0 {
		h.Set("X-Ms-Tag-Count", strconv.Itoa(p.TagCount))
	}
	writeImmutabilityHeaders(h, p)
	switch p.Type {
	case blob.BlockBlob:
		h.Set("X-Ms-Access-Tier", p.AccessTier)
		if p.AccessTierInferred {
			h.Set("X-Ms-Access-Tier-Inferred", "true")
		}
		if p.AccessTierChanged != nil {
			h.Set("X-Ms-Access-Tier-Change-Time", wire.FormatHTTPDate(*p.AccessTierChanged))
		}
		if p.SmartAccessTier != "" {
			h.Set("X-Ms-Smart-Access-Tier", p.SmartAccessTier)
		}
	case blob.PageBlob:
		h.Set("X-Ms-Blob-Sequence-Number", strconv.FormatInt(p.SequenceNumber, 10))
	case blob.AppendBlob:
		h.Set("X-Ms-Blob-Committed-Block-Count", strconv.Itoa(p.CommittedBlockCount))
		// Reported for every append blob, "false" until sealed (Get Blob
		// Properties reference: x-ms-blob-sealed).
		h.Set("X-Ms-Blob-Sealed", strconv.FormatBool(p.Sealed))
	}
	if c := p.Copy; c != nil {
		h.Set("X-Ms-Copy-Id", c.ID)
		h.Set("X-Ms-Copy-Source", c.Source)
		h.Set("X-Ms-Copy-Status", c.Status)
		h.Set("X-Ms-Copy-Progress", c.Progress)
		h.Set("X-Ms-Copy-Completion-Time", wire.FormatHTTPDate(c.Completion))
	}
}

// getBlobProperties is Get Blob Properties' (and Get Blob Metadata's)
// REST handler.
func (s *Service) getBlobProperties(r *req) (server.Response, error) {
	in := blob.GetBlobPropertiesInput{Call: r.call(), Ref: r.ref(), Access: r.readAccess()}
	if err := s.readUPN(r, &in.UPN); err != nil {
		return server.Response{}, err
	}
	p, err := s.GetBlobProperties(r.Context(), in)
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusOK, blobHeaders+len(p.Metadata))
	writeBlobHeaders(&resp, &p, r)
	resp.Set("Content-Length", strconv.FormatInt(p.Size, 10))
	if p.HTTPHeaders.ContentMD5 != nil {
		resp.Set("Content-Md5", base64.StdEncoding.EncodeToString(p.HTTPHeaders.ContentMD5))
	}
	return resp, nil
}

// getBlob is Get Blob's REST handler.
func (s *Service) getBlob(r *req) (server.Response, error) {
	// Azure ignores a malformed range on Get Blob and returns the whole blob.
	rng, err := wire.ParseRange(r.Header)
	if err != nil {
		rng = nil
	}
	wantMD5, err := parseBoolHeader(r.Header, "X-Ms-Range-Get-Content-Md5", "x-ms-range-get-content-md5")
	if err != nil {
		return server.Response{}, err
	}
	if wantMD5 && rng == nil {
		return server.Response{}, azerr.Newf(azerr.InvalidHeaderValue, "x-ms-range-get-content-md5 requires a range.").With("HeaderName", "x-ms-range-get-content-md5").With("HeaderValue", "true")
	}
	structured, err := xsm.Wanted(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	in := blob.GetBlobInput{Call: r.call(), Ref: r.ref(), Access: r.readAccess(), Range: rng, RangeMD5: wantMD5}
	if err := s.readUPN(r, &in.UPN); err != nil {
		return server.Response{}, err
	}
	out, err := s.GetBlob(r.Context(), in)
	if err != nil {
		return server.Response{}, err
	}
	p := &out.Properties
	// Structured: the content framed as a structured message (Render);
	// the range headers describe the content (azblob's DownloadStream
	// counts the content from Content-Range).
	resp := answer(http.StatusOK, blobHeaders+len(p.Metadata))
	resp.Content, resp.Structured = out.Body, structured
	writeBlobHeaders(&resp, p, r)
	server.SetContentHeaders(&resp, out.Body, wantMD5)
	if rng != nil {
		resp.Status = http.StatusPartialContent
		resp.Set("Content-Range", wire.ContentRange(out.Offset, out.Count, p.Size))
		if p.HTTPHeaders.ContentMD5 != nil {
			resp.Set("X-Ms-Blob-Content-Md5", base64.StdEncoding.EncodeToString(p.HTTPHeaders.ContentMD5))
		}
	} else if p.HTTPHeaders.ContentMD5 != nil {
		resp.Set("Content-Md5", base64.StdEncoding.EncodeToString(p.HTTPHeaders.ContentMD5))
	}
	return resp, nil
}

// parseDeleteType reads Delete Blob's deletetype parameter: "permanent"
// (the SDKs send "Permanent") or "none"/absent.
func parseDeleteType(r *req) (bool, error) {
	v := r.q.Get("deletetype")
	switch {
	case v == "" || strings.EqualFold(v, "none"):
		return false, nil
	case strings.EqualFold(v, "permanent"):
		return true, nil
	}
	return false, azerr.InvalidQuery("deletetype", v)
}

// deleteBlob is Delete Blob's REST handler.
func (s *Service) deleteBlob(r *req) (server.Response, error) {
	conds, err := cond.Parse(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	ds := blob.DeleteSnapshots(wire.Field(r.Header, "X-Ms-Delete-Snapshots"))
	if ds != blob.DeleteSnapshotsNone && ds != blob.DeleteSnapshotsInclude && ds != blob.DeleteSnapshotsOnly {
		return server.Response{}, azerr.InvalidHeader("x-ms-delete-snapshots", string(ds))
	}
	if ds != blob.DeleteSnapshotsNone && r.snapshot != "" {
		return server.Response{}, azerr.Newf(azerr.InvalidQueryParameterValue, "x-ms-delete-snapshots cannot be used when deleting a snapshot.").With("QueryParameterName", "snapshot").With("QueryParameterValue", r.snapshot)
	}
	permanent, err := parseDeleteType(r)
	if err != nil {
		return server.Response{}, err
	}
	acc := r.access(conds)
	if acc.Tier, err = parseTierCondition(r.Header); err != nil {
		return server.Response{}, err
	}
	out, err := s.DeleteBlob(r.Context(), blob.DeleteBlobInput{Call: r.call(), Ref: r.ref(), Access: acc, DeleteSnapshots: ds, Permanent: permanent})
	if err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusAccepted).With("X-Ms-Delete-Type-Permanent", strconv.FormatBool(!out.SoftDeleted)), nil
}

// setBlobProperties is Set Blob Properties' REST handler.
func (s *Service) setBlobProperties(r *req) (server.Response, error) {
	conds, err := cond.Parse(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	p, err := parseProps(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	newSize, err := parseSizeHeader(r.Header, "x-ms-blob-content-length", false)
	if err != nil {
		return server.Response{}, err
	}
	in := blob.SetBlobPropertiesInput{Call: r.call(), Ref: r.ref(), Access: r.access(conds)}
	seqAction := wire.Field(r.Header, "X-Ms-Sequence-Number-Action")
	switch seqAction {
	case "":
	case "max", "update":
		if in.SequenceNumber, err = parseSizeHeader(r.Header, "x-ms-blob-sequence-number", true); err != nil {
			return server.Response{}, err
		}
	case "increment":
		if wire.Field(r.Header, "X-Ms-Blob-Sequence-Number") != "" {
			return server.Response{}, azerr.InvalidHeader("x-ms-blob-sequence-number", wire.Field(r.Header, "X-Ms-Blob-Sequence-Number"))
		}
	default:
		return server.Response{}, azerr.InvalidHeader("x-ms-sequence-number-action", seqAction)
	}
	in.SequenceNumberAction = blob.SequenceNumberAction(seqAction)
	if newSize >= 0 {
		in.Size = &newSize
	}
	// Set Blob HTTP Headers replaces every content header (absent ones
	// are cleared); a request that only resizes a page blob or updates
	// its sequence number leaves them alone.
	if (newSize < 0 && seqAction == "") || sendsContentHeaders(r.Header) {
		in.HTTPHeaders = &p
	}
	out, err := s.SetBlobProperties(r.Context(), in)
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusOK, 3)
	setETag(&resp, out.ETag, out.LastModified)
	if out.Type == blob.PageBlob {
		resp.Set("X-Ms-Blob-Sequence-Number", strconv.FormatInt(out.SequenceNumber, 10))
	}
	return resp, nil
}

// setBlobMetadata is Set Blob Metadata's REST handler.
func (s *Service) setBlobMetadata(r *req) (server.Response, error) {
	conds, err := cond.Parse(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.SetBlobMetadata(r.Context(), blob.SetBlobMetadataInput{Call: r.call(), Ref: r.ref(), Access: r.access(conds), Metadata: meta})
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusOK, 4)
	setETag(&resp, out.ETag, out.LastModified)
	resp.Set("X-Ms-Request-Server-Encrypted", strconv.FormatBool(out.ServerEncrypted))
	setVersionID(&resp, out.VersionID)
	return resp, nil
}

// leaseBlob is Lease Blob's REST handler.
func (s *Service) leaseBlob(r *req) (server.Response, error) {
	lr, err := lease.ParseRequest(r.Header, lease.Blob)
	if err != nil {
		return server.Response{}, err
	}
	conds, err := cond.Parse(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.LeaseBlob(r.Context(), blob.LeaseBlobInput{Call: r.call(), Ref: r.ref(), Access: r.access(conds), Request: lr})
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(out.Result.Status, 4)
	writeLeaseResult(&resp, out.Result)
	setETag(&resp, out.ETag, out.LastModified)
	return resp, nil
}

// snapshotBlob is Snapshot Blob's REST handler.
func (s *Service) snapshotBlob(r *req) (server.Response, error) {
	conds, err := cond.Parse(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.SnapshotBlob(r.Context(), blob.SnapshotBlobInput{Call: r.call(), Ref: r.ref(), Access: r.access(conds), Metadata: meta})
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusCreated, 5)
	setETag(&resp, out.ETag, out.LastModified)
	resp.Set("X-Ms-Snapshot", out.Snapshot)
	resp.Set("X-Ms-Request-Server-Encrypted", strconv.FormatBool(out.ServerEncrypted))
	setVersionID(&resp, out.VersionID)
	return resp, nil
}
