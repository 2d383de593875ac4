package blobrest

import (
	"encoding/base64"
	"encoding/xml"
	"math"
	"net/http"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

const maxListResults = 5000

// metaXML is the listings' <Metadata> element.
type metaXML = wire.MetadataXML

// parseMaxResults reads maxresults. azdatalake's filesystem
// NewListDeletedPathsPager sends List Blobs with
// "maxResults" (its generated ListBlobHierarchySegment request), and its
// recorded TestFilesystemListDeletedPathsWithMaxResults gets pages of
// that size from the service: that spelling is read when the usual one
// is absent.
func parseMaxResults(r *req) (int, error) {
	name := "maxresults"
	if _, ok := r.q[name]; !ok {
		if _, ok := r.q["maxResults"]; ok {
			name = "maxResults"
		}
	}
	n, err := wire.ParseIntQuery(r.q, name, 1, math.MaxInt32, maxListResults)
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
	// A soft-deleted container (include=deleted).
	DeletedTime   string `xml:"DeletedTime,omitempty"`
	RemainingDays *int   `xml:"RemainingRetentionDays,omitempty"`
	// ImmutableStorageWithVersioningEnabled is version-level
	// immutability support (blob/immutability.go).
	VersionLevelWORM bool `xml:"ImmutableStorageWithVersioningEnabled,omitempty"`
}

type containerXML struct {
	Name       string            `xml:"Name"`
	Deleted    bool              `xml:"Deleted,omitempty"`
	Version    string            `xml:"Version,omitempty"`
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

// listContainers is List Containers' REST handler.
func (s *Service) listContainers(r *req) (server.Response, error) {
	maxN, err := parseMaxResults(r)
	if err != nil {
		return server.Response{}, err
	}
	inc, err := parseInclude(r, "metadata", "deleted", "system")
	if err != nil {
		return server.Response{}, err
	}
	prefix, marker := r.q.Get("prefix"), r.q.Get("marker")
	list, err := s.ListContainers(r.Context(), blob.ListContainersInput{Call: r.call(), Account: r.Account, Prefix: prefix, Marker: marker, MaxResults: maxN, Deleted: inc["deleted"]})
	if err != nil {
		return server.Response{}, err
	}
	out := listContainersXML{Endpoint: r.endpoint(), Prefix: prefix, Marker: marker, Containers: make([]containerXML, 0, len(list.Items)), NextMarker: list.NextMarker}
	if r.q.Has("maxresults") {
		out.MaxResults = maxN
	}
	for i := range list.Items {
		c := &list.Items[i]
		cx := containerXML{Name: c.Name, Properties: containerPropsXML{
			LastModified: wire.FormatHTTPDate(c.Properties.LastModified), ETag: c.Properties.ETag,
			LeaseStatus: c.Properties.Lease.Status, LeaseState: c.Properties.Lease.State, LeaseDuration: c.Properties.Lease.Duration,
			PublicAccess: c.Properties.PublicAccess, VersionLevelWORM: c.Properties.ImmutableStorageWithVersioning,
			Immutability: c.Properties.HasImmutabilityPolicy, LegalHold: c.Properties.HasLegalHold,
		}}
		if d := c.Deleted; d != nil {
			days := d.RemainingDays
			cx.Deleted, cx.Version = true, d.Version
			cx.Properties.DeletedTime = wire.FormatHTTPDate(d.Deleted)
			cx.Properties.RemainingDays = &days
		}
		if inc["metadata"] {
			cx.Metadata = metaXML(c.Properties.Metadata)
			if cx.Metadata == nil {
				cx.Metadata = metaXML{}
			}
		}
		out.Containers = append(out.Containers, cx)
	}
	return server.XML(http.StatusOK, out)
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
	SmartTier      string `xml:"SmartAccessTier,omitempty"`
	LeaseStatus    string `xml:"LeaseStatus,omitempty"`
	LeaseState     string `xml:"LeaseState,omitempty"`
	LeaseDuration  string `xml:"LeaseDuration,omitempty"`
	CopyID         string `xml:"CopyId,omitempty"`
	CopyStatus     string `xml:"CopyStatus,omitempty"`
	CopySource     string `xml:"CopySource,omitempty"`
	CopyProgress   string `xml:"CopyProgress,omitempty"`
	CopyCompletion string `xml:"CopyCompletionTime,omitempty"`
	ServerEnc      bool   `xml:"ServerEncrypted"`
	CPKSHA         string `xml:"CustomerProvidedKeySha256,omitempty"`
	Sealed         *bool  `xml:"Sealed,omitempty"`
	DeletedTime    string `xml:"DeletedTime,omitempty"`
	RemainingDays  *int   `xml:"RemainingRetentionDays,omitempty"`
	TagCount       int    `xml:"TagCount,omitempty"`
	// A path of a hierarchical account: its resource type always, and
	// with include=permissions its owner, group, permissions and ACL.
	ResourceType string `xml:"ResourceType,omitempty"`
	Owner        string `xml:"Owner,omitempty"`
	Group        string `xml:"Group,omitempty"`
	Permissions  string `xml:"Permissions,omitempty"`
	ACL          string `xml:"Acl,omitempty"`
	// include=immutabilitypolicy and include=legalhold
	// (immutability.go).
	PolicyUntil string `xml:"ImmutabilityPolicyUntilDate,omitempty"`
	PolicyMode  string `xml:"ImmutabilityPolicyMode,omitempty"`
	LegalHold   *bool  `xml:"LegalHold,omitempty"`
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
	VersionID  string           `xml:"VersionId,omitempty"`
	IsCurrent  *bool            `xml:"IsCurrentVersion,omitempty"`
	VersOnly   *bool            `xml:"HasVersionsOnly,omitempty"`
	Deleted    bool             `xml:"Deleted,omitempty"`
	DeletionID string           `xml:"DeletionId,omitempty"`
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

// renderBlobItem renders a listed blob; inc (the include parameter) says
// which of its copy, metadata and tags to show.
func renderBlobItem(e *blob.ListedBlob, inc map[string]bool) blobItemXML {
	b := &e.Properties
	p := &blobPropsXML{
		Created: wire.FormatHTTPDate(b.CreationTime), LastModified: wire.FormatHTTPDate(b.LastModified),
		ETag: strings.Trim(b.ETag, `"`), Size: b.Size, ContentType: b.HTTPHeaders.ContentType, ContentEnc: b.HTTPHeaders.ContentEncoding,
		ContentLang: b.HTTPHeaders.ContentLanguage, CacheControl: b.HTTPHeaders.CacheControl, ContentDisp: b.HTTPHeaders.ContentDisposition,
		BlobType: b.Type, ServerEnc: b.ServerEncrypted, CPKSHA: b.EncryptionKeySHA256,
	}
	if b.HTTPHeaders.ContentMD5 != nil {
		p.ContentMD5 = base64.StdEncoding.EncodeToString(b.HTTPHeaders.ContentMD5)
	}
	switch b.Type {
	case blob.BlockBlob:
		p.AccessTier, p.TierInferred, p.SmartTier = b.AccessTier, b.AccessTierInferred, b.SmartAccessTier
		if b.AccessTierChanged != nil {
			p.TierChanged = wire.FormatHTTPDate(*b.AccessTierChanged)
		}
	case blob.PageBlob:
		seq := b.SequenceNumber
		p.SeqNum = &seq
	case blob.AppendBlob:
		sealed := b.Sealed
		p.Sealed = &sealed
	}
	if pp := b.Path; pp != nil {
		p.ResourceType = "file"
		if pp.Dir {
			p.ResourceType = "directory"
		}
		if inc["permissions"] {
			p.Owner, p.Group, p.Permissions, p.ACL = pp.Owner, pp.Group, pp.Permissions, pp.ACL
		}
	}
	it := blobItemXML{Name: wire.EncodedName(e.Name), Snapshot: e.Snapshot, Properties: p}
	listedVersion(&it, e, inc)
	switch {
	case e.Deleted:
		// A soft-deleted blob or snapshot (include=deleted): no lease.
		it.Deleted, it.DeletionID = true, e.DeletionID
		p.DeletedTime = wire.FormatHTTPDate(e.DeletedTime)
		days := e.RemainingRetentionDays
		p.RemainingDays = &days
	case b.HasLease:
		p.LeaseStatus, p.LeaseState, p.LeaseDuration = b.Lease.Status, b.Lease.State, b.Lease.Duration
	}
	if inc["copy"] && b.Copy != nil {
		p.CopyID, p.CopyStatus, p.CopySource = b.Copy.ID, b.Copy.Status, b.Copy.Source
		p.CopyProgress, p.CopyCompletion = b.Copy.Progress, wire.FormatHTTPDate(b.Copy.Completion)
	}
	if inc["metadata"] {
		it.Metadata = metaXML(b.Metadata)
		if it.Metadata == nil {
			it.Metadata = metaXML{}
		}
	}
	p.TagCount = b.TagCount
	if inc["immutabilitypolicy"] && b.ImmutabilityMode != "" {
		p.PolicyUntil = wire.FormatHTTPDate(b.ImmutabilityUntil)
		p.PolicyMode = strings.ToLower(b.ImmutabilityMode)
	}
	if inc["legalhold"] {
		hold := b.LegalHold
		p.LegalHold = &hold
	}
	if inc["tags"] && len(e.Tags) > 0 {
		it.Tags = &tagSetXML{}
		for _, k := range e.Tags.Keys() {
			it.Tags.Tags = append(it.Tags.Tags, tagKVXML{k, e.Tags[k]})
		}
	}
	return it
}

// listBlobs is List Blobs' REST handler.
func (s *Service) listBlobs(r *req) (server.Response, error) {
	maxN, err := parseMaxResults(r)
	if err != nil {
		return server.Response{}, err
	}
	inc, err := parseInclude(r, "snapshots", "metadata", "uncommittedblobs", "copy", "deleted", "tags", "versions", "immutabilitypolicy", "legalhold", "deletedwithversions", "permissions")
	if err != nil {
		return server.Response{}, err
	}
	prefix, delim, marker := r.q.Get("prefix"), r.q.Get("delimiter"), r.q.Get("marker")
	list, err := s.ListBlobs(r.Context(), blob.ListBlobsInput{
		Call: r.call(), Ref: r.containerRef(), Prefix: prefix, Delimiter: delim, Marker: marker, MaxResults: maxN,
		StartFrom: r.q.Get("startFrom"),
		Include: blob.ListBlobsInclude{Snapshots: inc["snapshots"], Deleted: inc["deleted"], UncommittedBlobs: inc["uncommittedblobs"], Versions: inc["versions"],
			DeletedWithVersions: inc["deletedwithversions"]},
		ShowOnly: r.q.Get("showonly"),
	})
	if err != nil {
		return server.Response{}, err
	}
	// The Arrow columns have no version id: a listing of versions is XML.
	if s.wantsArrow(r) && !inc["versions"] {
		arrowEndBefore(&list, r.q.Get("endBefore"))
		return arrowPage(list, inc)
	}
	out := listBlobsXML{Endpoint: r.endpoint(), Container: r.container, Prefix: prefix, Marker: marker, Delimiter: delim, Items: make([]any, 0, len(list.Items)), NextMarker: list.NextMarker}
	if r.q.Has("maxresults") {
		out.MaxResults = maxN
	}
	for i := range list.Items {
		e := &list.Items[i]
		switch {
		case e.IsPrefix:
			out.Items = append(out.Items, blobPrefixXML{Name: wire.EncodedName(e.Name)})
		case e.Uncommitted:
			out.Items = append(out.Items, blobItemXML{Name: wire.EncodedName(e.Name), Properties: &blobPropsXML{BlobType: blob.BlockBlob, ServerEnc: true}})
		default:
			out.Items = append(out.Items, renderBlobItem(e, inc))
		}
	}
	return server.XML(http.StatusOK, out)
}

// listedVersion adds a listed blob's VersionId and IsCurrentVersion
// (include=versions; a snapshot has neither).
func listedVersion(it *blobItemXML, e *blob.ListedBlob, inc map[string]bool) {
	p := &e.Properties
	if e.HasVersionsOnly {
		// A name without a current version (include=deletedwithversions).
		only := true
		it.VersOnly = &only
		return
	}
	if !inc["versions"] || p.VersionID == "" || it.Snapshot != "" {
		return
	}
	it.VersionID = p.VersionID
	if p.IsCurrentVersion {
		cur := true
		it.IsCurrent = &cur
	}
}
