package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// expectPut sends the headers of a Put Blob with Expect: 100-continue
// and waits, without sending the body, for what the server answers first.
// It returns that status line's response (headers, error code) and
// whether the server then closed the connection. A 100 Continue first is
// reported as status 100; the body is then sent and the final response
// read.
func expectPut(t *testing.T, blobURL, path string, hdr map[string]string, body string, sign bool) (status int, code string, closed bool) {
	t.Helper()
	u, err := url.Parse(blobURL)
	must(t, err)
	r, err := http.NewRequest(http.MethodPut, u.Scheme+"://"+u.Host+path, nil)
	must(t, err)
	r.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	r.Header.Set("x-ms-version", "2026-12-06")
	r.Header.Set("x-ms-blob-type", "BlockBlob")
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	if sign {
		signRaw(r)
	}
	c, err := net.Dial("tcp", u.Host)
	must(t, err)
	defer c.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "PUT %s HTTP/1.1\r\nHost: %s\r\nExpect: 100-continue\r\n", r.URL.RequestURI(), u.Host)
	for k, v := range r.Header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v[0])
	}
	b.WriteString("\r\n")
	_, err = io.WriteString(c, b.String())
	must(t, err)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, r)
	if err != nil {
		t.Fatalf("no answer to the headers alone: %v", err)
	}
	if resp.StatusCode == http.StatusContinue {
		_, err = io.WriteString(c, body)
		must(t, err)
		final, err := http.ReadResponse(br, r)
		must(t, err)
		_, _ = io.Copy(io.Discard, final.Body)
		final.Body.Close()
		return 100, final.Header.Get("x-ms-error-code"), false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// The body was never sent: the connection must not be reused for a
	// next request (the server would read the body as one).
	_, err = br.ReadByte()
	var ne net.Error
	closed = err != nil && !(errors.As(err, &ne) && ne.Timeout())
	return resp.StatusCode, resp.Header.Get("x-ms-error-code"), closed
}

// TestSV2026ExpectContinueEarlyAnswer: a request sent with Expect:
// 100-continue (azblob 1.8.0-beta.2 sends it after a 429/500/503) that
// will be refused is answered with its final 4xx at once, without a 100
// Continue and without waiting for the body, and the connection is then
// closed; one that will succeed gets the 100 Continue and stores the
// body.
func TestSV2026ExpectContinueEarlyAnswer(t *testing.T) {
	e := start(t)
	e.container("expect")
	_, err := e.c.UploadBuffer(e.ctx, "expect", "exists", []byte("x"), nil)
	must(t, err)
	_, err = e.c.UploadBuffer(e.ctx, "expect", "leased", []byte("x"), nil)
	must(t, err)
	lc, err := lease.NewBlobClient(e.c.ServiceClient().NewContainerClient("expect").NewBlobClient("leased"), nil)
	must(t, err)
	_, err = lc.AcquireLease(e.ctx, -1, nil)
	must(t, err)
	body := strings.Repeat("z", 1000)
	for _, tc := range []struct {
		name   string
		path   string
		hdr    map[string]string
		sign   bool
		status int
		code   string
	}{
		{"bad signature", "/devstoreaccount1/expect/a", map[string]string{"Authorization": "SharedKey devstoreaccount1:AAAA"}, false, 403, "AuthenticationFailed"},
		{"no container", "/devstoreaccount1/nocontainer/a", nil, true, 404, "ContainerNotFound"},
		{"If-Match not met", "/devstoreaccount1/expect/exists", map[string]string{"If-Match": `"0x1"`}, true, 412, "ConditionNotMet"},
		{"If-None-Match * on an existing blob", "/devstoreaccount1/expect/exists", map[string]string{"If-None-Match": "*"}, true, 409, "BlobAlreadyExists"},
		{"bad blob type", "/devstoreaccount1/expect/a", map[string]string{"x-ms-blob-type": "Nonsense"}, true, 400, "InvalidHeaderValue"},
		{"Put Block, no container", "/devstoreaccount1/nocontainer/a?comp=block&blockid=YQ%3D%3D", nil, true, 404, "ContainerNotFound"},
		{"Put Block, leased blob without the lease", "/devstoreaccount1/expect/leased?comp=block&blockid=YQ%3D%3D", nil, true, 412, "LeaseIdMissing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, code, closed := expectPut(t, e.app.BlobURL, tc.path, tc.hdr, body, tc.sign)
			if status != tc.status || code != tc.code {
				t.Fatalf("got %d %s, want %d %s before the body", status, code, tc.status, tc.code)
			}
			if !closed {
				t.Fatal("the connection stayed open with the body unsent")
			}
		})
	}
	status, code, _ := expectPut(t, e.app.BlobURL, "/devstoreaccount1/expect/ok", nil, body, true)
	if status != 100 || code != "" {
		t.Fatalf("a good request: %d %s, want 100 Continue then success", status, code)
	}
	d, err := e.c.DownloadStream(e.ctx, "expect", "ok", nil)
	must(t, err)
	got, _ := io.ReadAll(d.Body)
	if string(got) != body {
		t.Fatalf("stored %d bytes, want %d", len(got), len(body))
	}
}

// TestSV2026ExpectContinueSDK: azblob with ExpectContinueModeOn (every
// upload sends Expect: 100-continue) stores a blob, and a refused upload
// (If-None-Match: * on an existing blob) reaches it as 409
// BlobAlreadyExists, the blob unchanged.
func TestSV2026ExpectContinueSDK(t *testing.T) {
	e := start(t)
	e.container("expectsdk")
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	opts := clientOptions()
	opts.ExpectContinueBehavior = blob.ExpectContinueOptions{Mode: blob.ExpectContinueModeOn}
	c, err := azblob.NewClientWithSharedKeyCredential(e.app.BlobURL, cred, opts)
	must(t, err)
	data := []byte(strings.Repeat("q", 4096))
	_, err = c.UploadBuffer(e.ctx, "expectsdk", "b", data, nil)
	must(t, err)
	star := azcore.ETagAny
	_, err = c.UploadBuffer(e.ctx, "expectsdk", "b", []byte("other"), &azblob.UploadBufferOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: &star}}})
	wantCode(t, err, 409, bloberror.BlobAlreadyExists)
	d, err := c.DownloadStream(e.ctx, "expectsdk", "b", nil)
	must(t, err)
	got, _ := io.ReadAll(d.Body)
	if string(got) != string(data) {
		t.Fatalf("blob changed: %d bytes", len(got))
	}
}
