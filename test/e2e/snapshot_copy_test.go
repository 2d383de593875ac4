package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/cerulean-storage/cerulean/internal/app"
)

var snapshotRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$`)

func (b *blobT) snapshot(name string, o *blob.CreateSnapshotOptions) string {
	b.t.Helper()
	var raw *http.Response
	r, err := b.bb(name).CreateSnapshot(policy.WithCaptureResponse(b.ctx, &raw), o)
	must(b.t, err)
	s := bxVal(r.Snapshot)
	if raw.StatusCode != http.StatusCreated || !snapshotRE.MatchString(s) {
		b.t.Fatalf("snapshot: status %d, id %q", raw.StatusCode, s)
	}
	return s
}

func TestSnapshotFrozenContent(t *testing.T) {
	b := newBlobT(t)
	for _, n := range []int{0, 100, 70 << 10} {
		name := fmt.Sprintf("s-%d", n)
		v1 := bxRand(n)
		up := b.put(name, v1, &blockblob.UploadOptions{Metadata: bxMeta("v", "1"), HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/v1")}})
		s := b.snapshot(name, nil)
		b.put(name, bxRand(n+7), &blockblob.UploadOptions{Metadata: bxMeta("v", "2")})
		_, err := b.bb(name).SetHTTPHeaders(b.ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("text/v2")}, nil)
		must(t, err)

		sc := b.snap(name, s)
		if got := b.read(sc); !bytes.Equal(got, v1) {
			t.Fatalf("%d: snapshot content changed with the base (%d bytes)", n, len(got))
		}
		p := b.props(sc)
		bxWantMeta(t, p.Metadata, map[string]string{"v": "1"})
		bxWantStr(t, "snapshot Content-Type", p.ContentType, "text/v1")
		if bxETag(p.ETag) != bxETag(up.ETag) || !p.LastModified.Equal(*up.LastModified) {
			t.Fatalf("snapshot ETag %s / %v, want the base's at snapshot time %s / %v", bxETag(p.ETag), p.LastModified, bxETag(up.ETag), up.LastModified)
		}
		if bxVal(p.ContentLength) != int64(n) {
			t.Fatalf("snapshot Content-Length %d", bxVal(p.ContentLength))
		}
		bp := b.props(b.bb(name))
		bxWantMeta(t, bp.Metadata, map[string]string{"v": "2"})
		bxWantStr(t, "base Content-Type", bp.ContentType, "text/v2")
		if n > 0 {
			r, err := sc.DownloadStream(b.ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 1, Count: 10}})
			must(t, err)
			r.Body.Close()
			bxWantStr(t, "snapshot Content-Range", r.ContentRange, fmt.Sprintf("bytes 1-%d/%d", min(10, n-1), n))
		}
	}
}

func TestSnapshotMetadataAndReadOnly(t *testing.T) {
	b := newBlobT(t)
	b.put("m", []byte("body"), &blockblob.UploadOptions{Metadata: bxMeta("base", "yes")})
	// Metadata given on the snapshot replaces the copied metadata there only.
	s := b.snapshot("m", &blob.CreateSnapshotOptions{Metadata: bxMeta("snap", "only")})
	bxWantMeta(t, b.props(b.snap("m", s)).Metadata, map[string]string{"snap": "only"})
	bxWantMeta(t, b.props(b.bb("m")).Metadata, map[string]string{"base": "yes"})
	// A snapshot without metadata keeps the base's.
	s2 := b.snapshot("m", nil)
	bxWantMeta(t, b.props(b.snap("m", s2)).Metadata, map[string]string{"base": "yes"})

	// Snapshots are read-only.
	sc := b.snap("m", s)
	_, err := sc.SetMetadata(b.ctx, bxMeta("x", "y"), nil)
	wantCode(t, err, 400, bloberror.InvalidQueryParameterValue)
	_, err = sc.SetHTTPHeaders(b.ctx, blob.HTTPHeaders{}, nil)
	wantCode(t, err, 400, bloberror.InvalidQueryParameterValue)
	_, err = sc.Upload(b.ctx, bxBody([]byte("x")), nil)
	wantCode(t, err, 400, bloberror.InvalidQueryParameterValue)
	bxWantMeta(t, b.props(sc).Metadata, map[string]string{"snap": "only"})

	// Snapshot of a missing blob; a missing snapshot.
	_, err = b.bb("missing").CreateSnapshot(b.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	_, err = b.snap("m", "2001-01-01T00:00:00.0000000Z").GetProperties(b.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
}

func TestSnapshotsSameTick(t *testing.T) {
	b := newBlobT(t)
	// The fake clock does not move: every snapshot is taken in the same tick.
	var ids []string
	seen := map[string]bool{}
	for i := range 5 {
		b.put("t", []byte(fmt.Sprintf("version %d", i)), nil)
		s := b.snapshot("t", nil)
		if seen[s] {
			t.Fatalf("snapshot id %s reused", s)
		}
		seen[s] = true
		ids = append(ids, s)
	}
	for i, s := range ids {
		if got := b.read(b.snap("t", s)); string(got) != fmt.Sprintf("version %d", i) {
			t.Fatalf("snapshot %d (%s): %q", i, s, got)
		}
	}
	// Ids sort in creation order.
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("snapshot ids not increasing: %v", ids)
		}
	}
}

func TestSnapshotDelete(t *testing.T) {
	b := newBlobT(t)
	b.put("d", []byte("base v1"), nil)
	s1 := b.snapshot("d", nil)
	b.put("d", []byte("base v2"), nil)
	s2 := b.snapshot("d", nil)

	// Base with snapshots: 409, nothing deleted.
	_, err := b.bb("d").Delete(b.ctx, nil)
	wantCode(t, err, 409, bloberror.SnapshotsPresent)
	b.read(b.bb("d"))
	b.read(b.snap("d", s1))

	// Delete one snapshot.
	var raw *http.Response
	_, err = b.snap("d", s1).Delete(policy.WithCaptureResponse(b.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != http.StatusAccepted {
		t.Fatalf("delete snapshot status %d", raw.StatusCode)
	}
	_, err = b.snap("d", s1).GetProperties(b.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	_, err = b.snap("d", s1).Delete(b.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	if got := b.read(b.snap("d", s2)); string(got) != "base v2" {
		t.Fatalf("other snapshot: %q", got)
	}
	_, err = b.bb("d").Delete(b.ctx, nil)
	wantCode(t, err, 409, bloberror.SnapshotsPresent)

	// "only": the snapshots go, the base stays.
	b.snapshot("d", nil)
	_, err = b.bb("d").Delete(b.ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeOnly)})
	must(t, err)
	_, err = b.snap("d", s2).GetProperties(b.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	if got := b.read(b.bb("d")); string(got) != "base v2" {
		t.Fatalf("base after delete-only: %q", got)
	}
	// Now the base alone can be deleted... but first "include".
	s3 := b.snapshot("d", nil)
	_, err = b.bb("d").Delete(b.ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)})
	must(t, err)
	_, err = b.bb("d").GetProperties(b.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	_, err = b.snap("d", s3).GetProperties(b.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)

	// A base without snapshots deletes with no option.
	b.put("plain", []byte("x"), nil)
	_, err = b.bb("plain").Delete(b.ctx, nil)
	must(t, err)

	// A snapshot survives a base overwrite and its data a later delete of the base.
	data := bxRand(70 << 10)
	b.put("keep", data, nil)
	s4 := b.snapshot("keep", nil)
	b.put("keep", []byte("small"), nil)
	_, err = b.bb("keep").Delete(b.ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeOnly)})
	must(t, err)
	_, err = b.snap("keep", s4).GetProperties(b.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	if got := b.read(b.bb("keep")); string(got) != "small" {
		t.Fatalf("base: %q", got)
	}
}

func (b *blobT) wantCopied(dst *blockblob.Client, copyID, source string, want []byte) blob.GetPropertiesResponse {
	b.t.Helper()
	if got := b.read(dst); !bytes.Equal(got, want) {
		b.t.Fatalf("copied content: %d bytes, want %d", len(got), len(want))
	}
	p := b.props(dst)
	if bxVal(p.CopyStatus) != blob.CopyStatusTypeSuccess || bxVal(p.CopyID) != copyID {
		b.t.Fatalf("x-ms-copy-status %q, x-ms-copy-id %q (want %q)", bxVal(p.CopyStatus), bxVal(p.CopyID), copyID)
	}
	bxWantStr(b.t, "x-ms-copy-source", p.CopySource, source)
	bxWantStr(b.t, "x-ms-copy-progress", p.CopyProgress, fmt.Sprintf("%d/%d", len(want), len(want)))
	now := b.clock.Now().UTC().Truncate(time.Second)
	if p.CopyCompletionTime == nil || !p.CopyCompletionTime.Equal(now) {
		b.t.Fatalf("x-ms-copy-completion-time %v, want %v", p.CopyCompletionTime, now)
	}
	if bxVal(p.ContentLength) != int64(len(want)) {
		b.t.Fatalf("Content-Length %d", bxVal(p.ContentLength))
	}
	return p
}

func TestCopyBlob(t *testing.T) {
	b := newBlobT(t)
	for _, n := range []int{0, 1000, 70 << 10} {
		src := fmt.Sprintf("src-%d", n)
		dst := fmt.Sprintf("dst-%d", n)
		data := bxRand(n)
		b.put(src, data, &blockblob.UploadOptions{Metadata: bxMeta("from", "source"), HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/src"), BlobContentLanguage: to.Ptr("fr")}})
		var raw *http.Response
		r, err := b.bb(dst).StartCopyFromURL(policy.WithCaptureResponse(b.ctx, &raw), b.bb(src).URL(), nil)
		must(t, err)
		if raw.StatusCode != http.StatusAccepted || bxVal(r.CopyStatus) != blob.CopyStatusTypeSuccess || bxVal(r.CopyID) == "" {
			t.Fatalf("copy: status %d, x-ms-copy-status %q, id %q", raw.StatusCode, bxVal(r.CopyStatus), bxVal(r.CopyID))
		}
		p := b.wantCopied(b.bb(dst), *r.CopyID, b.bb(src).URL(), data)
		// Metadata and properties come from the source.
		bxWantMeta(t, p.Metadata, map[string]string{"from": "source"})
		bxWantStr(t, "Content-Type", p.ContentType, "text/src")
		bxWantStr(t, "Content-Language", p.ContentLanguage, "fr")
		if !bytes.Equal(p.ContentMD5, bxMD5(data)) {
			t.Fatalf("Content-MD5 %x", p.ContentMD5)
		}
		if bxETag(p.ETag) != bxETag(r.ETag) || bxETag(p.ETag) == bxETag(b.props(b.bb(src)).ETag) {
			t.Fatalf("destination ETag %s, copy response %s", bxETag(p.ETag), bxETag(r.ETag))
		}
		// The copy is independent: deleting or overwriting the source
		// does not affect it.
		_, err = b.bb(src).Delete(b.ctx, nil)
		must(t, err)
		if got := b.read(b.bb(dst)); !bytes.Equal(got, data) {
			t.Fatal("destination changed when the source was deleted")
		}
	}

	// Metadata given on the copy replaces the source's.
	b.put("src", []byte("source"), &blockblob.UploadOptions{Metadata: bxMeta("from", "source")})
	r, err := b.bb("dst").StartCopyFromURL(b.ctx, b.bb("src").URL(), &blob.StartCopyFromURLOptions{Metadata: bxMeta("given", "yes")})
	must(t, err)
	p := b.wantCopied(b.bb("dst"), *r.CopyID, b.bb("src").URL(), []byte("source"))
	bxWantMeta(t, p.Metadata, map[string]string{"given": "yes"})

	// Copy onto an existing blob replaces it; into another container too.
	b.put("dst2", []byte("old content, longer than the source"), &blockblob.UploadOptions{Metadata: bxMeta("old", "1")})
	r, err = b.bb("dst2").StartCopyFromURL(b.ctx, b.bb("src").URL(), nil)
	must(t, err)
	p = b.wantCopied(b.bb("dst2"), *r.CopyID, b.bb("src").URL(), []byte("source"))
	bxWantMeta(t, p.Metadata, map[string]string{"from": "source"})
	_, err = b.cli.CreateContainer(b.ctx, "other", nil)
	must(t, err)
	oc := b.cli.ServiceClient().NewContainerClient("other").NewBlockBlobClient("x")
	r, err = oc.StartCopyFromURL(b.ctx, b.bb("src").URL(), nil)
	must(t, err)
	b.wantCopied(oc, *r.CopyID, b.bb("src").URL(), []byte("source"))

	// A blob name that needs escaping.
	b.put("dir/a b+c.txt", []byte("escaped"), nil)
	r, err = b.bb("esc").StartCopyFromURL(b.ctx, b.bb("dir/a b+c.txt").URL(), nil)
	must(t, err)
	b.wantCopied(b.bb("esc"), *r.CopyID, b.bb("dir/a b+c.txt").URL(), []byte("escaped"))

	// Abort: copies complete at once, so there is never a pending one.
	_, err = b.bb("dst").AbortCopyFromURL(b.ctx, *r.CopyID, nil)
	wantCode(t, err, 409, bloberror.NoPendingCopyOperation)
	_, err = b.bb("missing").AbortCopyFromURL(b.ctx, *r.CopyID, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
}

func TestCopyBlobErrors(t *testing.T) {
	b := newBlobT(t)
	up := b.put("src", []byte("source content"), nil)
	b.put("dst", []byte("destination"), &blockblob.UploadOptions{Metadata: bxMeta("d", "1")})
	dst := b.bb("dst")
	before := b.state(dst)
	other := azcore.ETag(`"0x8D0000000000000"`)

	type copyFn func(src string, o *blob.SourceModifiedAccessConditions, ac *blob.AccessConditions) error
	copies := map[string]copyFn{
		"Copy Blob": func(src string, o *blob.SourceModifiedAccessConditions, ac *blob.AccessConditions) error {
			_, err := dst.StartCopyFromURL(b.ctx, src, &blob.StartCopyFromURLOptions{SourceModifiedAccessConditions: o, AccessConditions: ac})
			return err
		},
		"Copy Blob From URL": func(src string, o *blob.SourceModifiedAccessConditions, ac *blob.AccessConditions) error {
			_, err := dst.CopyFromURL(b.ctx, src, &blob.CopyFromURLOptions{SourceModifiedAccessConditions: o, BlobAccessConditions: ac})
			return err
		},
	}
	srcURL := b.bb("src").URL()
	for name, cp := range copies {
		t.Run(name, func(t *testing.T) {
			defer b.use(t)()
			// Unmet source conditions: 412 SourceConditionNotMet.
			for what, sc := range map[string]blob.SourceModifiedAccessConditions{
				"source If-Match":            {SourceIfMatch: &other},
				"source If-None-Match":       {SourceIfNoneMatch: up.ETag},
				"source If-Modified-Since":   {SourceIfModifiedSince: up.LastModified},
				"source If-Unmodified-Since": {SourceIfUnmodifiedSince: to.Ptr(up.LastModified.Add(-time.Second))},
			} {
				sc := sc
				err := cp(srcURL, &sc, nil)
				wantCode(t, err, 412, bloberror.SourceConditionNotMet)
				b.wantUnchanged(what, dst, before)
			}
			// A destination condition stays ConditionNotMet.
			err := cp(srcURL, nil, bxMAC(&blob.ModifiedAccessConditions{IfMatch: &other}))
			wantCode(t, err, 412, bloberror.ConditionNotMet)
			b.wantUnchanged("destination If-Match", dst, before)
			// Missing source blob, missing source container.
			for _, missing := range []string{b.bb("nope").URL(), b.cli.ServiceClient().NewContainerClient("nocont").NewBlockBlobClient("x").URL()} {
				err := cp(missing, nil, nil)
				st, code := bxErrCode(err)
				if st != 404 || (code != string(bloberror.CannotVerifyCopySource) && code != string(bloberror.BlobNotFound)) {
					t.Fatalf("missing source %s: %d %s", missing, st, code)
				}
				b.wantUnchanged("missing source", dst, before)
			}
			// Missing snapshot of an existing blob.
			err = cp(srcURL+"?snapshot=2001-01-01T00:00:00.0000000Z", nil, nil)
			if st, _ := bxErrCode(err); st != 404 {
				t.Fatalf("missing source snapshot: %v", err)
			}
			// Destination container missing.
			nc := b.cli.ServiceClient().NewContainerClient("nocont").NewBlockBlobClient("x")
			_, err = nc.StartCopyFromURL(b.ctx, srcURL, nil)
			wantCode(t, err, 404, bloberror.ContainerNotFound)
		})
	}

	// A leased destination needs its lease id.
	A := b.lc("dst", "")
	_, err := A.AcquireLease(b.ctx, -1, nil)
	must(t, err)
	for name, cp := range copies {
		before := b.state(dst)
		wantCode(t, cp(srcURL, nil, nil), 412, bloberror.LeaseIDMissing)
		b.wantUnchanged(name+" without lease id", dst, before)
		must(t, cp(srcURL, &blob.SourceModifiedAccessConditions{SourceIfMatch: up.ETag}, bxLeaseAC(*A.LeaseID())))
		if got := b.read(dst); string(got) != "source content" {
			t.Fatalf("%s: content %q", name, got)
		}
		b.wantLeased("dst", lease.DurationTypeInfinite)
	}
}

func TestCopyFromURL(t *testing.T) {
	b := newBlobT(t)
	data := bxRand(70 << 10)
	b.put("src", data, &blockblob.UploadOptions{Metadata: bxMeta("from", "source")})
	var raw *http.Response
	r, err := b.bb("dst").CopyFromURL(policy.WithCaptureResponse(b.ctx, &raw), b.bb("src").URL(), nil)
	must(t, err)
	if raw.StatusCode != http.StatusAccepted || bxVal(r.CopyStatus) != "success" || bxVal(r.CopyID) == "" {
		t.Fatalf("copy from URL: status %d, copy status %q", raw.StatusCode, bxVal(r.CopyStatus))
	}
	p := b.wantCopied(b.bb("dst"), *r.CopyID, b.bb("src").URL(), data)
	// With no x-ms-meta-* on the request, the source's metadata is copied.
	bxWantMeta(t, p.Metadata, map[string]string{"from": "source"})

	r, err = b.bb("dst").CopyFromURL(b.ctx, b.bb("src").URL(), &blob.CopyFromURLOptions{Metadata: bxMeta("given", "1")})
	must(t, err)
	p = b.wantCopied(b.bb("dst"), *r.CopyID, b.bb("src").URL(), data)
	bxWantMeta(t, p.Metadata, map[string]string{"given": "1"})

	// Source conditions that hold.
	sp := b.props(b.bb("src"))
	_, err = b.bb("dst3").CopyFromURL(b.ctx, b.bb("src").URL(), &blob.CopyFromURLOptions{SourceModifiedAccessConditions: &blob.SourceModifiedAccessConditions{SourceIfMatch: sp.ETag, SourceIfUnmodifiedSince: sp.LastModified}})
	must(t, err)

	// Abort after a synchronous copy: nothing pending.
	_, err = b.bb("dst").AbortCopyFromURL(b.ctx, *r.CopyID, nil)
	wantCode(t, err, 409, bloberror.NoPendingCopyOperation)
}

func TestCopyOfSnapshot(t *testing.T) {
	b := newBlobT(t)
	v1 := bxRand(70 << 10)
	b.put("src", v1, &blockblob.UploadOptions{Metadata: bxMeta("v", "1")})
	s := b.snapshot("src", nil)
	b.put("src", []byte("v2"), &blockblob.UploadOptions{Metadata: bxMeta("v", "2")})
	snapURL := b.snap("src", s).URL()

	r, err := b.bb("fromsnap").StartCopyFromURL(b.ctx, snapURL, nil)
	must(t, err)
	p := b.wantCopied(b.bb("fromsnap"), *r.CopyID, snapURL, v1)
	bxWantMeta(t, p.Metadata, map[string]string{"v": "1"})

	r2, err := b.bb("fromsnap2").CopyFromURL(b.ctx, snapURL, nil)
	must(t, err)
	b.wantCopied(b.bb("fromsnap2"), *r2.CopyID, snapURL, v1)

	// Promote the snapshot: copy it over its own base.
	_, err = b.bb("src").StartCopyFromURL(b.ctx, snapURL, nil)
	must(t, err)
	if got := b.read(b.bb("src")); !bytes.Equal(got, v1) {
		t.Fatal("promoted snapshot content differs")
	}
	// Deleting the base and its snapshots leaves the copies intact.
	_, err = b.bb("src").Delete(b.ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)})
	must(t, err)
	if got := b.read(b.bb("fromsnap")); !bytes.Equal(got, v1) {
		t.Fatal("copy changed after the source snapshot was deleted")
	}
}

// The az CLI names a copy source by the account's Azure host name
// (https://{account}.blob.core.windows.net/{container}/{blob}) even
// against a custom endpoint: that is this server's account.
func TestCopyBlobFromAzureHostName(t *testing.T) {
	b := newBlobT(t)
	b.put("src", []byte("from the azure host"), nil)
	u := "https://" + app.DevAccount + ".blob.core.windows.net/" + b.cont + "/src"
	_, err := b.bb("dst").StartCopyFromURL(b.ctx, u, nil)
	must(t, err)
	if got := b.read(b.bb("dst")); string(got) != "from the azure host" {
		t.Fatalf("copy read %q", got)
	}
	_, err = b.bb("dst2").StartCopyFromURL(b.ctx, "https://someoneelse.blob.core.windows.net/"+b.cont+"/src", nil)
	wantCode(t, err, http.StatusNotFound, bloberror.CannotVerifyCopySource)
}
