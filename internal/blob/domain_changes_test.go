package blob

import (
	"context"
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/changelog"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// changes reads account's whole change log.
func changes(t *testing.T, s *Service, account string) []changelog.Record {
	t.Helper()
	var out []changelog.Record
	if err := s.store.View(context.Background(), func(tx kv.Tx) (err error) {
		out, _, err = changelog.After(tx, account, 0, 1000)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestChangeFeedRecordsEachCommittedWrite runs every hooked write once
// (and some refused ones) on an account with the change feed on, and one
// write on an account with it off. It proves: each committed write
// appended exactly one record, in the order of the writes, with the
// event type, api, subject, ETag, length, type and request ids of the
// change; refused writes (a failed condition, a missing blob, a
// delete of snapshots only that leaves the blob) appended none; and the
// account with the feed off has no log.
func TestChangeFeedRecordsEachCommittedWrite(t *testing.T) {
	ctx := context.Background()
	s, _, c := domainEnv(t)
	s.SetChangeFeed(func(a string) bool { return a == "acct" })
	off := ContainerRef{Account: "off", Container: "cnt"}
	if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: off}); err != nil {
		t.Fatal(err)
	}
	putBlock(t, s, blobAt(off, "x"), "not recorded", Access{})

	call := Call{RequestID: "11111111-2222-3333-4444-555555555555", ClientRequestID: "client-1"}
	a := blobAt(c, "dir/a.txt")
	created, err := s.PutBlob(ctx, PutBlobInput{Call: call, Ref: a, Type: BlockBlob, Body: strings.NewReader("hello"), Length: 5,
		NewBlob: NewBlob{HTTPHeaders: HTTPHeaders{ContentType: "text/plain"}}})
	if err != nil {
		t.Fatal(err)
	}
	// Refused: If-Match on another ETag.
	_, err = s.PutBlob(ctx, PutBlobInput{Ref: a, Type: BlockBlob, Body: strings.NewReader("no"), Length: 2,
		Access: Access{Cond: cond.Conditions{IfMatch: []string{`"0x1"`}}}})
	wantCode(t, err, 412, azerr.ConditionNotMet)
	over := putBlock(t, s, a, "hello again", Access{}) // an overwrite
	if _, err := s.SetBlobMetadata(ctx, SetBlobMetadataInput{Ref: a, Metadata: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetBlobProperties(ctx, SetBlobPropertiesInput{Ref: a, HTTPHeaders: &HTTPHeaders{ContentType: "text/html"}}); err != nil {
		t.Fatal(err)
	}
	snap, err := s.SnapshotBlob(ctx, SnapshotBlobInput{Ref: a})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetBlobTier(ctx, SetBlobTierInput{Ref: a, Tier: "Cool"}); err != nil {
		t.Fatal(err)
	}
	b := blobAt(c, "b")
	id := base64.StdEncoding.EncodeToString([]byte("0001"))
	if _, err := s.PutBlock(ctx, PutBlockInput{Ref: b, BlockID: id, Body: strings.NewReader("blk"), Length: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutBlockList(ctx, PutBlockListInput{Ref: b, Blocks: []wire.BlockRef{{ID: id, Kind: wire.Latest}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CopyBlob(ctx, CopyBlobInput{Ref: blobAt(c, "copy"), Sync: true, Source: CopySource{Blob: a, URL: "http://127.0.0.1:10000/acct/cnt/dir/a.txt"}}); err != nil {
		t.Fatal(err)
	}
	// Refused: a delete of a missing blob; a delete of a blob with
	// snapshots without x-ms-delete-snapshots.
	_, err = s.DeleteBlob(ctx, DeleteBlobInput{Ref: blobAt(c, "missing")})
	wantCode(t, err, 404, azerr.BlobNotFound)
	_, err = s.DeleteBlob(ctx, DeleteBlobInput{Ref: a})
	wantCode(t, err, 409, azerr.SnapshotsPresent)
	// Committed but leaving the blob: not a blob deletion.
	if _, err := s.DeleteBlob(ctx, DeleteBlobInput{Ref: a, DeleteSnapshots: DeleteSnapshotsOnly}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteBlob(ctx, DeleteBlobInput{Call: call, Ref: a}); err != nil {
		t.Fatal(err)
	}

	got := changes(t, s, "acct")
	type want struct{ typ, api, blob string }
	wants := []want{
		{changelog.BlobCreated, "PutBlob", "dir/a.txt"},
		{changelog.BlobCreated, "PutBlob", "dir/a.txt"},
		{changelog.BlobPropertiesUpdated, "SetBlobMetadata", "dir/a.txt"},
		{changelog.BlobPropertiesUpdated, "SetBlobProperties", "dir/a.txt"},
		{changelog.BlobSnapshotCreated, "SnapshotBlob", "dir/a.txt"},
		{changelog.BlobTierChanged, "SetBlobTier", "dir/a.txt"},
		{changelog.BlobCreated, "PutBlockList", "b"},
		{changelog.BlobCreated, "CopyBlob", "copy"},
		{changelog.BlobDeleted, "DeleteBlob", "dir/a.txt"},
	}
	if len(got) != len(wants) {
		for _, r := range got {
			t.Logf("%d %s %s %s", r.Seq, r.EventType, r.Data.API, r.Subject)
		}
		t.Fatalf("%d records, want %d", len(got), len(wants))
	}
	for i, w := range wants {
		r := got[i]
		if r.Seq != uint64(i+1) || r.EventType != w.typ || r.Data.API != w.api || r.Subject != changelog.Subject("cnt", w.blob) {
			t.Fatalf("record %d: %d %s %s %s, want %+v", i, r.Seq, r.EventType, r.Data.API, r.Subject, w)
		}
	}
	first := got[0]
	if first.Data.ETag != strings.Trim(created.ETag, `"`) || first.Data.ContentLength != 5 || first.Data.ContentType != "text/plain" ||
		first.Data.BlobType != BlockBlob || first.Data.RequestID != call.RequestID || first.Data.ClientRequestID != "client-1" ||
		first.EventTime.IsZero() {
		t.Fatalf("first record: %+v", first)
	}
	if got[1].Data.ETag != strings.Trim(over.ETag, `"`) || got[1].Data.ContentLength != 11 {
		t.Fatalf("overwrite's record: %+v", got[1])
	}
	if got[2].Data.UpdatedBlobMetadata["k"] != "v" {
		t.Fatalf("metadata record: %+v", got[2].Data)
	}
	if pc := got[3].Data.UpdatedBlobProperties["ContentType"]; pc.Previous != "text/plain" || pc.Current != "text/html" {
		t.Fatalf("properties record: %+v", got[3].Data)
	}
	if got[4].Data.Snapshot != snap.Snapshot {
		t.Fatalf("snapshot record names %q, snapshot is %q", got[4].Data.Snapshot, snap.Snapshot)
	}
	if got[5].Data.BlobAccessTier != "Cool" || got[5].Data.PreviousInfo == nil || got[5].Data.PreviousInfo.PreviousTier != "Hot" {
		t.Fatalf("tier record: %+v", got[5].Data)
	}
	if got[7].Data.SourceURL != "http://127.0.0.1:10000/acct/cnt/dir/a.txt" {
		t.Fatalf("copy record: %+v", got[7].Data)
	}
	if got[8].Data.RequestID != call.RequestID || got[8].Data.ContentLength != 11 {
		t.Fatalf("delete record: %+v", got[8].Data)
	}
	if n := len(changes(t, s, "off")); n != 0 {
		t.Fatalf("the account with the feed off has %d records", n)
	}
}

// TestChangeFeedSoftDeleteAndUndelete: with soft delete on, a delete is
// still one BlobDeleted, and an Undelete Blob that makes the blob live
// again is one BlobCreated (api UndeleteBlob); an Undelete of a live
// blob, which restores nothing, records nothing.
func TestChangeFeedSoftDeleteAndUndelete(t *testing.T) {
	ctx := context.Background()
	s, _, c := domainEnv(t)
	s.SetChangeFeed(func(string) bool { return true })
	days := 1
	if _, err := s.Props().SetProperties(ctx, svcprops.SetPropertiesInput{Account: c.Account,
		Properties: svcprops.Properties{DeleteRetentionPolicy: &svcprops.Retention{Enabled: true, Days: &days}}}); err != nil {
		t.Fatal(err)
	}
	ref := blobAt(c, "soft")
	putBlock(t, s, ref, "data", Access{})
	if out, err := s.DeleteBlob(ctx, DeleteBlobInput{Ref: ref}); err != nil || !out.SoftDeleted {
		t.Fatalf("delete: %+v %v", out, err)
	}
	if err := s.UndeleteBlob(ctx, UndeleteBlobInput{Ref: ref}); err != nil {
		t.Fatal(err)
	}
	if err := s.UndeleteBlob(ctx, UndeleteBlobInput{Ref: ref}); err != nil {
		t.Fatal(err)
	}
	got := changes(t, s, c.Account)
	var seen []string
	for _, r := range got {
		seen = append(seen, r.EventType+" "+r.Data.API)
	}
	want := "BlobCreated PutBlob,BlobDeleted DeleteBlob,BlobCreated UndeleteBlob"
	if strings.Join(seen, ",") != want {
		t.Fatalf("records %v, want %s", seen, want)
	}
	if got[2].Data.ContentLength != 4 {
		t.Fatalf("undelete's record: %+v", got[2].Data)
	}
}

// TestChangeViewSkipsContent: changeView decodes a stored blob record
// like findBlob does, field for field, except its parts and block list
// (which a change record never reads); a missing blob is nil.
func TestChangeViewSkipsContent(t *testing.T) {
	s, _, c := domainEnv(t)
	ctx := context.Background()
	ref := blobAt(c, "b")
	body := strings.Repeat("x", 1024)
	if _, err := s.PutBlob(ctx, PutBlobInput{Ref: ref, Type: BlockBlob, Body: strings.NewReader(body), Length: int64(len(body)),
		NewBlob: NewBlob{HTTPHeaders: HTTPHeaders{ContentType: "text/plain"}, Metadata: map[string]string{"k": "v"}, Tier: "Cool"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.store.View(ctx, func(tx kv.Tx) error {
		full, err := findBlob(tx, ref.Account, ref.Container, ref.Blob, "")
		if err != nil {
			return err
		}
		view, err := changeView(tx, ref)
		if err != nil {
			return err
		}
		if len(full.Parts) == 0 || len(full.Parts[0].Data) != 1024 {
			t.Fatalf("the stored record has no inline data: %+v", full.Parts)
		}
		if view.Parts != nil || view.Blocks != nil {
			t.Fatalf("changeView decoded the content: %d parts, %d blocks", len(view.Parts), len(view.Blocks))
		}
		full.Parts, full.Blocks, full.raw = nil, nil, nil // raw: the bytes findBlob read, kept for putVersion
		if !reflect.DeepEqual(full, view) {
			t.Fatalf("changeView\n%+v\nfindBlob\n%+v", view, full)
		}
		missing, err := changeView(tx, blobAt(c, "none"))
		if err != nil || missing != nil {
			t.Fatalf("a missing blob: %v, %v", missing, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
