package e2e

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
)

func bxMAC(m *blob.ModifiedAccessConditions) *blob.AccessConditions {
	return &blob.AccessConditions{ModifiedAccessConditions: m}
}

// bxState is what a failed write must leave untouched.
type bxState struct {
	etag    string
	lm      time.Time
	meta    map[string]*string
	ctype   string
	content []byte
}

func (b *blobT) state(c *blockblob.Client) bxState {
	b.t.Helper()
	p := b.props(c)
	return bxState{etag: bxETag(p.ETag), lm: *p.LastModified, meta: p.Metadata, ctype: bxVal(p.ContentType), content: b.read(c)}
}

func (b *blobT) wantUnchanged(what string, c *blockblob.Client, before bxState) {
	b.t.Helper()
	after := b.state(c)
	if after.etag != before.etag || !after.lm.Equal(before.lm) || after.ctype != before.ctype || !bytes.Equal(after.content, before.content) || bxFmtMeta(after.meta) != bxFmtMeta(before.meta) {
		b.t.Fatalf("%s: a failed write changed the blob: %+v -> %+v", what, before, after)
	}
}

func TestConditionalReads(t *testing.T) {
	b := newBlobT(t)
	data := []byte("conditional read body")
	up := b.put("r", data, nil)
	c := b.bb("r")
	etag := *up.ETag
	lm := *up.LastModified
	other := azcore.ETag(`"0x8D0000000000000"`)

	type cond = blob.ModifiedAccessConditions
	const ok, notModified, failed = 200, 304, 412
	cases := []struct {
		name string
		c    cond
		want int
	}{
		{"If-Match current", cond{IfMatch: &etag}, ok},
		{"If-Match *", cond{IfMatch: to.Ptr(azcore.ETagAny)}, ok},
		{"If-Match unquoted current", cond{IfMatch: to.Ptr(azcore.ETag(strings.Trim(string(etag), `"`)))}, ok},
		{"If-Match list", cond{IfMatch: to.Ptr(other + "," + etag)}, ok},
		{"If-Match other", cond{IfMatch: &other}, failed},
		{"If-None-Match current", cond{IfNoneMatch: &etag}, notModified},
		{"If-None-Match list containing current", cond{IfNoneMatch: to.Ptr(other + "," + etag)}, notModified},
		{"If-None-Match other", cond{IfNoneMatch: &other}, ok},
		{"If-Modified-Since Last-Modified", cond{IfModifiedSince: &lm}, notModified},
		{"If-Modified-Since later", cond{IfModifiedSince: to.Ptr(lm.Add(time.Hour))}, notModified},
		{"If-Modified-Since earlier", cond{IfModifiedSince: to.Ptr(lm.Add(-time.Second))}, ok},
		{"If-Unmodified-Since Last-Modified", cond{IfUnmodifiedSince: &lm}, ok},
		{"If-Unmodified-Since earlier", cond{IfUnmodifiedSince: to.Ptr(lm.Add(-time.Second))}, failed},
		{"412 wins over 304", cond{IfMatch: &other, IfNoneMatch: &etag}, failed},
		{"If-Unmodified-Since 412 wins over 304", cond{IfUnmodifiedSince: to.Ptr(lm.Add(-time.Second)), IfModifiedSince: &lm}, failed},
		{"If-None-Match passes, If-Modified-Since fails", cond{IfNoneMatch: &other, IfModifiedSince: &lm}, ok},
		{"If-None-Match fails, If-Modified-Since passes", cond{IfNoneMatch: &etag, IfModifiedSince: to.Ptr(lm.Add(-time.Second))}, ok},
		{"both fail", cond{IfNoneMatch: &etag, IfModifiedSince: &lm}, notModified},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mc := tc.c
			// GET
			var raw *http.Response
			r, err := c.DownloadStream(policy.WithCaptureResponse(b.ctx, &raw), &blob.DownloadStreamOptions{AccessConditions: bxMAC(&mc)})
			switch tc.want {
			case ok:
				must(t, err)
				got, _ := io.ReadAll(r.Body)
				r.Body.Close()
				if !bytes.Equal(got, data) || raw.StatusCode != 200 {
					t.Fatalf("GET: status %d, body %q", raw.StatusCode, got)
				}
			case notModified:
				// The SDK turns a 304 into a success with only ErrorCode set.
				must(t, err)
				if raw.StatusCode != 304 || bxVal(r.ErrorCode) != string(bloberror.ConditionNotMet) || r.ETag != nil {
					t.Fatalf("GET: status %d, error code %q", raw.StatusCode, bxVal(r.ErrorCode))
				}
			case failed:
				wantCode(t, err, 412, bloberror.ConditionNotMet)
			}
			// HEAD reports a 304 as an error.
			_, err = c.GetProperties(b.ctx, &blob.GetPropertiesOptions{AccessConditions: bxMAC(&mc)})
			switch tc.want {
			case ok:
				must(t, err)
			case notModified:
				wantCode(t, err, 304, bloberror.ConditionNotMet)
			case failed:
				wantCode(t, err, 412, bloberror.ConditionNotMet)
			}
			// A ranged GET follows the same rules.
			_, err = c.DownloadStream(policy.WithCaptureResponse(b.ctx, &raw), &blob.DownloadStreamOptions{AccessConditions: bxMAC(&mc), Range: blob.HTTPRange{Offset: 1, Count: 3}})
			switch tc.want {
			case ok:
				must(t, err)
				if raw.StatusCode != 206 {
					t.Fatalf("ranged GET status %d", raw.StatusCode)
				}
			case notModified:
				must(t, err)
				if raw.StatusCode != 304 {
					t.Fatalf("ranged GET status %d", raw.StatusCode)
				}
			case failed:
				wantCode(t, err, 412, bloberror.ConditionNotMet)
			}
		})
	}

	// (DownloadBuffer with an unmet If-None-Match is not exercised: azblob
	// v1.8.3 closes the nil Body of its synthesized 304 response and panics.)
	var err error
	// A missing blob is 404 whatever the conditions.
	_, err = b.bb("nope").DownloadStream(b.ctx, &blob.DownloadStreamOptions{AccessConditions: bxMAC(&blob.ModifiedAccessConditions{IfMatch: &etag})})
	wantCode(t, err, 404, bloberror.BlobNotFound)
	_, err = b.bb("nope").GetProperties(b.ctx, &blob.GetPropertiesOptions{AccessConditions: bxMAC(&blob.ModifiedAccessConditions{IfNoneMatch: &etag})})
	wantCode(t, err, 404, bloberror.BlobNotFound)
}

// bxWriteOp is one blob write, with access conditions.
type bxWriteOp struct {
	name string
	do   func(b *blobT, c *blockblob.Client, ac *blob.AccessConditions) error
}

func bxWriteOps() []bxWriteOp {
	return []bxWriteOp{
		{"Put Blob", func(b *blobT, c *blockblob.Client, ac *blob.AccessConditions) error {
			_, err := c.Upload(b.ctx, bxBody([]byte("new content")), &blockblob.UploadOptions{AccessConditions: ac, Metadata: bxMeta("w", "put")})
			return err
		}},
		{"Set Metadata", func(b *blobT, c *blockblob.Client, ac *blob.AccessConditions) error {
			_, err := c.SetMetadata(b.ctx, bxMeta("w", "meta"), &blob.SetMetadataOptions{AccessConditions: ac})
			return err
		}},
		{"Set Properties", func(b *blobT, c *blockblob.Client, ac *blob.AccessConditions) error {
			_, err := c.SetHTTPHeaders(b.ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("text/x-new")}, &blob.SetHTTPHeadersOptions{AccessConditions: ac})
			return err
		}},
		{"Put Block List", func(b *blobT, c *blockblob.Client, ac *blob.AccessConditions) error {
			id := base64.StdEncoding.EncodeToString([]byte("blk-0001"))
			var bxLAC *blob.LeaseAccessConditions
			if ac != nil {
				bxLAC = ac.LeaseAccessConditions
			}
			if _, err := c.StageBlock(b.ctx, id, bxBody([]byte("block content")), &blockblob.StageBlockOptions{LeaseAccessConditions: bxLAC}); err != nil {
				return err
			}
			_, err := c.CommitBlockList(b.ctx, []string{id}, &blockblob.CommitBlockListOptions{AccessConditions: ac, Metadata: bxMeta("w", "list")})
			return err
		}},
		{"Copy Blob", func(b *blobT, c *blockblob.Client, ac *blob.AccessConditions) error {
			_, err := c.StartCopyFromURL(b.ctx, b.bb("copysrc").URL(), &blob.StartCopyFromURLOptions{AccessConditions: ac})
			return err
		}},
		{"Copy Blob From URL", func(b *blobT, c *blockblob.Client, ac *blob.AccessConditions) error {
			_, err := c.CopyFromURL(b.ctx, b.bb("copysrc").URL(), &blob.CopyFromURLOptions{BlobAccessConditions: ac})
			return err
		}},
		{"Delete", func(b *blobT, c *blockblob.Client, ac *blob.AccessConditions) error {
			_, err := c.Delete(b.ctx, &blob.DeleteOptions{AccessConditions: ac})
			return err
		}},
	}
}

func TestConditionalWrites(t *testing.T) {
	b := newBlobT(t)
	b.put("copysrc", []byte("copy source"), nil)
	other := azcore.ETag(`"0x8D0000000000000"`)
	for _, op := range bxWriteOps() {
		t.Run(op.name, func(t *testing.T) {
			defer b.use(t)()
			c := b.bb("w-" + op.name)
			up := b.put("w-"+op.name, []byte("original"), &blockblob.UploadOptions{Metadata: bxMeta("orig", "yes")})
			etag, lm := *up.ETag, *up.LastModified
			before := b.state(c)
			fails := map[string]blob.ModifiedAccessConditions{
				"If-Match other":                   {IfMatch: &other},
				"If-None-Match current":            {IfNoneMatch: &etag},
				"If-Modified-Since Last-Modified":  {IfModifiedSince: &lm},
				"If-Unmodified-Since earlier":      {IfUnmodifiedSince: to.Ptr(lm.Add(-time.Second))},
				"If-Match current, IUS earlier":    {IfMatch: &etag, IfUnmodifiedSince: to.Ptr(lm.Add(-time.Second))},
				"If-None-Match current, IMS older": {IfNoneMatch: &etag, IfModifiedSince: to.Ptr(lm.Add(-time.Second))},
			}
			for what, m := range fails {
				m := m
				err := op.do(b, c, bxMAC(&m))
				// Writes never answer 304.
				wantCode(t, err, 412, bloberror.ConditionNotMet)
				b.wantUnchanged(what, c, before)
			}
			// Passing conditions (one of the pairs Azure accepts together): the write happens.
			b.clock.Advance(time.Second)
			err := op.do(b, c, bxMAC(&blob.ModifiedAccessConditions{IfMatch: &etag, IfUnmodifiedSince: &lm}))
			must(t, err)
			if op.name == "Delete" {
				_, err := c.GetProperties(b.ctx, nil)
				wantCode(t, err, 404, bloberror.BlobNotFound)
				return
			}
			after := b.state(c)
			if after.etag == before.etag || !after.lm.After(before.lm) {
				t.Fatalf("write did not produce a new ETag/Last-Modified: %+v", after)
			}
			// The old ETag is now stale.
			err = op.do(b, c, bxMAC(&blob.ModifiedAccessConditions{IfMatch: &etag}))
			wantCode(t, err, 412, bloberror.ConditionNotMet)
		})
	}
}

func TestConditionalCreate(t *testing.T) {
	b := newBlobT(t)
	b.put("copysrc", []byte("copy source"), nil)
	star := to.Ptr(azcore.ETagAny)

	// If-None-Match: * creates only when the blob is missing.
	for _, op := range bxWriteOps() {
		if op.name == "Delete" || op.name == "Set Metadata" || op.name == "Set Properties" {
			continue
		}
		t.Run(op.name, func(t *testing.T) {
			defer b.use(t)()
			c := b.bb("c-" + op.name)
			must(t, op.do(b, c, bxMAC(&blob.ModifiedAccessConditions{IfNoneMatch: star})))
			before := b.state(c)
			err := op.do(b, c, bxMAC(&blob.ModifiedAccessConditions{IfNoneMatch: star}))
			wantCode(t, err, 409, bloberror.BlobAlreadyExists)
			b.wantUnchanged("If-None-Match: *", c, before)

			// If-Match on a missing blob: 412 for creating writes.
			missing := b.bb("missing-" + op.name)
			for _, m := range []azcore.ETag{before.etagAsETag(), azcore.ETagAny} {
				err := op.do(b, missing, bxMAC(&blob.ModifiedAccessConditions{IfMatch: to.Ptr(m)}))
				wantCode(t, err, 412, bloberror.ConditionNotMet)
				_, err = missing.GetProperties(b.ctx, nil)
				wantCode(t, err, 404, bloberror.BlobNotFound)
			}
		})
	}

	// Operations on an existing blob only: 404 first, whatever the condition.
	missing := b.bb("missing")
	etag := azcore.ETag(`"0x8D0000000000000"`)
	_, err := missing.SetMetadata(b.ctx, bxMeta("a", "b"), &blob.SetMetadataOptions{AccessConditions: bxMAC(&blob.ModifiedAccessConditions{IfMatch: &etag})})
	wantCode(t, err, 404, bloberror.BlobNotFound)
	_, err = missing.SetHTTPHeaders(b.ctx, blob.HTTPHeaders{}, &blob.SetHTTPHeadersOptions{AccessConditions: bxMAC(&blob.ModifiedAccessConditions{IfMatch: &etag})})
	wantCode(t, err, 404, bloberror.BlobNotFound)
	_, err = missing.Delete(b.ctx, &blob.DeleteOptions{AccessConditions: bxMAC(&blob.ModifiedAccessConditions{IfMatch: &etag})})
	wantCode(t, err, 404, bloberror.BlobNotFound)
	_, err = missing.CreateSnapshot(b.ctx, &blob.CreateSnapshotOptions{AccessConditions: bxMAC(&blob.ModifiedAccessConditions{IfMatch: &etag})})
	wantCode(t, err, 404, bloberror.BlobNotFound)
	lc, err := lease.NewBlobClient(missing, nil)
	must(t, err)
	_, err = lc.AcquireLease(b.ctx, -1, &lease.BlobAcquireOptions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &etag}})
	wantCode(t, err, 404, bloberror.BlobNotFound)

	// If-None-Match: * on Set Metadata / Set Properties of an existing blob
	// is not create-only: it passes.
	up := b.put("exists", []byte("x"), nil)
	_, err = b.bb("exists").SetMetadata(b.ctx, bxMeta("k", "v"), &blob.SetMetadataOptions{AccessConditions: bxMAC(&blob.ModifiedAccessConditions{IfNoneMatch: star})})
	must(t, err)
	_, err = b.bb("exists").SetHTTPHeaders(b.ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("a/b")}, &blob.SetHTTPHeadersOptions{AccessConditions: bxMAC(&blob.ModifiedAccessConditions{IfNoneMatch: star})})
	must(t, err)
	p := b.props(b.bb("exists"))
	bxWantMeta(t, p.Metadata, map[string]string{"k": "v"})
	bxWantStr(t, "Content-Type", p.ContentType, "a/b")
	if bxETag(p.ETag) == bxETag(up.ETag) {
		t.Fatal("ETag did not change")
	}
}

func (s bxState) etagAsETag() azcore.ETag { return azcore.ETag(s.etag) }

func TestConditionalLeaseAndSnapshot(t *testing.T) {
	b := newBlobT(t)
	up := b.put("l", []byte("x"), nil)
	c := b.bb("l")
	other := azcore.ETag(`"0x8D0000000000000"`)
	lc, err := lease.NewBlobClient(c, nil)
	must(t, err)
	_, err = lc.AcquireLease(b.ctx, -1, &lease.BlobAcquireOptions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &other}})
	wantCode(t, err, 412, bloberror.ConditionNotMet)
	_, err = lc.AcquireLease(b.ctx, -1, &lease.BlobAcquireOptions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfModifiedSince: up.LastModified}})
	wantCode(t, err, 412, bloberror.ConditionNotMet)
	if p := b.props(c); bxVal(p.LeaseState) != lease.StateTypeAvailable {
		t.Fatalf("lease state %v after failed acquire", bxVal(p.LeaseState))
	}
	_, err = lc.AcquireLease(b.ctx, -1, &lease.BlobAcquireOptions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: up.ETag}})
	must(t, err)

	_, err = c.CreateSnapshot(b.ctx, &blob.CreateSnapshotOptions{AccessConditions: bxMAC(&blob.ModifiedAccessConditions{IfMatch: &other})})
	wantCode(t, err, 412, bloberror.ConditionNotMet)
	s, err := c.CreateSnapshot(b.ctx, &blob.CreateSnapshotOptions{AccessConditions: bxMAC(&blob.ModifiedAccessConditions{IfMatch: up.ETag})})
	must(t, err)
	if bxVal(s.Snapshot) == "" {
		t.Fatal("no snapshot id")
	}
}

// If-None-Match: * on writes that do not create the blob: an unmet
// condition (412), never a create-only 409 and never a server error.
func TestConditionalNoneMatchAnyOnUpdates(t *testing.T) {
	b := newBlobT(t)
	star := to.Ptr(azcore.ETagAny)
	b.put("u", []byte("x"), nil)
	c := b.bb("u")
	s := b.snapshot("u", nil)
	before := b.state(c)
	ac := bxMAC(&blob.ModifiedAccessConditions{IfNoneMatch: star})

	_, err := b.lc("u", "").AcquireLease(b.ctx, -1, &lease.BlobAcquireOptions{ModifiedAccessConditions: ac.ModifiedAccessConditions})
	wantCode(t, err, 412, bloberror.ConditionNotMet)
	_, err = c.CreateSnapshot(b.ctx, &blob.CreateSnapshotOptions{AccessConditions: ac})
	wantCode(t, err, 412, bloberror.ConditionNotMet)
	_, err = b.snap("u", s).Delete(b.ctx, &blob.DeleteOptions{AccessConditions: ac})
	wantCode(t, err, 412, bloberror.ConditionNotMet)
	_, err = c.Delete(b.ctx, &blob.DeleteOptions{AccessConditions: ac, DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)})
	wantCode(t, err, 412, bloberror.ConditionNotMet)
	b.wantUnchanged("If-None-Match: * on updates", c, before)
	b.wantLease("u", lease.StatusTypeUnlocked, lease.StateTypeAvailable, "")
	b.read(b.snap("u", s))
}
