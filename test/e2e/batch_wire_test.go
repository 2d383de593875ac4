package e2e

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// rawBatchParts posts a batch built by hand, signed with Shared Key, and
// returns each part's header Content-ID and its raw bytes (status line,
// headers, body), exactly as they were written.
func rawBatchParts(t *testing.T, b *blobT, path string, subs []string) (ids []string, parts []string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for i, s := range subs {
		pw, err := mw.CreatePart(map[string][]string{"Content-Type": {"application/http"}, "Content-Transfer-Encoding": {"binary"}, "Content-ID": {fmt.Sprint(i)}})
		must(t, err)
		_, _ = io.WriteString(pw, s)
	}
	must(t, mw.Close())
	req, err := http.NewRequest(http.MethodPost, b.app.BlobURL[:strings.LastIndex(b.app.BlobURL, "/")]+path, bytes.NewReader(body.Bytes()))
	must(t, err)
	req.Header.Set("Content-Type", "multipart/mixed; boundary="+mw.Boundary())
	req.Header.Set("x-ms-version", "2025-01-05")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("Content-Length", fmt.Sprint(body.Len()))
	signRaw(req)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("batch status %d", resp.StatusCode)
	}
	_, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	must(t, err)
	mr := multipart.NewReader(resp.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		must(t, err)
		raw, _ := io.ReadAll(p)
		ids = append(ids, p.Header.Get("Content-ID"))
		parts = append(parts, string(raw))
	}
	return ids, parts
}

// jsBatchCounts counts a batch response's parts the way
// @azure/storage-blob's BatchResponseParser does: a part failed when one
// of its lines starts with "x-ms-error-code" followed by ": ", compared
// case-sensitively; every other part succeeded.
func jsBatchCounts(parts []string) (ok, failed int) {
	for _, p := range parts {
		bad := false
		for _, line := range strings.Split(p, "\r\n") {
			if name, _, found := strings.Cut(line, ": "); found && name == "x-ms-error-code" {
				bad = true
			}
		}
		if bad {
			failed++
		} else {
			ok++
		}
	}
	return ok, failed
}

// TestBlobBatchSubResponseWire checks the bytes of each sub-response
// against the Blob Batch reference's sample response: Content-ID on every
// part, the status line's reason phrase the error message ("HTTP/1.1 404
// The specified blob does not exist."), and the error code under the
// lower-case name x-ms-error-code, which the JavaScript SDK matches
// case-sensitively (BatchResponseParser.ts) — with "X-Ms-Error-Code" it
// counted a failed delete as succeeded.
func TestBlobBatchSubResponseWire(t *testing.T) {
	b := newBlobT(t)
	b.put("a", []byte("1"), nil)
	b.put("c", []byte("3"), nil)
	cont := "/" + app.DevAccount + "/" + b.cont
	ids, parts := rawBatchParts(t, b, cont+"?restype=container&comp=batch",
		[]string{subDelete(cont + "/a"), subDelete(cont + "/missing"), subDelete(cont + "/c")})
	if len(parts) != 3 {
		t.Fatalf("%d parts: %q", len(parts), parts)
	}
	for i, id := range ids {
		if id != fmt.Sprint(i) {
			t.Fatalf("part %d: Content-ID %q", i, id)
		}
	}
	for _, i := range []int{0, 2} {
		if !strings.HasPrefix(parts[i], "HTTP/1.1 202 Accepted\r\n") {
			t.Fatalf("part %d: %q", i, parts[i])
		}
		if !strings.Contains(parts[i], "\r\nx-ms-request-id: ") || !strings.Contains(parts[i], "\r\nx-ms-version: ") {
			t.Fatalf("part %d: no lower-case x-ms-request-id / x-ms-version: %q", i, parts[i])
		}
	}
	p := parts[1]
	if !strings.HasPrefix(p, "HTTP/1.1 404 The specified blob does not exist.\r\n") {
		t.Fatalf("failed part's status line: %q", p)
	}
	if !strings.Contains(p, "\r\nx-ms-error-code: BlobNotFound\r\n") {
		t.Fatalf("failed part has no lower-case x-ms-error-code: %q", p)
	}
	if !strings.Contains(p, "<Code>BlobNotFound</Code>") {
		t.Fatalf("failed part's body: %q", p)
	}
	if ok, failed := jsBatchCounts(parts); ok != 2 || failed != 1 {
		t.Fatalf("the JavaScript SDK's count: %d succeeded, %d failed; want 2, 1", ok, failed)
	}
	// The reason phrase is one line even when the message is not (a
	// message with a second line keeps it in the body only).
	bad := strings.Replace(subDelete(cont+"/c"), "SharedKey "+app.DevAccount+":", "SharedKey "+app.DevAccount+":AAAA", 1)
	_, parts = rawBatchParts(t, b, cont+"?restype=container&comp=batch", []string{bad})
	line, _, _ := strings.Cut(parts[0], "\r\n")
	if !strings.HasPrefix(line, "HTTP/1.1 403 Server failed to authenticate the request.") || !strings.Contains(parts[0], "\r\nx-ms-error-code: AuthenticationFailed\r\n") {
		t.Fatalf("403 part: %q", parts[0])
	}
}
