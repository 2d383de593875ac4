package e2e

// Data integrity through the SDK's parallel transfer helpers, and
// concurrent Put Range calls (last writer wins per call, no lost updates).

import (
	"bytes"
	"crypto/md5"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
)

const fiBigSize = 64 << 20

func TestFileUploadDownloadBuffer(t *testing.T) {
	e := startFile(t)
	s := e.share()
	data := fiRand(fiBigSize)
	f := e.mkfile(s, "buf", fiBigSize)
	must(t, f.UploadBuffer(e.ctx, data, &file.UploadBufferOptions{Concurrency: 8, ChunkSize: 4 << 20}))

	got := make([]byte, fiBigSize)
	n, err := f.DownloadBuffer(e.ctx, got, &file.DownloadBufferOptions{Concurrency: 8, ChunkSize: 3<<20 + 17})
	must(t, err)
	if n != fiBigSize || !bytes.Equal(got, data) {
		t.Fatalf("DownloadBuffer: %d bytes, equal %v", n, bytes.Equal(got, data))
	}
	// One plain streamed GET of the whole file.
	r, err := f.DownloadStream(e.ctx, nil)
	must(t, err)
	h := md5.New()
	_, err = io.Copy(h, r.Body)
	r.Body.Close()
	must(t, err)
	if !bytes.Equal(h.Sum(nil), fiMD5(data)) {
		t.Fatal("DownloadStream content differs")
	}
	// The 16 adjacent writes list as one range (azfile recorded test
	// TestFileUploadBuffer).
	wantRanges(t, "uploaded", e.ranges(f, nil), fiRanges{{0, fiBigSize - 1}})
	// A ranged DownloadBuffer from the middle.
	part := make([]byte, 10<<20)
	n, err = f.DownloadBuffer(e.ctx, part, &file.DownloadBufferOptions{Range: file.HTTPRange{Offset: 7<<20 + 3, Count: 10 << 20}, Concurrency: 4, ChunkSize: 1 << 20})
	must(t, err)
	if n != 10<<20 || !bytes.Equal(part, data[7<<20+3:17<<20+3]) {
		t.Fatal("ranged DownloadBuffer differs")
	}
}

// UploadStream with a size that is not a multiple of the chunk size, and
// small chunks so that many Put Range calls run at once.
func TestFileUploadStream(t *testing.T) {
	e := startFile(t)
	s := e.share()
	const size = fiBigSize + 12345
	data := fiRand(size)
	f := e.mkfile(s, "stream", size)
	must(t, f.UploadStream(e.ctx, bytes.NewReader(data), &file.UploadStreamOptions{ChunkSize: 1<<20 + 512, Concurrency: 16}))
	got := make([]byte, size)
	n, err := f.DownloadBuffer(e.ctx, got, &file.DownloadBufferOptions{Concurrency: 6})
	must(t, err)
	if n != size || !bytes.Equal(got, data) {
		t.Fatal("UploadStream/DownloadBuffer content differs")
	}
	// The default stream options too, into a second file.
	g := e.mkfile(s, "stream2", size)
	must(t, g.UploadStream(e.ctx, bytes.NewReader(data), nil))
	if b := e.read(g, 0, 0); !bytes.Equal(b, data) {
		t.Fatal("UploadStream (defaults) content differs")
	}
}

func TestFileUploadDownloadFile(t *testing.T) {
	e := startFile(t)
	s := e.share()
	data := fiRand(fiBigSize - 1)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	must(t, os.WriteFile(src, data, 0o600))
	in, err := os.Open(src)
	must(t, err)
	defer in.Close()
	f := e.mkfile(s, "local", int64(len(data)))
	must(t, f.UploadFile(e.ctx, in, &file.UploadFileOptions{Concurrency: 5}))

	dst := filepath.Join(dir, "dst")
	out, err := os.Create(dst)
	must(t, err)
	n, err := f.DownloadFile(e.ctx, out, &file.DownloadFileOptions{Concurrency: 5, ChunkSize: 5 << 20})
	must(t, err)
	must(t, out.Close())
	got, err := os.ReadFile(dst)
	must(t, err)
	if n != int64(len(data)) || !bytes.Equal(got, data) {
		t.Fatal("UploadFile/DownloadFile content differs")
	}
}

// Two Put Range calls over the same range at the same time: the result is one
// of the two bodies in full, never a mix: the last writer wins and each Put
// Range is atomic (Put Range,
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-range).
func TestFileConcurrentPutRangeLastWriterWins(t *testing.T) {
	e := startFile(t)
	s := e.share()
	const size = 4 << 20
	f := e.mkfile(s, "lww", size)
	for round := 0; round < 6; round++ {
		a, b := fiRand(size), fiRand(size)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, body := range [][]byte{a, b} {
			wg.Add(1)
			go func(i int, body []byte) {
				defer wg.Done()
				_, errs[i] = f.UploadRange(e.ctx, 0, fiBody(body), nil)
			}(i, body)
		}
		wg.Wait()
		must(t, errs[0])
		must(t, errs[1])
		got := e.read(f, 0, 0)
		if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
			t.Fatalf("round %d: the file is a mix of two concurrent writes", round)
		}
	}
}

// Concurrent Put Range calls to disjoint ranges of one file all land: no
// write is lost to a concurrent one.
func TestFileConcurrentPutRangeDisjoint(t *testing.T) {
	e := startFile(t)
	s := e.share()
	const n, chunk = 32, 64 << 10
	f := e.mkfile(s, "disjoint", n*chunk)
	want := fiRand(n * chunk)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, errs[i] = f.UploadRange(e.ctx, int64(i*chunk), fiBody(want[i*chunk:(i+1)*chunk]), nil)
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		must(t, err)
	}
	if got := e.read(f, 0, 0); !bytes.Equal(got, want) {
		t.Fatal("a concurrent Put Range was lost")
	}
	wantRanges(t, "disjoint writes", e.ranges(f, nil), fiRanges{{0, n*chunk - 1}})

	// Interleave writes with clears and metadata updates on the same file;
	// every write that returned before the final read is visible.
	var mu sync.Mutex
	final := append([]byte(nil), want...)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			off := int64(i * chunk)
			if i%2 == 0 {
				_, errs[i] = f.ClearRange(e.ctx, file.HTTPRange{Offset: off, Count: chunk}, nil)
				mu.Lock()
				copy(final[off:off+chunk], make([]byte, chunk))
				mu.Unlock()
				return
			}
			_, errs[i] = f.SetMetadata(e.ctx, &file.SetMetadataOptions{})
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		must(t, err)
	}
	if got := e.read(f, 0, 0); !bytes.Equal(got, final) {
		t.Fatal("content after concurrent clears differs")
	}
}
