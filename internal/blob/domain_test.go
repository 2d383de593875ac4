package blob

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blobtags"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// These tests call the Blob domain API directly, as a front end other
// than Blob REST does: typed inputs, no request, no headers.

func domainEnv(t *testing.T) (*Service, func(time.Duration), ContainerRef) {
	t.Helper()
	s, clk := dtService(t)
	c := ContainerRef{Account: "acct", Container: "cnt"}
	if _, err := s.CreateContainer(context.Background(), CreateContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	return s, clk.Advance, c
}

func blobAt(c ContainerRef, name string) BlobRef {
	return BlobRef{Account: c.Account, Container: c.Container, Blob: name}
}

// wantCode fails unless err is the Azure error status/code.
func wantCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	ae, ok := azerr.As(err)
	if !ok || ae.Status != status || ae.Code != code {
		t.Fatalf("got %v, want %d %s", err, status, code)
	}
}

func putBlock(t *testing.T, s *Service, ref BlobRef, body string, a Access) PutBlobOutput {
	t.Helper()
	out, err := s.PutBlob(context.Background(), PutBlobInput{Ref: ref, Type: BlockBlob, Access: a, Body: strings.NewReader(body), Length: int64(len(body)),
		NewBlob: NewBlob{HTTPHeaders: HTTPHeaders{ContentType: "text/plain"}}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readBlob(t *testing.T, s *Service, in GetBlobInput) (GetBlobOutput, string) {
	t.Helper()
	out, err := s.GetBlob(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	rc := out.Body.Reader()
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return out, string(b)
}

func TestDomainBlobLifecycle(t *testing.T) {
	ctx := context.Background()
	s, advance, c := domainEnv(t)
	ref := blobAt(c, "dir/a.txt")
	put := putBlock(t, s, ref, "hello world", Access{})
	sum := md5.Sum([]byte("hello world"))
	if !bytes.Equal(put.ContentMD5, sum[:]) || len(put.ContentCRC64) != 8 || put.ETag == "" || !put.ServerEncrypted {
		t.Fatalf("put: %+v", put)
	}
	advance(time.Second)
	p, err := s.GetBlobProperties(ctx, GetBlobPropertiesInput{Ref: ref})
	if err != nil {
		t.Fatal(err)
	}
	if p.Size != 11 || p.Type != BlockBlob || p.HTTPHeaders.ContentType != "text/plain" || p.ETag != put.ETag ||
		!p.LastModified.Equal(put.LastModified) || !p.HasLease || p.Lease.State != lease.StateAvailable || !p.AccessTierInferred {
		t.Fatalf("properties: %+v", p)
	}
	got, body := readBlob(t, s, GetBlobInput{Ref: ref, Range: &wire.Range{Start: 6, End: 10}})
	if body != "world" || got.Offset != 6 || got.Count != 5 || got.Properties.Size != 11 {
		t.Fatalf("range read: %q %+v", body, got)
	}
	// Metadata set at a later instant: a new ETag, Last-Modified from the
	// injected clock.
	md, err := s.SetBlobMetadata(ctx, SetBlobMetadataInput{Ref: ref, Access: Access{Cond: cond.Conditions{IfMatch: []string{put.ETag}}}, Metadata: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	if md.ETag == put.ETag || !md.LastModified.Equal(put.LastModified.Add(time.Second)) {
		t.Fatalf("metadata: %+v after %+v", md, put)
	}
	// The old ETag no longer matches.
	_, err = s.SetBlobMetadata(ctx, SetBlobMetadataInput{Ref: ref, Access: Access{Cond: cond.Conditions{IfMatch: []string{put.ETag}}}})
	wantCode(t, err, 412, azerr.ConditionNotMet)
	snap, err := s.SnapshotBlob(ctx, SnapshotBlobInput{Ref: ref})
	if err != nil {
		t.Fatal(err)
	}
	sref := ref
	sref.Snapshot = snap.Snapshot
	sp, err := s.GetBlobProperties(ctx, GetBlobPropertiesInput{Ref: sref})
	if err != nil || sp.HasLease || sp.Metadata["k"] != "v" {
		t.Fatalf("snapshot properties: %+v %v", sp, err)
	}
	_, err = s.DeleteBlob(ctx, DeleteBlobInput{Ref: ref})
	wantCode(t, err, 409, azerr.SnapshotsPresent)
	del, err := s.DeleteBlob(ctx, DeleteBlobInput{Ref: ref, DeleteSnapshots: DeleteSnapshotsInclude})
	if err != nil || del.SoftDeleted {
		t.Fatalf("delete: %+v %v", del, err)
	}
	_, err = s.GetBlobProperties(ctx, GetBlobPropertiesInput{Ref: sref})
	wantCode(t, err, 404, azerr.BlobNotFound)
	_, err = s.GetBlob(ctx, GetBlobInput{Ref: ref})
	wantCode(t, err, 404, azerr.BlobNotFound)
	if items := dtItems(t, s); len(items) != 0 {
		// 11 bytes are embedded in the record: no data item at all.
		t.Fatalf("data items left: %v", items)
	}
}

func TestDomainPutBlobRefusedKeepsNothing(t *testing.T) {
	ctx := context.Background()
	s, _, c := domainEnv(t)
	ref := blobAt(c, "big")
	body := bytes.Repeat([]byte("x"), 200<<10) // staged as a data item, not embedded
	wrong := md5.Sum([]byte("other"))
	_, err := s.PutBlob(ctx, PutBlobInput{Ref: ref, Type: BlockBlob, Body: bytes.NewReader(body), Length: int64(len(body)), Checksums: Checksums{MD5: wrong[:]}})
	wantCode(t, err, 400, azerr.MD5Mismatch)
	ae, _ := azerr.As(err)
	if len(ae.Details) != 2 || ae.Details[0] != (azerr.Detail{Name: "UserSpecifiedMd5", Value: base64.StdEncoding.EncodeToString(wrong[:])}) {
		t.Fatalf("details: %v", ae.Details)
	}
	// A create-only caller cannot replace an existing blob.
	putBlock(t, s, ref, "v1", Access{})
	_, err = s.PutBlob(ctx, PutBlobInput{Ref: ref, Type: BlockBlob, CreateOnly: true, Body: strings.NewReader("v2"), Length: 2})
	wantCode(t, err, 403, azerr.AuthorizationPermissionMismatch)
	if _, got := readBlob(t, s, GetBlobInput{Ref: ref}); got != "v1" {
		t.Fatalf("content %q after refused writes", got)
	}
	if items := dtItems(t, s); len(items) != 0 {
		t.Fatalf("refused writes left data items: %v", items)
	}
}

func TestDomainLeaseOnInjectedClock(t *testing.T) {
	ctx := context.Background()
	s, advance, c := domainEnv(t)
	ref := blobAt(c, "leased")
	putBlock(t, s, ref, "a", Access{})
	d := 15
	l, err := s.LeaseBlob(ctx, LeaseBlobInput{Ref: ref, Request: lease.Request{Action: lease.ActionAcquire, ProposedID: "3a6a7ebd-0d5b-4c3c-9f8e-2f56c0a0e0a1", Duration: &d}})
	if err != nil || l.Result.LeaseID == "" {
		t.Fatalf("acquire: %+v %v", l, err)
	}
	_, err = s.PutBlob(ctx, PutBlobInput{Ref: ref, Type: AppendBlob})
	wantCode(t, err, 412, azerr.LeaseIDMissing)
	if _, err := s.PutBlob(ctx, PutBlobInput{Ref: ref, Type: BlockBlob, Access: Access{LeaseID: l.Result.LeaseID}, Body: strings.NewReader("b"), Length: 1}); err != nil {
		t.Fatal(err)
	}
	// Past the lease's 15 s on the injected clock, no lease id is needed.
	advance(16 * time.Second)
	p, err := s.GetBlobProperties(ctx, GetBlobPropertiesInput{Ref: ref})
	if err != nil || p.Lease.State != lease.StateExpired {
		t.Fatalf("after expiry: %+v %v", p.Lease, err)
	}
	putBlock(t, s, ref, "c", Access{})
}

func TestDomainTagCondition(t *testing.T) {
	ctx := context.Background()
	s, _, c := domainEnv(t)
	ref := blobAt(c, "tagged")
	if _, err := s.PutBlob(ctx, PutBlobInput{Ref: ref, Type: AppendBlob, NewBlob: NewBlob{Tags: blobtags.Tags{"k": "v"}}}); err != nil {
		t.Fatal(err)
	}
	cond := func(expr string) Access {
		e, err := blobtags.ParseCondition(expr)
		if err != nil {
			t.Fatal(err)
		}
		return Access{IfTags: NewTagCondition(e)}
	}
	_, err := s.SetBlobProperties(ctx, SetBlobPropertiesInput{Ref: ref, Access: cond(`"k" = 'x'`), HTTPHeaders: &HTTPHeaders{ContentType: "a/b"}})
	wantCode(t, err, 412, azerr.ConditionNotMet)
	if _, err := s.SetBlobProperties(ctx, SetBlobPropertiesInput{Ref: ref, Access: cond(`"k" = 'v'`), HTTPHeaders: &HTTPHeaders{ContentType: "a/b"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetBlobTags(ctx, SetBlobTagsInput{Ref: ref, IfTags: cond(`"k" = 'v'`).IfTags, Tags: blobtags.Tags{"k": "w"}}); err != nil {
		t.Fatal(err)
	}
	if tags, err := s.GetBlobTags(ctx, GetBlobTagsInput{Ref: ref}); err != nil || tags["k"] != "w" || len(tags) != 1 {
		t.Fatalf("tags: %v %v", tags, err)
	}
	_, err = s.SetBlobTier(ctx, SetBlobTierInput{Ref: ref, Tier: "Archive"})
	wantCode(t, err, 400, azerr.AccessTierNotSupportedForBlobType) // an append blob
	bref := blobAt(c, "cold")
	putBlock(t, s, bref, "data", Access{})
	if out, err := s.SetBlobTier(ctx, SetBlobTierInput{Ref: bref, Tier: "archive"}); err != nil || out.Rehydrating {
		t.Fatalf("archive: %+v %v", out, err)
	}
	_, err = s.GetBlob(ctx, GetBlobInput{Ref: bref})
	wantCode(t, err, 409, azerr.BlobArchived)
	if out, err := s.SetBlobTier(ctx, SetBlobTierInput{Ref: bref, Tier: "Hot"}); err != nil || !out.Rehydrating {
		t.Fatalf("rehydrate: %+v %v", out, err)
	}
	if _, got := readBlob(t, s, GetBlobInput{Ref: bref}); got != "data" {
		t.Fatalf("rehydrated content %q", got)
	}
	// A page blob's size and sequence number, leaving the content
	// properties as they are (HTTPHeaders nil).
	pref := blobAt(c, "pages")
	if _, err := s.PutBlob(ctx, PutBlobInput{Ref: pref, Type: PageBlob, Size: 1024, NewBlob: NewBlob{HTTPHeaders: HTTPHeaders{ContentType: "x/y"}}}); err != nil {
		t.Fatal(err)
	}
	size := int64(512)
	out, err := s.SetBlobProperties(ctx, SetBlobPropertiesInput{Ref: pref, Size: &size, SequenceNumberAction: SequenceNumberUpdate, SequenceNumber: 7})
	if err != nil || out.SequenceNumber != 7 || out.Type != PageBlob {
		t.Fatalf("resize: %+v %v", out, err)
	}
	p, err := s.GetBlobProperties(ctx, GetBlobPropertiesInput{Ref: pref})
	if err != nil || p.Size != 512 || p.HTTPHeaders.ContentType != "x/y" || p.SequenceNumber != 7 {
		t.Fatalf("page blob: %+v %v", p, err)
	}
	_, err = s.SetBlobProperties(ctx, SetBlobPropertiesInput{Ref: ref, Size: &size})
	wantCode(t, err, 409, azerr.InvalidBlobType)
}

func TestDomainBlocksAndListing(t *testing.T) {
	ctx := context.Background()
	s, _, c := domainEnv(t)
	ref := blobAt(c, "a/blocks")
	ids := []string{base64.StdEncoding.EncodeToString([]byte("0001")), base64.StdEncoding.EncodeToString([]byte("0002"))}
	for i, part := range []string{"first ", "second"} {
		out, err := s.PutBlock(ctx, PutBlockInput{Ref: ref, BlockID: ids[i], Body: strings.NewReader(part), Length: int64(len(part))})
		if err != nil || len(out.ContentCRC64) != 8 || out.ContentMD5 != nil {
			t.Fatalf("put block: %+v %v", out, err)
		}
	}
	bl, err := s.GetBlockList(ctx, GetBlockListInput{Ref: ref})
	if err != nil || bl.Exists || len(bl.Uncommitted) != 2 || len(bl.Committed) != 0 {
		t.Fatalf("block list before commit: %+v %v", bl, err)
	}
	_, err = s.PutBlock(ctx, PutBlockInput{Ref: ref, BlockID: ids[0], Body: strings.NewReader(""), Length: 0})
	wantCode(t, err, 400, azerr.InvalidHeaderValue)
	if _, err := s.PutBlockList(ctx, PutBlockListInput{Ref: ref, Blocks: []wire.BlockRef{{ID: ids[0], Kind: wire.Latest}, {ID: ids[1], Kind: wire.Uncommitted}}}); err != nil {
		t.Fatal(err)
	}
	if _, got := readBlob(t, s, GetBlobInput{Ref: ref}); got != "first second" {
		t.Fatalf("committed content %q", got)
	}
	bl, err = s.GetBlockList(ctx, GetBlockListInput{Ref: ref})
	if err != nil || !bl.Exists || bl.Size != 12 || len(bl.Committed) != 2 || len(bl.Uncommitted) != 0 {
		t.Fatalf("block list after commit: %+v %v", bl, err)
	}
	putBlock(t, s, blobAt(c, "a/other"), "x", Access{})
	putBlock(t, s, blobAt(c, "b"), "y", Access{})
	var names []string
	marker := ""
	for pages := 0; ; pages++ {
		out, err := s.ListBlobs(ctx, ListBlobsInput{Ref: c, Delimiter: "/", Marker: marker, MaxResults: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range out.Items {
			if it.IsPrefix {
				names = append(names, "prefix:"+it.Name)
			} else {
				names = append(names, it.Name)
			}
		}
		if marker = out.NextMarker; marker == "" || pages > 5 {
			break
		}
	}
	if strings.Join(names, ",") != "prefix:a/,b" {
		t.Fatalf("listing: %v", names)
	}
	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	_, err = s.ListBlobs(ctx, ListBlobsInput{Ref: c, MaxResults: 10})
	wantCode(t, err, 404, azerr.ContainerNotFound)
}

func TestDomainPagesAndAppends(t *testing.T) {
	ctx := context.Background()
	s, _, c := domainEnv(t)
	pref := blobAt(c, "pages")
	if _, err := s.PutBlob(ctx, PutBlobInput{Ref: pref, Type: PageBlob, Size: 2048, SequenceNumber: 3}); err != nil {
		t.Fatal(err)
	}
	page := bytes.Repeat([]byte("p"), 512)
	le := int64(2)
	_, err := s.PutPage(ctx, PutPageInput{Ref: pref, Offset: 512, Length: 512, Body: bytes.NewReader(page), Sequence: SequenceConditions{LessOrEqual: &le}})
	wantCode(t, err, 412, azerr.SequenceNumberConditionNotMet)
	pp, err := s.PutPage(ctx, PutPageInput{Ref: pref, Offset: 512, Length: 512, Body: bytes.NewReader(page)})
	if err != nil || pp.SequenceNumber != 3 || len(pp.ContentCRC64) != 8 || !pp.ServerEncrypted {
		t.Fatalf("put page: %+v %v", pp, err)
	}
	snap, err := s.SnapshotBlob(ctx, SnapshotBlobInput{Ref: pref})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutPage(ctx, PutPageInput{Ref: pref, Offset: 512, Length: 512, Clear: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutPage(ctx, PutPageInput{Ref: pref, Offset: 1536, Length: 512, Body: bytes.NewReader(page)}); err != nil {
		t.Fatal(err)
	}
	pr, err := s.GetPageRanges(ctx, GetPageRangesInput{Ref: pref})
	if err != nil || pr.Size != 2048 || len(pr.Ranges) != 1 || pr.Ranges[0].Off != 1536 || pr.Ranges[0].End != 2048 {
		t.Fatalf("page ranges: %+v %v", pr, err)
	}
	// Against the snapshot: the cleared page and the new one.
	diff, err := s.GetPageRanges(ctx, GetPageRangesInput{Ref: pref, PrevSnapshot: snap.Snapshot})
	if err != nil || len(diff.Ranges) != 2 || !diff.Ranges[0].Clear || diff.Ranges[0].Off != 512 || diff.Ranges[1].Clear {
		t.Fatalf("diff: %+v %v", diff, err)
	}

	aref := blobAt(c, "log")
	if _, err := s.PutBlob(ctx, PutBlobInput{Ref: aref, Type: AppendBlob}); err != nil {
		t.Fatal(err)
	}
	zero, three := int64(0), int64(3)
	a1, err := s.AppendBlock(ctx, AppendBlockInput{Ref: aref, AppendPosition: &zero, Body: strings.NewReader("abc"), Length: 3})
	if err != nil || a1.AppendOffset != 0 || a1.CommittedBlockCount != 1 {
		t.Fatalf("append: %+v %v", a1, err)
	}
	_, err = s.AppendBlock(ctx, AppendBlockInput{Ref: aref, AppendPosition: &zero, Body: strings.NewReader("def"), Length: 3})
	wantCode(t, err, 412, azerr.AppendPositionConditionNotMet)
	_, err = s.AppendBlock(ctx, AppendBlockInput{Ref: aref, MaxSize: &three, Body: strings.NewReader("def"), Length: 3})
	wantCode(t, err, 412, azerr.MaxBlobSizeConditionNotMet)
	a2, err := s.AppendBlock(ctx, AppendBlockInput{Ref: aref, AppendPosition: &three, Body: strings.NewReader("def"), Length: -1})
	if err != nil || a2.AppendOffset != 3 || a2.CommittedBlockCount != 2 {
		t.Fatalf("append: %+v %v", a2, err)
	}
	if sealed, err := s.SealBlob(ctx, SealBlobInput{Ref: aref}); err != nil || !sealed.Sealed {
		t.Fatalf("seal: %+v %v", sealed, err)
	}
	_, err = s.AppendBlock(ctx, AppendBlockInput{Ref: aref, Body: strings.NewReader("g"), Length: 1})
	wantCode(t, err, 409, azerr.BlobIsSealed)
	if _, got := readBlob(t, s, GetBlobInput{Ref: aref}); got != "abcdef" {
		t.Fatalf("append blob content %q", got)
	}
}

func TestDomainCallTime(t *testing.T) {
	ctx := context.Background()
	s, _, c := domainEnv(t)
	ref := blobAt(c, "timed")
	at := s.clock.Now().Add(-time.Hour).Truncate(time.Second)
	out, err := s.PutBlob(ctx, PutBlobInput{Call: Call{Now: at}, Ref: ref, Type: AppendBlob})
	if err != nil || !out.LastModified.Equal(at) {
		t.Fatalf("put at %v: %+v %v", at, out, err)
	}
	// Without a time, the service's clock.
	md, err := s.SetBlobMetadata(ctx, SetBlobMetadataInput{Ref: ref})
	if err != nil || !md.LastModified.Equal(s.clock.Now()) {
		t.Fatalf("metadata: %+v %v, clock %v", md, err, s.clock.Now())
	}
}

func TestDomainCopyBlob(t *testing.T) {
	ctx := context.Background()
	s, _, c := domainEnv(t)
	src := blobAt(c, "src")
	put := putBlock(t, s, src, "copied bytes", Access{})
	if _, err := s.SetBlobMetadata(ctx, SetBlobMetadataInput{Ref: src, Metadata: map[string]string{"from": "src"}}); err != nil {
		t.Fatal(err)
	}
	dst := blobAt(c, "dst")
	_, err := s.CopyBlob(ctx, CopyBlobInput{Ref: dst, Source: CopySource{Blob: src, Cond: cond.Conditions{IfMatch: []string{put.ETag}}}})
	wantCode(t, err, 412, azerr.SourceConditionNotMet) // the metadata changed the ETag
	wrong := md5.Sum([]byte("other"))
	_, err = s.CopyBlob(ctx, CopyBlobInput{Ref: dst, Sync: true, Source: CopySource{Blob: src}, SourceContentMD5: wrong[:]})
	wantCode(t, err, 400, azerr.MD5Mismatch)
	right := md5.Sum([]byte("copied bytes"))
	out, err := s.CopyBlob(ctx, CopyBlobInput{Ref: dst, Sync: true, Source: CopySource{Blob: src, URL: "http://127.0.0.1:10000/acct/cnt/src"}, SourceContentMD5: right[:],
		Metadata: map[string]string{"to": "dst"}, Tier: "cool"})
	if err != nil || out.CopyStatus != "success" || out.CopyID == "" || !bytes.Equal(out.ContentMD5, right[:]) {
		t.Fatalf("copy: %+v %v", out, err)
	}
	p, err := s.GetBlobProperties(ctx, GetBlobPropertiesInput{Ref: dst})
	if err != nil || p.Metadata["to"] != "dst" || p.Metadata["from"] != "" || p.AccessTier != "Cool" || p.Copy == nil ||
		p.Copy.ID != out.CopyID || p.Copy.Source != "http://127.0.0.1:10000/acct/cnt/src" || p.Copy.Progress != "12/12" {
		t.Fatalf("copy's properties: %+v %v", p, err)
	}
	if _, got := readBlob(t, s, GetBlobInput{Ref: dst}); got != "copied bytes" {
		t.Fatalf("copy's content %q", got)
	}
	_, err = s.CopyBlob(ctx, CopyBlobInput{Ref: dst, Source: CopySource{Blob: blobAt(c, "missing")}})
	wantCode(t, err, 404, azerr.CannotVerifyCopySource)
	// The copy completed: nothing to abort.
	err = s.AbortCopyBlob(ctx, AbortCopyBlobInput{Ref: dst, CopyID: out.CopyID})
	wantCode(t, err, 409, azerr.NoPendingCopyOperation)
	// Without soft delete, a deleted blob cannot be restored.
	if _, err := s.DeleteBlob(ctx, DeleteBlobInput{Ref: dst}); err != nil {
		t.Fatal(err)
	}
	err = s.UndeleteBlob(ctx, UndeleteBlobInput{Ref: dst})
	wantCode(t, err, 404, azerr.BlobNotFound)
	if err := s.UndeleteBlob(ctx, UndeleteBlobInput{Ref: src}); err != nil {
		t.Fatalf("undelete of a live blob: %v", err)
	}
}

func TestDomainContainerOperations(t *testing.T) {
	ctx := context.Background()
	s, advance, c := domainEnv(t)
	_, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c})
	wantCode(t, err, 409, azerr.ContainerAlreadyExists)
	d := 15
	l, err := s.LeaseContainer(ctx, LeaseContainerInput{Ref: c, Request: lease.Request{Action: lease.ActionAcquire, Duration: &d}})
	if err != nil || l.Result.LeaseID == "" {
		t.Fatalf("acquire: %+v %v", l, err)
	}
	err = s.DeleteContainer(ctx, DeleteContainerInput{Ref: c})
	wantCode(t, err, 412, azerr.LeaseIDMissing)
	md, err := s.SetContainerMetadata(ctx, SetContainerMetadataInput{Ref: c, Metadata: map[string]string{"a": "b"}})
	if err != nil || md.ETag == l.ETag {
		t.Fatalf("metadata: %+v %v", md, err)
	}
	policies := []SignedID{{ID: "p1", Permission: "r"}}
	if _, err := s.SetContainerACL(ctx, SetContainerACLInput{Ref: c, LeaseID: l.Result.LeaseID, PublicAccess: "blob", Policies: policies}); err != nil {
		t.Fatal(err)
	}
	acl, err := s.GetContainerACL(ctx, GetContainerACLInput{Ref: c})
	if err != nil || acl.PublicAccess != "blob" || len(acl.Policies) != 1 || acl.Policies[0].ID != "p1" {
		t.Fatalf("acl: %+v %v", acl, err)
	}
	p, err := s.GetContainerProperties(ctx, GetContainerPropertiesInput{Ref: c})
	if err != nil || p.Metadata["a"] != "b" || p.Lease.State != lease.StateLeased || p.PublicAccess != "blob" {
		t.Fatalf("properties: %+v %v", p, err)
	}
	// The lease lapses on the injected clock; the container can go.
	advance(16 * time.Second)
	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetContainerACL(ctx, GetContainerACLInput{Ref: c})
	wantCode(t, err, 404, azerr.ContainerNotFound)
}

func TestDomainFromURL(t *testing.T) {
	ctx := context.Background()
	s, _, c := domainEnv(t)
	src := blobAt(c, "source")
	putBlock(t, s, src, "0123456789", Access{})
	whole := md5.Sum([]byte("0123456789"))
	out, err := s.PutBlobFromURL(ctx, PutBlobFromURLInput{Ref: blobAt(c, "copy"), Source: FromURLSource{Blob: src, Checksums: Checksums{MD5: whole[:]}}, CopyProperties: true})
	if err != nil || !bytes.Equal(out.ContentMD5, whole[:]) || !out.ServerEncrypted {
		t.Fatalf("put blob from url: %+v %v", out, err)
	}
	if p, err := s.GetBlobProperties(ctx, GetBlobPropertiesInput{Ref: blobAt(c, "copy")}); err != nil || p.HTTPHeaders.ContentType != "text/plain" {
		t.Fatalf("copied properties: %+v %v", p, err)
	}
	dst := blobAt(c, "assembled")
	id := base64.StdEncoding.EncodeToString([]byte("b1"))
	wrong := md5.Sum([]byte("x"))
	_, err = s.PutBlockFromURL(ctx, PutBlockFromURLInput{Ref: dst, BlockID: id, Source: FromURLSource{Blob: src, Range: &wire.Range{Start: 2, End: 5}, Checksums: Checksums{MD5: wrong[:]}}})
	wantCode(t, err, 400, azerr.MD5Mismatch)
	if _, err := s.PutBlockFromURL(ctx, PutBlockFromURLInput{Ref: dst, BlockID: id, Source: FromURLSource{Blob: src, Range: &wire.Range{Start: 2, End: 5}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutBlockList(ctx, PutBlockListInput{Ref: dst, Blocks: []wire.BlockRef{{ID: id, Kind: wire.Latest}}}); err != nil {
		t.Fatal(err)
	}
	if _, got := readBlob(t, s, GetBlobInput{Ref: dst}); got != "2345" {
		t.Fatalf("block from url: %q", got)
	}
	app := blobAt(c, "app")
	if _, err := s.PutBlob(ctx, PutBlobInput{Ref: app, Type: AppendBlob}); err != nil {
		t.Fatal(err)
	}
	a, err := s.AppendBlockFromURL(ctx, AppendBlockFromURLInput{Ref: app, Source: FromURLSource{Blob: src, Range: &wire.Range{Start: 0, End: 2}}})
	if err != nil || a.AppendOffset != 0 || a.CommittedBlockCount != 1 {
		t.Fatalf("append from url: %+v %v", a, err)
	}
	_, err = s.AppendBlockFromURL(ctx, AppendBlockFromURLInput{Ref: app, Source: FromURLSource{Blob: blobAt(c, "gone")}})
	wantCode(t, err, 404, azerr.CannotVerifyCopySource)
}

func TestDomainListContainersAndFindByTags(t *testing.T) {
	ctx := context.Background()
	s, _, c := domainEnv(t)
	for _, name := range []string{"cnt2", "other"} {
		if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: ContainerRef{Account: c.Account, Container: name}, Metadata: map[string]string{"n": name}}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := s.ListContainers(ctx, ListContainersInput{Account: c.Account, Prefix: "cnt", MaxResults: 1})
	if err != nil || len(page.Items) != 1 || page.Items[0].Name != "cnt" || page.NextMarker != "cnt2" {
		t.Fatalf("first page: %+v %v", page, err)
	}
	page, err = s.ListContainers(ctx, ListContainersInput{Account: c.Account, Prefix: "cnt", Marker: page.NextMarker, MaxResults: 1})
	if err != nil || len(page.Items) != 1 || page.Items[0].Properties.Metadata["n"] != "cnt2" || page.NextMarker != "" {
		t.Fatalf("second page: %+v %v", page, err)
	}
	for i, name := range []string{"a", "b", "c"} {
		tags := blobtags.Tags{"team": "x"}
		if i == 1 {
			tags["team"] = "y"
		}
		if _, err := s.PutBlob(ctx, PutBlobInput{Ref: blobAt(c, name), Type: AppendBlob, NewBlob: NewBlob{Tags: tags}}); err != nil {
			t.Fatal(err)
		}
	}
	where, err := blobtags.ParseWhere(`"team" = 'x'`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	marker := ""
	for i := 0; i < 4; i++ {
		out, err := s.FindBlobsByTags(ctx, FindBlobsByTagsInput{Account: c.Account, Where: where, Marker: marker, MaxResults: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range out.Items {
			names = append(names, b.Container+"/"+b.Name+"="+b.Tags["team"])
		}
		if marker = out.NextMarker; marker == "" {
			break
		}
	}
	if strings.Join(names, ",") != "cnt/a=x,cnt/c=x" {
		t.Fatalf("found %v", names)
	}
	_, err = s.FindBlobsByTags(ctx, FindBlobsByTagsInput{Account: c.Account, Where: where, Marker: "!", MaxResults: 1})
	wantCode(t, err, 400, azerr.InvalidQueryParameterValue)
}

// A caller without a body writes no content; a body shorter than its
// length is refused and leaves nothing.
func TestDomainNoBody(t *testing.T) {
	ctx := context.Background()
	s, _, c := domainEnv(t)
	ref := blobAt(c, "empty")
	if _, err := s.PutBlob(ctx, PutBlobInput{Ref: ref, Type: BlockBlob}); err != nil {
		t.Fatal(err)
	}
	if p, err := s.GetBlobProperties(ctx, GetBlobPropertiesInput{Ref: ref}); err != nil || p.Size != 0 {
		t.Fatalf("empty blob: %+v %v", p, err)
	}
	_, err := s.PutBlob(ctx, PutBlobInput{Ref: blobAt(c, "short"), Type: BlockBlob, Length: 10})
	if _, ok := azerr.As(err); !ok {
		t.Fatalf("a missing body of 10 bytes: %v", err)
	}
	_, err = s.PutBlob(ctx, PutBlobInput{Ref: blobAt(c, "short"), Type: BlockBlob, Body: strings.NewReader("abc"), Length: 10})
	if _, ok := azerr.As(err); !ok {
		t.Fatalf("a body of 3 bytes for 10: %v", err)
	}
	_, err = s.GetBlob(ctx, GetBlobInput{Ref: blobAt(c, "short")})
	wantCode(t, err, 404, azerr.BlobNotFound)
	_, err = s.PutBlock(ctx, PutBlockInput{Ref: ref, BlockID: base64.StdEncoding.EncodeToString([]byte("x"))})
	wantCode(t, err, 400, azerr.InvalidHeaderValue)
}
