package blobrest

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
	"github.com/google/uuid"
)

// Blob Batch (POST ?comp=batch on the account, or on a container with
// restype=container): up to 256 Delete Blob or Set Blob Tier sub-requests
// (all of one kind) in a multipart/mixed body, each an HTTP request with
// its own authorization. Each runs on its own, in order, through the whole
// front end, exactly as if sent alone; the batch is not atomic. The answer
// is 202 Accepted with one multipart part per sub-request (Content-ID as
// sent). A batch that cannot be run at all (malformed, too many, mixed
// kinds, a sub-request outside the container) is still 202, with a single
// part holding the error and no Content-ID, as Azure answers.

const (
	maxBatchBody        = 4 << 20
	maxBatchSubRequests = 256
)

type subRequest struct {
	contentID string
	req       *http.Request
}

func (s *Service) submitBatch(r *req) (server.Response, error) {
	boundary, ok := batchBoundary(wire.Field(r.Header, "Content-Type"))
	if !ok {
		return server.Response{}, azerr.InvalidHeader("Content-Type", wire.Field(r.Header, "Content-Type"))
	}
	if r.ContentLength > maxBatchBody {
		return server.Response{}, azerr.New(azerr.RequestBodyTooLarge)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBatchBody+1))
	if err != nil {
		return server.Response{}, azerr.New(azerr.InvalidInput)
	}
	if len(body) > maxBatchBody {
		return server.Response{}, azerr.New(azerr.RequestBodyTooLarge)
	}
	subs, berr := s.parseBatch(r, body, boundary)

	respBoundary := "batchresponse_" + newUUID()
	var out bytes.Buffer
	if berr != nil {
		// The batch as a whole failed: one part, no Content-ID.
		e := server.ToAzure(r.Context(), s.Log(), berr)
		writePart(&out, respBoundary, "", errorSubResponse(e, r))
	} else {
		for _, sr := range subs {
			writePart(&out, respBoundary, sr.contentID, r.ServeSub(sr.req))
		}
	}
	fmt.Fprintf(&out, "--%s--\r\n", respBoundary)
	return server.Response{Status: http.StatusAccepted, Body: out.Bytes(), ContentType: "multipart/mixed; boundary=" + respBoundary}, nil
}

// parseBatch reads the sub-requests of a batch body.
func (s *Service) parseBatch(r *req, body []byte, boundary string) ([]subRequest, error) {
	bad := func(msg string) error {
		return azerr.Newf(azerr.InvalidInput, "One of the request inputs is not valid. %s", msg)
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	var subs []subRequest
	kind := ""
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, bad("The multipart body is malformed.")
		}
		if len(subs) == maxBatchSubRequests {
			return nil, azerr.Newf(azerr.ExceedsMaxBatchRequestCount, "The batch operation exceeds maximum number of allowed subrequests.")
		}
		id := strings.TrimSpace(part.Header.Get("Content-ID"))
		if id == "" {
			return nil, bad("A sub-request has no Content-ID.")
		}
		raw, err := io.ReadAll(part)
		if err != nil {
			return nil, bad("The multipart body is malformed.")
		}
		hr, err := readSubRequest(raw)
		if err != nil {
			return nil, bad("A sub-request is not an HTTP request.")
		}
		// The Go SDK sends path-style paths (/account/container/blob);
		// the Python SDK virtual-host ones (/container/blob),
		// signed as such.
		ctx := r.Context()
		if !strings.HasPrefix(hr.URL.Path, "/"+r.Account+"/") {
			hr.URL.Path = "/" + r.Account + hr.URL.Path
			if hr.URL.RawPath != "" {
				hr.URL.RawPath = "/" + r.Account + hr.URL.RawPath
			}
			ctx = auth.WithAccountInHost(ctx)
		}
		hr = hr.WithContext(ctx)
		if !blobPathIn(hr.URL.Path, r.Account, r.container) {
			return nil, bad("A sub-request addresses a blob outside the batch's scope.")
		}
		// The route entry says whether a batch may carry the operation.
		q := hr.URL.Query()
		sel := batchRoutes.Selectors(q)
		rt := batchRoutes.Match(server.MethodOf(hr.Method), lBlob, &sel, hr.Header, q)
		if rt == nil || rt.Flags&fBatchable == 0 {
			return nil, bad("Only Delete Blob and Set Blob Tier may be batched.")
		}
		k := rt.Name
		if kind == "" {
			kind = k
		} else if k != kind {
			return nil, azerr.New(azerr.AllBatchSubRequestsShouldBeSameAPI)
		}
		// As if it had arrived alone on the batch's connection.
		hr.Host, hr.RemoteAddr, hr.TLS = r.Host, r.RemoteAddr, r.TLS
		hr.RequestURI = ""
		hr.Body, hr.ContentLength = http.NoBody, 0
		subs = append(subs, subRequest{contentID: id, req: hr})
	}
	if len(subs) == 0 {
		return nil, bad("The batch has no sub-request.")
	}
	return subs, nil
}

// readSubRequest parses one sub-request: a request line, headers and
// an optional body. The blank line that ends the headers may be missing
// when the part ends right after them: a part's last CRLF belongs to the
// boundary delimiter that follows (RFC 2046 section 5.1.1), and the
// JavaScript SDK (BlobBatch.ts, InnerBatchRequest.appendSubRequestToBody)
// ends each sub-request with one blank line, as the request body sample
// in the Blob Batch reference does, so its parts end with the last
// header's CRLF. Appending a blank line ends such headers; after headers
// that already ended, it is body, which Delete Blob and Set Blob Tier do
// not read.
func readSubRequest(raw []byte) (*http.Request, error) {
	buf := make([]byte, 0, len(raw)+4)
	buf = append(append(buf, raw...), "\r\n\r\n"...)
	return http.ReadRequest(bufio.NewReader(bytes.NewReader(buf)))
}

// batchBoundary returns the boundary parameter of a batch's Content-Type
// (multipart/mixed; boundary=batch_{id}, per the Blob Batch reference).
// Parameter names are case-insensitive and may have whitespace around
// them and around '='; a value may be quoted, and an unquoted one runs to
// the next ';', so a boundary holding '=' (legal in RFC 2046 boundaries,
// though not in an RFC 2045 token) is taken whole, where
// mime.ParseMediaType refuses it.
func batchBoundary(ct string) (string, bool) {
	if _, params, err := mime.ParseMediaType(ct); err == nil {
		if b := params["boundary"]; b != "" {
			return b, true
		}
	}
	_, rest, ok := strings.Cut(ct, ";")
	for ok {
		var param string
		param, rest, ok = strings.Cut(rest, ";")
		name, value, isKV := strings.Cut(param, "=")
		if !isKV || !strings.EqualFold(strings.TrimSpace(name), "boundary") {
			continue
		}
		value = strings.TrimLeft(value, " \t")
		if len(value) >= 2 && value[0] == '"' {
			// A quoted string may hold ';': it ends at the closing quote.
			q := value + ";" + rest
			if !ok {
				q = value
			}
			var b strings.Builder
			for i := 1; i < len(q); i++ {
				switch c := q[i]; c {
				case '\\':
					if i+1 < len(q) {
						i++
						b.WriteByte(q[i])
					}
				case '"':
					return b.String(), b.Len() > 0
				default:
					b.WriteByte(c)
				}
			}
			return "", false
		}
		value = strings.TrimSpace(value)
		return value, value != ""
	}
	return "", false
}

// blobPathIn reports whether path names a blob (/account/container/name)
// of the account, and of the container when one is given: a batch holds
// blob operations only, never one on a container or the account.
func blobPathIn(path, account, container string) bool {
	rest, ok := strings.CutPrefix(path, "/"+account+"/")
	if !ok {
		return false
	}
	c, name, ok := strings.Cut(rest, "/")
	return ok && c != "" && name != "" && (container == "" || c == container)
}

// errorSubResponse renders a batch-level error as a sub-response.
func errorSubResponse(e *azerr.Error, r *req) *server.SubResponse {
	body := []byte(xmlHeader + "<Error><Code>")
	body = wire.AppendXMLText(body, e.Code)
	body = append(body, "</Code><Message>"...)
	body = wire.AppendXMLText(body, e.Message+"\nRequestId:"+r.ID)
	body = append(body, "</Message></Error>"...)
	h := http.Header{}
	h.Set("X-Ms-Error-Code", e.Code)
	h.Set("X-Ms-Request-Id", r.ID)
	h.Set("X-Ms-Version", r.Version)
	h.Set("Content-Type", "application/xml")
	return &server.SubResponse{Status: e.Status, Header: h, Body: body}
}

// writePart appends one sub-response, framed as the Blob Batch
// reference's sample response frames it: Content-Type, the Content-ID
// sent, a blank line, then the status line, whose reason phrase is the
// error's message for a failure ("HTTP/1.1 404 The specified blob does not
// exist."), and the headers, the x-ms-* ones under their lower-case names
// (x-ms-error-code first). The names matter: @azure/storage-blob
// (BatchResponseParser.ts) finds a failed sub-request by comparing each
// header name with "x-ms-error-code" case-sensitively, so a part that
// wrote "X-Ms-Error-Code" counted as succeeded.
func writePart(out *bytes.Buffer, boundary, contentID string, sr *server.SubResponse) {
	fmt.Fprintf(out, "--%s\r\nContent-Type: application/http\r\n", boundary)
	if contentID != "" {
		fmt.Fprintf(out, "Content-ID: %s\r\n", contentID)
	}
	reason := http.StatusText(sr.Status)
	if wire.Field(sr.Header, "X-Ms-Error-Code") != "" {
		if msg := errorMessage(sr.Body); msg != "" {
			reason = msg
		}
	}
	fmt.Fprintf(out, "\r\nHTTP/1.1 %d %s\r\n", sr.Status, reason)
	sr.Header.Del("Date")
	if len(sr.Body) > 0 {
		sr.Header.Set("Content-Length", strconv.Itoa(len(sr.Body)))
	}
	keys := make([]string, 0, len(sr.Header))
	for k := range sr.Header {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return partHeaderLess(keys[i], keys[j]) })
	for _, k := range keys {
		name := k
		if strings.HasPrefix(strings.ToLower(k), "x-ms-") {
			name = strings.ToLower(k)
		}
		for _, v := range sr.Header[k] {
			fmt.Fprintf(out, "%s: %s\r\n", name, v)
		}
	}
	out.WriteString("\r\n")
	if len(sr.Body) > 0 {
		out.Write(sr.Body)
		out.WriteString("\r\n")
	}
}

// partHeaderLess orders a sub-response's headers as the reference's
// sample does: x-ms-error-code, the other x-ms-* headers, then the rest,
// each group by name.
func partHeaderLess(a, b string) bool {
	rank := func(k string) int {
		switch k = strings.ToLower(k); {
		case k == "x-ms-error-code":
			return 0
		case strings.HasPrefix(k, "x-ms-"):
			return 1
		}
		return 2
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra < rb
	}
	return a < b
}

// errorMessage returns the first line of the Message of an Azure error
// body (<Error><Code>…</Code><Message>…\nRequestId:…</Message></Error>):
// the reason phrase of a failed sub-response. A reason phrase is one line
// of text (RFC 9112 section 4), so control characters end it.
func errorMessage(body []byte) string {
	var e struct {
		Message string `xml:"Message"`
	}
	if len(body) == 0 || xml.Unmarshal(body, &e) != nil {
		return ""
	}
	msg := e.Message
	if i := strings.IndexFunc(msg, func(r rune) bool { return r < 0x20 || r == 0x7f }); i >= 0 {
		msg = msg[:i]
	}
	return strings.TrimSpace(msg)
}

// newUUID is a random UUID, as the boundary of a batch response.
func newUUID() string { return uuid.NewString() }

// batchRoutes is the table a batch's parts are routed through: the Blob
// route table, which routes.go hands over once it has built it (its
// entries name submitBatch, so the batch cannot name the table itself).
var batchRoutes *server.Routes[handler]
