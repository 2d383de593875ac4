package changelog

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"github.com/cerulean-storage/cerulean/internal/wire"
)

// A change log record (Record, its Data) and how it is stored. Records
// were first stored as the JSON of
// Record (an object: its first byte is '{'); they are now stored in a
// compact binary form, recordCompact, about a third of the bytes and
// without the fields the key gives (Seq, and from it ID and
// Data.Sequencer). Both forms are read, so a log holds either or both.
//
//	0x01                          recordCompact
//	varint                        Segment, Unix seconds
//	varint, uvarint               EventTime, Unix seconds and nanoseconds
//	uvarint                       flags (below)
//	15 strings                    EventType, Subject, Data.API, ClientRequestID,
//	                              RequestID, ETag, ContentType, BlobType,
//	                              BlobVersion, ContainerVersion, BlobAccessTier,
//	                              URL, Snapshot, SourceURL, SourcePath
//	varint, varint                ContentLength, ContentOffset
//	[flagPrevious]   5 strings    PreviousInfo: SoftDeleteSnapshot, BlobVersion,
//	                              LastVersion, PreviousTier, and "1" when
//	                              WasBlobSoftDeleted ("" otherwise)
//	[flagProperties] uvarint n,   UpdatedBlobProperties by name: name,
//	                 3n strings   previous, current
//	[flagMetadata]   uvarint n,   UpdatedBlobMetadata by name: name, value
//	                 2n strings
//
// A string is its length (uvarint) and its bytes; the maps are written
// in name order, so a record is encoded to the same bytes each time.
const recordCompact = 0x01

const (
	flagDFS = 1 << iota
	flagRecursive
	flagPrevious
	flagProperties
	flagMetadata
)

var errShortRecord = errors.New("changelog: record truncated")

// encodedSize is an upper bound of r's encoded size.
func encodedSize(r *Record) int {
	d := &r.Data
	n := 1 + 4*binary.MaxVarintLen64 + 15*binary.MaxVarintLen32 + 2*binary.MaxVarintLen64 +
		len(r.EventType) + len(r.Subject) + len(d.API) + len(d.ClientRequestID) + len(d.RequestID) +
		len(d.ETag) + len(d.ContentType) + len(d.BlobType) + len(d.BlobVersion) + len(d.ContainerVersion) +
		len(d.BlobAccessTier) + len(d.URL) + len(d.Snapshot) + len(d.SourceURL) + len(d.SourcePath)
	if p := d.PreviousInfo; p != nil {
		n += 5*binary.MaxVarintLen32 + len(p.SoftDeleteSnapshot) + len(p.BlobVersion) + len(p.LastVersion) + len(p.PreviousTier) + 1
	}
	for k, v := range d.UpdatedBlobProperties {
		n += 3*binary.MaxVarintLen32 + len(k) + len(v.Previous) + len(v.Current)
	}
	for k, v := range d.UpdatedBlobMetadata {
		n += 2*binary.MaxVarintLen32 + len(k) + len(v)
	}
	return n + 2*binary.MaxVarintLen32
}

// encodeRecord appends r in the compact form to b.
func encodeRecord(b []byte, r *Record) []byte {
	d := &r.Data
	flags := uint64(0)
	if r.DFS {
		flags |= flagDFS
	}
	if d.Recursive {
		flags |= flagRecursive
	}
	if d.PreviousInfo != nil {
		flags |= flagPrevious
	}
	if len(d.UpdatedBlobProperties) > 0 {
		flags |= flagProperties
	}
	if len(d.UpdatedBlobMetadata) > 0 {
		flags |= flagMetadata
	}
	b = append(b, recordCompact)
	b = binary.AppendVarint(b, r.Segment.Unix())
	b = binary.AppendVarint(b, r.EventTime.Unix())
	b = binary.AppendUvarint(b, uint64(r.EventTime.Nanosecond()))
	b = binary.AppendUvarint(b, flags)
	for _, s := range [...]string{r.EventType, r.Subject, d.API, d.ClientRequestID, d.RequestID, d.ETag,
		d.ContentType, d.BlobType, d.BlobVersion, d.ContainerVersion, d.BlobAccessTier, d.URL, d.Snapshot,
		d.SourceURL, d.SourcePath} {
		b = appendString(b, s)
	}
	b = binary.AppendVarint(b, d.ContentLength)
	b = binary.AppendVarint(b, d.ContentOffset)
	if p := d.PreviousInfo; p != nil {
		was := ""
		if p.WasBlobSoftDeleted {
			was = "1"
		}
		for _, s := range [...]string{p.SoftDeleteSnapshot, p.BlobVersion, p.LastVersion, p.PreviousTier, was} {
			b = appendString(b, s)
		}
	}
	if m := d.UpdatedBlobProperties; len(m) > 0 {
		b = binary.AppendUvarint(b, uint64(len(m)))
		for _, k := range sortedKeys(m) {
			b = appendString(appendString(appendString(b, k), m[k].Previous), m[k].Current)
		}
	}
	if m := d.UpdatedBlobMetadata; len(m) > 0 {
		b = binary.AppendUvarint(b, uint64(len(m)))
		for _, k := range sortedKeys(m) {
			b = appendString(appendString(b, k), m[k])
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// decodeRecord decodes the stored record v, number seq of account's log,
// in either form, into r.
func decodeRecord(account string, seq uint64, v []byte, r *Record) error {
	if len(v) == 0 || v[0] != recordCompact {
		*r = Record{}
		return json.Unmarshal(v, r)
	}
	// One string for the whole value: the fields are slices of it.
	dec := decoder{s: string(v[1:])}
	seg := dec.varint()
	sec := dec.varint()
	nsec := dec.uvarint()
	flags := dec.uvarint()
	*r = Record{Seq: seq, ID: eventID(account, seq)}
	d := &r.Data
	for _, p := range [...]*string{&r.EventType, &r.Subject, &d.API, &d.ClientRequestID, &d.RequestID, &d.ETag,
		&d.ContentType, &d.BlobType, &d.BlobVersion, &d.ContainerVersion, &d.BlobAccessTier, &d.URL, &d.Snapshot,
		&d.SourceURL, &d.SourcePath} {
		*p = dec.str()
	}
	d.ContentLength = dec.varint()
	d.ContentOffset = dec.varint()
	if flags&flagPrevious != 0 {
		p := &PreviousInfo{}
		var was string
		for _, s := range [...]*string{&p.SoftDeleteSnapshot, &p.BlobVersion, &p.LastVersion, &p.PreviousTier, &was} {
			*s = dec.str()
		}
		p.WasBlobSoftDeleted = was != ""
		d.PreviousInfo = p
	}
	if flags&flagProperties != 0 {
		n := dec.count()
		d.UpdatedBlobProperties = make(map[string]PropertyChange, n)
		for i := 0; i < n && dec.err == nil; i++ {
			k := dec.str()
			d.UpdatedBlobProperties[k] = PropertyChange{Previous: dec.str(), Current: dec.str()}
		}
	}
	if flags&flagMetadata != 0 {
		n := dec.count()
		d.UpdatedBlobMetadata = make(map[string]string, n)
		for i := 0; i < n && dec.err == nil; i++ {
			k := dec.str()
			d.UpdatedBlobMetadata[k] = dec.str()
		}
	}
	if dec.err != nil {
		return dec.err
	}
	if nsec >= uint64(time.Second) {
		return errors.New("changelog: record's event time out of range")
	}
	r.Segment = time.Unix(seg, 0).UTC()
	r.EventTime = time.Unix(sec, int64(nsec)).UTC()
	r.DFS = flags&flagDFS != 0
	d.Recursive = flags&flagRecursive != 0
	d.Sequencer = Sequencer(seq)
	return nil
}

// recordSegment is the segment of the stored record v, and whether v is
// in the compact form.
func recordSegment(v []byte) (time.Time, bool, error) {
	if len(v) > 0 && v[0] == recordCompact {
		seg, n := binary.Varint(v[1:])
		if n <= 0 {
			return time.Time{}, true, errShortRecord
		}
		return time.Unix(seg, 0).UTC(), true, nil
	}
	var r struct {
		Segment time.Time `json:"segment"`
	}
	if err := json.Unmarshal(v, &r); err != nil {
		return time.Time{}, false, err
	}
	return r.Segment.UTC(), false, nil
}

// decoder reads the compact form's fields from s; the first error sticks
// and makes every later field zero.
type decoder struct {
	s   string
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	var x uint64
	for i, shift := 0, uint(0); i < len(d.s) && i < binary.MaxVarintLen64; i, shift = i+1, shift+7 {
		c := d.s[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break
			}
			d.s = d.s[i+1:]
			return x | uint64(c)<<shift
		}
		x |= uint64(c&0x7f) << shift
	}
	d.err = errShortRecord
	return 0
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

func (d *decoder) str() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.s)) {
		d.err = errShortRecord
		return ""
	}
	s := d.s[:n]
	d.s = d.s[n:]
	return s
}

// count is a map's entry count, bounded by what is left to read (each
// entry takes at least two bytes).
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.s)) {
		d.err = errShortRecord
		return 0
	}
	return int(n)
}

// Record is one change, with the fields of the change feed's record
// (schema version 5 of "Change feed support in Azure Blob Storage").
// Seq, ID and Data.Sequencer are set by Append.
type Record struct {
	// Seq is the record's position in its account's log, from 1.
	Seq uint64 `json:"seq"`
	// Segment is the start of the hour the record is published in (see
	// Segments): the hour of its event time, or a later one when a
	// record before it in the log is already in a later hour (event
	// times come from the front ends' clocks and need not follow commit
	// order), so that each hour's records are a run of the log.
	Segment   time.Time `json:"segment"`
	EventType string    `json:"eventType"`
	Subject   string    `json:"subject"` // /blobServices/default/containers/<c>/blobs/<b>
	EventTime time.Time `json:"eventTime"`
	ID        string    `json:"id"`
	Data      Data      `json:"data"`
	// DFS marks the record of a Data Lake operation on a hierarchical
	// account (CreateFile, FlushWithClose, RenameFile, DeleteDirectory,
	// ...): Event Grid delivers it, but Azure's change feed does not
	// support hierarchical accounts, so the change feed passes it over.
	DFS bool `json:"dfs,omitempty"`
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
	// SourcePath is a Data Lake rename's source, "/filesystem/path" (the
	// record's subject names the destination).
	SourcePath string `json:"sourcePath,omitempty"`
	// Recursive is a Data Lake directory delete's recursive parameter.
	Recursive bool `json:"recursive,omitempty"`
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

// Sequencer is the data.sequencer of record seq: hexadecimal digits that
// sort, as strings, in the log's order, in the 48-digit form the change
// feed writes.
func Sequencer(seq uint64) string {
	var b [48]byte
	for i := range b[:32] {
		b[i] = '0'
	}
	const digits = "0123456789abcdef"
	for i := 47; i >= 32; i-- {
		b[i] = digits[seq&0xf]
		seq >>= 4
	}
	return string(b[:])
}

// eventID is a record's id: a UUID (version 5 layout) named by the
// account and sequence number, so that it is the same however many
// times the transaction runs and unique across the account's log.
func eventID(account string, seq uint64) string {
	const name = "cerulean changelog\x00"
	var buf [128]byte
	in := append(append(append(buf[:0], name...), account...), 0)
	in = binary.BigEndian.AppendUint64(in, seq)
	h := sha1.Sum(in)
	return wire.FormatUUID((*[16]byte)(h[:16]), 5)
}

// Subject is the record subject of blob b in container c.
func Subject(container, blob string) string {
	return "/blobServices/default/containers/" + container + "/blobs/" + blob
}

// Segment is one hour of an account's log: the records First to Last.
type Segment struct {
	Start       time.Time
	First, Last uint64
}
