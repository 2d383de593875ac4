package changelog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
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
	// The Data Lake events of a hierarchical account (Event Grid's
	// "Azure Blob Storage as an Event Grid source"); their records are
	// marked DFS.
	BlobRenamed      = "BlobRenamed"
	DirectoryCreated = "DirectoryCreated"
	DirectoryRenamed = "DirectoryRenamed"
	DirectoryDeleted = "DirectoryDeleted"
)

// ErrBadRecord is returned by Append for a record without an event type
// or subject.
var ErrBadRecord = errors.New("changelog: record without event type or subject")

const space = "changelog"

func counterKey(account string) []byte { return kv.Key(space, account, "n") }

func recordPrefix(account string) []byte { return kv.Key(space, account, "r") }

func segmentPrefix(account string) []byte { return kv.Key(space, account, "h") }

// segmentKey indexes the hour starting at start: its value is the
// sequence number of the hour's first record.
func segmentKey(account string, start time.Time) []byte {
	return binary.BigEndian.AppendUint64(segmentPrefix(account), uint64(start.Unix()))
}

// recordKey is the key of record seq: the prefix and seq big-endian, so
// that the records scan in sequence order.
func recordKey(account string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(recordPrefix(account), seq)
}

// Append writes r as the next record of account's log in tx and returns
// it as written (Seq, ID and Data.Sequencer set). It is deterministic
// for a given store state, as kv.Store.Update requires: the id is
// derived from the account and the sequence number, not drawn at random.
//
// The next sequence number is the last record's plus one: Append reads
// the log's last record (its key gives the number, the start of its
// value the hour) and writes the new one after it, two keys' work where
// a separate counter key took a read and a write more. The order is the
// same: on PostgreSQL two concurrent appends to one account both read
// the log's end and insert the same next key, so one of them fails to
// commit (a serialization failure) and runs again after the other.
func Append(tx kv.Tx, account string, r Record) (Record, error) {
	if r.EventType == "" || r.Subject == "" {
		return Record{}, ErrBadRecord
	}
	t, err := readTail(tx, account)
	if err != nil {
		return Record{}, err
	}
	last, lastHour := t.seq, t.hour
	r.Seq = last + 1
	r.ID = eventID(account, r.Seq)
	r.Data.Sequencer = Sequencer(r.Seq)
	r.EventTime = r.EventTime.UTC()
	r.Segment = r.EventTime.Truncate(time.Hour)
	if last > 0 && !r.Segment.After(lastHour) {
		r.Segment = lastHour
	} else if err := tx.Put(segmentKey(account, r.Segment), []byte(strconv.FormatUint(r.Seq, 10))); err != nil {
		return Record{}, err
	}
	if !t.compact {
		// The log's last record is in the first form, or there is none:
		// retire the counter key that numbered records before, so that
		// an older Cerulean on the same store fails to append to this
		// log rather than numbering a record again.
		if err := tx.Put(counterKey(account), []byte(counterRetired)); err != nil {
			return Record{}, err
		}
	}
	if err := tx.Put(recordKey(account, r.Seq), encodeRecord(make([]byte, 0, encodedSize(&r)), &r)); err != nil {
		return Record{}, err
	}
	return r, nil
}

// LastSeq returns the sequence number of account's last record (0: none).
func LastSeq(tx kv.Tx, account string) (uint64, error) {
	t, err := readTail(tx, account)
	return t.seq, err
}

// counterRetired is the value of an account's counter key once records
// are numbered from the log's end (Append): a value an older Cerulean
// refuses to parse.
const counterRetired = "retired: numbered from the last record"

// tail is the end of an account's log.
type tail struct {
	seq     uint64    // the last record's sequence number (0: none)
	hour    time.Time // the segment of the last record
	compact bool      // the last record is in the compact form
}

// readTail reads the end of account's log: its last record, or, with
// none, the counter key an older Cerulean kept (a log it created and
// never appended to since holds its number there).
func readTail(tx kv.Tx, account string) (tail, error) {
	// What the scan finds, in one value rather than one per variable its
	// function captures.
	var st struct {
		t      tail
		found  bool
		err    error
		prefix []byte
	}
	st.prefix = recordPrefix(account)
	err := tx.Scan(st.prefix, kv.PrefixEnd(st.prefix), 1, true, func(k, v []byte) bool {
		st.found = true
		if len(k) != len(st.prefix)+8 {
			st.err = fmt.Errorf("changelog: record key %q", k)
			return false
		}
		st.t.seq = binary.BigEndian.Uint64(k[len(st.prefix):])
		var err error
		if st.t.hour, st.t.compact, err = recordSegment(v); err != nil {
			st.err = fmt.Errorf("changelog: record %d of %q: %w", st.t.seq, account, err)
		}
		return false
	})
	if err == nil {
		err = st.err
	}
	if err != nil || st.found {
		return st.t, err
	}
	var t tail
	t.seq, t.hour, err = counter(tx, account)
	return t, err
}

// counter reads account's counter key, as an older Cerulean kept it: the
// last sequence number and the segment of the last record (0 when the
// key is missing or retired).
func counter(tx kv.Tx, account string) (uint64, time.Time, error) {
	v, err := tx.Get(counterKey(account))
	if errors.Is(err, kv.ErrNotFound) || (err == nil && string(v) == counterRetired) {
		return 0, time.Time{}, nil
	}
	if err != nil {
		return 0, time.Time{}, err
	}
	seq, hour, ok := strings.Cut(string(v), " ")
	n, err := strconv.ParseUint(seq, 10, 64)
	h, herr := strconv.ParseInt(hour, 10, 64)
	if err != nil || herr != nil || !ok {
		return 0, time.Time{}, fmt.Errorf("changelog: counter of %q is %q", account, v)
	}
	return n, time.Unix(h, 0).UTC(), nil
}

// Segments returns the hours of account's log that have records, in
// order.
func Segments(tx kv.Tx, account string) ([]Segment, error) {
	t, err := readTail(tx, account)
	if err != nil || t.seq == 0 {
		return nil, err
	}
	last := t.seq
	prefix := segmentPrefix(account)
	var out []Segment
	var perr error
	err = tx.Scan(prefix, kv.PrefixEnd(prefix), 0, false, func(k, v []byte) bool {
		first, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil || len(k) != len(prefix)+8 {
			perr = fmt.Errorf("changelog: segment index entry of %q is %q", account, v)
			return false
		}
		start := time.Unix(int64(binary.BigEndian.Uint64(k[len(prefix):])), 0).UTC()
		if n := len(out); n > 0 {
			out[n-1].Last = first - 1
		}
		out = append(out, Segment{Start: start, First: first, Last: last})
		return true
	})
	if err == nil {
		err = perr
	}
	return out, err
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
		if len(k) != len(prefix)+8 {
			derr = fmt.Errorf("changelog: record key %q", k)
			return false
		}
		if derr = decodeRecord(account, binary.BigEndian.Uint64(k[len(prefix):]), v, &r); derr != nil {
			derr = fmt.Errorf("changelog: decoding %q: %w", k, derr)
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

// Accounts returns the accounts that have a log, in order.
func Accounts(tx kv.Tx) ([]string, error) {
	var out []string
	start, end := kv.Key(space), kv.PrefixEnd(kv.Key(space))
	for {
		var next string
		var bad error
		err := tx.Scan(start, end, 1, false, func(k, _ []byte) bool {
			acct, ok := firstComponent(k[len(kv.Key(space)):])
			if !ok {
				bad = fmt.Errorf("changelog: key %q", k)
				return false
			}
			next = acct
			return false
		})
		if err == nil {
			err = bad
		}
		if err != nil || next == "" {
			return out, err
		}
		out = append(out, next)
		start = kv.PrefixEnd(kv.Key(space, next))
	}
}

// firstComponent decodes the key component b starts with (kv.Key's
// escaping); what follows it may be binary, which kv.Split refuses.
func firstComponent(b []byte) (string, bool) {
	var cur []byte
	for i := 0; i+1 < len(b); i++ {
		if b[i] != 0 {
			cur = append(cur, b[i])
			continue
		}
		switch b[i+1] {
		case 0xFF:
			cur = append(cur, 0)
			i++
		case 1:
			return string(cur), len(cur) > 0
		default:
			return "", false
		}
	}
	return "", false
}

// Trim removes up to limit index entries and records of account's log
// that lie in hours ending at or before before (the change feed's
// retention: whole hourly segments go, the oldest first, never the hour
// holding the log's last record, so that record, which numbers the
// next, and the newest segment stay), and returns how many it removed; 0 means nothing is left to
// trim. A segment's index entry goes first, so a reader that lists the
// segments never sees one with records missing; its records follow over
// as many calls as they take.
func Trim(tx kv.Tx, account string, before time.Time, limit int) (int, error) {
	segs, err := Segments(tx, account)
	if err != nil || len(segs) == 0 {
		return 0, err
	}
	removed := 0
	keep := segs[0].First
	for _, sg := range segs[:len(segs)-1] {
		if sg.Start.Add(time.Hour).After(before) || removed == limit {
			break
		}
		if err := tx.Delete(segmentKey(account, sg.Start)); err != nil {
			return removed, err
		}
		removed++
		keep = sg.Last + 1
	}
	if removed >= limit {
		return removed, nil
	}
	// The records before the first segment kept: those of the entries
	// removed now or by an earlier call.
	var keys [][]byte
	prefix := recordPrefix(account)
	if err := tx.Scan(prefix, recordKey(account, keep), limit-removed, false, func(k, _ []byte) bool {
		keys = append(keys, append([]byte(nil), k...))
		return true
	}); err != nil {
		return removed, err
	}
	for _, k := range keys {
		if err := tx.Delete(k); err != nil {
			return removed, err
		}
	}
	return removed + len(keys), nil
}
