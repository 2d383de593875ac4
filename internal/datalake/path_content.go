package datalake

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/blob/blobrest"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// parsePosition reads the position parameter append and flush require
// (Path - Update: "It is required when uploading data to be appended to
// the file and when flushing previously uploaded data to the file").
func parsePosition(r *req) (int64, error) {
	if !r.q.Has("position") {
		return 0, azerr.New(azerr.MissingRequiredQueryParameter).With("QueryParameterName", "position")
	}
	v := r.q.Get("position")
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, azerr.InvalidQuery("position", v)
	}
	return n, nil
}

// parseBoolQuery reads an optional true/false query parameter.
func parseBoolQuery(r *req, name string) (bool, error) {
	v := r.q.Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, azerr.InvalidQuery(name, v)
	}
	return b, nil
}

// appendData is Path - Update action=append
// (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/path/update):
// 202, the body staged at position until a flush commits it
// (blob.Service.AppendData), or with flush=true committed at once with
// everything before it (the file's new ETag answered). Content-MD5 or
// x-ms-content-crc64 are checked against the body and the digest is
// answered.
func (s *Service) appendData(r *req) (server.Response, error) {
	ans := &answer{}
	pos, err := parsePosition(r)
	if err != nil {
		return server.Response{}, err
	}
	sums, err := blobrest.ParseChecksums(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	la, err := parseLeaseAction(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	flush, err := parseBoolQuery(r, "flush")
	if err != nil {
		return server.Response{}, err
	}
	length := r.ContentLength
	if length < 0 {
		length = -1 // chunked: extent.LimitBody reads to the end
	}
	out, err := s.blob.AppendData(r.Context(), blob.AppendDataInput{Call: r.callAs(), PathRef: r.pathRef(),
		Position: pos, Body: r.Body, Length: length, Checksums: sums, Lease: la, Flush: flush,
		CheckFirst: strings.EqualFold(strings.TrimSpace(wire.Field(r.Header, "Expect")), "100-continue")})
	if err != nil {
		return server.Response{}, nsErr(err)
	}
	h := ans
	server.SetDigests(h, extent.Digests{MD5: out.ContentMD5, CRC64: out.ContentCRC64})
	if f := out.Flushed; f != nil {
		setETag(h, f.ETag, f.LastModified)
	}
	h.Set("X-Ms-Request-Server-Encrypted", "true")
	setKeySHA(h, r)
	h.Set("Content-Length", "0")
	return ans.done(http.StatusAccepted)
}

// flushData is Path - Update action=flush: 200 with the file's new ETag
// once the data appended up to position is contiguous
// (blob.Service.FlushData). retainUncommittedData keeps what was
// appended beyond position; the content headers (x-ms-content-type,
// x-ms-content-md5, …) replace the file's when any is sent; the
// conditions apply to the file. close=true marks the end of the file's
// stream of changes: it raises a BlobCreated event (api FlushWithClose,
// internal/blob/hns_events.go).
func (s *Service) flushData(r *req) (server.Response, error) {
	ans := &answer{}
	pos, err := parsePosition(r)
	if err != nil {
		return server.Response{}, err
	}
	retain, err := parseBoolQuery(r, "retainUncommittedData")
	if err != nil {
		return server.Response{}, err
	}
	closed, err := parseBoolQuery(r, "close")
	if err != nil {
		return server.Response{}, err
	}
	if r.ContentLength > 0 {
		// Path - Update: to flush "there must not be a request entity
		// body included with the request".
		return server.Response{}, azerr.Newf(azerr.InvalidHeaderValue, "A flush takes no body.").With("HeaderName", "Content-Length").With("HeaderValue", strconv.FormatInt(r.ContentLength, 10))
	}
	c, err := cond.Parse(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	la, err := parseLeaseAction(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	in := blob.FlushDataInput{Call: r.callAs(), PathRef: r.pathRef(), Position: pos, RetainUncommitted: retain, Cond: c, Lease: la, Close: closed}
	if sendsContentProps(r.Header) {
		p, err := parseContentProps(r.Header)
		if err != nil {
			return server.Response{}, err
		}
		in.Props = &p
	}
	out, err := s.blob.FlushData(r.Context(), in)
	if err != nil {
		return server.Response{}, nsErr(err)
	}
	h := ans
	setETag(h, out.ETag, out.LastModified)
	// A flush carries no content to encrypt: Azure answers "false"
	// (azure-sdk-for-js's recording "append with acquire lease", where
	// the appends before it answer "true"), but "true" to a flush with a
	// customer-provided key (Hadoop's ITestCustomerProvidedKey.testFlush,
	// run against Azure, expects X_MS_REQUEST_SERVER_ENCRYPTED to be
	// "true" with the key and "false" without).
	h.Set("X-Ms-Request-Server-Encrypted", strconv.FormatBool(r.cpk != nil))
	setKeySHA(h, r)
	h.Set("Content-Length", "0")
	return ans.done(http.StatusOK)
}

// setKeySHA answers x-ms-encryption-key-sha256 to a request that carried
// a customer-provided key, once it succeeded.
func setKeySHA(h headerSetter, r *req) {
	if r.cpk != nil {
		h.Set("X-Ms-Encryption-Key-Sha256", r.cpk.SHA)
	}
}

// sendsContentProps reports whether any of Path Update's content headers
// is present.
func sendsContentProps(h http.Header) bool {
	for _, n := range []string{"x-ms-content-type", "x-ms-content-encoding", "x-ms-content-language",
		"x-ms-content-disposition", "x-ms-cache-control", "x-ms-content-md5"} {
		if _, ok := h[http.CanonicalHeaderKey(n)]; ok {
			return true
		}
	}
	return false
}
