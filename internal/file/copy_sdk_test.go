package file_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc64"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	azfile "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/testenv"
)

// Put Range from URL when the source is read inside the write transaction
// (the path its optimistic attempts fall back to): inline and chunked
// source items, a hole, the CRC64 conditions.
func TestPutRangeFromURLInTransaction(t *testing.T) {
	defer file.SetPutRangeFromURLAttempts(1)()
	a, err := app.Start(app.Config{DataDir: t.TempDir(), NoSync: true, InMemory: testenv.InMemory(), BlobPort: -1, QueuePort: -1, TablePort: -1, FilePort: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	ctx := context.Background()
	cred, err := service.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.NewClientWithSharedKeyCredential(a.FileURL, cred, &service.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	sh := svc.NewShareClient("prfu")
	if _, err := sh.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	const size = 1 << 20
	src := sh.NewRootDirectoryClient().NewFileClient("src")
	dst := sh.NewRootDirectoryClient().NewFileClient("dst")
	for _, f := range []*azfile.Client{src, dst} {
		if _, err := f.Create(ctx, size, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Source: a 200 KiB chunk at 0, a 1 KiB inline item at 300 KiB, holes
	// elsewhere.
	big, small := bytes.Repeat([]byte("chunked!"), 25<<10), bytes.Repeat([]byte("i"), 1<<10)
	for _, w := range []struct {
		off  int64
		data []byte
	}{{0, big}, {300 << 10, small}} {
		if _, err := src.UploadRange(ctx, w.off, streaming.NopCloser(bytes.NewReader(w.data)), nil); err != nil {
			t.Fatal(err)
		}
	}
	qp, err := sas.SignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().UTC().Add(time.Hour), ShareName: "prfu", FilePath: "src", Permissions: (&sas.FilePermissions{Read: true}).String()}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	srcURL := src.URL() + "?" + qp.Encode()

	// Source [100 KiB, 400 KiB) to destination [500 KiB, 800 KiB).
	want := make([]byte, 300<<10)
	copy(want, big[100<<10:])
	copy(want[200<<10:], small)
	table := crc64.MakeTable(0x9A6C9329AC4BC9B5)
	sum := crc64.Checksum(want, table)
	crc := binary.LittleEndian.AppendUint64(nil, sum)
	ur, err := dst.UploadRangeFromURL(ctx, srcURL, 100<<10, 500<<10, 300<<10, &azfile.UploadRangeFromURLOptions{
		SourceContentValidation:        azfile.SourceContentValidationTypeCRC64(sum),
		SourceModifiedAccessConditions: &azfile.SourceModifiedAccessConditions{SourceIfMatchCRC64: crc},
	})
	if err != nil {
		t.Fatal(err)
	}
	if binary.LittleEndian.Uint64(ur.XMSContentCRC64) != sum {
		t.Fatalf("CRC64 %x, want %x", ur.XMSContentCRC64, crc)
	}
	r, err := dst.DownloadStream(ctx, &azfile.DownloadStreamOptions{Range: azfile.HTTPRange{Offset: 500 << 10, Count: 300 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if !bytes.Equal(got, want) {
		t.Fatal("destination content differs")
	}
	rl, err := dst.GetRangeList(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rl.Ranges) != 2 || *rl.Ranges[0].Start != 500<<10 || *rl.Ranges[0].End != 600<<10-1 || *rl.Ranges[1].Start != 700<<10 || *rl.Ranges[1].End != 701<<10-1 {
		t.Fatalf("ranges %v", rl.Ranges)
	}
	// The conditions are checked inside the transaction too.
	_, err = dst.UploadRangeFromURL(ctx, srcURL, 100<<10, 500<<10, 300<<10, &azfile.UploadRangeFromURLOptions{
		SourceModifiedAccessConditions: &azfile.SourceModifiedAccessConditions{SourceIfNoneMatchCRC64: crc},
	})
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusPreconditionFailed || re.ErrorCode != "SourceConditionNotMet" {
		t.Fatalf("if-none-match: %v", err)
	}
}
