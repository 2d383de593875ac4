package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
)

// FileWorkload is the File service benchmark: a file of total
// bytes is written with rangeSize Put Range calls from conc concurrent
// clients, then read back with conc concurrent ranged Get File calls,
// and the content is checked.
func FileWorkload(ctx context.Context, url, account, key string, total, rangeSize int64, conc int) ([]Result, error) {
	cred, err := service.NewSharedKeyCredential(account, key)
	if err != nil {
		return nil, err
	}
	svc, err := service.NewClientWithSharedKeyCredential(url, cred, &service.ClientOptions{ClientOptions: sdkOptions(conc)})
	if err != nil {
		return nil, err
	}
	shareName := fmt.Sprintf("bench%d", time.Now().UnixNano())
	sh := svc.NewShareClient(shareName)
	if _, err := sh.Create(ctx, nil); err != nil {
		return nil, err
	}
	defer sh.Delete(context.Background(), nil)
	fc := sh.NewRootDirectoryClient().NewFileClient("big")
	if _, err := fc.Create(ctx, total, nil); err != nil {
		return nil, err
	}
	n := (total + rangeSize - 1) / rangeSize
	chunk := func(i int64) []byte {
		size := min(rangeSize, total-i*rangeSize)
		b := make([]byte, size)
		p := &patternReader{n: i*rangeSize + size, off: i * rangeSize}
		_, _ = io.ReadFull(p, b)
		return b
	}
	// Each worker owns every conc-th range; bodies are built before the
	// clock starts so the client's CPU is not measured.
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = chunk(int64(i))
	}
	each := func(fn func(i int64) error) error {
		var wg sync.WaitGroup
		errs := make(chan error, conc)
		for w := 0; w < conc; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := int64(w); i < n; i += int64(conc) {
					if err := fn(i); err != nil {
						errs <- err
						return
					}
				}
			}(w)
		}
		wg.Wait()
		close(errs)
		return <-errs
	}
	t0 := time.Now()
	err = each(func(i int64) error {
		_, err := fc.UploadRange(ctx, i*rangeSize, streaming.NopCloser(bytesReader(bodies[i])), nil)
		return err
	})
	if err != nil {
		return nil, err
	}
	up := Result{Name: fmt.Sprintf("File upload %d MiB (%d×%d MiB ranges)", total>>20, conc, rangeSize>>20), Ops: 1, Elapsed: time.Since(t0), Bytes: total}
	t0 = time.Now()
	err = each(func(i int64) error {
		resp, err := fc.DownloadStream(ctx, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: i * rangeSize, Count: int64(len(bodies[i]))}})
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		got := make([]byte, len(bodies[i]))
		if _, err := io.ReadFull(resp.Body, got); err != nil {
			return err
		}
		if !bytes.Equal(got, bodies[i]) {
			return fmt.Errorf("range %d: content differs", i)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	down := Result{Name: fmt.Sprintf("File download %d MiB (%d clients)", total>>20, conc), Ops: 1, Elapsed: time.Since(t0), Bytes: total}
	return []Result{up, down}, nil
}

type sliceReadSeeker struct {
	b   []byte
	off int64
}

func bytesReader(b []byte) *sliceReadSeeker { return &sliceReadSeeker{b: b} }

func (s *sliceReadSeeker) Read(p []byte) (int, error) {
	if s.off >= int64(len(s.b)) {
		return 0, io.EOF
	}
	n := copy(p, s.b[s.off:])
	s.off += int64(n)
	return n, nil
}

func (s *sliceReadSeeker) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		s.off = off
	case io.SeekCurrent:
		s.off += off
	case io.SeekEnd:
		s.off = int64(len(s.b)) + off
	}
	return s.off, nil
}
