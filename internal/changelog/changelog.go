// Package changelog is the durable, ordered log of an account's blob
// changes: the one source the change feed ($blobchangefeed) is served
// from, and the one blob events can be delivered from.
//
// A change is appended by the transaction that makes it (Append takes the
// caller's kv.Tx), so a committed change always has its record and a
// change that did not commit never has one: there is no window between
// the two for a crash to fall into.
//
// Order. Each account has one counter key; Append reads it, increments it
// and writes the record under the new value, all in the caller's
// transaction. The sequence numbers are therefore dense (1, 2, 3, ...
// with no gap: a transaction that does not commit takes no number) and
// one total order per account, the commit order, on every store:
//
//   - embedded (bbolt) and in-memory stores have a single writer, so
//     transactions that append are serialised anyway;
//   - on PostgreSQL (several front ends on one database, serializable
//     transactions) two concurrent appends to one account both read and
//     write the counter, so one of them fails to commit with a
//     serialization failure and the backend runs it again, after the
//     other committed, with the next number.
//
// The cost of that: with the feed on, the writes of one account are
// serialised at the counter on PostgreSQL — concurrent writers of
// different blobs that would otherwise commit in parallel conflict and
// retry (each retry re-runs the whole transaction). It is why the feed
// is opt-in, as on Azure, where it is an account setting. Accounts do
// not conflict with one another.
//
// Reading: After returns the records after a position, in order, a
// bounded page at a time. Retention (dropping old records) is not done
// yet.
package changelog

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Event types, as the change feed and Event Grid name them.
const (
	BlobCreated                 = "BlobCreated"
	BlobDeleted                 = "BlobDeleted"
	BlobPropertiesUpdated       = "BlobPropertiesUpdated"
	BlobSnapshotCreated         = "BlobSnapshotCreated"
	BlobTierChanged             = "BlobTierChanged"
	BlobAsyncOperationInitiated = "BlobAsyncOperationInitiated"
	RestorePointMarkerCreated   = "RestorePointMarkerCreated"
)

// Record is one change, with the fields of the change feed's record
// (schema version 5 of "Change feed support in Azure Blob Storage").
// Seq, ID and Data.Sequencer are set by Append.
type Record struct {
	// Seq is the record's position in its account's log, from 1.
	Seq       uint64    `json:"seq"`
	EventType string    `json:"eventType"`
	Subject   string    `json:"subject"` // /blobServices/default/containers/<c>/blobs/<b>
	EventTime time.Time `json:"eventTime"`
	ID        string    `json:"id"`
	Data      Data      `json:"data"`
}

// Data is the record's data: what changed and how.
type Data struct {
	API              string `json:"api"` // PutBlob, PutBlockList, DeleteBlob, ...
	ClientRequestID  string `json:"clientRequestId,omitempty"`
	RequestID        string `json:"requestId,omitempty"`
	ETag             string `json:"etag,omitempty"`
	ContentType      string `json:"contentType,omitempty"`
	ContentLength    int64  `json:"contentLength"`
	ContentOffset    int64  `json:"contentOffset,omitempty"`
	BlobType         string `json:"blobType,omitempty"`
	BlobVersion      string `json:"blobVersion,omitempty"`
	ContainerVersion string `json:"containerVersion,omitempty"`
	BlobAccessTier   string `json:"blobAccessTier,omitempty"`
	URL              string `json:"url"`
	Sequencer        string `json:"sequencer"`
	// Snapshot is the snapshot a BlobSnapshotCreated made.
	Snapshot string `json:"snapshot,omitempty"`
	// PreviousInfo describes the blob the change replaced or removed
	// (nil: none).
	PreviousInfo *PreviousInfo `json:"previousInfo,omitempty"`
	// UpdatedBlobProperties names the properties a BlobPropertiesUpdated
	// changed, with their old and new values.
	UpdatedBlobProperties map[string]PropertyChange `json:"updatedBlobProperties,omitempty"`
	// UpdatedBlobMetadata is the metadata set by Set Blob Metadata.
	UpdatedBlobMetadata map[string]string `json:"updatedBlobMetadata,omitempty"`
	// SourceURL is a copy's source.
	SourceURL string `json:"sourceUrl,omitempty"`
}

// PreviousInfo is the state a change replaced.
type PreviousInfo struct {
	SoftDeleteSnapshot string `json:"softDeleteSnapshot,omitempty"`
	WasBlobSoftDeleted bool   `json:"wasBlobSoftDeleted,omitempty"`
	BlobVersion        string `json:"blobVersion,omitempty"`
	LastVersion        string `json:"lastVersion,omitempty"`
	PreviousTier       string `json:"previousTier,omitempty"`
}

// PropertyChange is a property's value before and after a change.
type PropertyChange struct {
	Previous string `json:"previous"`
	Current  string `json:"current"`
}

// Subject is the record subject of blob b in container c.
func Subject(container, blob string) string {
	return "/blobServices/default/containers/" + container + "/blobs/" + blob
}

// ErrBadRecord is returned by Append for a record without an event type
// or subject.
var ErrBadRecord = errors.New("changelog: record without event type or subject")

const space = "changelog"

func counterKey(account string) []byte { return kv.Key(space, account, "n") }

func recordPrefix(account string) []byte { return kv.Key(space, account, "r") }

// recordKey is the key of record seq: the prefix and seq big-endian, so
// that the records scan in sequence order.
func recordKey(account string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(recordPrefix(account), seq)
}

// Append writes r as the next record of account's log in tx and returns
// it as written (Seq, ID and Data.Sequencer set). It is deterministic
// for a given store state, as kv.Store.Update requires: the id is
// derived from the account and the sequence number, not drawn at random.
func Append(tx kv.Tx, account string, r Record) (Record, error) {
	if r.EventType == "" || r.Subject == "" {
		return Record{}, ErrBadRecord
	}
	last, err := Last(tx, account)
	if err != nil {
		return Record{}, err
	}
	r.Seq = last + 1
	r.ID = eventID(account, r.Seq)
	r.Data.Sequencer = Sequencer(r.Seq)
	r.EventTime = r.EventTime.UTC()
	if err := tx.Put(counterKey(account), []byte(strconv.FormatUint(r.Seq, 10))); err != nil {
		return Record{}, err
	}
	if err := kv.PutJSON(tx, recordKey(account, r.Seq), &r); err != nil {
		return Record{}, err
	}
	return r, nil
}

// Last returns the sequence number of account's last record (0: none).
func Last(tx kv.Tx, account string) (uint64, error) {
	v, err := tx.Get(counterKey(account))
	if errors.Is(err, kv.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("changelog: counter of %q is %q: %w", account, v, err)
	}
	return n, nil
}

// After returns up to limit (at least 1) records of account's log with
// sequence numbers greater than after, in order, and whether there are
// more after them.
func After(tx kv.Tx, account string, after uint64, limit int) ([]Record, bool, error) {
	if limit < 1 {
		limit = 1
	}
	prefix := recordPrefix(account)
	var out []Record
	var derr error
	more := false
	err := tx.Scan(recordKey(account, after+1), kv.PrefixEnd(prefix), limit+1, false, func(k, v []byte) bool {
		if len(out) == limit {
			more = true
			return false
		}
		var r Record
		if derr = kv.DecodeJSON(k, v, &r); derr != nil {
			return false
		}
		out = append(out, r)
		return true
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return nil, false, err
	}
	return out, more, nil
}

// Sequencer is the data.sequencer of record seq: hexadecimal digits that
// sort, as strings, in the log's order, in the 48-digit form the change
// feed writes.
func Sequencer(seq uint64) string {
	return fmt.Sprintf("%032x%016x", 0, seq)
}

// eventID is a record's id: a UUID (version 5 layout) named by the
// account and sequence number, so that it is the same however many
// times the transaction runs and unique across the account's log.
func eventID(account string, seq uint64) string {
	h := sha1.New()
	h.Write([]byte("cerulean changelog\x00" + account + "\x00"))
	h.Write(binary.BigEndian.AppendUint64(nil, seq))
	b := h.Sum(nil)[:16]
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	s := hex.EncodeToString(b)
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}
