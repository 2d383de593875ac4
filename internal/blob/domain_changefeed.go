package blob

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/avro"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/changelog"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// The change feed container ($blobchangefeed) as Azure lays it out
// ("Change feed support in Azure Blob Storage": "Specifications",
// "Segments"), served read-only from the account's change log
// (internal/changelog) rather than stored: its files are derived from
// the log each time they are read, and the same log gives the same
// bytes, so a reader's cursor (a chunk path, a block offset and an
// event index, as the change feed client libraries keep it) stays valid
// as the log grows.
//
//	meta/segments.json                         the feed's manifest
//	idx/segments/YYYY/MM/DD/HH00/meta.json     one per hour with records
//	log/00/YYYY/MM/DD/HH00/00000.avro          the hour's records
//
// There is one shard (log/00) and one chunk file per hour: the log's
// order is one total order per account, and a single shard keeps it for
// readers, which merge shards round-robin. Each record is its own Avro
// block, so a chunk file only grows at its end. The hour being written
// is published at once (its segment's status is "Publishing" until the
// hour is over), not minutes later as on Azure: segments.json's
// lastConsumable is the end of the last hour with records.

const (
	feedManifest      = "meta/segments.json"
	feedSegmentsDir   = "idx/segments/"
	feedLogDir        = "log/00/"
	feedChunkName     = "00000.avro"
	feedSchemaVersion = 5
)

// feedSchema is the Avro schema of the chunk files' records: the change
// feed's event record (schema version 5 of the change feed's
// specification: the Event Grid blob event fields, with data's
// previousInfo, snapshot, blobPropertiesUpdated and asyncOperationInfo
// as the change feed client libraries read them).
const feedSchema = `{"type":"record","name":"BlobChangeEvent","namespace":"com.microsoft.azure.storage.blob","fields":[` +
	`{"name":"schemaVersion","type":"int"},` +
	`{"name":"topic","type":"string"},` +
	`{"name":"subject","type":"string"},` +
	`{"name":"eventType","type":"string"},` +
	`{"name":"eventTime","type":"string"},` +
	`{"name":"id","type":"string"},` +
	`{"name":"data","type":{"type":"record","name":"BlobChangeEventData","fields":[` +
	`{"name":"api","type":"string"},` +
	`{"name":"clientRequestId","type":"string"},` +
	`{"name":"requestId","type":"string"},` +
	`{"name":"etag","type":"string"},` +
	`{"name":"contentType","type":"string"},` +
	`{"name":"contentLength","type":"long"},` +
	`{"name":"blobType","type":"string"},` +
	`{"name":"blobVersion","type":["null","string"]},` +
	`{"name":"containerVersion","type":["null","string"]},` +
	`{"name":"blobTier","type":["null","string"]},` +
	`{"name":"url","type":"string"},` +
	`{"name":"sequencer","type":"string"},` +
	`{"name":"previousInfo","type":["null",{"type":"map","values":"string"}]},` +
	`{"name":"snapshot","type":["null","string"]},` +
	`{"name":"blobPropertiesUpdated","type":["null",{"type":"map","values":{"type":"record","name":"BlobPropertyChange","fields":[{"name":"previous","type":"string"},{"name":"current","type":"string"}]}}]},` +
	`{"name":"asyncOperationInfo","type":["null",{"type":"map","values":"string"}]},` +
	`{"name":"storageDiagnostics","type":{"type":"map","values":"string"}}]}},` +
	`{"name":"metadataVersion","type":"string"}]}`

// feedTime is how the feed's JSON files and records write times.
func feedTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.0000000Z") }

// hourPath is the YYYY/MM/DD/HH00 of an hour.
func hourPath(t time.Time) string { return t.UTC().Format("2006/01/02/1504") }

// feedFile is one file of the change feed container, named and dated
// before its content is built (build).
type feedFile struct {
	name     string
	modified time.Time
	seg      *changelog.Segment // nil for the manifest
	build    func() ([]byte, error)
}

// feedFiles are the change feed container's files for account, by name,
// from the log as tx sees it; nil when the log is empty.
func (s *Service) feedFiles(tx kv.Tx, account string) ([]feedFile, error) {
	segs, err := changelog.Segments(tx, account)
	if err != nil || len(segs) == 0 {
		return nil, err
	}
	lastRec, _, err := changelog.After(tx, account, segs[len(segs)-1].Last-1, 1)
	if err != nil {
		return nil, err
	}
	if len(lastRec) == 0 {
		return nil, fmt.Errorf("changelog of %q: last record missing", account)
	}
	latest := lastRec[0].EventTime
	out := make([]feedFile, 0, 1+2*len(segs))
	out = append(out, feedFile{name: feedManifest, modified: latest, build: func() ([]byte, error) {
		last := segs[len(segs)-1].Start
		return json.Marshal(map[string]any{
			"version":        0,
			"lastConsumable": feedTime(last.Add(time.Hour)),
			"storageDiagnostics": map[string]any{"version": 0, "lastModifiedTime": feedTime(latest),
				"data": map[string]any{"aid": feedID(account, "aid", 0)}},
		})
	}})
	for i := range segs {
		seg := &segs[i]
		// A segment's files change until the next hour's first record.
		modified := latest
		if i+1 < len(segs) {
			modified = seg.Start.Add(time.Hour)
		}
		final := i+1 < len(segs)
		hp := hourPath(seg.Start)
		out = append(out,
			feedFile{name: feedSegmentsDir + hp + "/meta.json", modified: modified, seg: seg, build: func() ([]byte, error) {
				status := "Publishing"
				if final {
					status = "Finalized"
				}
				return json.Marshal(map[string]any{
					"version": 0, "begin": feedTime(seg.Start), "intervalSecs": 3600, "status": status,
					"config": map[string]any{"version": 0, "configVersionEtag": "0x8d000000000000", "numShards": 1,
						"recordsFormat": "avro", "formatSchemaVersion": feedSchemaVersion, "shardDistFnVersion": 1},
					"chunkFilePaths": []string{ChangeFeedContainer + "/" + feedLogDir + hp + "/"},
					"storageDiagnostics": map[string]any{"version": 0, "lastModifiedTime": feedTime(modified),
						"data": map[string]any{"aid": feedID(account, "aid", 0)}},
				})
			}},
			feedFile{name: feedLogDir + hp + "/" + feedChunkName, modified: modified, seg: seg, build: func() ([]byte, error) {
				recs, _, err := changelog.After(tx, account, seg.First-1, int(seg.Last-seg.First+1))
				if err != nil {
					return nil, err
				}
				return feedChunk(account, seg.Start, recs)
			}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// feedChunk is the Avro chunk file of the records of the hour starting
// at start: one block per record, and a sync marker derived from the
// account and the hour, so the file read again is the same bytes.
func feedChunk(account string, start time.Time, recs []changelog.Record) ([]byte, error) {
	var sync [avro.SyncSize]byte
	h := sha256.Sum256([]byte("cerulean change feed\x00" + account + "\x00" + start.UTC().Format(time.RFC3339)))
	copy(sync[:], h[:])
	w, err := avro.NewWriter([]byte(feedSchema), sync)
	if err != nil {
		return nil, err
	}
	topic := "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/cerulean/providers/Microsoft.Storage/storageAccounts/" + account
	for _, r := range recs {
		if r.DFS {
			// A Data Lake event's record (an account made hierarchical
			// for a while): not a change feed record.
			continue
		}
		if err := w.Block(feedRecord(topic, r)); err != nil {
			return nil, err
		}
	}
	return w.Bytes(), nil
}

// feedRecord is the Avro value of log record r.
func feedRecord(topic string, r changelog.Record) map[string]any {
	d := r.Data
	opt := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	data := map[string]any{
		"api": d.API, "clientRequestId": d.ClientRequestID, "requestId": d.RequestID, "etag": d.ETag,
		"contentType": d.ContentType, "contentLength": d.ContentLength, "blobType": d.BlobType,
		"blobVersion": opt(d.BlobVersion), "containerVersion": opt(d.ContainerVersion), "blobTier": opt(d.BlobAccessTier),
		"url": d.URL, "sequencer": d.Sequencer, "previousInfo": nil, "snapshot": opt(d.Snapshot),
		"blobPropertiesUpdated": nil, "asyncOperationInfo": nil,
		"storageDiagnostics": map[string]any{"bid": r.ID, "seq": "(" + strconv.FormatUint(r.Seq, 10) + ",0,0)", "sid": d.Sequencer},
	}
	if p := d.PreviousInfo; p != nil {
		m := map[string]any{}
		set := func(k, v string) {
			if v != "" {
				m[k] = v
			}
		}
		set("SoftDeleteSnapshot", p.SoftDeleteSnapshot)
		if p.WasBlobSoftDeleted {
			m["WasBlobSoftDeleted"] = "true"
		}
		set("BlobVersion", p.BlobVersion)
		set("LastVersion", p.LastVersion)
		set("PreviousTier", p.PreviousTier)
		data["previousInfo"] = m
	}
	if len(d.UpdatedBlobProperties) > 0 {
		m := map[string]any{}
		for k, v := range d.UpdatedBlobProperties {
			m[k] = map[string]any{"previous": v.Previous, "current": v.Current}
		}
		data["blobPropertiesUpdated"] = m
	}
	return map[string]any{
		"schemaVersion": feedSchemaVersion, "topic": topic, "subject": r.Subject, "eventType": r.EventType,
		"eventTime": feedTime(r.EventTime), "id": r.ID, "data": data, "metadataVersion": "1",
	}
}

// feedID is a stable identifier of account's feed for diagnostics.
func feedID(account, kind string, n uint64) string {
	h := sha256.Sum256(binary.BigEndian.AppendUint64([]byte(kind+"\x00"+account+"\x00"), n))
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// feedRec is the blob record a change feed file is read as.
func feedRec(f feedFile, content []byte) *blobRec {
	b := &blobRec{Type: BlockBlob, Size: int64(len(content)), Modified: f.modified, Created: f.modified}
	if f.seg != nil {
		b.Created = f.seg.Start
	}
	sum := sha256.Sum256(content)
	b.ETag = fmt.Sprintf(`"0x8D%X"`, sum[:7])
	b.Props.ContentType = "application/json"
	if strings.HasSuffix(f.name, ".avro") {
		b.Props.ContentType = "avro/binary"
	}
	if len(content) > 0 {
		b.Parts = []extent.Part{{Off: 0, Len: int64(len(content)), Data: content}}
	}
	return b
}

// isFeed reports whether ref is in the change feed container of an
// account with the feed on.
func (s *Service) isFeed(account, container string) bool {
	return container == ChangeFeedContainer && s.ChangeFeedOn(account)
}

// loadBlobOrFeed is loadBlob, answering the change feed container's
// files from the log.
func (s *Service) loadBlobOrFeed(tx kv.Tx, ref BlobRef) (*blobRec, error) {
	if !s.isFeed(ref.Account, ref.Container) {
		return loadBlob(tx, ref)
	}
	if ref.Snapshot != "" {
		return nil, azerr.New(azerr.BlobNotFound)
	}
	files, err := s.feedFiles(tx, ref.Account)
	if err != nil {
		return nil, err
	}
	i := sort.Search(len(files), func(i int) bool { return files[i].name >= ref.Blob })
	if i == len(files) || files[i].name != ref.Blob {
		return nil, azerr.New(azerr.BlobNotFound)
	}
	content, err := files[i].build()
	if err != nil {
		return nil, err
	}
	return feedRec(files[i], content), nil
}

// loadContainerOrFeed is loadContainer, answering the change feed
// container of an account with the feed on: it exists from the start
// (as on Azure once the feed is enabled), private, without metadata.
func (s *Service) loadContainerOrFeed(tx kv.Tx, account, name string) (*container, error) {
	if !s.isFeed(account, name) {
		return loadContainer(tx, account, name)
	}
	c := &container{ETag: `"0x8D000000000000"`, Created: time.Unix(0, 0).UTC()}
	c.Modified = c.Created
	return c, nil
}

// listFeed is List Blobs of the change feed container: its files by
// name, with prefix, delimiter, marker (the last name of the previous
// page) and page size as for any container.
func (s *Service) listFeed(ctx context.Context, in ListBlobsInput) (out ListBlobsOutput, err error) {
	now := s.now(in.Call)
	err = s.store.View(ctx, func(tx kv.Tx) error {
		out, err = listFeedTx(tx, s, in, now)
		return err
	})
	return out, err
}

func listFeedTx(tx kv.Tx, s *Service, in ListBlobsInput, now time.Time) (ListBlobsOutput, error) {
	files, err := s.feedFiles(tx, in.Ref.Account)
	if err != nil {
		return ListBlobsOutput{}, err
	}
	// A marker ending with the delimiter is a BlobPrefix the previous
	// page ended with: the names under it are past.
	pastPrefix := in.Delimiter != "" && strings.HasSuffix(in.Marker, in.Delimiter)
	maxN := in.MaxResults
	if maxN <= 0 {
		maxN = 5000
	}
	var out ListBlobsOutput
	lastPrefix := ""
	for _, f := range files {
		if !strings.HasPrefix(f.name, in.Prefix) || f.name <= in.Marker || (in.StartFrom != "" && f.name < in.StartFrom) ||
			(pastPrefix && strings.HasPrefix(f.name, in.Marker)) {
			continue
		}
		name, isPrefix := f.name, false
		if in.Delimiter != "" {
			if j := strings.Index(f.name[len(in.Prefix):], in.Delimiter); j >= 0 {
				name, isPrefix = f.name[:len(in.Prefix)+j+len(in.Delimiter)], true
				if name == lastPrefix || name <= in.Marker {
					continue
				}
				lastPrefix = name
			}
		}
		if len(out.Items) == maxN {
			out.NextMarker = out.Items[len(out.Items)-1].Name
			return out, nil
		}
		if isPrefix {
			out.Items = append(out.Items, ListedBlob{Name: name, IsPrefix: true})
			continue
		}
		content, err := f.build()
		if err != nil {
			return ListBlobsOutput{}, err
		}
		out.Items = append(out.Items, ListedBlob{Name: f.name, Properties: feedRec(f, content).properties(BlobRef{}, now)})
	}
	return out, nil
}
