package blob

import (
	"encoding/base64"
	"encoding/json"
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

// metaXML renders metadata as <Metadata><key>value</key>...</Metadata>.
type metaXML map[string]string

func (m metaXML) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := e.EncodeElement(m[k], xml.StartElement{Name: xml.Name{Local: k}}); err != nil {
			return err
		}
	}
	return e.EncodeToken(start.End())
}

func parseMaxResults(r *req) (int, error) {
	n, err := wire.ParseIntQuery(r.q, "maxresults", 1, math.MaxInt32, maxListResults)
	if err != nil {
		return 0, err
	}
	return min(n, maxListResults), nil
}

func (r *req) endpoint() string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/" + r.Account + "/"
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
		return tx.Scan(start, end, maxN+1, false, func(k, v []byte) bool {
			parts, ok := kv.Split(k)
			if !ok || len(parts) != 3 {
				return true
			}
			if len(out.Containers) == maxN {
				out.NextMarker = parts[2]
				return false
			}
			var c container
			if json.Unmarshal(v, &c) != nil {
				return true
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
}

type blobItemXML struct {
	XMLName    xml.Name      `xml:"Blob"`
	Name       string        `xml:"Name"`
	Snapshot   string        `xml:"Snapshot,omitempty"`
	Properties *blobPropsXML `xml:"Properties"`
	Metadata   metaXML       `xml:"Metadata,omitempty"`
}

type blobPrefixXML struct {
	XMLName xml.Name `xml:"BlobPrefix"`
	Name    string   `xml:"Name"`
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
		ETag: b.ETag, Size: b.Size, ContentType: b.Props.ContentType, ContentEnc: b.Props.ContentEncoding,
		ContentLang: b.Props.ContentLanguage, CacheControl: b.Props.CacheControl, ContentDisp: b.Props.ContentDisposition,
		BlobType: b.Type, ServerEnc: true,
	}
	if b.Props.ContentMD5 != nil {
		p.ContentMD5 = base64.StdEncoding.EncodeToString(b.Props.ContentMD5)
	}
	switch b.Type {
	case BlockBlob:
		p.AccessTier, p.TierInferred = "Hot", true
	case PageBlob:
		seq := b.SeqNum
		p.SeqNum = &seq
	case AppendBlob:
		sealed := b.Sealed
		p.Sealed = &sealed
	}
	if snap == "" {
		e := b.Lease.Effective(r.Now)
		p.LeaseStatus, p.LeaseState, p.LeaseDuration = e.Status, e.State, e.Duration
	}
	if inc["copy"] && b.Copy != nil {
		p.CopyID, p.CopyStatus, p.CopySource = b.Copy.ID, b.Copy.Status, b.Copy.Source
		p.CopyProgress, p.CopyCompletion = b.Copy.Progress, b.Copy.Completion.UTC().Format(http.TimeFormat)
	}
	it := blobItemXML{Name: name, Snapshot: snap, Properties: p}
	if inc["metadata"] {
		it.Metadata = metaXML(b.Meta)
		if it.Metadata == nil {
			it.Metadata = metaXML{}
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
	base := blobsPrefix(r.Account, r.container)
	rangeStart := kv.AppendPartial(append([]byte(nil), base...), prefix)
	rangeEnd := kv.PrefixEnd(rangeStart)
	start := rangeStart
	ustart := kv.AppendPartial(kv.Key("u", r.Account, r.container), prefix)
	uend := kv.PrefixEnd(ustart)
	if marker != "" {
		kind, name, snap, ok := decodeMarker(marker)
		if !ok {
			return azerr.Newf(azerr.InvalidQueryParameterValue, "The marker is not valid.").With("QueryParameterName", "marker").With("QueryParameterValue", marker)
		}
		if kind == "b" {
			start = blobKey(r.Account, r.container, name, snap)
			ustart = blocksPrefix(r.Account, r.container, name)
		} else {
			start = kv.AppendPartial(append([]byte(nil), base...), name)
			ustart = kv.AppendPartial(kv.Key("u", r.Account, r.container), name)
		}
		if string(start) < string(rangeStart) {
			start = rangeStart
		}
		if string(ustart) < string(kv.AppendPartial(kv.Key("u", r.Account, r.container), prefix)) {
			ustart = kv.AppendPartial(kv.Key("u", r.Account, r.container), prefix)
		}
	}
	var entries []listEntry
	err = s.store.View(r.Context(), func(tx kv.Tx) error {
		if _, err := loadContainer(tx, r.Account, r.container); err != nil {
			return err
		}
		entries, err = collectBlobs(tx, start, rangeEnd, prefix, delim, inc["snapshots"], maxN+1)
		if err != nil {
			return err
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
			out.Items = append(out.Items, blobPrefixXML{Name: e.name})
		case e.rec != nil:
			out.Items = append(out.Items, s.blobItem(e.name, e.snap, e.rec, inc, r))
		default:
			out.Items = append(out.Items, blobItemXML{Name: e.name, Properties: &blobPropsXML{BlobType: BlockBlob, ServerEnc: true}})
		}
	}
	return server.WriteXML(w, http.StatusOK, out)
}

// collectBlobs scans blob records from start, folding names that contain
// the delimiter after the prefix into one BlobPrefix entry each.
func collectBlobs(tx kv.Tx, start, end []byte, prefix, delim string, snapshots bool, limit int) ([]listEntry, error) {
	var out []listEntry
	base := start
	for len(out) < limit {
		var resume []byte
		done := true
		err := tx.Scan(base, end, 1024, false, func(k, v []byte) bool {
			parts, ok := kv.Split(k)
			if !ok || len(parts) != 5 {
				return true
			}
			name, snap := parts[3], parts[4]
			if delim != "" {
				if i := strings.Index(name[len(prefix):], delim); i >= 0 {
					p := name[:len(prefix)+i+len(delim)]
					out = append(out, listEntry{name: p, prefix: true})
					// skip everything under p
					pk := kv.AppendPartial(kv.Key(parts[0], parts[1], parts[2]), p)
					resume = kv.PrefixEnd(pk)
					done = false
					return false
				}
			}
			if snap != "" && !snapshots {
				return true
			}
			var b blobRec
			if json.Unmarshal(v, &b) != nil {
				return true
			}
			out = append(out, listEntry{name: name, snap: snap, rec: &b})
			resume = append(append([]byte(nil), k...), 0)
			if len(out) >= limit {
				done = true
				return false
			}
			done = false
			return true
		})
		if err != nil {
			return nil, err
		}
		if done || resume == nil || (end != nil && string(resume) >= string(end)) {
			break
		}
		if string(resume) == string(base) {
			break
		}
		base = resume
	}
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
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].name != out[j].name {
			return out[i].name < out[j].name
		}
		return out[i].snap < out[j].snap
	})
	return out
}
