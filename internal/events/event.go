package events

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/changelog"
)

// TopicPrefix begins every event's topic (Event Grid: the storage
// account's resource id). Cerulean has no Azure subscription or resource
// group: it names the all-zero subscription and the resource group
// "cerulean".
const TopicPrefix = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/cerulean/providers/Microsoft.Storage/storageAccounts/"

// Event is one event formatted for a subscription.
type Event struct {
	// Seq is the log record it comes from.
	Seq  uint64
	ID   string
	Type string // Microsoft.Storage.BlobCreated, ...
	// JSON is the event, a single JSON object in the subscription's
	// schema.
	JSON []byte
	// Time is the event's time, for its time to live.
	Time time.Time
}

// egEvent is an event in the Event Grid schema ("Event Grid event
// schema").
type egEvent struct {
	Topic           string `json:"topic"`
	Subject         string `json:"subject"`
	EventType       string `json:"eventType"`
	EventTime       string `json:"eventTime"`
	ID              string `json:"id"`
	Data            any    `json:"data"`
	DataVersion     string `json:"dataVersion"`
	MetadataVersion string `json:"metadataVersion"`
}

// ceEvent is an event in the CloudEvents 1.0 schema as Event Grid writes
// it for Blob Storage ("Azure Blob Storage as an Event Grid source",
// CloudEvents examples).
type ceEvent struct {
	Source      string `json:"source"`
	Subject     string `json:"subject"`
	Type        string `json:"type"`
	Time        string `json:"time"`
	ID          string `json:"id"`
	Data        any    `json:"data"`
	SpecVersion string `json:"specversion"`
}

// blobData is the data of a Blob Storage event, with the fields Event
// Grid's Blob Storage event schema documents for BlobCreated,
// BlobDeleted and BlobTierChanged.
type blobData struct {
	API                string            `json:"api"`
	ClientRequestID    string            `json:"clientRequestId"`
	RequestID          string            `json:"requestId"`
	ETag               string            `json:"eTag,omitempty"`
	ContentType        string            `json:"contentType"`
	ContentLength      *int64            `json:"contentLength,omitempty"`
	BlobType           string            `json:"blobType"`
	AccessTier         string            `json:"accessTier,omitempty"`
	PreviousTier       string            `json:"previousTier,omitempty"`
	URL                string            `json:"url"`
	Sequencer          string            `json:"sequencer"`
	StorageDiagnostics map[string]string `json:"storageDiagnostics"`
}

// dfsData is the data of a Data Lake event of a hierarchical account,
// with the fields Event Grid's Blob Storage event schema documents for
// each ("Azure Blob Storage as an Event Grid source",
// https://learn.microsoft.com/en-us/azure/event-grid/event-schema-blob-storage;
// the types StorageBlobCreatedEventData, StorageBlobRenamedEventData,
// StorageDirectoryDeletedEventData, ... of azure-sdk-for-go's
// sdk/messaging/eventgrid/azsystemevents): a rename has sourceUrl and
// destinationUrl instead of url, a directory delete data.recursive
// ("true" or "false"), and the URLs are the dfs endpoint's.
type dfsData struct {
	API                string            `json:"api"`
	ClientRequestID    string            `json:"clientRequestId"`
	RequestID          string            `json:"requestId"`
	ETag               string            `json:"eTag,omitempty"`
	ContentType        *string           `json:"contentType,omitempty"`
	ContentLength      *int64            `json:"contentLength,omitempty"`
	ContentOffset      *int64            `json:"contentOffset,omitempty"`
	BlobType           string            `json:"blobType,omitempty"`
	URL                string            `json:"url,omitempty"`
	SourceURL          string            `json:"sourceUrl,omitempty"`
	DestinationURL     string            `json:"destinationUrl,omitempty"`
	Recursive          string            `json:"recursive,omitempty"`
	Sequencer          string            `json:"sequencer"`
	StorageDiagnostics map[string]string `json:"storageDiagnostics"`
}

// dataLakeAPIs are the Data Lake operations' data.api names. A
// hierarchical account's records of Blob API writes (PutBlob,
// PutBlockList, DeleteBlob) are blob events, with the Blob endpoint's
// URL, as Event Grid raises them for the Blob REST API on any account.
var dataLakeAPIs = map[string]bool{
	"CreateFile": true, "FlushWithClose": true, "RenameFile": true, "RenameDirectory": true,
	"CreateDirectory": true, "DeleteFile": true, "DeleteDirectory": true,
}

// URLs are the endpoint URLs of an account (http://host:port/account),
// which an event's URLs extend with the path: the Blob endpoint's for
// blob events, the dfs endpoint's for a hierarchical account's Data Lake
// events (Blob's when the server has no dfs endpoint).
type URLs struct {
	Blob, DFS string
}

// Format is record r of the subscription's account as the event the
// subscription delivers, and false when the subscription does not select
// it.
func (s *Subscription) Format(r changelog.Record, u URLs) (Event, bool) {
	typ := eventTypePrefix + r.EventType
	if !s.Matches(typ, r.Subject) {
		return Event{}, false
	}
	var data any
	if r.DFS && dataLakeAPIs[r.Data.API] {
		data = dfsDataOf(r, u)
	} else {
		data = blobDataOf(r, u.Blob)
	}
	return s.format(r, typ, data)
}

// format marshals the event of record r, of type typ with data, in the
// subscription's schema.
func (s *Subscription) format(r changelog.Record, typ string, data any) (Event, bool) {
	topic := TopicPrefix + s.Account
	at := r.EventTime.UTC().Format(time.RFC3339Nano)
	var v any
	if s.Schema == CloudEventSchema {
		v = ceEvent{Source: topic, Subject: r.Subject, Type: typ, Time: at, ID: r.ID, Data: data, SpecVersion: "1.0"}
	} else {
		v = egEvent{Topic: topic, Subject: r.Subject, EventType: typ, EventTime: at, ID: r.ID, Data: data, DataVersion: "", MetadataVersion: "1"}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return Event{}, false // not reached: the types marshal
	}
	if !matchAdvanced(s.Filter.AdvancedFilters, s.Filter.EnableAdvancedFilteringOnArrays, b) {
		return Event{}, false
	}
	return Event{Seq: r.Seq, ID: r.ID, Type: typ, JSON: b, Time: r.EventTime}, true
}

// blobDataOf is the data of a blob event; blobURL is the account's Blob
// endpoint URL, which data.url extends with the blob's path.
func blobDataOf(r changelog.Record, blobURL string) blobData {
	d := blobData{
		API: r.Data.API, ClientRequestID: r.Data.ClientRequestID, RequestID: r.Data.RequestID,
		ContentType: r.Data.ContentType, BlobType: r.Data.BlobType,
		URL: blobURL + blobPath(r.Subject), Sequencer: r.Data.Sequencer,
		// Azure writes a batch id; each of Cerulean's records is its own
		// batch, named by the record's id.
		StorageDiagnostics: map[string]string{"batchId": r.ID},
	}
	switch r.EventType {
	case changelog.BlobCreated:
		d.ETag = r.Data.ETag
		n := r.Data.ContentLength
		d.ContentLength = &n
	case changelog.BlobTierChanged:
		d.ETag = r.Data.ETag
		d.AccessTier = r.Data.BlobAccessTier
		if r.Data.PreviousInfo != nil {
			d.PreviousTier = r.Data.PreviousInfo.PreviousTier
		}
	}
	return d
}

// dfsDataOf is the data of a Data Lake event.
func dfsDataOf(r changelog.Record, u URLs) dfsData {
	base := u.DFS
	if base == "" {
		base = u.Blob
	}
	d := dfsData{API: r.Data.API, ClientRequestID: r.Data.ClientRequestID, RequestID: r.Data.RequestID,
		Sequencer: r.Data.Sequencer, StorageDiagnostics: map[string]string{"batchId": r.ID}}
	path := base + blobPath(r.Subject)
	switch r.EventType {
	case changelog.BlobCreated:
		ct, n, off := r.Data.ContentType, r.Data.ContentLength, r.Data.ContentOffset
		d.ETag, d.ContentType, d.ContentLength, d.ContentOffset, d.BlobType, d.URL = r.Data.ETag, &ct, &n, &off, r.Data.BlobType, path
	case changelog.BlobDeleted:
		ct := r.Data.ContentType
		d.ContentType, d.BlobType, d.URL = &ct, r.Data.BlobType, path
	case changelog.DirectoryCreated:
		d.ETag, d.URL = r.Data.ETag, path
	case changelog.DirectoryDeleted:
		d.URL, d.Recursive = path, strconv.FormatBool(r.Data.Recursive)
	case changelog.BlobRenamed, changelog.DirectoryRenamed:
		d.SourceURL, d.DestinationURL = base+r.Data.SourcePath, path
	}
	return d
}

// blobPath is the /container/blob of a record's subject.
func blobPath(subject string) string {
	const pre = "/blobServices/default/containers/"
	if len(subject) < len(pre) {
		return subject
	}
	rest := subject[len(pre):]
	for i := 0; i+7 <= len(rest); i++ {
		if rest[i:i+7] == "/blobs/" {
			return "/" + rest[:i] + "/" + rest[i+7:]
		}
	}
	return "/" + rest
}
