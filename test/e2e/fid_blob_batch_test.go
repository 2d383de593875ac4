package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// jsBatchBody builds a batch body the way the JavaScript SDK does
// (sdk/storage/storage-blob/src/BlobBatch.ts, InnerBatchRequest): each
// sub-request is its request line and header lines, then one blank line,
// then straight on to the next "--boundary". The CRLF before a delimiter
// belongs to the delimiter, so each part ends with the last header's
// CRLF and no blank line after it.
func jsBatchBody(boundary string, subs []string) string {
	var b strings.Builder
	for i, s := range subs {
		fmt.Fprintf(&b, "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: %d\r\n\r\n", boundary, i)
		b.WriteString(strings.TrimSuffix(s, "\r\n")) // s ends "...\r\n\r\n": keep one CRLF
		b.WriteString("\r\n")
	}
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return b.String()
}

// postBatch posts body to path (under the server root) with the given
// Content-Type; it signs with Shared Key unless the path carries a SAS.
// It returns the batch status and, for a 202, the sub-responses as
// "contentID:status:errorcode".
func postBatch(t *testing.T, b *blobT, path, contentType, body string) (int, []string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.app.BlobURL[:strings.LastIndex(b.app.BlobURL, "/")]+path, strings.NewReader(body))
	must(t, err)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("x-ms-version", "2025-01-05")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("Content-Length", fmt.Sprint(len(body)))
	if !strings.Contains(path, "sig=") {
		signRaw(req)
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, []string{resp.Header.Get("x-ms-error-code")}
	}
	_, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	must(t, err)
	mr := multipart.NewReader(resp.Body, params["boundary"])
	var out []string
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		must(t, err)
		raw, _ := io.ReadAll(p)
		raw = append(raw, '\n')
		sr, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
		must(t, err)
		out = append(out, fmt.Sprintf("%s:%d:%s", p.Header.Get("Content-ID"), sr.StatusCode, sr.Header.Get("x-ms-error-code")))
	}
	return resp.StatusCode, out
}

// TestFidBlobBatchJSShape: sub-requests whose headers end at the part
// boundary (the JavaScript SDK's shape and the Blob Batch reference's
// sample) run; so do Set Blob Tier sub-requests of that shape.
func TestFidBlobBatchJSShape(t *testing.T) {
	b := newBlobT(t)
	for _, n := range []string{"a", "b", "c"} {
		b.put(n, []byte("x"), nil)
	}
	cont := "/" + app.DevAccount + "/" + b.cont
	const boundary = "batch_6c5b9b3a-0d7e-4d52-9b1e-1f0a3c2e7d10"
	body := jsBatchBody(boundary, []string{subDelete(cont + "/a"), subDelete(cont + "/missing"), subDelete(cont + "/b")})
	status, got := postBatch(t, b, cont+"?restype=container&comp=batch", "multipart/mixed; boundary="+boundary, body)
	if status != http.StatusAccepted || fmt.Sprint(got) != "[0:202: 1:404:BlobNotFound 2:202:]" {
		t.Fatalf("JS-shaped batch: %d %v", status, got)
	}
	for n, gone := range map[string]bool{"a": true, "b": true, "c": false} {
		_, err := b.bb(n).GetProperties(b.ctx, nil)
		if gone {
			wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
		} else {
			must(t, err)
		}
	}
	// Set Blob Tier, and a sub-request with no header at all after its
	// request line (anonymous: refused on its own, not as malformed).
	tier := subSigned(http.MethodPut, cont+"/c?comp=tier", map[string]string{"x-ms-access-tier": "Cool"})
	status, got = postBatch(t, b, cont+"?restype=container&comp=batch", "multipart/mixed; boundary="+boundary,
		jsBatchBody(boundary, []string{tier, "PUT " + cont + "/c?comp=tier HTTP/1.1\r\n\r\n"}))
	if status != http.StatusAccepted || len(got) != 2 || got[0] != "0:200:" || !strings.HasPrefix(got[1], "1:4") {
		t.Fatalf("JS-shaped tier batch: %d %v", status, got)
	}
	b.wantTier("c", blob.AccessTierCool, false)
}

// subSigned is a sub-request signed on its own with Shared Key.
func subSigned(method, pathQuery string, headers map[string]string) string {
	r, _ := http.NewRequest(method, "http://x"+pathQuery, nil)
	r.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	r.Header.Set("Content-Length", "0")
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	signRaw(r)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %s HTTP/1.1\r\n", method, pathQuery)
	for k, v := range r.Header {
		fmt.Fprintf(&sb, "%s: %s\r\n", k, v[0])
	}
	sb.WriteString("\r\n")
	return sb.String()
}

// TestFidBlobBatchContentType: the boundary parameter is found whatever
// its case, with whitespace around it, quoted or not, and when the
// boundary holds '='; a Content-Type without one is 400
// InvalidHeaderValue.
func TestFidBlobBatchContentType(t *testing.T) {
	b := newBlobT(t)
	cont := "/" + app.DevAccount + "/" + b.cont
	for i, c := range []struct{ boundary, ct string }{
		{"batch_1", "multipart/mixed; boundary=batch_1"},
		{"batch_2", "Multipart/Mixed; Boundary=batch_2"},
		{"batch_3", "multipart/mixed;boundary=batch_3"},
		{"batch_4", "multipart/mixed; boundary = batch_4"},
		{"batch_5", `multipart/mixed; boundary="batch_5"`},
		{"batch=6=", "multipart/mixed; boundary=batch=6="},
		{"batch=7", `multipart/mixed; charset=utf-8; BOUNDARY="batch=7"`},
	} {
		name := fmt.Sprintf("n%d", i)
		b.put(name, []byte("x"), nil)
		status, got := postBatch(t, b, cont+"?restype=container&comp=batch", c.ct, jsBatchBody(c.boundary, []string{subDelete(cont + "/" + name)}))
		if status != http.StatusAccepted || fmt.Sprint(got) != "[0:202:]" {
			t.Fatalf("%q: %d %v", c.ct, status, got)
		}
		_, err := b.bb(name).GetProperties(b.ctx, nil)
		wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	}
	b.put("kept", []byte("x"), nil)
	for _, ct := range []string{"multipart/mixed", "multipart/mixed; boundary=", `multipart/mixed; boundary=""`, "multipart/mixed; charset=utf-8"} {
		status, got := postBatch(t, b, cont+"?restype=container&comp=batch", ct, jsBatchBody("batch_k", []string{subDelete(cont + "/kept")}))
		if status != http.StatusBadRequest || fmt.Sprint(got) != "[InvalidHeaderValue]" {
			t.Fatalf("%q: %d %v", ct, status, got)
		}
	}
	_, err := b.bb("kept").GetProperties(b.ctx, nil)
	must(t, err)
}

// TestFidBlobBatchAccountSASPathStyle: the JavaScript SDK's
// BlobBatchClient, built on a path-style service URL with an account SAS
// (http://127.0.0.1:10000/devstoreaccount1?sv=...), takes the account
// segment for a container and posts to /{account}?restype=container&
// comp=batch; its sub-requests carry the same SAS. That is the account's
// batch.
func TestFidBlobBatchAccountSASPathStyle(t *testing.T) {
	b := newBlobT(t)
	b.put("a", []byte("1"), nil)
	b.put("b", []byte("2"), nil)
	acct := "/" + app.DevAccount
	sas := accountSAS(t, "blob", accountSASValues{Expiry: time.Now().Add(time.Hour), Perms: "rwdlt", ResourceTypes: "sco"})
	sub := func(n string) string {
		return "DELETE " + acct + "/" + b.cont + "/" + n + "?" + sas + " HTTP/1.1\r\nx-ms-date: " + time.Now().UTC().Format(http.TimeFormat) + "\r\nContent-Length: 0\r\n\r\n"
	}
	const boundary = "batch_0d4c6a52-8a5e-4b8e-a0c5-7b6f0e2f9a11"
	for _, path := range []string{acct + "?restype=container&comp=batch&" + sas, acct + "?comp=batch&" + sas} {
		b.put("a", []byte("1"), nil)
		status, got := postBatch(t, b, path, "multipart/mixed; boundary="+boundary, jsBatchBody(boundary, []string{sub("a"), sub("b")}))
		if status != http.StatusAccepted || len(got) != 2 || got[0] != "0:202:" {
			t.Fatalf("%s: %d %v", path, status, got)
		}
		_, err := b.bb("a").GetProperties(b.ctx, nil)
		wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	}
	// Without the delete permission each sub-request is refused alone.
	b.put("a", []byte("1"), nil)
	ro := accountSAS(t, "blob", accountSASValues{Expiry: time.Now().Add(time.Hour), Perms: "rl", ResourceTypes: "sco"})
	subRO := "DELETE " + acct + "/" + b.cont + "/a?" + ro + " HTTP/1.1\r\nContent-Length: 0\r\n\r\n"
	status, got := postBatch(t, b, acct+"?restype=container&comp=batch&"+ro, "multipart/mixed; boundary="+boundary, jsBatchBody(boundary, []string{subRO}))
	if status != http.StatusAccepted || fmt.Sprint(got) != "[0:403:AuthorizationPermissionMismatch]" {
		t.Fatalf("read-only SAS: %d %v", status, got)
	}
	_, err := b.bb("a").GetProperties(b.ctx, nil)
	must(t, err)
}
