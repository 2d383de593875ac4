package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/eventgrid/azsystemevents"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/events"
)

// dfsWant is one Data Lake operation and what its event must say.
type dfsWant struct {
	typ, api, path, requestID, etag string
	// src is a rename's source path; recursive a directory delete's
	// data.recursive; length and offset a BlobCreated's.
	src            string
	recursive      string
	length, offset int64
	// blobAPI: a Blob API write, whose event has the Blob endpoint's URL.
	blobAPI bool
}

// TestEventsDataLake: on a hierarchical account the Data Lake
// operations raise Event Grid's Data Lake events (DirectoryCreated,
// BlobCreated for CreateFile and FlushWithClose, BlobRenamed,
// DirectoryRenamed, BlobDeleted, DirectoryDeleted with recursive), each
// once, in commit order, with the dfs endpoint's URLs, and each decodes
// into the type azure-sdk-for-go's azsystemevents gives its event type.
// A flush without close raises none. Blob API writes on the account
// raise blob events with the Blob endpoint's URL. They stay out of the
// change feed, which a hierarchical account does not have.
func TestEventsDataLake(t *testing.T) {
	r := newReceiver(t)
	cfg := backendConfig(t)
	cfg.HierarchicalNamespace, cfg.ChangeFeed, cfg.DFSPort = true, true, 0
	a, _ := evStart(t, &cfg, webhookSub("datalake", r.srv.URL))
	ctx := context.Background()
	cred, err := azdatalake.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	svc, err := service.NewClientWithSharedKeyCredential(a.DFSURL, cred, &service.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1},
		// Each request names itself to the events (data.clientRequestId),
		// set before the request is signed.
		PerCallPolicies: []policy.Policy{clientRequestID("dl-events-test")}}})
	must(t, err)
	fs := svc.NewFileSystemClient("evfs")
	_, err = fs.Create(ctx, nil)
	must(t, err)

	var want []dfsWant
	etag := func(e *azcore.ETag) string { return strings.Trim(string(*e), `"`) }
	dir := fs.NewDirectoryClient("dir")
	dc, err := dir.Create(ctx, nil)
	must(t, err)
	want = append(want, dfsWant{typ: azsystemevents.TypeStorageDirectoryCreated, api: "CreateDirectory", path: "dir", requestID: *dc.RequestID, etag: etag(dc.ETag)})
	f := fs.NewFileClient("dir/f.txt")
	fc, err := f.Create(ctx, nil)
	must(t, err)
	want = append(want, dfsWant{typ: azsystemevents.TypeStorageBlobCreated, api: "CreateFile", path: "dir/f.txt", requestID: *fc.RequestID, etag: etag(fc.ETag)})
	body := []byte("hello, lake")
	_, err = f.AppendData(ctx, 0, streaming.NopCloser(bytes.NewReader(body[:5])), nil)
	must(t, err)
	// A flush without close is an intermediate one: no event.
	_, err = f.FlushData(ctx, 5, nil)
	must(t, err)
	_, err = f.AppendData(ctx, 5, streaming.NopCloser(bytes.NewReader(body[5:])), nil)
	must(t, err)
	fl, err := f.FlushData(ctx, int64(len(body)), &file.FlushDataOptions{Close: to.Ptr(true)})
	must(t, err)
	want = append(want, dfsWant{typ: azsystemevents.TypeStorageBlobCreated, api: "FlushWithClose", path: "dir/f.txt", requestID: *fl.RequestID, etag: etag(fl.ETag), length: int64(len(body)), offset: 5})
	rf, err := f.Rename(ctx, "dir/g.txt", nil)
	must(t, err)
	want = append(want, dfsWant{typ: azsystemevents.TypeStorageBlobRenamed, api: "RenameFile", path: "dir/g.txt", src: "dir/f.txt", requestID: *rf.RequestID})
	rd, err := dir.Rename(ctx, "dir2", nil)
	must(t, err)
	want = append(want, dfsWant{typ: azsystemevents.TypeStorageDirectoryRenamed, api: "RenameDirectory", path: "dir2", src: "dir", requestID: *rd.RequestID})
	df, err := fs.NewFileClient("dir2/g.txt").Delete(ctx, nil)
	must(t, err)
	want = append(want, dfsWant{typ: azsystemevents.TypeStorageBlobDeleted, api: "DeleteFile", path: "dir2/g.txt", requestID: *df.RequestID})
	sub := fs.NewDirectoryClient("dir2/sub")
	sc, err := sub.Create(ctx, nil)
	must(t, err)
	want = append(want, dfsWant{typ: azsystemevents.TypeStorageDirectoryCreated, api: "CreateDirectory", path: "dir2/sub", requestID: *sc.RequestID, etag: etag(sc.ETag)})
	dd, err := fs.NewDirectoryClient("dir2").Delete(ctx, &directory.DeleteOptions{})
	must(t, err)
	want = append(want, dfsWant{typ: azsystemevents.TypeStorageDirectoryDeleted, api: "DeleteDirectory", path: "dir2", recursive: "true", requestID: *dd.RequestID})
	// The Blob API on the same account: blob events, Blob endpoint URLs.
	bcred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	bopts := clientOptions()
	bopts.PerCallPolicies = []policy.Policy{clientRequestID("dl-events-test")}
	bc, err := azblob.NewClientWithSharedKeyCredential(a.BlobURL, bcred, bopts)
	must(t, err)
	pb, err := bc.UploadBuffer(ctx, "evfs", "b/blob.txt", []byte("via blob"), nil)
	must(t, err)
	want = append(want, dfsWant{typ: azsystemevents.TypeStorageBlobCreated, api: "PutBlob", path: "b/blob.txt", requestID: *pb.RequestID, etag: etag(pb.ETag), length: 8, blobAPI: true})
	cp, err := bc.ServiceClient().NewContainerClient("evfs").NewBlobClient("b/copy.txt").StartCopyFromURL(ctx, a.BlobURL+"/evfs/b/blob.txt", nil)
	must(t, err)
	want = append(want, dfsWant{typ: azsystemevents.TypeStorageBlobCreated, api: "CopyBlob", path: "b/copy.txt", requestID: *cp.RequestID, etag: etag(cp.ETag), length: 8, blobAPI: true})
	db, err := bc.DeleteBlob(ctx, "evfs", "b/blob.txt", nil)
	must(t, err)
	want = append(want, dfsWant{typ: azsystemevents.TypeStorageBlobDeleted, api: "DeleteBlob", path: "b/blob.txt", requestID: *db.RequestID, blobAPI: true})

	got := r.wait(t, len(want))
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d: %+v", len(got), len(want), got)
	}
	r.mu.Lock()
	raws := append([]json.RawMessage(nil), r.raw...)
	r.mu.Unlock()
	base := a.DFSURL + "/evfs/"
	prevSeq := ""
	for i, w := range want {
		base := base
		if w.blobAPI {
			base = a.BlobURL + "/evfs/"
		}
		var ev azsystemevents.EventGridEvent
		must(t, json.Unmarshal(raws[i], &ev))
		if *ev.EventType != w.typ || *ev.Subject != "/blobServices/default/containers/evfs/blobs/"+w.path || *ev.Topic != events.TopicPrefix+app.DevAccount || *ev.MetadataVersion != "1" || ev.ID == nil || ev.EventTime == nil {
			t.Errorf("event %d: %s %s topic %s, want %s %s", i, *ev.EventType, *ev.Subject, *ev.Topic, w.typ, w.path)
			continue
		}
		data := ev.Data.([]byte)
		// check checks the fields every Data Lake event has.
		check := func(api, client, req, seq *string, diag map[string]any) {
			t.Helper()
			if api == nil || *api != w.api || req == nil || *req != w.requestID || deref(client) != "dl-events-test" || seq == nil || *seq <= prevSeq || diag["batchId"] == nil {
				t.Errorf("event %d (%s): api %v request %v client %v sequencer %v diagnostics %v, want %s %s after %q", i, w.typ, deref(api), deref(req), deref(client), deref(seq), diag, w.api, w.requestID, prevSeq)
			}
			if seq != nil {
				prevSeq = *seq
			}
		}
		switch w.typ {
		case azsystemevents.TypeStorageDirectoryCreated:
			var d azsystemevents.StorageDirectoryCreatedEventData
			must(t, json.Unmarshal(data, &d))
			check(d.API, d.ClientRequestID, d.RequestID, d.Sequencer, d.StorageDiagnostics)
			if deref(d.URL) != base+w.path || deref(d.ETag) != w.etag {
				t.Errorf("event %d: url %q eTag %q, want %q %q", i, deref(d.URL), deref(d.ETag), base+w.path, w.etag)
			}
		case azsystemevents.TypeStorageBlobCreated:
			var d azsystemevents.StorageBlobCreatedEventData
			must(t, json.Unmarshal(data, &d))
			check(d.API, d.ClientRequestID, d.RequestID, d.Sequencer, d.StorageDiagnostics)
			if deref(d.URL) != base+w.path || deref(d.ETag) != w.etag || d.ContentLength == nil || *d.ContentLength != w.length ||
				(d.ContentOffset == nil) != w.blobAPI || (!w.blobAPI && *d.ContentOffset != w.offset) || deref(d.BlobType) != "BlockBlob" || d.ContentType == nil {
				t.Errorf("event %d: url %q eTag %q length %v offset %v blobType %q contentType %v, want %q %q %d %d BlockBlob",
					i, deref(d.URL), deref(d.ETag), d.ContentLength, d.ContentOffset, deref(d.BlobType), d.ContentType, base+w.path, w.etag, w.length, w.offset)
			}
		case azsystemevents.TypeStorageBlobRenamed:
			var d azsystemevents.StorageBlobRenamedEventData
			must(t, json.Unmarshal(data, &d))
			check(d.API, d.ClientRequestID, d.RequestID, d.Sequencer, d.StorageDiagnostics)
			if deref(d.SourceURL) != base+w.src || deref(d.DestinationURL) != base+w.path {
				t.Errorf("event %d: sourceUrl %q destinationUrl %q, want %q %q", i, deref(d.SourceURL), deref(d.DestinationURL), base+w.src, base+w.path)
			}
		case azsystemevents.TypeStorageDirectoryRenamed:
			var d azsystemevents.StorageDirectoryRenamedEventData
			must(t, json.Unmarshal(data, &d))
			check(d.API, d.ClientRequestID, d.RequestID, d.Sequencer, d.StorageDiagnostics)
			if deref(d.SourceURL) != base+w.src || deref(d.DestinationURL) != base+w.path {
				t.Errorf("event %d: sourceUrl %q destinationUrl %q, want %q %q", i, deref(d.SourceURL), deref(d.DestinationURL), base+w.src, base+w.path)
			}
		case azsystemevents.TypeStorageBlobDeleted:
			var d azsystemevents.StorageBlobDeletedEventData
			must(t, json.Unmarshal(data, &d))
			check(d.API, d.ClientRequestID, d.RequestID, d.Sequencer, d.StorageDiagnostics)
			if deref(d.URL) != base+w.path || deref(d.BlobType) != "BlockBlob" {
				t.Errorf("event %d: url %q blobType %q, want %q BlockBlob", i, deref(d.URL), deref(d.BlobType), base+w.path)
			}
		case azsystemevents.TypeStorageDirectoryDeleted:
			var d azsystemevents.StorageDirectoryDeletedEventData
			must(t, json.Unmarshal(data, &d))
			check(d.API, d.ClientRequestID, d.RequestID, d.Sequencer, d.StorageDiagnostics)
			if deref(d.URL) != base+w.path || deref(d.Recursive) != w.recursive {
				t.Errorf("event %d: url %q recursive %v, want %q %q", i, deref(d.URL), d.Recursive, base+w.path, w.recursive)
			}
		}
	}
	// The records are in the account's log, but a hierarchical account
	// has no change feed: $blobchangefeed is not served.
	st := evStatus(t, a)
	if len(st) != 1 || st[0].LogLast != uint64(len(want)) || st[0].Position != st[0].LogLast {
		t.Errorf("status %+v: want %d records in the log, all delivered", st, len(want))
	}
	pager := bc.NewListBlobsFlatPager("$blobchangefeed", nil)
	if _, err := pager.NextPage(ctx); err == nil {
		t.Errorf("listing $blobchangefeed of a hierarchical account succeeded")
	}
}

// clientRequestID is a pipeline policy sending x-ms-client-request-id.
type clientRequestID string

func (c clientRequestID) Do(req *policy.Request) (*http.Response, error) {
	req.Raw().Header.Set("x-ms-client-request-id", string(c))
	return req.Next()
}

// deref is *p, "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
