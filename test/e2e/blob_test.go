package e2e

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// blobT is the fixture of the blob, condition, lease, snapshot/copy and
// race tests: a server, one container, and an SDK client whose requests
// can be edited per call (bxWithHeaders) before they are signed.
type blobT struct {
	*env
	cont string
	cli  *azblob.Client
}

func newBlobT(t *testing.T) *blobT {
	t.Helper()
	e := start(t)
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	opts := clientOptions()
	opts.PerCallPolicies = append(opts.PerCallPolicies, bxHeaderEditPolicy{})
	// An own transport, whose idle connections are closed before the
	// server shuts down: connections the transport dialled but never used
	// would otherwise hold http.Server.Shutdown for 5 s.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	opts.Transport = &http.Client{Transport: tr, Timeout: 60 * time.Second}
	t.Cleanup(tr.CloseIdleConnections)
	cli, err := azblob.NewClientWithSharedKeyCredential(e.app.BlobURL, cred, opts)
	must(t, err)
	b := &blobT{env: e, cont: "cont", cli: cli}
	_, err = cli.CreateContainer(e.ctx, b.cont, nil)
	must(t, err)
	return b
}

type bxHeaderEditKey struct{}

// bxHeaderEditPolicy applies the header edit carried by the request's
// context. It runs before the Shared Key policy, so edited requests are
// still signed correctly: this is how tests send what the SDK would not.
type bxHeaderEditPolicy struct{}

func (bxHeaderEditPolicy) Do(req *policy.Request) (*http.Response, error) {
	if f, ok := req.Raw().Context().Value(bxHeaderEditKey{}).(func(http.Header)); ok {
		f(req.Raw().Header)
	}
	return req.Next()
}

func bxWithHeaders(ctx context.Context, f func(h http.Header)) context.Context {
	return context.WithValue(ctx, bxHeaderEditKey{}, f)
}

// bxDelHeader removes every spelling of header name (the SDK sets
// lower-case keys directly in the map).
func bxDelHeader(h http.Header, name string) {
	for k := range h {
		if strings.EqualFold(k, name) {
			delete(h, k)
		}
	}
}

func bxSetHeader(h http.Header, name, value string) {
	bxDelHeader(h, name)
	h[strings.ToLower(name)] = []string{value}
}

// bxWithoutHeader / bxWithHeader edit one header of the requests made with the context.
func bxWithoutHeader(ctx context.Context, name string) context.Context {
	return bxWithHeaders(ctx, func(h http.Header) { bxDelHeader(h, name) })
}

func bxWithHeader(ctx context.Context, name, value string) context.Context {
	return bxWithHeaders(ctx, func(h http.Header) { bxSetHeader(h, name, value) })
}

// use points the fixture's helpers at a subtest's t until the returned
// function is called.
func (b *blobT) use(t *testing.T) func() {
	old := b.t
	b.t = t
	return func() { b.t = old }
}

func (b *blobT) bb(name string) *blockblob.Client {
	return b.cli.ServiceClient().NewContainerClient(b.cont).NewBlockBlobClient(name)
}

func (b *blobT) snap(name, snapshot string) *blockblob.Client {
	c, err := b.bb(name).WithSnapshot(snapshot)
	must(b.t, err)
	return c
}

func bxBody(data []byte) io.ReadSeekCloser { return streaming.NopCloser(bytes.NewReader(data)) }

// put uploads data with one Put Blob and returns the response.
func (b *blobT) put(name string, data []byte, o *blockblob.UploadOptions) blockblob.UploadResponse {
	b.t.Helper()
	r, err := b.bb(name).Upload(b.ctx, bxBody(data), o)
	must(b.t, err)
	return r
}

func (b *blobT) read(c *blockblob.Client) []byte {
	b.t.Helper()
	r, err := c.DownloadStream(b.ctx, nil)
	must(b.t, err)
	defer r.Body.Close()
	got, err := io.ReadAll(r.Body)
	must(b.t, err)
	return got
}

func (b *blobT) props(c *blockblob.Client) blob.GetPropertiesResponse {
	b.t.Helper()
	p, err := c.GetProperties(b.ctx, nil)
	must(b.t, err)
	return p
}

func bxRand(n int) []byte {
	p := make([]byte, n)
	_, _ = rand.Read(p)
	return p
}

func bxMD5(p []byte) []byte {
	s := md5.Sum(p)
	return s[:]
}

func bxETag(e *azcore.ETag) string {
	if e == nil {
		return ""
	}
	return string(*e)
}

// bxErrCode returns the status and error code of an Azure response error
// (0 and the message for other errors); it never fails the test, so
// goroutines may use it.
func bxErrCode(err error) (int, string) {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode, re.ErrorCode
	}
	if err == nil {
		return 0, ""
	}
	return 0, err.Error()
}

// bxWantMeta compares metadata ignoring the case of names (Go canonicalises
// response header names).
func bxWantMeta(t *testing.T, got map[string]*string, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("metadata: got %v, want %v", bxFmtMeta(got), want)
	}
	for k, v := range want {
		found := false
		for gk, gv := range got {
			if strings.EqualFold(gk, k) && gv != nil && *gv == v {
				found = true
			}
		}
		if !found {
			t.Fatalf("metadata: got %v, want %v", bxFmtMeta(got), want)
		}
	}
}

func bxFmtMeta(m map[string]*string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+"="+bxVal(v))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func bxMeta(kv ...string) map[string]*string {
	m := map[string]*string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = to.Ptr(kv[i+1])
	}
	return m
}

func bxWantStr(t *testing.T, what string, got *string, want string) {
	t.Helper()
	if bxVal(got) != want {
		t.Fatalf("%s: got %q, want %q", what, bxVal(got), want)
	}
}

func TestBlobContentRoundTrip(t *testing.T) {
	b := newBlobT(t)
	for _, n := range []int{0, 1, 1 << 10, 64 << 10, 70 << 10} {
		name := fmt.Sprintf("rt-%d", n)
		data := bxRand(n)
		up := b.put(name, data, nil)
		if !bytes.Equal(up.ContentMD5, bxMD5(data)) {
			t.Fatalf("%d: upload Content-MD5 %x, want %x", n, up.ContentMD5, bxMD5(data))
		}
		if got := b.read(b.bb(name)); !bytes.Equal(got, data) {
			t.Fatalf("%d: downloaded %d bytes, want %d", n, len(got), n)
		}
		p := b.props(b.bb(name))
		if bxVal(p.ContentLength) != int64(n) {
			t.Fatalf("%d: Content-Length %d", n, bxVal(p.ContentLength))
		}
		if !bytes.Equal(p.ContentMD5, bxMD5(data)) {
			t.Fatalf("%d: Content-MD5 %x", n, p.ContentMD5)
		}
		bxWantStr(t, "Content-Type", p.ContentType, "application/octet-stream")
		if p.BlobType == nil || *p.BlobType != blob.BlobTypeBlockBlob {
			t.Fatalf("blob type %v", p.BlobType)
		}
		if bxETag(p.ETag) != bxETag(up.ETag) {
			t.Fatalf("ETag %s, upload said %s", bxETag(p.ETag), bxETag(up.ETag))
		}
		// DownloadBuffer starts with a ranged GET; an empty blob answers
		// 416 and the SDK treats that as "nothing to read".
		buf := make([]byte, n)
		got, err := b.bb(name).DownloadBuffer(b.ctx, buf, nil)
		must(t, err)
		if got != int64(n) || !bytes.Equal(buf, data) {
			t.Fatalf("%d: DownloadBuffer got %d bytes", n, got)
		}
	}
}

func TestBlobLargeUploads(t *testing.T) {
	b := newBlobT(t)
	data := bxRand(20 << 20)

	_, err := b.bb("buf").UploadBuffer(b.ctx, data, &blockblob.UploadBufferOptions{BlockSize: 4 << 20, Concurrency: 4})
	must(t, err)
	out := make([]byte, len(data))
	n, err := b.bb("buf").DownloadBuffer(b.ctx, out, &blob.DownloadBufferOptions{BlockSize: 3 << 20, Concurrency: 4})
	must(t, err)
	if n != int64(len(data)) || !bytes.Equal(out, data) {
		t.Fatal("UploadBuffer/DownloadBuffer: content differs")
	}

	_, err = b.bb("stream").UploadStream(b.ctx, bytes.NewReader(data), &blockblob.UploadStreamOptions{BlockSize: 4 << 20, Concurrency: 3})
	must(t, err)
	if got := b.read(b.bb("stream")); !bytes.Equal(got, data) {
		t.Fatalf("UploadStream: downloaded %d bytes, content differs", len(got))
	}
	// UploadBuffer sends 20 MiB as one Put Blob; UploadStream stages 4 MiB blocks.
	bl, err := b.bb("stream").GetBlockList(b.ctx, blockblob.BlockListTypeAll, nil)
	must(t, err)
	if len(bl.CommittedBlocks) != 5 || len(bl.UncommittedBlocks) != 0 {
		t.Fatalf("block list: %d committed, %d uncommitted", len(bl.CommittedBlocks), len(bl.UncommittedBlocks))
	}
	p := b.props(b.bb("stream"))
	if bxVal(p.ContentLength) != int64(len(data)) {
		t.Fatalf("Content-Length %d", bxVal(p.ContentLength))
	}
	// A range across block boundaries.
	r, err := b.bb("stream").DownloadStream(b.ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 4<<20 - 10, Count: 4<<20 + 20}})
	must(t, err)
	got, err := io.ReadAll(r.Body)
	r.Body.Close()
	must(t, err)
	if !bytes.Equal(got, data[4<<20-10:8<<20+10]) {
		t.Fatal("range across blocks differs")
	}
}

func TestBlobRangedReads(t *testing.T) {
	b := newBlobT(t)
	data := bxRand(70 << 10)
	b.put("r", data, nil)
	size := int64(len(data))

	get := func(o *blob.DownloadStreamOptions) (blob.DownloadStreamResponse, *http.Response, []byte, error) {
		var raw *http.Response
		r, err := b.bb("r").DownloadStream(policy.WithCaptureResponse(b.ctx, &raw), o)
		if err != nil {
			return r, raw, nil, err
		}
		got, rerr := io.ReadAll(r.Body)
		r.Body.Close()
		must(t, rerr)
		return r, raw, got, nil
	}

	cases := []struct {
		off, count int64
		wantOff    int64
		wantN      int64
	}{
		{0, 1, 0, 1},
		{100, 1000, 100, 1000},
		{size - 10, 100, size - 10, 10}, // clipped at the end
		{size - 1, blob.CountToEnd, size - 1, 1},
		{5000, blob.CountToEnd, 5000, size - 5000},
	}
	for _, c := range cases {
		r, raw, got, err := get(&blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: c.off, Count: c.count}})
		must(t, err)
		if raw.StatusCode != http.StatusPartialContent {
			t.Fatalf("range %d+%d: status %d", c.off, c.count, raw.StatusCode)
		}
		want := fmt.Sprintf("bytes %d-%d/%d", c.wantOff, c.wantOff+c.wantN-1, size)
		bxWantStr(t, "Content-Range", r.ContentRange, want)
		if bxVal(r.ContentLength) != c.wantN || !bytes.Equal(got, data[c.wantOff:c.wantOff+c.wantN]) {
			t.Fatalf("range %d+%d: got %d bytes", c.off, c.count, len(got))
		}
		// The whole blob's MD5 is reported as x-ms-blob-content-md5.
		if !bytes.Equal(r.BlobContentMD5, bxMD5(data)) {
			t.Fatalf("x-ms-blob-content-md5 %x", r.BlobContentMD5)
		}
	}

	// Whole blob: 200, no Content-Range.
	r, raw, got, err := get(nil)
	must(t, err)
	if raw.StatusCode != http.StatusOK || r.ContentRange != nil || !bytes.Equal(got, data) {
		t.Fatalf("full read: status %d, Content-Range %v", raw.StatusCode, r.ContentRange)
	}

	// Ranges starting at or past the end.
	for _, off := range []int64{size, size + 10, 1 << 40} {
		_, _, _, err := get(&blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: off, Count: 5}})
		wantCode(t, err, 416, bloberror.InvalidRange)
	}

	// x-ms-range-get-content-md5 returns the MD5 of the range.
	r, _, got, err = get(&blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 1000, Count: 4096}, RangeGetContentMD5: to.Ptr(true)})
	must(t, err)
	if !bytes.Equal(got, data[1000:5096]) || !bytes.Equal(r.ContentMD5, bxMD5(data[1000:5096])) {
		t.Fatalf("range MD5 %x, want %x", r.ContentMD5, bxMD5(data[1000:5096]))
	}
	// ... and needs a range.
	_, _, _, err = get(&blob.DownloadStreamOptions{RangeGetContentMD5: to.Ptr(true)})
	wantCode(t, err, 400, bloberror.InvalidHeaderValue)

	// A zero-length blob: every range is unsatisfiable, a plain GET works.
	b.put("empty", nil, nil)
	_, err = b.bb("empty").DownloadStream(b.ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 0, Count: 10}})
	wantCode(t, err, 416, bloberror.InvalidRange)
	if got := b.read(b.bb("empty")); len(got) != 0 {
		t.Fatalf("empty blob read %d bytes", len(got))
	}
	n, err := b.bb("empty").DownloadBuffer(b.ctx, make([]byte, 0), nil)
	if err != nil || n != 0 {
		t.Fatalf("DownloadBuffer on empty blob: %d, %v", n, err)
	}
}

func TestBlobContentMD5Checked(t *testing.T) {
	b := newBlobT(t)
	for _, n := range []int{10, 70 << 10} {
		name := fmt.Sprintf("md5-%d", n)
		data := bxRand(n)
		wrong := bxMD5([]byte("something else"))

		// Wrong MD5 on create: 400 and no blob.
		_, err := b.bb(name).Upload(b.ctx, bxBody(data), &blockblob.UploadOptions{TransactionalContentMD5: wrong})
		wantCode(t, err, 400, bloberror.MD5Mismatch)
		_, err = b.bb(name).GetProperties(b.ctx, nil)
		wantCode(t, err, 404, bloberror.BlobNotFound)

		// Right MD5: created.
		up, err := b.bb(name).Upload(b.ctx, bxBody(data), &blockblob.UploadOptions{TransactionalContentMD5: bxMD5(data)})
		must(t, err)

		// Wrong MD5 on overwrite: nothing changes.
		_, err = b.bb(name).Upload(b.ctx, bxBody(bxRand(n)), &blockblob.UploadOptions{TransactionalContentMD5: wrong, Metadata: bxMeta("x", "y")})
		wantCode(t, err, 400, bloberror.MD5Mismatch)
		p := b.props(b.bb(name))
		if bxETag(p.ETag) != bxETag(up.ETag) || len(p.Metadata) != 0 {
			t.Fatalf("failed upload changed the blob: ETag %s -> %s, metadata %v", bxETag(up.ETag), bxETag(p.ETag), bxFmtMeta(p.Metadata))
		}
		if got := b.read(b.bb(name)); !bytes.Equal(got, data) {
			t.Fatal("failed upload changed the content")
		}
	}

	// Put Block checks its MD5 too, and stores nothing on a mismatch.
	id := base64.StdEncoding.EncodeToString([]byte("block-01"))
	_, err := b.bb("blk").StageBlock(b.ctx, id, bxBody([]byte("abc")), &blockblob.StageBlockOptions{TransactionalValidation: blob.TransferValidationTypeMD5(bxMD5([]byte("abd")))})
	wantCode(t, err, 400, bloberror.MD5Mismatch)
	_, err = b.bb("blk").GetBlockList(b.ctx, blockblob.BlockListTypeAll, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
}

func TestBlobOverwriteReplacesEverything(t *testing.T) {
	b := newBlobT(t)
	b.put("o", []byte("first version"), &blockblob.UploadOptions{
		Metadata: bxMeta("a", "1", "b", "2"),
		HTTPHeaders: &blob.HTTPHeaders{
			BlobContentType:     to.Ptr("text/plain"),
			BlobContentLanguage: to.Ptr("en"),
			BlobCacheControl:    to.Ptr("no-cache"),
		},
	})
	p := b.props(b.bb("o"))
	bxWantMeta(t, p.Metadata, map[string]string{"a": "1", "b": "2"})
	bxWantStr(t, "Content-Type", p.ContentType, "text/plain")
	bxWantStr(t, "Content-Language", p.ContentLanguage, "en")
	created := p.CreationTime

	b.put("o", []byte("v2"), &blockblob.UploadOptions{Metadata: bxMeta("c", "3")})
	p = b.props(b.bb("o"))
	bxWantMeta(t, p.Metadata, map[string]string{"c": "3"})
	bxWantStr(t, "Content-Type", p.ContentType, "application/octet-stream")
	bxWantStr(t, "Content-Language", p.ContentLanguage, "")
	bxWantStr(t, "Cache-Control", p.CacheControl, "")
	if got := b.read(b.bb("o")); string(got) != "v2" {
		t.Fatalf("content %q", got)
	}
	if created == nil || p.CreationTime == nil || !created.Equal(*p.CreationTime) {
		t.Fatalf("creation time changed on overwrite: %v -> %v", created, p.CreationTime)
	}

	// No metadata on overwrite clears it.
	b.put("o", []byte("v3"), nil)
	bxWantMeta(t, b.props(b.bb("o")).Metadata, nil)
}

func TestBlobETagOnEveryWrite(t *testing.T) {
	b := newBlobT(t)
	seen := map[string]string{}
	record := func(what string, e *azcore.ETag) {
		t.Helper()
		s := bxETag(e)
		if s == "" || !strings.HasPrefix(s, `"`) || !strings.HasSuffix(s, `"`) {
			t.Fatalf("%s: ETag %q is not a quoted string", what, s)
		}
		if prev, dup := seen[s]; dup {
			t.Fatalf("%s: ETag %s reused (first from %s); the fake clock did not move", what, s, prev)
		}
		seen[s] = what
		if got := bxETag(b.props(b.bb("e")).ETag); got != s {
			t.Fatalf("%s: response ETag %s, Get Properties %s", what, s, got)
		}
	}
	c := b.bb("e")
	r1 := b.put("e", []byte("x"), nil)
	record("put 1", r1.ETag)
	r2 := b.put("e", []byte("x"), nil)
	record("put 2 (same content, same tick)", r2.ETag)
	m, err := c.SetMetadata(b.ctx, bxMeta("k", "v"), nil)
	must(t, err)
	record("set metadata", m.ETag)
	m, err = c.SetMetadata(b.ctx, bxMeta("k", "v"), nil)
	must(t, err)
	record("set same metadata again", m.ETag)
	h, err := c.SetHTTPHeaders(b.ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("text/plain")}, nil)
	must(t, err)
	record("set properties", h.ETag)
	id := base64.StdEncoding.EncodeToString([]byte("b1"))
	_, err = c.StageBlock(b.ctx, id, bxBody([]byte("block")), nil)
	must(t, err)
	if got := bxETag(b.props(c).ETag); got != bxETag(h.ETag) {
		t.Fatalf("Put Block changed the committed blob's ETag: %s -> %s", bxETag(h.ETag), got)
	}
	cl, err := c.CommitBlockList(b.ctx, []string{id}, nil)
	must(t, err)
	record("put block list", cl.ETag)
	cp, err := c.StartCopyFromURL(b.ctx, b.bb("e").URL(), nil)
	must(t, err)
	record("copy onto itself", cp.ETag)
	// Delete and recreate: still a new ETag.
	_, err = c.Delete(b.ctx, nil)
	must(t, err)
	record("recreate", b.put("e", []byte("x"), nil).ETag)

	// Reads do not change it.
	before := bxETag(b.props(c).ETag)
	b.read(c)
	if after := bxETag(b.props(c).ETag); after != before {
		t.Fatalf("read changed ETag %s -> %s", before, after)
	}

	// Last-Modified is the write time (whole seconds) and follows the clock.
	now := b.clock.Now().UTC().Truncate(time.Second)
	p := b.props(c)
	if p.LastModified == nil || !p.LastModified.Equal(now) {
		t.Fatalf("Last-Modified %v, want %v", p.LastModified, now)
	}
	b.clock.Advance(3 * time.Second)
	up := b.put("e", []byte("y"), nil)
	if up.LastModified == nil || !up.LastModified.Equal(now.Add(3*time.Second)) {
		t.Fatalf("Last-Modified after advance %v, want %v", up.LastModified, now.Add(3*time.Second))
	}
	if p2 := b.props(c); !p2.LastModified.Equal(*up.LastModified) || !p2.CreationTime.Equal(now) {
		t.Fatalf("Get Properties: Last-Modified %v, creation %v", p2.LastModified, p2.CreationTime)
	}
	// Set Metadata also moves Last-Modified.
	b.clock.Advance(2 * time.Second)
	m, err = c.SetMetadata(b.ctx, nil, nil)
	must(t, err)
	if !m.LastModified.Equal(now.Add(5 * time.Second)) {
		t.Fatalf("Set Metadata Last-Modified %v", m.LastModified)
	}
}

func TestBlobSetHTTPHeaders(t *testing.T) {
	b := newBlobT(t)
	data := []byte("some content")
	b.put("h", data, &blockblob.UploadOptions{
		Metadata: bxMeta("keep", "me"),
		HTTPHeaders: &blob.HTTPHeaders{
			BlobContentType:        to.Ptr("text/plain"),
			BlobContentEncoding:    to.Ptr("identity"),
			BlobContentLanguage:    to.Ptr("en"),
			BlobContentDisposition: to.Ptr("inline"),
			BlobCacheControl:       to.Ptr("max-age=1"),
		},
	})
	c := b.bb("h")
	p := b.props(c)
	bxWantStr(t, "Content-Encoding", p.ContentEncoding, "identity")
	bxWantStr(t, "Content-Disposition", p.ContentDisposition, "inline")
	bxWantStr(t, "Cache-Control", p.CacheControl, "max-age=1")
	if !bytes.Equal(p.ContentMD5, bxMD5(data)) {
		t.Fatalf("Content-MD5 %x", p.ContentMD5)
	}

	// Set Blob Properties replaces all HTTP headers: the ones not sent are cleared.
	_, err := c.SetHTTPHeaders(b.ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("application/json"), BlobContentLanguage: to.Ptr("de")}, nil)
	must(t, err)
	p = b.props(c)
	bxWantStr(t, "Content-Type", p.ContentType, "application/json")
	bxWantStr(t, "Content-Language", p.ContentLanguage, "de")
	bxWantStr(t, "Content-Encoding", p.ContentEncoding, "")
	bxWantStr(t, "Content-Disposition", p.ContentDisposition, "")
	bxWantStr(t, "Cache-Control", p.CacheControl, "")
	if p.ContentMD5 != nil {
		t.Fatalf("Content-MD5 not cleared: %x", p.ContentMD5)
	}
	// Content and metadata untouched.
	bxWantMeta(t, p.Metadata, map[string]string{"keep": "me"})
	if bxVal(p.ContentLength) != int64(len(data)) || !bytes.Equal(b.read(c), data) {
		t.Fatal("Set Blob Properties changed the content")
	}
	// The Get Blob response carries the new headers too.
	r, err := c.DownloadStream(b.ctx, nil)
	must(t, err)
	r.Body.Close()
	bxWantStr(t, "Get Blob Content-Type", r.ContentType, "application/json")
	bxWantStr(t, "Get Blob Content-Language", r.ContentLanguage, "de")

	// An explicit MD5 is stored as given.
	sum := bxMD5([]byte("not the content"))
	_, err = c.SetHTTPHeaders(b.ctx, blob.HTTPHeaders{BlobContentMD5: sum}, nil)
	must(t, err)
	p = b.props(c)
	if !bytes.Equal(p.ContentMD5, sum) {
		t.Fatalf("Content-MD5 %x, want %x", p.ContentMD5, sum)
	}
	// The content type was cleared too: reads carry none, as Azure's do
	// (azure-sdk-for-js recording "setHTTPHeaders with default parameters").
	bxWantStr(t, "cleared Content-Type", p.ContentType, "")
	r, err = c.DownloadStream(b.ctx, nil)
	must(t, err)
	r.Body.Close()
	bxWantStr(t, "cleared Content-Type on Get Blob", r.ContentType, "")
	bxWantStr(t, "cleared Content-Language on Get Blob", r.ContentLanguage, "")
	_, err = b.bb("missing").SetHTTPHeaders(b.ctx, blob.HTTPHeaders{}, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
}

func TestBlobSetMetadata(t *testing.T) {
	b := newBlobT(t)
	data := []byte("metadata test")
	b.put("m", data, &blockblob.UploadOptions{Metadata: bxMeta("a", "1"), HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/plain")}})
	c := b.bb("m")

	_, err := c.SetMetadata(b.ctx, bxMeta("b", "2", "c", "three"), nil)
	must(t, err)
	p := b.props(c)
	bxWantMeta(t, p.Metadata, map[string]string{"b": "2", "c": "three"})
	bxWantStr(t, "Content-Type", p.ContentType, "text/plain")
	if !bytes.Equal(b.read(c), data) {
		t.Fatal("Set Metadata changed the content")
	}
	r, err := c.DownloadStream(b.ctx, nil)
	must(t, err)
	r.Body.Close()
	bxWantMeta(t, r.Metadata, map[string]string{"b": "2", "c": "three"})

	// Empty metadata clears it.
	_, err = c.SetMetadata(b.ctx, map[string]*string{}, nil)
	must(t, err)
	bxWantMeta(t, b.props(c).Metadata, nil)

	_, err = b.bb("missing").SetMetadata(b.ctx, bxMeta("a", "b"), nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	_, err = b.cli.ServiceClient().NewContainerClient("nocont").NewBlockBlobClient("x").SetMetadata(b.ctx, bxMeta("a", "b"), nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
}

func TestBlobDelete(t *testing.T) {
	b := newBlobT(t)
	up := b.put("d", bxRand(70<<10), nil)
	var raw *http.Response
	_, err := b.bb("d").Delete(policy.WithCaptureResponse(b.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != http.StatusAccepted {
		t.Fatalf("delete status %d", raw.StatusCode)
	}
	_, err = b.bb("d").DownloadStream(b.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	_, err = b.bb("d").GetProperties(b.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	_, err = b.bb("d").Delete(b.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	_, err = b.cli.ServiceClient().NewContainerClient("nocont").NewBlockBlobClient("d").Delete(b.ctx, nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)

	// Recreated: fresh blob, fresh ETag.
	up2 := b.put("d", []byte("again"), nil)
	if bxETag(up2.ETag) == bxETag(up.ETag) {
		t.Fatal("recreated blob reuses the old ETag")
	}
	if got := b.read(b.bb("d")); string(got) != "again" {
		t.Fatalf("content %q", got)
	}
	// Uncommitted blocks go with the blob.
	id := base64.StdEncoding.EncodeToString([]byte("blk"))
	_, err = b.bb("d").StageBlock(b.ctx, id, bxBody([]byte("zz")), nil)
	must(t, err)
	_, err = b.bb("d").Delete(b.ctx, nil)
	must(t, err)
	_, err = b.bb("d").CommitBlockList(b.ctx, []string{id}, nil)
	wantCode(t, err, 400, bloberror.InvalidBlockList)
}

func TestBlobGetPropertiesFresh(t *testing.T) {
	b := newBlobT(t)
	up := b.put("p", []byte("12345"), nil)
	p := b.props(b.bb("p"))
	if p.LeaseStatus == nil || *p.LeaseStatus != "unlocked" || p.LeaseState == nil || *p.LeaseState != "available" || p.LeaseDuration != nil {
		t.Fatalf("lease: status %v state %v duration %v", p.LeaseStatus, p.LeaseState, p.LeaseDuration)
	}
	if !p.LastModified.Equal(*up.LastModified) || !p.CreationTime.Equal(*up.LastModified) {
		t.Fatalf("times: modified %v created %v upload %v", p.LastModified, p.CreationTime, up.LastModified)
	}
	if p.CopyID != nil || p.CopyStatus != nil {
		t.Fatalf("copy properties on a plain blob: %v %v", p.CopyID, p.CopyStatus)
	}
}

func bxVal[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
