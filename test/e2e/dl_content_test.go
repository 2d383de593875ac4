package e2e

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/datalakeerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/cerulean-storage/cerulean/internal/app"
)

func randBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	must(t, err)
	return b
}

func body(b []byte) io.ReadSeekCloser { return streaming.NopCloser(bytes.NewReader(b)) }

// download reads f through the SDK's DownloadStream (Get Blob on the
// Blob API of the dfs port).
func download(t *testing.T, e *dlEnv, f *file.Client) []byte {
	t.Helper()
	resp, err := f.DownloadStream(e.ctx, nil)
	must(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	must(t, err)
	return got
}

func size(t *testing.T, e *dlEnv, f *file.Client) int64 {
	t.Helper()
	p, err := f.GetProperties(e.ctx, nil)
	must(t, err)
	return *p.ContentLength
}

// TestDLContentAppendFlush: appended data is invisible until a flush at
// the exact length; appends in any order, errors for positions that do
// not fit, retainUncommittedData, flush headers and conditions.
func TestDLContentAppendFlush(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("content")
	f := fs.NewFileClient("dir/f.bin")
	_, err := fs.NewDirectoryClient("dir").Create(e.ctx, nil)
	must(t, err)
	_, err = f.Create(e.ctx, nil)
	must(t, err)

	data := randBytes(t, 8<<10)
	_, err = f.AppendData(e.ctx, 0, body(data), nil)
	must(t, err)
	// Reads see only flushed data.
	if n := size(t, e, f); n != 0 {
		t.Fatalf("size before flush %d", n)
	}
	if got := download(t, e, f); len(got) != 0 {
		t.Fatalf("read %d bytes before flush", len(got))
	}
	wantDL(t, get(f.FlushData(e.ctx, 100, nil)), 400, string(datalakeerror.InvalidFlushPosition))
	fr, err := f.FlushData(e.ctx, int64(len(data)), nil)
	must(t, err)
	p, err := f.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.ContentLength != int64(len(data)) || *p.ETag != *fr.ETag || *p.ResourceType != "file" || *p.Owner != "$superuser" || *p.Permissions != "rw-r-----" {
		t.Fatalf("properties after flush: len %d etag %s/%s type %s owner %s perm %s", *p.ContentLength, *p.ETag, *fr.ETag, *p.ResourceType, *p.Owner, *p.Permissions)
	}
	if got := download(t, e, f); !bytes.Equal(got, data) {
		t.Fatal("content differs after flush")
	}

	// Below the committed length: refused.
	wantDL(t, get(f.AppendData(e.ctx, 0, body([]byte("x")), nil)), 400, string(datalakeerror.InvalidFlushPosition))
	// Two chunks out of order, then a flush with content headers.
	a, b := randBytes(t, 3000), randBytes(t, 5000)
	base := int64(len(data))
	_, err = f.AppendData(e.ctx, base+3000, body(b), nil)
	must(t, err)
	// Overlapping a pending append: refused.
	wantDL(t, get(f.AppendData(e.ctx, base+2999, body([]byte("xy")), nil)), 400, string(datalakeerror.InvalidFlushPosition))
	// A gap: the flush is refused and the file unchanged.
	wantDL(t, get(f.FlushData(e.ctx, base+8000, nil)), 400, string(datalakeerror.InvalidFlushPosition))
	_, err = f.AppendData(e.ctx, base, body(a), nil)
	must(t, err)
	_, err = f.FlushData(e.ctx, base+8000, &file.FlushDataOptions{HTTPHeaders: &file.HTTPHeaders{ContentType: to.Ptr("application/x-test"), ContentDisposition: to.Ptr("inline")}})
	must(t, err)
	want := append(append(append([]byte{}, data...), a...), b...)
	if got := download(t, e, f); !bytes.Equal(got, want) {
		t.Fatal("content differs after the out-of-order appends")
	}
	p, err = f.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.ContentType != "application/x-test" || *p.ContentDisposition != "inline" {
		t.Fatalf("headers after flush: %q %q", *p.ContentType, *p.ContentDisposition)
	}

	// retainUncommittedData keeps what lies beyond the flush; without it
	// that data is discarded.
	base = int64(len(want))
	c1, c2 := randBytes(t, 100), randBytes(t, 200)
	_, err = f.AppendData(e.ctx, base, body(c1), nil)
	must(t, err)
	_, err = f.AppendData(e.ctx, base+100, body(c2), nil)
	must(t, err)
	_, err = f.FlushData(e.ctx, base+100, &file.FlushDataOptions{RetainUncommittedData: to.Ptr(true)})
	must(t, err)
	_, err = f.FlushData(e.ctx, base+300, &file.FlushDataOptions{Close: to.Ptr(true)})
	must(t, err)
	want = append(append(want, c1...), c2...)
	_, err = f.AppendData(e.ctx, base+300, body(c1), nil)
	must(t, err)
	_, err = f.AppendData(e.ctx, base+400, body(c2), nil)
	must(t, err)
	_, err = f.FlushData(e.ctx, base+400, nil)
	must(t, err)
	want = append(want, c1...)
	wantDL(t, get(f.FlushData(e.ctx, base+600, nil)), 400, string(datalakeerror.InvalidFlushPosition))
	if got := download(t, e, f); !bytes.Equal(got, want) {
		t.Fatalf("content after retain/discard: %d bytes, want %d", len(got), len(want))
	}

	// Conditions of the flush are on the file.
	_, err = f.AppendData(e.ctx, int64(len(want)), body(c1), nil)
	must(t, err)
	wrong := azcore.ETag(`"0x1"`)
	wantDL(t, get(f.FlushData(e.ctx, int64(len(want))+100, &file.FlushDataOptions{AccessConditions: &file.AccessConditions{
		ModifiedAccessConditions: &file.ModifiedAccessConditions{IfMatch: &wrong}}})), 412, string(datalakeerror.ConditionNotMet))

	// flush=true on an append commits it with what came before.
	_, err = f.FlushData(e.ctx, int64(len(want)), nil) // drops the pending c1
	must(t, err)
	p, err = f.GetProperties(e.ctx, nil)
	must(t, err)
	ar, err := f.AppendData(e.ctx, int64(len(want)), body(c2), &file.AppendDataOptions{Flush: to.Ptr(true)})
	must(t, err)
	want = append(want, c2...)
	if got := download(t, e, f); !bytes.Equal(got, want) {
		t.Fatalf("after append with flush: %d bytes, want %d", len(got), len(want))
	}
	if p2, err := f.GetProperties(e.ctx, nil); err != nil || *p2.ETag == *p.ETag || ar.ETag == nil || *ar.ETag != *p2.ETag {
		t.Fatalf("ETag after append with flush: %v %v (append answered %v)", p2.ETag, err, ar.ETag)
	}
	// A directory has no content; a missing file is 404.
	wantDL(t, get(fs.NewFileClient("dir").AppendData(e.ctx, 0, body(c1), nil)), 409, "PathConflict")
	wantDL(t, get(fs.NewFileClient("nope").AppendData(e.ctx, 0, body(c1), nil)), 404, string(datalakeerror.PathNotFound))
}

// get drops a response, keeping the error.
func get[T any](_ T, err error) error { return err }

// TestDLContentUploadDownload: the SDK's chunked uploads (parallel
// appends at their offsets, one flush) and downloads.
func TestDLContentUploadDownload(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("updown")
	for _, n := range []int{1, 1000, 3<<20 + 17} {
		f := fs.NewFileClient("buf-" + strconv.Itoa(n))
		_, err := f.Create(e.ctx, nil)
		must(t, err)
		data := randBytes(t, n)
		must(t, f.UploadBuffer(e.ctx, data, &file.UploadBufferOptions{ChunkSize: 256 << 10, Concurrency: 4}))
		buf := make([]byte, n)
		got, err := f.DownloadBuffer(e.ctx, buf, &file.DownloadBufferOptions{ChunkSize: 1 << 20, Concurrency: 3})
		must(t, err)
		if got != int64(n) || !bytes.Equal(buf, data) {
			t.Fatalf("UploadBuffer/DownloadBuffer of %d bytes: got %d", n, got)
		}

		g := fs.NewFileClient("stream-" + strconv.Itoa(n))
		_, err = g.Create(e.ctx, nil)
		must(t, err)
		// One chunk in flight: azdatalake v1.4.2's copyFromReader
		// (file/chunkwriting.go) adds each chunk's size to the flush
		// position from the chunk's goroutine without synchronisation,
		// a data race in the SDK that -race reports with more.
		must(t, g.UploadStream(e.ctx, bytes.NewReader(data), &file.UploadStreamOptions{ChunkSize: 512 << 10, Concurrency: 1}))
		if got := download(t, e, g); !bytes.Equal(got, data) {
			t.Fatalf("UploadStream/DownloadStream of %d bytes differ", n)
		}
	}
	// A range read.
	f := fs.NewFileClient("ranged")
	_, err := f.Create(e.ctx, nil)
	must(t, err)
	data := randBytes(t, 10000)
	must(t, f.UploadBuffer(e.ctx, data, nil))
	resp, err := f.DownloadStream(e.ctx, &file.DownloadStreamOptions{Range: &file.HTTPRange{Offset: 100, Count: 50}})
	must(t, err)
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	must(t, err)
	if !bytes.Equal(got, data[100:150]) {
		t.Fatal("range read differs")
	}
	// x-ms-range-get-content-md5: the MD5 of the range, as Get Blob
	// answers it; without a range, 400 InvalidHeaderValue.
	resp, err = f.DownloadStream(e.ctx, &file.DownloadStreamOptions{Range: &file.HTTPRange{Offset: 1000, Count: 4096}, RangeGetContentMD5: to.Ptr(true)})
	must(t, err)
	got, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	must(t, err)
	sum := md5.Sum(data[1000:5096])
	if !bytes.Equal(got, data[1000:5096]) || !bytes.Equal(resp.ContentMD5, sum[:]) {
		t.Fatalf("range MD5 %x, want %x", resp.ContentMD5, sum)
	}
	_, err = f.DownloadStream(e.ctx, &file.DownloadStreamOptions{RangeGetContentMD5: to.Ptr(true)})
	wantCode(t, err, 400, bloberror.InvalidHeaderValue)
}

// TestDLContentConcurrentAppenders: writers appending at one position
// are serialised: exactly one wins, the others are 400
// InvalidFlushPosition, and the flushed file is the winner's data.
func TestDLContentConcurrentAppenders(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("race")
	for round := 0; round < 5; round++ {
		f := fs.NewFileClient("f" + strconv.Itoa(round))
		_, err := f.Create(e.ctx, nil)
		must(t, err)
		const writers = 6
		datas := make([][]byte, writers)
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i := range writers {
			datas[i] = randBytes(t, 4096)
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = f.AppendData(e.ctx, 0, body(datas[i]), nil)
			}()
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			if err == nil {
				if winner >= 0 {
					t.Fatalf("round %d: writers %d and %d both appended at 0", round, winner, i)
				}
				winner = i
				continue
			}
			var re *azcore.ResponseError
			if !errors.As(err, &re) || re.StatusCode != 400 || re.ErrorCode != string(datalakeerror.InvalidFlushPosition) {
				t.Fatalf("round %d: loser %d: %v", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no append won", round)
		}
		_, err = f.FlushData(e.ctx, 4096, nil)
		must(t, err)
		if got := download(t, e, f); !bytes.Equal(got, datas[winner]) {
			t.Fatalf("round %d: content is not the winner's", round)
		}
	}
}

// TestDLContentBlobView: the Blob API of a hierarchical account reads
// files and directories through the namespace: a directory is a
// zero-length blob with metadata hdi_isfolder=true, a file its flushed
// content, with the path headers.
func TestDLContentBlobView(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("view")
	for _, d := range []string{"a", "a/b"} {
		_, err := fs.NewDirectoryClient(d).Create(e.ctx, nil)
		must(t, err)
	}
	f := fs.NewFileClient("a/b/c.txt")
	_, err := f.Create(e.ctx, nil)
	must(t, err)
	must(t, f.UploadBuffer(e.ctx, []byte("hello"), nil))

	bc := client(t, e.app.BlobURL, app.DevKey).ServiceClient().NewContainerClient("view")
	dp, err := bc.NewBlobClient("a/b").GetProperties(e.ctx, nil)
	must(t, err)
	if *dp.ContentLength != 0 || meta(dp.Metadata, "hdi_isfolder") != "true" || *dp.BlobType != "BlockBlob" {
		t.Fatalf("directory as a blob: len %d meta %v", *dp.ContentLength, dp.Metadata)
	}
	resp, err := bc.NewBlobClient("a/b/c.txt").DownloadStream(e.ctx, nil)
	must(t, err)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "hello" {
		t.Fatalf("file as a blob: %q", got)
	}
	// The path headers, on the dfs port's Blob API.
	hr, _ := e.raw(http.MethodHead, "/view/a/b/c.txt", nil, nil)
	if hr.StatusCode != 200 || hr.Header.Get("x-ms-resource-type") != "file" || hr.Header.Get("x-ms-owner") != "$superuser" ||
		hr.Header.Get("x-ms-permissions") != "rw-r-----" || hr.Header.Get("x-ms-acl") == "" || hr.Header.Get("Content-Length") != "5" {
		t.Fatalf("Get Blob Properties of a file: %d %v", hr.StatusCode, hr.Header)
	}
	_, err = bc.NewBlobClient("a/nope").GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	_, err = bc.NewBlobClient("a/b/c.txt/x").GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	_, err = client(t, e.app.BlobURL, app.DevKey).ServiceClient().NewContainerClient("nofs").NewBlobClient("x").GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.ContainerNotFound)
}

// TestDLContentExpiry: a file past its expiry (Path Create's
// x-ms-expiry-*) is gone at the injected clock's time: reads are 404 and
// appends to it are refused.
func TestDLContentExpiry(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("expiry")
	f := fs.NewFileClient("temp")
	_, err := f.Create(e.ctx, &file.CreateOptions{Expiry: file.CreateExpiryValues{ExpiryType: file.CreateExpiryTypeRelativeToNow, ExpiresOn: "60000"}})
	must(t, err)
	must(t, f.UploadBuffer(e.ctx, []byte("soon gone"), nil))
	p, err := f.GetProperties(e.ctx, nil)
	must(t, err)
	if p.ExpiresOn == nil {
		t.Fatal("no x-ms-expiry-time")
	}
	e.clock.Advance(61 * time.Second)
	// The SDK reports the Blob API's BlobNotFound as PathNotFound
	// (exported.ConvertToDFSError).
	_, err = f.GetProperties(e.ctx, nil)
	wantDL(t, err, 404, string(datalakeerror.PathNotFound))
	_, err = f.DownloadStream(e.ctx, nil)
	wantDL(t, err, 404, string(datalakeerror.PathNotFound))
	wantDL(t, get(f.AppendData(e.ctx, 9, body([]byte("x")), nil)), 404, string(datalakeerror.PathNotFound))
}

// TestDLContentSetExpiry: Set Expiry (comp=expiry on the Blob API, as
// the SDK sends it) in its four forms; an expired file is gone at the
// injected clock's time from reads, List Paths and List Blobs, and its
// name can be reused. A flat account is 400
// HierarchicalNamespaceNotEnabled.
func TestDLContentSetExpiry(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("setexp")
	mk := func(name string) *file.Client {
		f := fs.NewFileClient(name)
		_, err := f.Create(e.ctx, nil)
		must(t, err)
		must(t, f.UploadBuffer(e.ctx, []byte(name), nil))
		return f
	}
	a, b, c, d := mk("a"), mk("b"), mk("c"), mk("d")
	start := e.clock.Now()
	_, err := a.SetExpiry(e.ctx, file.SetExpiryValues{ExpiryType: file.SetExpiryTypeRelativeToNow, ExpiresOn: "30000"}, nil)
	must(t, err)
	_, err = b.SetExpiry(e.ctx, file.SetExpiryValues{ExpiryType: file.SetExpiryTypeRelativeToCreation, ExpiresOn: "60000"}, nil)
	must(t, err)
	_, err = c.SetExpiry(e.ctx, file.SetExpiryValues{ExpiryType: file.SetExpiryTypeAbsolute, ExpiresOn: start.Add(90 * time.Second).UTC().Format(http.TimeFormat)}, nil)
	must(t, err)
	_, err = d.SetExpiry(e.ctx, file.SetExpiryValues{ExpiryType: file.SetExpiryTypeRelativeToNow, ExpiresOn: "1000"}, nil)
	must(t, err)
	_, err = d.SetExpiry(e.ctx, file.SetExpiryValues{ExpiryType: file.SetExpiryTypeNeverExpire}, nil)
	must(t, err)
	p, err := a.GetProperties(e.ctx, nil)
	must(t, err)
	if p.ExpiresOn == nil || !p.ExpiresOn.Equal(start.Add(30*time.Second).Truncate(time.Second)) {
		t.Fatalf("ExpiresOn %v, want %v", p.ExpiresOn, start.Add(30*time.Second))
	}
	bc := client(t, e.app.BlobURL, app.DevKey).ServiceClient().NewContainerClient("setexp")
	check := func(want string) {
		t.Helper()
		if got := strings.Join(listAll(t, e, fs, "", true, 100), ","); got != want {
			t.Fatalf("List Paths at +%v: %s, want %s", e.clock.Now().Sub(start), got, want)
		}
		if got := strings.Join(listFlat(t, e, bc, 100), ","); got != want {
			t.Fatalf("List Blobs at +%v: %s, want %s", e.clock.Now().Sub(start), got, want)
		}
	}
	check("a,b,c,d")
	e.clock.Advance(31 * time.Second)
	check("b,c,d")
	_, err = a.GetProperties(e.ctx, nil)
	wantDL(t, err, 404, string(datalakeerror.PathNotFound))
	e.clock.Advance(30 * time.Second)
	check("c,d")
	e.clock.Advance(30 * time.Second)
	check("d")
	// The expired name is free again.
	a2 := mk("a")
	if got := download(t, e, a2); string(got) != "a" {
		t.Fatalf("recreated: %q", got)
	}
	check("a,d")
	// A directory has no expiry: 400 ExpiryNotSupportedForDirectory, the
	// answer Azure gives to a directory created with an expiry ("Set
	// Expiry is not supported for a directory").
	_, err = fs.NewDirectoryClient("dir").Create(e.ctx, nil)
	must(t, err)
	resp, _ := e.raw(http.MethodPut, "/setexp/dir?comp=expiry", map[string]string{"x-ms-expiry-option": "NeverExpire"}, nil)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != "ExpiryNotSupportedForDirectory" {
		t.Fatalf("expiry of a directory: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}

	flat := startDL(t, false)
	flat.mkfs("flat")
	_, err = client(t, flat.app.BlobURL, app.DevKey).UploadBuffer(flat.ctx, "flat", "f", []byte("x"), nil)
	must(t, err)
	resp, _ = flat.raw(http.MethodPut, "/flat/f?comp=expiry", map[string]string{"x-ms-expiry-option": "NeverExpire"}, nil)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != "HierarchicalNamespaceNotEnabled" {
		t.Fatalf("flat Set Expiry: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
}
