package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/avro"
)

// startFeed starts a server with the change feed on for every account.
func startFeed(t *testing.T) *env {
	t.Helper()
	cfg := backendConfig(t)
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort = 0, -1, -1, -1
	cfg.GCEvery = time.Hour
	cfg.ChangeFeed = true
	a, err := app.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	return &env{t: t, app: a, c: client(t, a.BlobURL, app.DevKey), ctx: context.Background()}
}

// download reads a whole blob of $blobchangefeed.
func (e *env) feedBlob(name string) []byte {
	e.t.Helper()
	r, err := e.c.DownloadStream(e.ctx, "$blobchangefeed", name, nil)
	if err != nil {
		e.t.Fatalf("download %s: %v", name, err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// readFeed reads the change feed the way the change feed client
// libraries do: the container must exist, meta/segments.json gives
// lastConsumable, the years are the BlobPrefixes under idx/segments/,
// each segment's meta.json names its shards, a shard's chunks are the
// blobs under its path, and each chunk is an Avro file of events.
func (e *env) readFeed() []map[string]any {
	e.t.Helper()
	cc := e.c.ServiceClient().NewContainerClient("$blobchangefeed")
	if _, err := cc.GetProperties(e.ctx, nil); err != nil {
		e.t.Fatalf("the change feed container: %v", err)
	}
	var manifest struct {
		LastConsumable string `json:"lastConsumable"`
	}
	must(e.t, json.Unmarshal(e.feedBlob("meta/segments.json"), &manifest))
	last, err := time.Parse(time.RFC3339Nano, manifest.LastConsumable)
	must(e.t, err)
	var years []string
	pager := cc.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{Prefix: to.Ptr("idx/segments/")})
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		must(e.t, err)
		for _, p := range page.Segment.BlobPrefixes {
			years = append(years, *p.Name)
		}
	}
	var events []map[string]any
	for _, y := range years {
		flat := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr(y), MaxResults: to.Ptr(int32(1))})
		for flat.More() {
			page, err := flat.NextPage(e.ctx)
			must(e.t, err)
			for _, item := range page.Segment.BlobItems {
				parts := strings.Split(*item.Name, "/")
				segStart, err := time.Parse("2006/01/02/1504", strings.Join(parts[2:6], "/"))
				must(e.t, err)
				if !segStart.Before(last) {
					e.t.Fatalf("segment %s not before lastConsumable %s", *item.Name, last)
				}
				var seg struct {
					Status         string   `json:"status"`
					ChunkFilePaths []string `json:"chunkFilePaths"`
				}
				must(e.t, json.Unmarshal(e.feedBlob(*item.Name), &seg))
				for _, shard := range seg.ChunkFilePaths {
					chunks := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr(strings.TrimPrefix(shard, "$blobchangefeed/"))})
					for chunks.More() {
						cp, err := chunks.NextPage(e.ctx)
						must(e.t, err)
						for _, chunk := range cp.Segment.BlobItems {
							data := e.feedBlob(*chunk.Name)
							if int64(len(data)) != *chunk.Properties.ContentLength {
								e.t.Fatalf("%s: listed %d bytes, read %d", *chunk.Name, *chunk.Properties.ContentLength, len(data))
							}
							f, err := avro.ReadFile(data)
							if err != nil {
								e.t.Fatalf("%s: %v", *chunk.Name, err)
							}
							for _, o := range f.Objects {
								events = append(events, o.(map[string]any))
							}
						}
					}
				}
			}
		}
	}
	return events
}

// TestChangeFeedServed: with --blob-change-feed, a workload of creates,
// overwrites, metadata and property sets, a snapshot, a tier change, a
// copy, a refused write and a delete, done through the Go SDK, reads back
// from $blobchangefeed — found and read as the change feed client
// libraries find and read it — as exactly one event per committed
// change, in order, with the SDK's request ids and the blobs' ETags; the
// refused write is absent; a range read of a chunk returns the same bytes;
// and the container refuses writes (403 InsufficientAccountPermissions).
func TestChangeFeedServed(t *testing.T) {
	e := startFeed(t)
	must(t, func() error { _, err := e.c.CreateContainer(e.ctx, "cfc", nil); return err }())
	cc := e.c.ServiceClient().NewContainerClient("cfc")
	a := cc.NewBlockBlobClient("dir/a.txt")
	up, err := a.UploadBuffer(e.ctx, []byte("hello"), &blockblob.UploadBufferOptions{HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/plain")}})
	must(t, err)
	_, err = a.Upload(e.ctx, nopCloser("refused"), &blockblob.UploadOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: to.Ptr(*up.ETag + "x")}}})
	wantCode(t, err, 412, bloberror.ConditionNotMet)
	_, err = a.UploadBuffer(e.ctx, []byte("hello again"), nil)
	must(t, err)
	_, err = a.SetMetadata(e.ctx, map[string]*string{"k": to.Ptr("v")}, nil)
	must(t, err)
	_, err = a.SetHTTPHeaders(e.ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("text/html")}, nil)
	must(t, err)
	_, err = a.CreateSnapshot(e.ctx, nil)
	must(t, err)
	_, err = a.SetTier(e.ctx, blob.AccessTierCool, nil)
	must(t, err)
	_, err = cc.NewBlobClient("copy").StartCopyFromURL(e.ctx, a.URL(), nil)
	must(t, err)
	del, err := cc.NewBlobClient("copy").Delete(e.ctx, nil)
	must(t, err)

	events := e.readFeed()
	want := []struct{ typ, api, subject string }{
		{"BlobCreated", "PutBlob", "dir/a.txt"},
		{"BlobCreated", "PutBlob", "dir/a.txt"},
		{"BlobPropertiesUpdated", "SetBlobMetadata", "dir/a.txt"},
		{"BlobPropertiesUpdated", "SetBlobProperties", "dir/a.txt"},
		{"BlobSnapshotCreated", "SnapshotBlob", "dir/a.txt"},
		{"BlobTierChanged", "SetBlobTier", "dir/a.txt"},
		{"BlobCreated", "CopyBlob", "copy"},
		{"BlobDeleted", "DeleteBlob", "copy"},
	}
	if len(events) != len(want) {
		for _, ev := range events {
			t.Logf("%v %v", ev["eventType"], ev["subject"])
		}
		t.Fatalf("%d events, want %d", len(events), len(want))
	}
	prevSeq := ""
	for i, w := range want {
		ev := events[i]
		data := ev["data"].(map[string]any)
		if ev["eventType"] != w.typ || data["api"] != w.api || ev["subject"] != "/blobServices/default/containers/cfc/blobs/"+w.subject {
			t.Fatalf("event %d: %v %v %v, want %+v", i, ev["eventType"], data["api"], ev["subject"], w)
		}
		seq := data["sequencer"].(string)
		if seq <= prevSeq {
			t.Fatalf("event %d: sequencer %s not after %s", i, seq, prevSeq)
		}
		prevSeq = seq
		if _, err := time.Parse(time.RFC3339Nano, ev["eventTime"].(string)); err != nil {
			t.Fatalf("event %d: eventTime %v", i, ev["eventTime"])
		}
	}
	first := events[0]["data"].(map[string]any)
	if first["etag"] != strings.Trim(string(*up.ETag), `"`) || first["requestId"] != *up.RequestID || first["contentLength"] != int64(5) ||
		first["contentType"] != "text/plain" || first["blobType"] != "BlockBlob" {
		t.Fatalf("first event's data: %v", first)
	}
	if d := events[7]["data"].(map[string]any); d["requestId"] != *del.RequestID {
		t.Fatalf("delete's request id %v, want %s", d["requestId"], *del.RequestID)
	}
	if d := events[5]["data"].(map[string]any); d["blobTier"] != "Cool" || d["previousInfo"].(map[string]any)["PreviousTier"] != "Hot" {
		t.Fatalf("tier event's data: %v", d)
	}

	// A range of a chunk, as a reader resuming at a block offset reads.
	hour := time.Now().UTC()
	var chunkName string
	pager := e.c.NewListBlobsFlatPager("$blobchangefeed", &azblob.ListBlobsFlatOptions{Prefix: to.Ptr("log/00/")})
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		must(t, err)
		for _, it := range page.Segment.BlobItems {
			chunkName = *it.Name
		}
	}
	if !strings.HasSuffix(chunkName, "/00000.avro") || !strings.Contains(chunkName, hour.Format("2006/01/02/")) && !strings.Contains(chunkName, hour.Add(-time.Hour).Format("2006/01/02/")) {
		t.Fatalf("chunk %q", chunkName)
	}
	whole := e.feedBlob(chunkName)
	r, err := e.c.ServiceClient().NewContainerClient("$blobchangefeed").NewBlobClient(chunkName).DownloadStream(e.ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 10, Count: 20}})
	must(t, err)
	part, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if string(part) != string(whole[10:30]) {
		t.Fatal("a range of the chunk differs from the whole")
	}

	// Read-only.
	_, err = e.c.UploadBuffer(e.ctx, "$blobchangefeed", "meta/segments.json", []byte("{}"), nil)
	wantCode(t, err, http.StatusForbidden, bloberror.InsufficientAccountPermissions)
	_, err = e.c.DeleteBlob(e.ctx, "$blobchangefeed", chunkName, nil)
	wantCode(t, err, http.StatusForbidden, bloberror.InsufficientAccountPermissions)
	if again := e.readFeed(); len(again) != len(events) {
		t.Fatalf("after refused writes: %d events", len(again))
	}
}

// TestChangeFeedOff: without --blob-change-feed there is no $blobchangefeed
// container, as on an account with the feed disabled.
func TestChangeFeedOff(t *testing.T) {
	e := start(t)
	e.container("cfc")
	_, err := e.c.UploadBuffer(e.ctx, "cfc", "x", []byte("x"), nil)
	must(t, err)
	_, err = e.c.ServiceClient().NewContainerClient("$blobchangefeed").GetProperties(e.ctx, nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
}
