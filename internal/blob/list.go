package blob

import (
	"encoding/base64"
	"encoding/xml"
	"math"
	"net/http"
	"sort"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

const maxListResults = 5000

// metaXML is the listings' <Metadata> element.
type metaXML = wire.MetadataXML

func parseMaxResults(r *req) (int, error) {
	n, err := wire.ParseIntQuery(r.q, "maxresults", 1, math.MaxInt32, maxListResults)
	if err != nil {
		return 0, err
	}
	return min(n, maxListResults), nil
}

func (r *req) endpoint() string {
	return r.AccountURL() + "/"
}

type containerPropsXML struct {
	LastModified  string `xml:"Last-Modified"`
	ETag          string `xml:"Etag"`
	LeaseStatus   string `xml:"LeaseStatus"`
	LeaseState    string `xml:"LeaseState"`
	LeaseDuration string `xml:"LeaseDuration,omitempty"`
	PublicAccess  string `xml:"PublicAccess,omitempty"`
	Immutability  bool   `xml:"HasImmutabilityPolicy"`
	LegalHold     bool   `xml:"HasLegalHold"`
}

type containerXML struct {
	Name       string            `xml:"Name"`
	Properties containerPropsXML `xml:"Properties"`
	Metadata   metaXML           `xml:"Metadata,omitempty"`
}

type listContainersXML struct {
	XMLName    xml.Name       `xml:"EnumerationResults"`
	Endpoint   string         `xml:"ServiceEndpoint,attr"`
	Prefix     string         `xml:"Prefix,omitempty"`
	Marker     string         `xml:"Marker,omitempty"`
	MaxResults int            `xml:"MaxResults,omitempty"`
	Containers []containerXML `xml:"Containers>Container"`
	NextMarker string         `xml:"NextMarker"`
}

func parseInclude(r *req, allowed ...string) (map[string]bool, error) {
	out := map[string]bool{}
	v := r.q.Get("include")
	if v == "" {
		return out, nil
	}
	for _, it := range strings.Split(v, ",") {
		it = strings.ToLower(strings.TrimSpace(it))
		ok := false
		for _, a := range allowed {
			if a == it {
				ok = true
			}
		}
		if !ok {
			return nil, azerr.InvalidQuery("include", v)
		}
		out[it] = true
	}
	return out, nil
}

func (s *Service) listContainers(w http.ResponseWriter, r *req) error {
	maxN, err := parseMaxResults(r)
	if err != nil {
		return err
	}
	inc, err := parseInclude(r, "metadata", "deleted", "system")
	if err != nil {
		return err
	}
	prefix, marker := r.q.Get("prefix"), r.q.Get("marker")
	out := listContainersXML{Endpoint: r.endpoint(), Prefix: prefix, Marker: marker, Containers: []containerXML{}}
	if r.q.Has("maxresults") {
		out.MaxResults = maxN
	}
	base := containersPrefix(r.Account)
	start := kv.AppendPartial(append([]byte(nil), base...), prefix)
	end := kv.PrefixEnd(start)
	if marker != "" && marker > prefix {
		start = containerKey(r.Account, marker)
	}
	err = s.store.View(r.Context(), func(tx kv.Tx) error {
		var derr error
		err := tx.Scan(start, end, maxN+1, false, func(k, v []byte) bool {
			parts, ok := kv.Split(k)
			if !ok || len(parts) != 3 {
				return true
			}
			if len(out.Containers) == maxN {
				out.NextMarker = parts[2]
				return false
			}
			var c container
			if derr = kv.DecodeJSON(k, v, &c); derr != nil {
				return false
			}
			e := c.Lease.Effective(r.Now)
			cx := containerXML{Name: parts[2], Properties: containerPropsXML{
				LastModified: c.Modified.UTC().Format(http.TimeFormat), ETag: c.ETag,
				LeaseStatus: e.Status, LeaseState: e.State, LeaseDuration: e.Duration, PublicAccess: c.PublicAccess,
			}}
			if inc["metadata"] {
				cx.Metadata = metaXML(c.Meta)
				if cx.Metadata == nil {
					cx.Metadata = metaXML{}
				}
			}
			out.Containers = append(out.Containers, cx)
			return true
		})
		if err == nil {
			err = derr
		}
		return err
	})
	if err != nil {
		return err
	}
	return server.WriteXML(w, http.StatusOK, out)
}

type blobPropsXML struct {
	Created        string `xml:"Creation-Time"`
	LastModified   string `xml:"Last-Modified"`
	ETag           string `xml:"Etag"`
	Size           int64  `xml:"Content-Length"`
	ContentType    string `xml:"Content-Type"`
	ContentEnc     string `xml:"Content-Encoding"`
	ContentLang    string `xml:"Content-Language"`
	ContentCRC64   string `xml:"Content-CRC64"`
	ContentMD5     string `xml:"Content-MD5"`
	CacheControl   string `xml:"Cache-Control"`
	ContentDisp    string `xml:"Content-Disposition"`
	SeqNum         *int64 `xml:"x-ms-blob-sequence-number,omitempty"`
	BlobType       string `xml:"BlobType"`
	AccessTier     string `xml:"AccessTier,omitempty"`
	TierInferred   bool   `xml:"AccessTierInferred,omitempty"`
	TierChanged    string `xml:"AccessTierChangeTime,omitempty"`
	LeaseStatus    string `xml:"LeaseStatus,omitempty"`
	LeaseState     string `xml:"LeaseState,omitempty"`
	LeaseDuration  string `xml:"LeaseDuration,omitempty"`
	CopyID         string `xml:"CopyId,omitempty"`
	CopyStatus     string `xml:"CopyStatus,omitempty"`
	CopySource     string `xml:"CopySource,omitempty"`
	CopyProgress   string `xml:"CopyProgress,omitempty"`
	CopyCompletion string `xml:"CopyCompletionTime,omitempty"`
	ServerEnc      bool   `xml:"ServerEncrypted"`
	Sealed         *bool  `xml:"Sealed,omitempty"`
	DeletedTime    string `xml:"DeletedTime,omitempty"`
	RemainingDays  *int   `xml:"RemainingRetentionDays,omitempty"`
	TagCount       int    `xml:"TagCount,omitempty"`
}

// tagSetXML is a listed blob's <Tags> (include=tags).
type tagSetXML struct {
	Tags []tagKVXML `xml:"TagSet>Tag"`
}

type tagKVXML struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

type blobItemXML struct {
	XMLName    xml.Name         `xml:"Blob"`
	Name       wire.EncodedName `xml:"Name"`
	Snapshot   string           `xml:"Snapshot,omitempty"`
	Deleted    bool             `xml:"Deleted,omitempty"`
	Properties *blobPropsXML    `xml:"Properties"`
	Metadata   metaXML          `xml:"Metadata,omitempty"`
	Tags       *tagSetXML       `xml:"Tags,omitempty"`
}

type blobPrefixXML struct {
	XMLName xml.Name         `xml:"BlobPrefix"`
	Name    wire.EncodedName `xml:"Name"`
}

type listBlobsXML struct {
	XMLName    xml.Name `xml:"EnumerationResults"`
	Endpoint   string   `xml:"ServiceEndpoint,attr"`
	Container  string   `xml:"ContainerName,attr"`
	Prefix     string   `xml:"Prefix,omitempty"`
	Marker     string   `xml:"Marker,omitempty"`
	MaxResults int      `xml:"MaxResults,omitempty"`
	Delimiter  string   `xml:"Delimiter,omitempty"`
	Items      []any    `xml:"Blobs>any"`
	NextMarker string   `xml:"NextMarker"`
}

// listMarker is the position List Blobs resumes at: a blob (name and
// snapshot) or a virtual directory prefix.
func encodeMarker(kind, name, snap string) string {
	return kind + base64.RawURLEncoding.EncodeToString([]byte(name)) + "." + snap
}

func decodeMarker(m string) (kind, name, snap string, ok bool) {
	if len(m) < 2 || (m[0] != 'b' && m[0] != 'p') {
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

func (s *Service) blobItem(name, snap string, b *blobRec, inc map[string]bool, r *req) blobItemXML {
	p := &blobPropsXML{
		Created: b.Created.UTC().Format(http.TimeFormat), LastModified: b.Modified.UTC().Format(http.TimeFormat),
		ETag: strings.Trim(b.ETag, `"`), Size: b.Size, ContentType: b.Props.ContentType, ContentEnc: b.Props.ContentEncoding,
		ContentLang: b.Props.ContentLanguage, CacheControl: b.Props.CacheControl, ContentDisp: b.Props.ContentDisposition,
		BlobType: b.Type, ServerEnc: true,
	}
	if b.Props.ContentMD5 != nil {
		p.ContentMD5 = base64.StdEncoding.EncodeToString(b.Props.ContentMD5)
	}
	switch b.Type {
	case BlockBlob:
		p.AccessTier, p.TierInferred = b.tier()
		if b.TierChanged != nil {
			p.TierChanged = b.TierChanged.UTC().Format(http.TimeFormat)
		}
	case PageBlob:
		seq := b.SeqNum
		p.SeqNum = &seq
	case AppendBlob:
		sealed := b.Sealed
		p.Sealed = &sealed
	}
	it := blobItemXML{Name: wire.EncodedName(name), Snapshot: snap, Properties: p}
	switch {
	case b.Del != nil:
		// A soft-deleted blob or snapshot (include=deleted): no lease.
		it.Deleted = true
		p.DeletedTime = b.Del.At.UTC().Format(http.TimeFormat)
		days := b.Del.remainingDays(r.Now)
		p.RemainingDays = &days
	case snap == "":
		e := b.Lease.Effective(r.Now)
		p.LeaseStatus, p.LeaseState, p.LeaseDuration = e.Status, e.State, e.Duration
	}
	if inc["copy"] && b.Copy != nil {
		p.CopyID, p.CopyStatus, p.CopySource = b.Copy.ID, b.Copy.Status, b.Copy.Source
		p.CopyProgress, p.CopyCompletion = b.Copy.Progress, b.Copy.Completion.UTC().Format(http.TimeFormat)
	}
	if inc["metadata"] {
		it.Metadata = metaXML(b.Meta)
		if it.Metadata == nil {
			it.Metadata = metaXML{}
		}
	}
	p.TagCount = len(b.Tags)
	if inc["tags"] && len(b.Tags) > 0 {
		it.Tags = &tagSetXML{}
		for _, k := range b.Tags.Keys() {
			it.Tags.Tags = append(it.Tags.Tags, tagKVXML{k, b.Tags[k]})
		}
	}
	return it
}

// listEntry is one candidate of a listing before paging.
type listEntry struct {
	name, snap string
	prefix     bool
	rec        *blobRec // nil for prefixes and uncommitted-only blobs
}

func (s *Service) listBlobs(w http.ResponseWriter, r *req) error {
	maxN, err := parseMaxResults(r)
	if err != nil {
		return err
	}
	inc, err := parseInclude(r, "snapshots", "metadata", "uncommittedblobs", "copy", "deleted", "tags", "versions", "immutabilitypolicy", "legalhold", "deletedwithversions", "permissions")
	if err != nil {
		return err
	}
	prefix, delim, marker := r.q.Get("prefix"), r.q.Get("delimiter"), r.q.Get("marker")
	out := listBlobsXML{Endpoint: r.endpoint(), Container: r.container, Prefix: prefix, Marker: marker, Delimiter: delim, Items: []any{}}
	if r.q.Has("maxresults") {
		out.MaxResults = maxN
	}
	var mkind, mname, msnap string
	if marker != "" {
		var ok bool
		if mkind, mname, msnap, ok = decodeMarker(marker); !ok {
			return azerr.Newf(azerr.InvalidQueryParameterValue, "The marker is not valid.").With("QueryParameterName", "marker").With("QueryParameterValue", marker)
		}
	}
	// newScan returns the pass over one record range: "b" (live blobs) or
	// "bd" (soft-deleted ones, same tuple shape).
	newScan := func(ns string, snapshots bool) blobScan {
		base := kv.Key(ns, r.Account, r.container)
		rangeStart := kv.AppendPartial(append([]byte(nil), base...), prefix)
		sc := blobScan{start: rangeStart, end: kv.PrefixEnd(rangeStart), prefix: prefix, delim: delim, snapshots: snapshots}
		switch mkind {
		case "b":
			// Resume at the blob's first record: its base record is held
			// back until its snapshots are listed, so it must be read again
			// even when the marker is one of the snapshots.
			sc.start = kv.Key(ns, r.Account, r.container, mname, "")
			sc.resume, sc.resumeName, sc.resumeSnap = true, mname, msnap
		case "p":
			sc.start = kv.AppendPartial(append([]byte(nil), base...), mname)
		}
		if string(sc.start) < string(rangeStart) {
			sc.start = rangeStart
		}
		return sc
	}
	scan := newScan("b", inc["snapshots"])
	uRangeStart := kv.AppendPartial(kv.Key("u", r.Account, r.container), prefix)
	uend := kv.PrefixEnd(uRangeStart)
	ustart := uRangeStart
	switch mkind {
	case "b":
		ustart = blocksPrefix(r.Account, r.container, mname)
	case "p":
		ustart = kv.AppendPartial(kv.Key("u", r.Account, r.container), mname)
	}
	if string(ustart) < string(uRangeStart) {
		ustart = uRangeStart
	}
	var entries []listEntry
	err = s.store.View(r.Context(), func(tx kv.Tx) error {
		if _, err := loadContainer(tx, r.Account, r.container); err != nil {
			return err
		}
		entries, err = scan.collect(tx, maxN+1)
		if err != nil {
			return err
		}
		if inc["deleted"] {
			// Soft-deleted blobs, and with include=snapshots their
			// soft-deleted snapshots, still retained at the request's time.
			ds := newScan("bd", inc["snapshots"])
			ds.keep = func(b *blobRec) bool { return b.Del.retained(r.Now) }
			dead, err := ds.collect(tx, maxN+1)
			if err != nil {
				return err
			}
			entries = mergeEntries(entries, dead)
		}
		if inc["uncommittedblobs"] {
			extra, err := collectUncommitted(tx, ustart, uend, prefix, delim, maxN+1)
			if err != nil {
				return err
			}
			entries = mergeEntries(entries, extra)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(entries) > maxN {
		next := entries[maxN]
		kind := "b"
		if next.prefix {
			kind = "p"
		}
		out.NextMarker = encodeMarker(kind, next.name, next.snap)
		entries = entries[:maxN]
	}
	for _, e := range entries {
		switch {
		case e.prefix:
			out.Items = append(out.Items, blobPrefixXML{Name: wire.EncodedName(e.name)})
		case e.rec != nil:
			out.Items = append(out.Items, s.blobItem(e.name, e.snap, e.rec, inc, r))
		default:
			out.Items = append(out.Items, blobItemXML{Name: wire.EncodedName(e.name), Properties: &blobPropsXML{BlobType: BlockBlob, ServerEnc: true}})
		}
	}
	return server.WriteXML(w, http.StatusOK, out)
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
	for !full() {
		var next []byte // where the following scan starts; nil: range exhausted
		visited := 0
		stop := false
		var derr error
		err := tx.Scan(from, sc.end, scanBatch, false, func(k, v []byte) bool {
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
		if next == nil || (visited > 0 && visited < scanBatch) || (sc.end != nil && string(next) >= string(sc.end)) {
			break // the range is exhausted
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
		if _, err := tx.Get(blobKey(parts[1], parts[2], name, "")); err == nil {
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
// snapshots (oldest first) before the base blob.
func entryLess(a, b listEntry) bool {
	if a.name != b.name {
		return a.name < b.name
	}
	if a.snap == "" || b.snap == "" {
		return a.snap != "" && b.snap == ""
	}
	return a.snap < b.snap
}
