package blob

import (
	"encoding/base64"
	"sort"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// listMarker is the position List Blobs resumes at: a blob (name and
// snapshot) or a virtual directory prefix.
func encodeMarker(kind, name, snap string) string {
	return kind + base64.RawURLEncoding.EncodeToString([]byte(name)) + "." + snap
}

func decodeMarker(m string) (kind, name, snap string, ok bool) {
	if len(m) < 2 || (m[0] != 'b' && m[0] != 'p' && m[0] != 'v') {
		return "", "", "", false
	}
	rest := m[1:]
	i := strings.IndexByte(rest, '.')
	if i < 0 {
		return "", "", "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest[:i])
	if err != nil {
		return "", "", "", false
	}
	return m[:1], string(raw), rest[i+1:], true
}

// listEntry is one candidate of a listing before paging.
type listEntry struct {
	name, snap string
	prefix     bool
	version    bool // a previous version: snap is its version id
	// versionsOnly is a name without a current version, listed once
	// (rec: its latest version).
	versionsOnly bool
	rec          *blobRec // nil for prefixes and uncommitted-only blobs
}

// blobScan describes one List Blobs pass over the blob records.
type blobScan struct {
	start, end    []byte
	prefix, delim string
	snapshots     bool
	keep          func(*blobRec) bool // when set, records it rejects are skipped
	resume        bool                // a "b" marker: resumeName/resumeSnap is the next entry
	resumeName    string              // the marker's blob
	resumeSnap    string              // the marker's snapshot ("" = the base blob)
}

// scanBatch is how many records one kv scan visits before the listing
// resumes with a new scan.
const scanBatch = 1024

// prefixBatch is the first batch of a delimiter listing and of the scan
// after each BlobPrefix it folds: the next name may be another prefix
// at once, and on a store where a scan is a round trip that fetches its
// whole batch (PostgreSQL) a full batch per prefix read ~1,000 rows to
// use one. The batch grows fourfold while scans use all of it.
const prefixBatch = 16

// collect returns up to limit entries in the service's order: names
// ascending, names containing the delimiter after the prefix folded into
// one BlobPrefix entry each, and a blob's snapshots (oldest first) before
// the blob itself.
func (sc *blobScan) collect(tx kv.Tx, limit int) ([]listEntry, error) {
	var out []listEntry
	var pending *listEntry // the base record of the current name, listed after its snapshots
	full := func() bool { return len(out) >= limit }
	flush := func() {
		if pending != nil && !full() {
			out = append(out, *pending)
		}
		pending = nil
	}
	from := sc.start
	batch := scanBatch
	if sc.delim != "" {
		batch = prefixBatch
	}
	for !full() {
		var next []byte // where the following scan starts; nil: range exhausted
		visited := 0
		stop := false
		folded := false
		var derr error
		err := tx.Scan(from, sc.end, batch, false, func(k, v []byte) bool {
			visited++
			next = append(append(next[:0], k...), 0) // just after k
			parts, ok := kv.Split(k)
			if !ok || len(parts) != 5 {
				return true
			}
			name, snap := parts[3], parts[4]
			if pending != nil && pending.name != name {
				flush()
				if full() {
					stop = true
					return false
				}
			}
			var rec *blobRec
			if sc.keep != nil {
				// Only records this pass lists make an entry or a
				// BlobPrefix.
				if snap != "" && !sc.snapshots {
					return true
				}
				rec = new(blobRec)
				if derr = kv.DecodeJSON(k, v, rec); derr != nil {
					return false
				}
				if !sc.keep(rec) {
					return true
				}
			}
			if sc.delim != "" && strings.HasPrefix(name, sc.prefix) {
				if i := strings.Index(name[len(sc.prefix):], sc.delim); i >= 0 {
					p := name[:len(sc.prefix)+i+len(sc.delim)]
					out = append(out, listEntry{name: p, prefix: true})
					// Skip everything under p.
					next = kv.PrefixEnd(kv.AppendPartial(kv.Key(parts[0], parts[1], parts[2]), p))
					visited = 0 // a deliberate restart, not an exhausted batch
					folded = true
					return false
				}
			}
			if snap != "" {
				if !sc.snapshots {
					return true
				}
				if sc.resume && name == sc.resumeName && (sc.resumeSnap == "" || snap < sc.resumeSnap) {
					return true // listed on an earlier page
				}
			}
			if rec == nil {
				rec = new(blobRec)
				if derr = kv.DecodeJSON(k, v, rec); derr != nil {
					return false
				}
			}
			e := listEntry{name: name, snap: snap, rec: rec}
			if snap == "" && sc.snapshots {
				pending = &e
				return true
			}
			out = append(out, e)
			if full() {
				stop = true
				return false
			}
			return true
		})
		if err == nil {
			err = derr
		}
		if err != nil {
			return nil, err
		}
		if stop || full() {
			break
		}
		if next == nil || (visited > 0 && visited < batch) || (sc.end != nil && string(next) >= string(sc.end)) {
			break // the range is exhausted
		}
		if folded {
			batch = prefixBatch
		} else {
			batch = min(4*batch, scanBatch)
		}
		from = next
	}
	flush()
	return out, nil
}

// collectUncommitted lists blobs that have only uncommitted blocks.
func collectUncommitted(tx kv.Tx, start, end []byte, prefix, delim string, limit int) ([]listEntry, error) {
	var out []listEntry
	seen := map[string]bool{}
	err := tx.Scan(start, end, 0, false, func(k, v []byte) bool {
		parts, ok := kv.Split(k)
		if !ok || len(parts) != 5 {
			return true
		}
		name := parts[3]
		if delim != "" {
			if i := strings.Index(name[len(prefix):], delim); i >= 0 {
				name = name[:len(prefix)+i+len(delim)]
				if !seen[name] {
					seen[name] = true
					out = append(out, listEntry{name: name, prefix: true})
				}
				return len(out) < limit
			}
		}
		if seen[name] {
			return true
		}
		seen[name] = true
		if _, err := tx.Get(BlobKey(parts[1], parts[2], name, "")); err == nil {
			return true
		}
		out = append(out, listEntry{name: name})
		return len(out) < limit
	})
	return out, err
}

// mergeEntries merges two name-ordered lists, dropping duplicate prefixes.
func mergeEntries(a, b []listEntry) []listEntry {
	out := make([]listEntry, 0, len(a)+len(b))
	seen := map[string]bool{}
	for _, e := range a {
		if e.prefix {
			seen[e.name] = true
		}
	}
	for _, e := range b {
		if e.prefix && seen[e.name] {
			continue
		}
		out = append(out, e)
	}
	out = append(out, a...)
	sort.SliceStable(out, func(i, j int) bool { return entryLess(out[i], out[j]) })
	return out
}

// entryLess is the listing order: by name, and within one name the
// snapshots (oldest first), then the previous versions (oldest first),
// then the base blob.
func entryLess(a, b listEntry) bool {
	if a.name != b.name {
		return a.name < b.name
	}
	if ra, rb := a.rank(), b.rank(); ra != rb {
		return ra < rb
	}
	return a.snap < b.snap
}

// rank orders the entries of one name: snapshots, versions, the base.
func (e listEntry) rank() int {
	switch {
	case e.version:
		return 1
	case e.snap == "":
		return 2
	}
	return 0
}

// resumeRange is the key range a listing of the names under base scans
// for the names starting with prefix, resumed at the marker (mkind,
// mname): at the marker name's first key (atName) for a blob or version
// marker, at the folded prefix itself for a prefix marker, never before
// the prefix's first key; startFrom, when set, moves the start on to that
// name's first key when that is later.
func resumeRange(base []byte, prefix, mkind, mname, startFrom string, atName func(name string) []byte) (start, end []byte) {
	rangeStart := kv.AppendPartial(append([]byte(nil), base...), prefix)
	start, end = rangeStart, kv.PrefixEnd(rangeStart)
	switch mkind {
	case "b", "v":
		start = atName(mname)
	case "p":
		start = kv.AppendPartial(append([]byte(nil), base...), mname)
	}
	if string(start) < string(rangeStart) {
		start = rangeStart
	}
	if startFrom != "" {
		if from := atName(startFrom); string(start) < string(from) {
			start = from
		}
	}
	return start, end
}
