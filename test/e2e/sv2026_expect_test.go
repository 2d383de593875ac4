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
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	filelease "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// expectPut sends the headers of a Put Blob (a block blob unless hdr
// says otherwise) with Expect: 100-continue; see expectReq.
func expectPut(t *testing.T, blobURL, path string, hdr map[string]string, body string, sign bool) (status int, code string, closed bool) {
	t.Helper()
	h := map[string]string{"x-ms-blob-type": "BlockBlob"}
	for k, v := range hdr {
		h[k] = v
	}
	return expectReq(t, blobURL, http.MethodPut, path, h, body, sign)
}

// expectReq sends the headers of a request with Expect: 100-continue
// and waits, without sending the body, for what the server answers first.
// It returns that status line's response (headers, error code) and
// whether the server then closed the connection. A 100 Continue first is
// reported as status 100 with the error code of the final response, read
// after the body is sent.
func expectReq(t *testing.T, baseURL, method, path string, hdr map[string]string, body string, sign bool) (status int, code string, closed bool) {
	t.Helper()
	u, err := url.Parse(baseURL)
	must(t, err)
	r, err := http.NewRequest(method, u.Scheme+"://"+u.Host+path, nil)
	must(t, err)
	r.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	r.Header.Set("x-ms-version", "2026-12-06")
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
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nExpect: 100-continue\r\n", method, r.URL.RequestURI(), u.Host)
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

// expectCase is a request expectReq sends and the answer wanted before
// its body (status 100 and code "": 100 Continue, then success).
type expectCase struct {
	name         string
	method, path string
	hdr          map[string]string
	status       int
	code         string
}

// runExpect runs cases against baseURL with body, all signed.
func runExpect(t *testing.T, baseURL, body string, cases []expectCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, code, closed := expectReq(t, baseURL, tc.method, tc.path, tc.hdr, body, true)
			if status != tc.status || code != tc.code {
				t.Fatalf("got %d %s, want %d %s before the body", status, code, tc.status, tc.code)
			}
			if status != 100 && !closed {
				t.Fatal("the connection stayed open with the body unsent")
			}
		})
	}
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

	// Append Block, Put Page and Put Block List answer early too, with
	// their own checks (blob type, append position and size, page range,
	// sequence number) besides the container, conditions and lease.
	ct := e.c.ServiceClient().NewContainerClient("expect")
	for _, n := range []string{"app", "appleased"} {
		_, err = ct.NewAppendBlobClient(n).Create(e.ctx, nil)
		must(t, err)
	}
	alc, err := lease.NewBlobClient(ct.NewBlobClient("appleased"), nil)
	must(t, err)
	_, err = alc.AcquireLease(e.ctx, -1, nil)
	must(t, err)
	_, err = ct.NewPageBlobClient("pg").Create(e.ctx, 1024, nil)
	must(t, err)
	page := strings.Repeat("p", 512)
	ab := func(blob string, hdr map[string]string) (string, string, map[string]string) {
		return http.MethodPut, "/devstoreaccount1/expect/" + blob + "?comp=appendblock", hdr
	}
	pp := func(blob, rng string, hdr map[string]string) (string, string, map[string]string) {
		h := map[string]string{"x-ms-page-write": "update", "x-ms-range": rng}
		for k, v := range hdr {
			h[k] = v
		}
		return http.MethodPut, "/devstoreaccount1/expect/" + blob + "?comp=page", h
	}
	var cases []expectCase
	add := func(name string, status int, code string, m, path string, hdr map[string]string) {
		cases = append(cases, expectCase{name: name, method: m, path: path, hdr: hdr, status: status, code: code})
	}
	m, pth, h := ab("none", nil)
	add("Append Block, no blob", 404, "BlobNotFound", m, pth, h)
	m, pth, h = ab("exists", nil)
	add("Append Block, a block blob", 409, "InvalidBlobType", m, pth, h)
	m, pth, h = ab("app", map[string]string{"x-ms-blob-condition-appendpos": "7"})
	add("Append Block, append position", 412, "AppendPositionConditionNotMet", m, pth, h)
	m, pth, h = ab("app", map[string]string{"x-ms-blob-condition-maxsize": "100"})
	add("Append Block, max size", 412, "MaxBlobSizeConditionNotMet", m, pth, h)
	m, pth, h = ab("app", map[string]string{"If-Match": `"0x1"`})
	add("Append Block, If-Match not met", 412, "ConditionNotMet", m, pth, h)
	m, pth, h = ab("appleased", nil)
	add("Append Block, leased blob without the lease", 412, "LeaseIdMissing", m, pth, h)
	m, pth, h = ab("app", nil)
	add("Append Block, good", 100, "", m, pth, h)
	m, pth, h = pp("none", "bytes=0-511", nil)
	add("Put Page, no blob", 404, "BlobNotFound", m, pth, h)
	m, pth, h = pp("pg", "bytes=1024-1535", nil)
	add("Put Page, past the end", 416, "InvalidPageRange", m, pth, h)
	m, pth, h = pp("pg", "bytes=0-511", map[string]string{"x-ms-if-sequence-number-eq": "5"})
	add("Put Page, sequence number", 412, "SequenceNumberConditionNotMet", m, pth, h)
	m, pth, h = pp("app", "bytes=0-511", nil)
	add("Put Page, an append blob", 409, "InvalidBlobType", m, pth, h)
	m, pth, h = pp("pg", "bytes=512-1023", nil)
	add("Put Page, good", 100, "", m, pth, h)
	runExpect(t, e.app.BlobURL, page, cases)

	_, err = ct.NewBlockBlobClient("pbl").StageBlock(e.ctx, "YQ==", streaming.NopCloser(strings.NewReader("block")), nil)
	must(t, err)
	runExpect(t, e.app.BlobURL, "<BlockList><Latest>YQ==</Latest></BlockList>", []expectCase{
		{"Put Block List, no container", http.MethodPut, "/devstoreaccount1/nocontainer/pbl?comp=blocklist", nil, 404, "ContainerNotFound"},
		{"Put Block List, If-None-Match * on an existing blob", http.MethodPut, "/devstoreaccount1/expect/exists?comp=blocklist", map[string]string{"If-None-Match": "*"}, 409, "BlobAlreadyExists"},
		{"Put Block List, an append blob", http.MethodPut, "/devstoreaccount1/expect/app?comp=blocklist", nil, 409, "InvalidBlobType"},
		{"Put Block List, good", http.MethodPut, "/devstoreaccount1/expect/pbl?comp=blocklist", nil, 100, ""},
	})
}

// TestSV2026ExpectContinueEarlyAnswerHNS: on an account with a
// hierarchical namespace the Blob writes (Put Blob, Put Block, Append
// Block) and the Data Lake append answer a refused request before its
// body too; a flush, which takes no body, refuses one at once.
func TestSV2026ExpectContinueEarlyAnswerHNS(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("hxfs")
	_, err := fs.NewDirectoryClient("dir").Create(e.ctx, nil)
	must(t, err)
	for _, n := range []string{"f", "lf"} {
		_, err = fs.NewFileClient(n).Create(e.ctx, nil)
		must(t, err)
	}
	bc := client(t, e.app.BlobURL, app.DevKey).ServiceClient().NewContainerClient("hxfs")
	lc, err := lease.NewBlobClient(bc.NewBlobClient("lf"), nil)
	must(t, err)
	_, err = lc.AcquireLease(e.ctx, -1, nil)
	must(t, err)
	body := strings.Repeat("h", 1000)
	bb := map[string]string{"x-ms-blob-type": "BlockBlob"}
	with := func(h map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for a, b := range h {
			out[a] = b
		}
		return out
	}
	runExpect(t, e.app.BlobURL, body, []expectCase{
		{"Put Blob, no container", http.MethodPut, "/devstoreaccount1/nofs/a", bb, 404, "ContainerNotFound"},
		{"Put Blob, If-Match not met", http.MethodPut, "/devstoreaccount1/hxfs/f", with(bb, "If-Match", `"0x1"`), 412, "ConditionNotMet"},
		{"Put Blob, If-None-Match * on an existing file", http.MethodPut, "/devstoreaccount1/hxfs/f", with(bb, "If-None-Match", "*"), 409, "BlobAlreadyExists"},
		{"Put Blob, onto a directory", http.MethodPut, "/devstoreaccount1/hxfs/dir", bb, 409, "PathConflict"},
		{"Put Blob, leased file without the lease", http.MethodPut, "/devstoreaccount1/hxfs/lf", bb, 412, "LeaseIdMissing"},
		{"Put Block, leased file without the lease", http.MethodPut, "/devstoreaccount1/hxfs/lf?comp=block&blockid=YQ%3D%3D", nil, 412, "LeaseIdMissing"},
		{"Put Block, no container", http.MethodPut, "/devstoreaccount1/nofs/a?comp=block&blockid=YQ%3D%3D", nil, 404, "ContainerNotFound"},
		{"Append Block, a block blob file", http.MethodPut, "/devstoreaccount1/hxfs/f?comp=appendblock", nil, 409, "InvalidBlobType"},
		{"Put Blob, good", http.MethodPut, "/devstoreaccount1/hxfs/new/file", bb, 100, ""},
	})
	nothing := map[string]string{}
	runExpect(t, e.app.DFSURL, body, []expectCase{
		{"append, no such path", http.MethodPatch, "/devstoreaccount1/hxfs/none?action=append&position=0", nothing, 404, "PathNotFound"},
		{"append, a directory", http.MethodPatch, "/devstoreaccount1/hxfs/dir?action=append&position=0", nothing, 409, "PathConflict"},
		{"append, leased file without the lease", http.MethodPatch, "/devstoreaccount1/hxfs/lf?action=append&position=0", nothing, 412, "LeaseIdMissing"},
		{"flush with a body", http.MethodPatch, "/devstoreaccount1/hxfs/f?action=flush&position=0", nothing, 400, "InvalidHeaderValue"},
		{"append, good", http.MethodPatch, "/devstoreaccount1/hxfs/f?action=append&position=0", nothing, 100, ""},
	})
}

// TestSV2026ExpectContinueEarlyAnswerFile: File Put Range answers a
// refused write before its body (no file, a range past its end, a lease
// not given) and asks for the body of a good one.
func TestSV2026ExpectContinueEarlyAnswerFile(t *testing.T) {
	e := startFile(t)
	sh := e.share()
	e.mkfile(sh, "f", 1024)
	lf := e.mkfile(sh, "lf", 1024)
	id := "11111111-2222-3333-4444-555555555555"
	flc, err := filelease.NewFileClient(lf, &filelease.FileClientOptions{LeaseID: &id})
	must(t, err)
	_, err = flc.Acquire(e.ctx, nil)
	must(t, err)
	name := func() string {
		u, _ := url.Parse(sh.URL())
		return u.Path
	}()
	pr := func(rng string) map[string]string {
		return map[string]string{"x-ms-write": "update", "x-ms-range": rng}
	}
	runExpect(t, e.app.FileURL, strings.Repeat("f", 512), []expectCase{
		{"Put Range, no file", http.MethodPut, name + "/none?comp=range", pr("bytes=0-511"), 404, "ResourceNotFound"},
		{"Put Range, past the end", http.MethodPut, name + "/f?comp=range", pr("bytes=1024-1535"), 416, "InvalidRange"},
		{"Put Range, leased file without the lease", http.MethodPut, name + "/lf?comp=range", pr("bytes=0-511"), 412, "LeaseIdMissing"},
		{"Put Range, good", http.MethodPut, name + "/f?comp=range", pr("bytes=512-1023"), 100, ""},
	})
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
