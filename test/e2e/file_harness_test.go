package e2e

// Harness for the File service tests: a server with only the File
// listener, a fake clock and azfile clients (Shared Key, retries off).
// Helpers are named file*/fi* so they never clash with the other
// services' files in this package.

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/clock"
)

type fileEnv struct {
	t     *testing.T
	app   *app.App
	clock *clock.Fake
	svc   *service.Client
	ctx   context.Context
}

// startFile runs a File-only server on a temporary directory. The fake
// clock starts at the real time because the SDK signs requests with the
// real time and the server rejects more than 15 minutes of skew.
func startFile(t *testing.T) *fileEnv {
	t.Helper()
	a, clk := startApp4(t, -1, -1, -1, 0)
	return &fileEnv{t: t, app: a, clock: clk, svc: fileClient(t, a.FileURL, app.DevKey), ctx: context.Background()}
}

func fileClientOptions() *service.ClientOptions {
	return &service.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry:           policy.RetryOptions{MaxRetries: -1},
		Transport:       &http.Client{Timeout: 120 * time.Second},
		PerCallPolicies: []policy.Policy{fiHeaderPolicy{}},
	}}
}

// fileClient is a Shared Key service client for url signed with key.
func fileClient(t testing.TB, url, key string) *service.Client {
	t.Helper()
	cred, err := service.NewSharedKeyCredential(app.DevAccount, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := service.NewClientWithSharedKeyCredential(url, cred, fileClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var fiSeq atomic.Int64

// fileName returns a unique lower-case share name with prefix.
func fileName(prefix string) string {
	return fmt.Sprintf("%s%d", strings.ToLower(prefix), fiSeq.Add(1))
}

// share creates a share with a unique name and returns its client.
func (e *fileEnv) share() *share.Client {
	e.t.Helper()
	s := e.svc.NewShareClient(fileName("share"))
	_, err := s.Create(e.ctx, nil)
	if err != nil {
		e.t.Fatalf("create share: %v", err)
	}
	return s
}

// fileAt is the client of the file at path (slash-separated, relative to
// the share root) in share s.
func fileAt(s *share.Client, path string) *file.Client {
	dir, name := "", path
	if i := strings.LastIndex(path, "/"); i >= 0 {
		dir, name = path[:i], path[i+1:]
	}
	return dirAt(s, dir).NewFileClient(name)
}

// dirAt is the client of the directory at path in share s ("" is the
// root directory).
func dirAt(s *share.Client, path string) *directory.Client {
	d := s.NewRootDirectoryClient()
	for _, p := range strings.Split(path, "/") {
		if p != "" {
			d = d.NewSubdirectoryClient(p)
		}
	}
	return d
}

// mkfile creates a file of size bytes at path and returns its client.
func (e *fileEnv) mkfile(s *share.Client, path string, size int64) *file.Client {
	e.t.Helper()
	f := fileAt(s, path)
	if _, err := f.Create(e.ctx, size, nil); err != nil {
		e.t.Fatalf("create file %s: %v", path, err)
	}
	return f
}

// mkdir creates the directory at path (its parent must exist).
func (e *fileEnv) mkdir(s *share.Client, path string) *directory.Client {
	e.t.Helper()
	d := dirAt(s, path)
	if _, err := d.Create(e.ctx, nil); err != nil {
		e.t.Fatalf("create directory %s: %v", path, err)
	}
	return d
}

// wantFileCode asserts err is an Azure response error with status and
// code ("" accepts any code).
func wantFileCode(t testing.TB, err error, status int, code fileerror.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %d %s, got success", status, code)
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want %d %s, got %v", status, code, err)
	}
	if re.StatusCode != status || (code != "" && re.ErrorCode != string(code)) {
		t.Fatalf("want %d %s, got %d %s", status, code, re.StatusCode, re.ErrorCode)
	}
}

// fiRand returns n random bytes.
func fiRand(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// fiMD5 is the MD5 digest of b.
func fiMD5(b []byte) []byte {
	s := md5.Sum(b)
	return s[:]
}

// fiBody wraps b as a request body for UploadRange and friends.
func fiBody(b []byte) io.ReadSeekCloser { return streaming.NopCloser(bytes.NewReader(b)) }

// put writes data at off with Put Range (update).
func (e *fileEnv) put(f *file.Client, off int64, data []byte) file.UploadRangeResponse {
	e.t.Helper()
	r, err := f.UploadRange(e.ctx, off, fiBody(data), nil)
	if err != nil {
		e.t.Fatalf("put range at %d (%d bytes): %v", off, len(data), err)
	}
	return r
}

// read returns count bytes at off (count 0: to the end; off 0 and count 0:
// the whole file, sent without a range).
func (e *fileEnv) read(f *file.Client, off, count int64) []byte {
	e.t.Helper()
	r, err := f.DownloadStream(e.ctx, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: off, Count: count}})
	if err != nil {
		e.t.Fatalf("get file range %d+%d: %v", off, count, err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		e.t.Fatalf("read body: %v", err)
	}
	return b
}

// props returns the file's properties.
func (e *fileEnv) props(f *file.Client) file.GetPropertiesResponse {
	e.t.Helper()
	p, err := f.GetProperties(e.ctx, nil)
	if err != nil {
		e.t.Fatalf("get file properties: %v", err)
	}
	return p
}

// fiRanges is a range list as [start, end] pairs (end inclusive).
type fiRanges [][2]int64

// ranges lists the file's valid ranges.
func (e *fileEnv) ranges(f *file.Client, o *file.GetRangeListOptions) fiRanges {
	e.t.Helper()
	r, err := f.GetRangeList(e.ctx, o)
	if err != nil {
		e.t.Fatalf("list ranges: %v", err)
	}
	return fiRangeList(r.Ranges)
}

func fiRangeList(rs []*file.ShareFileRange) fiRanges {
	out := fiRanges{}
	for _, r := range rs {
		out = append(out, [2]int64{*r.Start, *r.End})
	}
	return out
}

func fiClearList(rs []*file.ClearRange) fiRanges {
	out := fiRanges{}
	for _, r := range rs {
		out = append(out, [2]int64{*r.Start, *r.End})
	}
	return out
}

func (r fiRanges) String() string { return fmt.Sprint([][2]int64(r)) }

// wantRanges compares range lists.
func wantRanges(t testing.TB, what string, got, want fiRanges) {
	t.Helper()
	if got.String() != want.String() {
		t.Fatalf("%s: ranges %v, want %v", what, got, want)
	}
}

type fiHeaderKey struct{}

// fiHeader returns a context whose requests carry the extra headers kv
// (name, value, name, value...), replacing any the SDK set. Unlike
// policy.WithHTTPHeader, which applies after the Shared Key policy has
// signed, fiHeaderPolicy runs per call, before signing, so the headers
// are covered by the signature.
func fiHeader(ctx context.Context, kv ...string) context.Context {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return context.WithValue(ctx, fiHeaderKey{}, h)
}

type fiHeaderPolicy struct{}

func (fiHeaderPolicy) Do(req *policy.Request) (*http.Response, error) {
	if h, ok := req.Raw().Context().Value(fiHeaderKey{}).(http.Header); ok {
		for k, v := range h {
			req.Raw().Header[k] = v
		}
	}
	return req.Next()
}

// fiCapture returns a context that records the raw response in *resp.
func fiCapture(ctx context.Context, resp **http.Response) context.Context {
	return policy.WithCaptureResponse(ctx, resp)
}

// fiStatus is the HTTP status of an Azure response error, 0 otherwise.
func fiStatus(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

// fiStr renders an optional string for messages.
func fiStr(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}
