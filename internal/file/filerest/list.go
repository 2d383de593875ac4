package filerest

import (
	"encoding/base64"
	"encoding/xml"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// List Directories and Files.
//
// Order: entries are keyed by their folded (upper-cased) name, so a directory
// lists in the order of the folded names' code points, files and directories
// intermixed (List Directories and Files,
// https://learn.microsoft.com/en-us/rest/api/storageservices/list-directories-and-files:
// "listed intermixed in lexically sorted order"). This is the
// case-insensitive ordinal order NTFS (and so an SMB client of Azure Files)
// shows: "a", "B", "c" — not "B", "a", "c".
//
// Paging: NextMarker is the folded name of the first entry not returned
// (opaque to clients: base64url). A page resumes at that key, so paging is
// stable under concurrent changes: an entry that exists throughout the
// listing is returned exactly once, whatever is created or deleted
// meanwhile; entries created behind the marker are not seen.
//
// Prefix matches case-insensitively, like every name comparison of the
// service (inferred: no source says; a case-sensitive prefix over a
// case-insensitive namespace would list "Ab" for prefix "A" but not for
// "a").

// maxListEntries is the largest page (maxresults above it is clamped)
// (List Directories and Files).
const maxListEntries = 5000

// listInclude is the parsed include= of List Directories and Files.
type listInclude struct {
	timestamps, etag, attributes, permissionKey bool
}

// parseListInclude parses include=Timestamps,ETag,Attributes,PermissionKey
// (case-insensitive, any order) (azfile ListFilesIncludeType).
func parseListInclude(v string) (listInclude, error) {
	var inc listInclude
	if v == "" {
		return inc, nil
	}
	for _, it := range strings.Split(v, ",") {
		switch strings.ToLower(strings.TrimSpace(it)) {
		case "timestamps":
			inc.timestamps = true
		case "etag":
			inc.etag = true
		case "attributes":
			inc.attributes = true
		case "permissionkey":
			inc.permissionKey = true
		default:
			return inc, azerr.InvalidQuery("include", v)
		}
	}
	return inc, nil
}

// encodeListMarker and decodeListMarker convert the folded name a page
// resumes at to and from the opaque NextMarker.
func encodeListMarker(folded string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(folded))
}

func decodeListMarker(m string) (string, bool) {
	// Only the canonical form (what encodeListMarker made): the decoder
	// alone tolerates line breaks and stray trailing bits.
	b, err := base64.RawURLEncoding.Strict().DecodeString(m)
	if err != nil || len(b) == 0 || encodeListMarker(string(b)) != m {
		return "", false
	}
	return string(b), true
}

type listPropsXML struct {
	ContentLength  *int64 `xml:"Content-Length,omitempty"`
	CreationTime   string `xml:"CreationTime,omitempty"`
	LastAccessTime string `xml:"LastAccessTime,omitempty"`
	LastWriteTime  string `xml:"LastWriteTime,omitempty"`
	ChangeTime     string `xml:"ChangeTime,omitempty"`
	LastModified   string `xml:"Last-Modified,omitempty"`
	ETag           string `xml:"Etag,omitempty"`
}

// listEntryXML is a <Directory> or <File> element (XMLName says which).
type listEntryXML struct {
	XMLName       xml.Name
	FileID        string           `xml:"FileId"`
	Name          wire.EncodedName `xml:"Name"`
	Properties    listPropsXML     `xml:"Properties"`
	Attributes    string           `xml:"Attributes,omitempty"`
	PermissionKey string           `xml:"PermissionKey,omitempty"`
}

type listEntriesXML struct {
	Items []listEntryXML
}

type listFilesXML struct {
	XMLName       xml.Name         `xml:"EnumerationResults"`
	Endpoint      string           `xml:"ServiceEndpoint,attr"`
	ShareName     string           `xml:"ShareName,attr"`
	ShareSnapshot string           `xml:"ShareSnapshot,attr,omitempty"`
	DirectoryPath string           `xml:"DirectoryPath,attr"`
	Encoded       bool             `xml:"Encoded,attr,omitempty"`
	Marker        string           `xml:"Marker,omitempty"`
	Prefix        wire.EncodedName `xml:"Prefix"`
	MaxResults    int              `xml:"MaxResults,omitempty"`
	DirectoryID   string           `xml:"DirectoryId"`
	Entries       listEntriesXML   `xml:"Entries"`
	NextMarker    string           `xml:"NextMarker"`
}

// listEntryItem renders one entry. FileId is always present: the service
// sends it without include= and without x-ms-file-extended-info (the
// recorded azfile TestDirListFilesAndDirsDefault asserts it), and
// Properties is always present (empty for a directory without include=)
// (the same test dereferences dir.Properties).
func listEntryItem(e *file.Entry, inc listInclude) listEntryXML {
	x := listEntryXML{XMLName: xml.Name{Local: "File"}, FileID: file.FormatID(e.ID), Name: wire.EncodedName(e.Name)}
	if e.Dir {
		x.XMLName.Local = "Directory"
	} else {
		size := e.Size
		x.Properties.ContentLength = &size
	}
	if inc.timestamps {
		x.Properties.CreationTime = formatTime(e.SMB.Created)
		// The last access time an SMB client set, else the last write:
		// REST writes do not track access (inferred).
		x.Properties.LastAccessTime = formatTime(e.SMB.Accessed())
		x.Properties.LastWriteTime = formatTime(e.SMB.LastWrite)
		x.Properties.ChangeTime = formatTime(e.SMB.Changed)
		x.Properties.LastModified = wire.FormatHTTPDate(e.Modified)
	}
	if inc.etag {
		x.Properties.ETag = e.ETag
	}
	if inc.attributes {
		x.Attributes = e.SMB.Attrs.String()
	}
	if inc.permissionKey {
		x.PermissionKey = e.SMB.PermKey
	}
	return x
}

// listFilesAndDirectories implements List Directories and Files on a
// directory or the share root, live or in a share snapshot.
func (s *Service) listFilesAndDirectories(r *req) (server.Response, error) {
	maxN, err := wire.ParseIntQuery(r.q, "maxresults", 1, math.MaxInt32, maxListEntries)
	if err != nil {
		return server.Response{}, err
	}
	maxN = min(maxN, maxListEntries)
	inc, err := parseListInclude(r.q.Get("include"))
	if err != nil {
		return server.Response{}, err
	}
	// x-ms-file-extended-info only asks for fresher sizes and the file IDs,
	// which this server always has (List Directories and Files,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/list-directories-and-files).
	if v := wire.Field(r.Header, "X-Ms-File-Extended-Info"); v != "" {
		if _, err := strconv.ParseBool(v); err != nil {
			return server.Response{}, azerr.InvalidHeader("x-ms-file-extended-info", v)
		}
	}
	prefix, marker := r.q.Get("prefix"), r.q.Get("marker")
	from := ""
	if marker != "" {
		var ok bool
		if from, ok = decodeListMarker(marker); !ok {
			return server.Response{}, azerr.Newf(azerr.InvalidQueryParameterValue, "The marker is not valid.").With("QueryParameterName", "marker").With("QueryParameterValue", marker)
		}
	}
	out := listFilesXML{
		Endpoint: serviceEndpoint(r), ShareName: r.share, ShareSnapshot: r.q.Get("sharesnapshot"),
		DirectoryPath: r.path, Marker: marker, Prefix: wire.EncodedName(prefix),
	}
	if !wire.XMLSafe(out.DirectoryPath) {
		out.DirectoryPath, out.Encoded = wire.PercentEncode(out.DirectoryPath), true
	}
	if r.q.Has("maxresults") {
		out.MaxResults = maxN
	}
	got, err := s.f.ListFilesAndDirectories(r.Context(), file.ListFilesAndDirectoriesInput{Ref: refOf(r), Prefix: prefix, From: from, MaxResults: maxN})
	if err != nil {
		return server.Response{}, err
	}
	out.DirectoryID = file.FormatID(got.Directory.ID)
	out.Entries.Items = make([]listEntryXML, 0, len(got.Entries))
	for _, e := range got.Entries {
		out.Entries.Items = append(out.Entries.Items, listEntryItem(e, inc))
	}
	if got.Next != "" {
		out.NextMarker = encodeListMarker(got.Next)
	}
	return server.XML(http.StatusOK, out)
}
