package e2e

import (
	"bytes"
	"crypto/md5"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
)

func btAppendPos(pos int64) *appendblob.AppendBlockOptions {
	return &appendblob.AppendBlockOptions{AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: &pos}}
}

func TestAppendBasics(t *testing.T) {
	e := start(t)
	cc := e.btContainer("app")
	ab := cc.NewAppendBlobClient("a")
	_, err := ab.Create(e.ctx, nil)
	must(t, err)
	p, err := ab.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.ContentLength != 0 || *p.BlobType != blob.BlobTypeAppendBlob || *p.BlobCommittedBlockCount != 0 {
		t.Fatalf("new append blob: size %d type %s count %d", *p.ContentLength, *p.BlobType, *p.BlobCommittedBlockCount)
	}
	var want []byte
	for i, n := range []int{5, 1, 300, 64 << 10, 64<<10 + 1, 2} {
		d := btFill(n, byte(i*13))
		resp, err := ab.AppendBlock(e.ctx, btBody(d), nil)
		must(t, err)
		if resp.BlobAppendOffset == nil || *resp.BlobAppendOffset != strconv.Itoa(len(want)) {
			t.Fatalf("block %d: append offset %v, want %d", i, resp.BlobAppendOffset, len(want))
		}
		if *resp.BlobCommittedBlockCount != int32(i+1) {
			t.Fatalf("block %d: committed block count %d", i, *resp.BlobCommittedBlockCount)
		}
		// From version 2019-02-02 the service returns Content-MD5 only when
		// the request carried one.
		if resp.ContentMD5 != nil {
			t.Fatalf("block %d: unrequested Content-MD5 %x", i, resp.ContentMD5)
		}
		want = append(want, d...)
	}
	btEqual(t, "content", e.btRead(ab.BlobClient()), want)
	p, err = ab.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.ContentLength != int64(len(want)) || *p.BlobCommittedBlockCount != 6 {
		t.Fatalf("size %d count %d", *p.ContentLength, *p.BlobCommittedBlockCount)
	}

	// Create again replaces the blob with an empty one.
	_, err = ab.Create(e.ctx, nil)
	must(t, err)
	btEqual(t, "recreated", e.btRead(ab.BlobClient()), []byte{})
	resp, err := ab.AppendBlock(e.ctx, btBody([]byte("z")), nil)
	must(t, err)
	if *resp.BlobAppendOffset != "0" || *resp.BlobCommittedBlockCount != 1 {
		t.Fatalf("after recreate: offset %s count %d", *resp.BlobAppendOffset, *resp.BlobCommittedBlockCount)
	}
}

func TestAppendConditionsAndErrors(t *testing.T) {
	e := start(t)
	cc := e.btContainer("app")
	ab := cc.NewAppendBlobClient("a")
	_, err := ab.Create(e.ctx, nil)
	must(t, err)
	_, err = ab.AppendBlock(e.ctx, btBody([]byte("0123456789")), btAppendPos(0))
	must(t, err)

	// appendpos must equal the current length.
	for _, pos := range []int64{0, 9, 11} {
		_, err = ab.AppendBlock(e.ctx, btBody([]byte("x")), btAppendPos(pos))
		wantCode(t, err, 412, bloberror.AppendPositionConditionNotMet)
	}
	_, err = ab.AppendBlock(e.ctx, btBody([]byte("abc")), btAppendPos(10))
	must(t, err)

	// maxsize: current length + block length must not exceed it.
	max := func(n int64) *appendblob.AppendBlockOptions {
		return &appendblob.AppendBlockOptions{AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{MaxSize: &n}}
	}
	_, err = ab.AppendBlock(e.ctx, btBody([]byte("defg")), max(16))
	wantCode(t, err, 412, bloberror.MaxBlobSizeConditionNotMet)
	_, err = ab.AppendBlock(e.ctx, btBody([]byte("def")), max(16))
	must(t, err)
	_, err = ab.AppendBlock(e.ctx, btBody([]byte("g")), max(16))
	wantCode(t, err, 412, bloberror.MaxBlobSizeConditionNotMet)
	// Both conditions: the failing one decides.
	both := &appendblob.AppendBlockOptions{AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{
		AppendPosition: to.Ptr(int64(16)), MaxSize: to.Ptr(int64(16))}}
	_, err = ab.AppendBlock(e.ctx, btBody([]byte("g")), both)
	wantCode(t, err, 412, bloberror.MaxBlobSizeConditionNotMet)

	// Empty append.
	_, err = ab.AppendBlock(e.ctx, btBody(nil), nil)
	wantCode(t, err, 400, bloberror.InvalidHeaderValue)

	// Content-MD5 is checked.
	bad := md5.Sum([]byte("other"))
	_, err = ab.AppendBlock(e.ctx, btBody([]byte("h")), &appendblob.AppendBlockOptions{TransactionalValidation: blob.TransferValidationTypeMD5(bad[:])})
	wantCode(t, err, 400, bloberror.MD5Mismatch)

	// Nothing failed changed the blob.
	btEqual(t, "content", e.btRead(ab.BlobClient()), []byte("0123456789abcdef"))
	p, err := ab.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.BlobCommittedBlockCount != 3 {
		t.Fatalf("committed block count %d", *p.BlobCommittedBlockCount)
	}

	// Append to other blob types, and to a missing blob.
	_, err = e.c.UploadBuffer(e.ctx, "app", "block", []byte("b"), nil)
	must(t, err)
	_, err = cc.NewAppendBlobClient("block").AppendBlock(e.ctx, btBody([]byte("x")), nil)
	wantCode(t, err, 409, bloberror.InvalidBlobType)
	_, err = cc.NewPageBlobClient("page").Create(e.ctx, 512, nil)
	must(t, err)
	_, err = cc.NewAppendBlobClient("page").AppendBlock(e.ctx, btBody([]byte("x")), nil)
	wantCode(t, err, 409, bloberror.InvalidBlobType)
	_, err = cc.NewAppendBlobClient("missing").AppendBlock(e.ctx, btBody([]byte("x")), nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
}

func TestAppendLarge(t *testing.T) {
	e := start(t)
	cc := e.btContainer("app")
	ab := cc.NewAppendBlobClient("big")
	_, err := ab.Create(e.ctx, nil)
	must(t, err)
	var want []byte
	// Chunk-store appends, one larger than a chunk (8 MiB), mixed with
	// inline ones.
	for i, n := range []int{100 << 10, 7, 9<<20 + 3, 65 << 10, 1} {
		d := btFill(n, byte(i+40))
		resp, err := ab.AppendBlock(e.ctx, btBody(d), btAppendPos(int64(len(want))))
		must(t, err)
		if *resp.BlobAppendOffset != strconv.Itoa(len(want)) {
			t.Fatalf("offset %s, want %d", *resp.BlobAppendOffset, len(want))
		}
		want = append(want, d...)
	}
	btEqual(t, "content", e.btRead(ab.BlobClient()), want)
	off, n := int64(100<<10-3), int64(9<<20)
	resp, err := ab.DownloadStream(e.ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: off, Count: n}})
	must(t, err)
	got := new(bytes.Buffer)
	_, err = got.ReadFrom(resp.Body)
	resp.Body.Close()
	must(t, err)
	btEqual(t, "ranged", got.Bytes(), want[off:off+n])
}

// TestAppendConcurrent runs rounds of 16 appenders that each append at the
// position they last saw: exactly one wins each round, the others get 412,
// and the content is the winners' blocks, whole and in order.
func TestAppendConcurrent(t *testing.T) {
	e := start(t)
	cc := e.btContainer("app")
	ab := cc.NewAppendBlobClient("race")
	_, err := ab.Create(e.ctx, nil)
	must(t, err)
	const workers, rounds = 16, 12
	blockOf := func(w, round int) []byte {
		n := 1000 + w*7
		if round%3 == 1 {
			n += 64 << 10 // chunk store path
		}
		return bytes.Repeat([]byte{byte('A' + w)}, n)
	}
	var size int64 // what every worker saw last
	var want []byte
	for round := range rounds {
		type result struct {
			w      int
			offset string
			err    error
		}
		results := make(chan result, workers)
		startGun := make(chan struct{})
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-startGun
				resp, err := ab.AppendBlock(e.ctx, btBody(blockOf(w, round)), btAppendPos(size))
				r := result{w: w, err: err}
				if err == nil {
					r.offset = *resp.BlobAppendOffset
				}
				results <- r
			}()
		}
		close(startGun)
		wg.Wait()
		close(results)
		winner := -1
		for r := range results {
			if r.err == nil {
				if winner >= 0 {
					t.Fatalf("round %d: workers %d and %d both won", round, winner, r.w)
				}
				winner = r.w
				if r.offset != strconv.FormatInt(size, 10) {
					t.Fatalf("round %d: offset %s, want %d", round, r.offset, size)
				}
				continue
			}
			var re *azcore.ResponseError
			if !errors.As(r.err, &re) || re.StatusCode != 412 || re.ErrorCode != string(bloberror.AppendPositionConditionNotMet) {
				t.Fatalf("round %d worker %d: %v", round, r.w, r.err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody won", round)
		}
		want = append(want, blockOf(winner, round)...)
		p, err := ab.GetProperties(e.ctx, nil)
		must(t, err)
		size = *p.ContentLength
		if size != int64(len(want)) || *p.BlobCommittedBlockCount != int32(round+1) {
			t.Fatalf("round %d: size %d count %d, want %d %d", round, size, *p.BlobCommittedBlockCount, len(want), round+1)
		}
	}
	got := e.btRead(ab.BlobClient())
	btEqual(t, "content", got, want)
	// No interleaving: the content is runs of one letter, one per round.
	runs := 0
	for i := 0; i < len(got); {
		j := i
		for j < len(got) && got[j] == got[i] {
			j++
		}
		runs++
		i = j
	}
	if runs > rounds {
		t.Fatalf("%d runs of bytes in %d rounds: %s", runs, rounds, fmt.Sprintf("%.60q", got))
	}
}

func TestAppendSeal(t *testing.T) {
	e := start(t)
	cc := e.btContainer("seal")
	ab := cc.NewAppendBlobClient("a")
	_, err := ab.Create(e.ctx, nil)
	must(t, err)
	_, err = ab.AppendBlock(e.ctx, btBody([]byte("12345")), nil)
	must(t, err)
	before, err := ab.GetProperties(e.ctx, nil)
	must(t, err)
	if before.IsSealed != nil && *before.IsSealed {
		t.Fatal("a new append blob is sealed")
	}
	// A wrong expected length or an unmet condition leave it unsealed.
	_, err = ab.Seal(e.ctx, &appendblob.SealOptions{AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: to.Ptr[int64](4)}})
	wantCode(t, err, 412, bloberror.AppendPositionConditionNotMet)
	_, err = ab.Seal(e.ctx, &appendblob.SealOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: to.Ptr(azcore.ETag(`"0x1"`))}}})
	wantCode(t, err, 412, bloberror.ConditionNotMet)
	_, err = ab.AppendBlock(e.ctx, btBody([]byte("6")), nil)
	must(t, err)

	r, err := ab.Seal(e.ctx, &appendblob.SealOptions{AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: to.Ptr[int64](6)}})
	must(t, err)
	if r.IsSealed == nil || !*r.IsSealed || r.ETag == nil || *r.ETag == *before.ETag {
		t.Fatalf("seal response: sealed %v etag %v", r.IsSealed, r.ETag)
	}
	p, err := ab.GetProperties(e.ctx, nil)
	must(t, err)
	if p.IsSealed == nil || !*p.IsSealed || *p.ETag != *r.ETag {
		t.Fatalf("sealed blob: sealed %v etag %v", p.IsSealed, p.ETag)
	}
	_, err = ab.AppendBlock(e.ctx, btBody([]byte("7")), nil)
	wantCode(t, err, 409, bloberror.Code("BlobIsSealed"))
	btEqual(t, "sealed content", e.btRead(ab.BlobClient()), []byte("123456"))
	// Sealing again is fine; metadata may still change; re-creating unseals.
	_, err = ab.Seal(e.ctx, nil)
	must(t, err)
	_, err = ab.SetMetadata(e.ctx, map[string]*string{"m": to.Ptr("1")}, nil)
	must(t, err)
	_, err = ab.Create(e.ctx, nil)
	must(t, err)
	_, err = ab.AppendBlock(e.ctx, btBody([]byte("x")), nil)
	must(t, err)
	// Only append blobs seal.
	bb := cc.NewBlockBlobClient("b")
	_, err = bb.Upload(e.ctx, btBody([]byte("x")), nil)
	must(t, err)
	_, err = cc.NewAppendBlobClient("b").Seal(e.ctx, nil)
	wantCode(t, err, 409, bloberror.InvalidBlobType)
	_, err = cc.NewAppendBlobClient("missing").Seal(e.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
}
