package e2e

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// Helpers shared by block_test.go, page_test.go and append_test.go carry a
// "bt" prefix so they cannot collide with other files of package e2e.

// btContainer creates a container and returns its client.
func (e *env) btContainer(name string) *container.Client {
	e.t.Helper()
	e.container(name)
	return e.c.ServiceClient().NewContainerClient(name)
}

// btID returns a base64 block id; ids of one test have one length.
func btID(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func btBody(b []byte) io.ReadSeekCloser { return streaming.NopCloser(bytes.NewReader(b)) }

// btFill returns n bytes of a pattern seeded by seed (distinct per block).
func btFill(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i%251)
	}
	return b
}

// btRead downloads a whole blob.
func (e *env) btRead(bc *blob.Client) []byte {
	e.t.Helper()
	resp, err := bc.DownloadStream(e.ctx, nil)
	must(e.t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	must(e.t, err)
	return got
}

func btEqual(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%s: got %d bytes, want %d; first difference at byte %d", what, len(got), len(want), i)
	}
}

// btSwapBody is a per-call policy that replaces the body of PUT
// ?comp=blocklist requests, so a test can send any block list while the
// SDK's own shared key policy (a per-retry policy, run later) signs it.
type btSwapBody struct{ body []byte }

func (p *btSwapBody) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	if raw.Method == http.MethodPut && raw.URL.Query().Get("comp") == "blocklist" {
		if err := req.SetBody(streaming.NopCloser(bytes.NewReader(p.body)), "application/xml"); err != nil {
			return nil, err
		}
	}
	return req.Next()
}

// btCommitRaw sends a Put Block List with the given XML body.
func (e *env) btCommitRaw(cont, name, body string) error {
	e.t.Helper()
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(e.t, err)
	opts := &blockblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry:           policy.RetryOptions{MaxRetries: -1},
		Transport:       &http.Client{},
		PerCallPolicies: []policy.Policy{&btSwapBody{body: []byte(body)}},
	}}
	bb, err := blockblob.NewClientWithSharedKeyCredential(e.app.BlobURL+"/"+cont+"/"+name, cred, opts)
	must(e.t, err)
	_, err = bb.CommitBlockList(e.ctx, nil, nil)
	return err
}

type btBlock struct {
	name string
	size int64
}

func btBlocks(bl []*blockblob.Block) []btBlock {
	out := []btBlock{}
	for _, b := range bl {
		out = append(out, btBlock{*b.Name, *b.Size})
	}
	return out
}

func btSameBlocks(t *testing.T, what string, got []*blockblob.Block, want ...btBlock) {
	t.Helper()
	g := btBlocks(got)
	if want == nil {
		want = []btBlock{}
	}
	if fmt.Sprint(g) != fmt.Sprint(want) {
		t.Fatalf("%s: got %v, want %v", what, g, want)
	}
}

func TestBlockStageCommitAndList(t *testing.T) {
	e := start(t)
	cc := e.btContainer("blocks")
	bb := cc.NewBlockBlobClient("b1")

	// Staged out of id order: the uncommitted list keeps upload order.
	ids := []string{btID("id-3"), btID("id-1"), btID("id-2")}
	data := [][]byte{[]byte("three"), []byte("one!"), []byte("second")}
	for i, id := range ids {
		_, err := bb.StageBlock(e.ctx, id, btBody(data[i]), nil)
		must(t, err)
	}
	// Only uncommitted blocks: the list works, without ETag.
	gl, err := bb.GetBlockList(e.ctx, blockblob.BlockListTypeAll, nil)
	must(t, err)
	btSameBlocks(t, "committed before commit", gl.BlockList.CommittedBlocks)
	btSameBlocks(t, "uncommitted", gl.BlockList.UncommittedBlocks,
		btBlock{ids[0], 5}, btBlock{ids[1], 4}, btBlock{ids[2], 6})
	if gl.ETag != nil {
		t.Fatalf("ETag %q on a blob with no committed list", *gl.ETag)
	}
	// The blob itself does not exist yet.
	_, err = bb.GetProperties(e.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)

	// Commit in a different order: content follows the list.
	order := []int{1, 2, 0}
	var want []byte
	var commitIDs []string
	for _, i := range order {
		want = append(want, data[i]...)
		commitIDs = append(commitIDs, ids[i])
	}
	cr, err := bb.CommitBlockList(e.ctx, commitIDs, nil)
	must(t, err)
	btEqual(t, "content", e.btRead(bb.BlobClient()), want)

	gl, err = bb.GetBlockList(e.ctx, blockblob.BlockListTypeCommitted, nil)
	must(t, err)
	btSameBlocks(t, "committed", gl.BlockList.CommittedBlocks,
		btBlock{ids[1], 4}, btBlock{ids[2], 6}, btBlock{ids[0], 5})
	btSameBlocks(t, "uncommitted in committed list", gl.BlockList.UncommittedBlocks)
	if gl.ETag == nil || *gl.ETag != *cr.ETag {
		t.Fatalf("block list ETag %v, commit ETag %v", gl.ETag, *cr.ETag)
	}
	if gl.BlobContentLength == nil || *gl.BlobContentLength != int64(len(want)) {
		t.Fatalf("x-ms-blob-content-length %v", gl.BlobContentLength)
	}

	// uncommitted only, after a new stage: committed section empty.
	_, err = bb.StageBlock(e.ctx, btID("id-4"), btBody([]byte("x")), nil)
	must(t, err)
	gl, err = bb.GetBlockList(e.ctx, blockblob.BlockListTypeUncommitted, nil)
	must(t, err)
	btSameBlocks(t, "committed in uncommitted list", gl.BlockList.CommittedBlocks)
	btSameBlocks(t, "uncommitted list", gl.BlockList.UncommittedBlocks, btBlock{btID("id-4"), 1})
	// Staging does not change the committed blob.
	p, err := bb.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.ETag != *cr.ETag || *p.ContentLength != int64(len(want)) {
		t.Fatalf("Put Block changed the blob: etag %v size %d", *p.ETag, *p.ContentLength)
	}

	// A snapshot keeps its committed list; a conditional commit.
	snap, err := bb.CreateSnapshot(e.ctx, nil)
	must(t, err)
	_, err = bb.CommitBlockList(e.ctx, []string{btID("id-4")}, &blockblob.CommitBlockListOptions{
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}}})
	wantCode(t, err, 409, bloberror.BlobAlreadyExists)
	_, err = bb.CommitBlockList(e.ctx, []string{btID("id-4")}, &blockblob.CommitBlockListOptions{
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: to.Ptr(azcore.ETag(`"0x1"`))}}})
	wantCode(t, err, 412, bloberror.ConditionNotMet)
	_, err = bb.CommitBlockList(e.ctx, []string{btID("id-4")}, &blockblob.CommitBlockListOptions{
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: cr.ETag}}})
	must(t, err)
	btEqual(t, "recommitted", e.btRead(bb.BlobClient()), []byte("x"))
	sb, err := bb.WithSnapshot(*snap.Snapshot)
	must(t, err)
	gl, err = sb.GetBlockList(e.ctx, blockblob.BlockListTypeAll, nil)
	must(t, err)
	btSameBlocks(t, "snapshot committed", gl.BlockList.CommittedBlocks,
		btBlock{ids[1], 4}, btBlock{ids[2], 6}, btBlock{ids[0], 5})
	btSameBlocks(t, "snapshot uncommitted", gl.BlockList.UncommittedBlocks)
	btEqual(t, "snapshot content", e.btRead(sb.BlobClient()), want)

	// Get Block List of a missing blob.
	_, err = cc.NewBlockBlobClient("nope").GetBlockList(e.ctx, blockblob.BlockListTypeAll, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
}

func TestBlockLatestCommittedUncommitted(t *testing.T) {
	e := start(t)
	cc := e.btContainer("lcu")
	bb := cc.NewBlockBlobClient("b")
	a, b, c, d := btID("A"), btID("B"), btID("C"), btID("D")
	stage := func(id, body string) {
		t.Helper()
		_, err := bb.StageBlock(e.ctx, id, btBody([]byte(body)), nil)
		must(t, err)
	}
	stage(a, "aaaa")
	stage(b, "bb")
	_, err := bb.CommitBlockList(e.ctx, []string{a, b}, nil)
	must(t, err)

	// B is staged again (new content), C is new.
	stage(b, "BBBBBB")
	stage(c, "c")
	list := `<?xml version="1.0" encoding="utf-8"?><BlockList>` +
		`<Committed>` + a + `</Committed><Uncommitted>` + c + `</Uncommitted>` +
		`<Latest>` + b + `</Latest><Committed>` + a + `</Committed></BlockList>`
	must(t, e.btCommitRaw("lcu", "b", list))
	btEqual(t, "mixed commit", e.btRead(bb.BlobClient()), []byte("aaaacBBBBBBaaaa"))
	gl, err := bb.GetBlockList(e.ctx, blockblob.BlockListTypeAll, nil)
	must(t, err)
	btSameBlocks(t, "committed", gl.BlockList.CommittedBlocks,
		btBlock{a, 4}, btBlock{c, 1}, btBlock{b, 6}, btBlock{a, 4})
	btSameBlocks(t, "uncommitted after commit", gl.BlockList.UncommittedBlocks)

	// Latest falls back to the committed block; Committed finds the
	// committed copy even when an uncommitted one with the id exists.
	stage(c, "CC")
	must(t, e.btCommitRaw("lcu", "b", `<BlockList><Latest>`+b+`</Latest><Committed>`+c+`</Committed><Latest>`+c+`</Latest></BlockList>`))
	btEqual(t, "latest/committed", e.btRead(bb.BlobClient()), []byte("BBBBBBcCC"))

	// Uncommitted looks only among uncommitted blocks, Committed only
	// among committed ones.
	stage(d, "dd")
	err = e.btCommitRaw("lcu", "b", `<BlockList><Uncommitted>`+b+`</Uncommitted></BlockList>`)
	wantCode(t, err, 400, bloberror.InvalidBlockList)
	err = e.btCommitRaw("lcu", "b", `<BlockList><Committed>`+d+`</Committed></BlockList>`)
	wantCode(t, err, 400, bloberror.InvalidBlockList)
	// A failed commit changes nothing, D is still staged.
	btEqual(t, "after failed commits", e.btRead(bb.BlobClient()), []byte("BBBBBBcCC"))
	must(t, e.btCommitRaw("lcu", "b", `<BlockList><Uncommitted>`+d+`</Uncommitted><Committed>`+b+`</Committed></BlockList>`))
	btEqual(t, "uncommitted+committed", e.btRead(bb.BlobClient()), []byte("ddBBBBBB"))

	// An empty list makes an empty blob.
	must(t, e.btCommitRaw("lcu", "b", `<BlockList/>`))
	btEqual(t, "empty list", e.btRead(bb.BlobClient()), []byte{})
}

func TestBlockUncommittedDiscarded(t *testing.T) {
	e := start(t)
	cc := e.btContainer("disc")
	bb := cc.NewBlockBlobClient("b")
	x, y := btID("X"), btID("Y")
	for _, id := range []string{x, y} {
		_, err := bb.StageBlock(e.ctx, id, btBody([]byte(id)), nil)
		must(t, err)
	}
	_, err := bb.CommitBlockList(e.ctx, []string{x}, nil)
	must(t, err)
	gl, err := bb.GetBlockList(e.ctx, blockblob.BlockListTypeUncommitted, nil)
	must(t, err)
	btSameBlocks(t, "uncommitted after commit", gl.BlockList.UncommittedBlocks)
	_, err = bb.CommitBlockList(e.ctx, []string{x, y}, nil)
	wantCode(t, err, 400, bloberror.InvalidBlockList)
	// A commit of a block never staged.
	_, err = cc.NewBlockBlobClient("fresh").CommitBlockList(e.ctx, []string{btID("Z")}, nil)
	wantCode(t, err, 400, bloberror.InvalidBlockList)
}

func TestBlockRestageReplaces(t *testing.T) {
	e := start(t)
	cc := e.btContainer("restage")
	bb := cc.NewBlockBlobClient("b")
	p, q := btID("P"), btID("Q")
	for _, s := range []struct{ id, body string }{{p, "first"}, {q, "q"}, {p, "second!"}} {
		_, err := bb.StageBlock(e.ctx, s.id, btBody([]byte(s.body)), nil)
		must(t, err)
	}
	gl, err := bb.GetBlockList(e.ctx, blockblob.BlockListTypeUncommitted, nil)
	must(t, err)
	// One entry per id; P has its new size.
	if got := btBlocks(gl.BlockList.UncommittedBlocks); len(got) != 2 {
		t.Fatalf("uncommitted %v", got)
	}
	sizes := map[string]int64{}
	for _, b := range btBlocks(gl.BlockList.UncommittedBlocks) {
		sizes[b.name] = b.size
	}
	if sizes[p] != 7 || sizes[q] != 1 {
		t.Fatalf("sizes %v", sizes)
	}
	_, err = bb.CommitBlockList(e.ctx, []string{p, q}, nil)
	must(t, err)
	btEqual(t, "content", e.btRead(bb.BlobClient()), []byte("second!q"))
}

func TestBlockIDValidation(t *testing.T) {
	e := start(t)
	cc := e.btContainer("ids")
	bb := cc.NewBlockBlobClient("b")
	body := []byte("data")
	// Not base64, unpadded, badly padded, URL-safe alphabet.
	for _, id := range []string{"not base64!", "QUJDRA", "QUJDRA=", "-_-_"} {
		_, err := bb.StageBlock(e.ctx, id, btBody(body), nil)
		if err == nil {
			t.Fatalf("block id %q accepted", id)
		}
		wantCode(t, err, 400, bloberror.InvalidBlockID)
	}
	// 64 decoded bytes is the maximum; 65 is rejected.
	long := cc.NewBlockBlobClient("long")
	_, err := long.StageBlock(e.ctx, btID(string(bytes.Repeat([]byte{'k'}, 65))), btBody(body), nil)
	wantCode(t, err, 400, bloberror.InvalidBlockID)
	id64 := btID(string(bytes.Repeat([]byte{'k'}, 64)))
	_, err = long.StageBlock(e.ctx, id64, btBody(body), nil)
	must(t, err)

	// All block ids of a blob have one decoded length: a staged id is
	// checked against the uncommitted blocks (the committed ones do not
	// count; see TestFidBlobSettleBlockIDLength), a list when committed.
	_, err = bb.StageBlock(e.ctx, btID("abc"), btBody(body), nil)
	must(t, err)
	_, err = bb.StageBlock(e.ctx, btID("abcd"), btBody(body), nil)
	wantCode(t, err, 400, bloberror.InvalidBlobOrBlock)
	_, err = bb.CommitBlockList(e.ctx, []string{btID("abc")}, nil)
	must(t, err)
	_, err = bb.StageBlock(e.ctx, btID("xyz"), btBody(body), nil)
	must(t, err)
	// A list naming ids of different lengths fails as a whole.
	_, err = bb.CommitBlockList(e.ctx, []string{btID("abc"), btID("xyz"), btID("toolong")}, nil)
	wantCode(t, err, 400, bloberror.InvalidBlockList)
	_, err = bb.CommitBlockList(e.ctx, []string{btID("abc"), btID("xyz")}, nil)
	must(t, err)
	btEqual(t, "content", e.btRead(bb.BlobClient()), []byte("datadata"))
}

func TestBlockMalformedBlockList(t *testing.T) {
	e := start(t)
	cc := e.btContainer("xml")
	bb := cc.NewBlockBlobClient("b")
	_, err := bb.StageBlock(e.ctx, btID("A"), btBody([]byte("a")), nil)
	must(t, err)
	for _, body := range []string{
		`not xml at all`,
		`<BlockList><Latest>` + btID("A") + `</Latest>`,
		`<BlockList><Bogus>` + btID("A") + `</Bogus></BlockList>`,
		`<Other><Latest>` + btID("A") + `</Latest></Other>`,
		``,
	} {
		err := e.btCommitRaw("xml", "b", body)
		if err == nil {
			t.Fatalf("block list %q accepted", body)
		}
		wantCode(t, err, 400, bloberror.InvalidXMLDocument)
	}
	// The staged block survived the failures.
	must(t, e.btCommitRaw("xml", "b", `<?xml version="1.0" encoding="utf-8"?><BlockList><Latest>`+btID("A")+`</Latest></BlockList>`))
	btEqual(t, "content", e.btRead(bb.BlobClient()), []byte("a"))
}

func TestBlockWrongBlobType(t *testing.T) {
	e := start(t)
	cc := e.btContainer("types")
	pb := cc.NewPageBlobClient("page")
	_, err := pb.Create(e.ctx, 1024, nil)
	must(t, err)
	bb := cc.NewBlockBlobClient("page")
	_, err = bb.StageBlock(e.ctx, btID("A"), btBody([]byte("a")), nil)
	wantCode(t, err, 409, bloberror.InvalidBlobType)
	_, err = bb.CommitBlockList(e.ctx, nil, nil)
	wantCode(t, err, 409, bloberror.InvalidBlobType)
	_, err = bb.GetBlockList(e.ctx, blockblob.BlockListTypeAll, nil)
	wantCode(t, err, 409, bloberror.InvalidBlobType)
	ab := cc.NewAppendBlobClient("app")
	_, err = ab.Create(e.ctx, nil)
	must(t, err)
	_, err = cc.NewBlockBlobClient("app").StageBlock(e.ctx, btID("A"), btBody([]byte("a")), nil)
	wantCode(t, err, 409, bloberror.InvalidBlobType)
}

func TestBlockLargeAndSmallMixed(t *testing.T) {
	e := start(t)
	cc := e.btContainer("mixed")
	bb := cc.NewBlockBlobClient("b")
	sizes := []int{1, 200 << 10, 10, 64 << 10, 64<<10 + 1, 3, 1 << 20}
	var ids []string
	var want []byte
	for i, n := range sizes {
		id := btID(fmt.Sprintf("m%03d", i))
		d := btFill(n, byte(i*37))
		_, err := bb.StageBlock(e.ctx, id, btBody(d), nil)
		must(t, err)
		ids = append(ids, id)
		want = append(want, d...)
	}
	_, err := bb.CommitBlockList(e.ctx, ids, nil)
	must(t, err)
	btEqual(t, "mixed content", e.btRead(bb.BlobClient()), want)

	// A ranged read across the inline/chunk boundaries.
	off, n := int64(200<<10-5), int64(64<<10+30)
	resp, err := bb.DownloadStream(e.ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: off, Count: n}})
	must(t, err)
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	must(t, err)
	btEqual(t, "ranged", got, want[off:off+n])

	// Recommit reusing committed blocks (large and small) in another
	// order, with one new large block.
	nid := btID("m999")
	nd := btFill(100<<10, 7)
	_, err = bb.StageBlock(e.ctx, nid, btBody(nd), nil)
	must(t, err)
	list := `<BlockList><Committed>` + ids[6] + `</Committed><Latest>` + nid + `</Latest><Committed>` + ids[0] + `</Committed><Committed>` + ids[1] + `</Committed></BlockList>`
	must(t, e.btCommitRaw("mixed", "b", list))
	want2 := append(append(append(append([]byte{}, btFill(1<<20, 6*37)...), nd...), btFill(1, 0)...), btFill(200<<10, 37)...)
	btEqual(t, "recommitted", e.btRead(bb.BlobClient()), want2)
}

func TestBlockPutBlobDropsStaged(t *testing.T) {
	e := start(t)
	cc := e.btContainer("putblob")
	bb := cc.NewBlockBlobClient("b")
	_, err := bb.StageBlock(e.ctx, btID("S"), btBody(btFill(70<<10, 1)), nil)
	must(t, err)
	_, err = bb.StageBlock(e.ctx, btID("T"), btBody([]byte("t")), nil)
	must(t, err)
	_, err = bb.Upload(e.ctx, btBody([]byte("whole")), nil)
	must(t, err)
	gl, err := bb.GetBlockList(e.ctx, blockblob.BlockListTypeAll, nil)
	must(t, err)
	btSameBlocks(t, "uncommitted after Put Blob", gl.BlockList.UncommittedBlocks)
	_, err = bb.CommitBlockList(e.ctx, []string{btID("S")}, nil)
	wantCode(t, err, 400, bloberror.InvalidBlockList)
	btEqual(t, "content", e.btRead(bb.BlobClient()), []byte("whole"))
}

func TestBlockContentMD5(t *testing.T) {
	e := start(t)
	cc := e.btContainer("md5")
	bb := cc.NewBlockBlobClient("b")
	for _, n := range []int{10, 80 << 10} { // inline and chunk paths
		d := btFill(n, 3)
		sum := md5.Sum(d)
		resp, err := bb.StageBlock(e.ctx, btID(fmt.Sprintf("ok%06d", n)), btBody(d), &blockblob.StageBlockOptions{
			TransactionalValidation: blob.TransferValidationTypeMD5(sum[:]),
		})
		must(t, err)
		if !bytes.Equal(resp.ContentMD5, sum[:]) {
			t.Fatalf("response Content-MD5 %x, want %x", resp.ContentMD5, sum)
		}
		bad := md5.Sum([]byte("something else"))
		_, err = bb.StageBlock(e.ctx, btID(fmt.Sprintf("no%06d", n)), btBody(d), &blockblob.StageBlockOptions{
			TransactionalValidation: blob.TransferValidationTypeMD5(bad[:]),
		})
		wantCode(t, err, 400, bloberror.MD5Mismatch)
	}
	// Only the good blocks were staged.
	gl, err := bb.GetBlockList(e.ctx, blockblob.BlockListTypeUncommitted, nil)
	must(t, err)
	btSameBlocks(t, "staged", gl.BlockList.UncommittedBlocks,
		btBlock{btID("ok000010"), 10}, btBlock{btID("ok081920"), 80 << 10})
}

func TestBlockPageAppendLeases(t *testing.T) {
	e := start(t)
	cc := e.btContainer("leases")
	bb := cc.NewBlockBlobClient("block")
	_, err := bb.Upload(e.ctx, btBody([]byte("v1")), nil)
	must(t, err)
	pb := cc.NewPageBlobClient("page")
	_, err = pb.Create(e.ctx, 1024, nil)
	must(t, err)
	ab := cc.NewAppendBlobClient("append")
	_, err = ab.Create(e.ctx, nil)
	must(t, err)
	id := "6f1e6b7e-0f6a-4a43-9a3c-6d1c4a1c2b3d"
	for _, acquire := range []func() (*lease.BlobClient, error){
		func() (*lease.BlobClient, error) {
			return lease.NewBlobClient(bb, &lease.BlobClientOptions{LeaseID: &id})
		},
		func() (*lease.BlobClient, error) {
			return lease.NewBlobClient(pb, &lease.BlobClientOptions{LeaseID: &id})
		},
		func() (*lease.BlobClient, error) {
			return lease.NewBlobClient(ab, &lease.BlobClientOptions{LeaseID: &id})
		},
	} {
		lc, err := acquire()
		must(t, err)
		_, err = lc.AcquireLease(e.ctx, -1, nil)
		must(t, err)
	}
	good := &blob.LeaseAccessConditions{LeaseID: &id}
	wrong := &blob.LeaseAccessConditions{LeaseID: to.Ptr("00000000-0000-0000-0000-000000000001")}
	blk := btID("L")

	// Block blob: Put Block and Put Block List need the lease.
	_, err = bb.StageBlock(e.ctx, blk, btBody([]byte("v2")), nil)
	wantCode(t, err, 412, bloberror.LeaseIDMissing)
	_, err = bb.StageBlock(e.ctx, blk, btBody([]byte("v2")), &blockblob.StageBlockOptions{LeaseAccessConditions: wrong})
	wantCode(t, err, 412, bloberror.LeaseIDMismatchWithBlobOperation)
	_, err = bb.StageBlock(e.ctx, blk, btBody([]byte("v2")), &blockblob.StageBlockOptions{LeaseAccessConditions: good})
	must(t, err)
	_, err = bb.CommitBlockList(e.ctx, []string{blk}, nil)
	wantCode(t, err, 412, bloberror.LeaseIDMissing)
	_, err = bb.GetBlockList(e.ctx, blockblob.BlockListTypeAll, &blockblob.GetBlockListOptions{AccessConditions: &blob.AccessConditions{LeaseAccessConditions: wrong}})
	wantCode(t, err, 412, bloberror.LeaseIDMismatchWithBlobOperation)
	_, err = bb.CommitBlockList(e.ctx, []string{blk}, &blockblob.CommitBlockListOptions{AccessConditions: &blob.AccessConditions{LeaseAccessConditions: good}})
	must(t, err)
	btEqual(t, "block content", e.btRead(bb.BlobClient()), []byte("v2"))
	// A lease id on a blob that does not exist.
	_, err = cc.NewBlockBlobClient("none").StageBlock(e.ctx, blk, btBody([]byte("x")), &blockblob.StageBlockOptions{LeaseAccessConditions: good})
	wantCode(t, err, 412, bloberror.LeaseNotPresentWithBlobOperation)

	// Page blob.
	page := btFill(512, 1)
	_, err = pb.UploadPages(e.ctx, btBody(page), blob.HTTPRange{Offset: 0, Count: 512}, nil)
	wantCode(t, err, 412, bloberror.LeaseIDMissing)
	_, err = pb.ClearPages(e.ctx, blob.HTTPRange{Offset: 0, Count: 512}, &pageblob.ClearPagesOptions{AccessConditions: &blob.AccessConditions{LeaseAccessConditions: wrong}})
	wantCode(t, err, 412, bloberror.LeaseIDMismatchWithBlobOperation)
	_, err = pb.UploadPages(e.ctx, btBody(page), blob.HTTPRange{Offset: 0, Count: 512}, &pageblob.UploadPagesOptions{AccessConditions: &blob.AccessConditions{LeaseAccessConditions: good}})
	must(t, err)

	// Append blob.
	_, err = ab.AppendBlock(e.ctx, btBody([]byte("a")), nil)
	wantCode(t, err, 412, bloberror.LeaseIDMissing)
	_, err = ab.AppendBlock(e.ctx, btBody([]byte("a")), &appendblob.AppendBlockOptions{AccessConditions: &blob.AccessConditions{LeaseAccessConditions: good}})
	must(t, err)
	btEqual(t, "append content", e.btRead(ab.BlobClient()), []byte("a"))
}
