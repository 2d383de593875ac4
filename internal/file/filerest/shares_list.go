package filerest

import (
	"encoding/xml"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/server"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// maxListShares is the most shares one List Shares page returns; a larger
// maxresults is not an error (List Shares,
// https://learn.microsoft.com/en-us/rest/api/storageservices/list-shares).
const maxListShares = 5000

// sharePropsXML is a listed share's <Properties>, with the element names
// azfile parses (generated ShareProperties) in the service's order.
type sharePropsXML struct {
	LastModified  string `xml:"Last-Modified"`
	ETag          string `xml:"Etag"`
	Quota         int    `xml:"Quota"`
	AccessTier    string `xml:"AccessTier,omitempty"`
	TierChange    string `xml:"AccessTierChangeTime,omitempty"`
	DeletedTime   string `xml:"DeletedTime,omitempty"`
	LeaseStatus   string `xml:"LeaseStatus"`
	LeaseState    string `xml:"LeaseState"`
	LeaseDuration string `xml:"LeaseDuration,omitempty"`
	Protocols     string `xml:"EnabledProtocols,omitempty"`
	RootSquash    string `xml:"RootSquash,omitempty"`
	SnapVDir      *bool  `xml:"EnableSnapshotVirtualDirectoryAccess,omitempty"`
	DirLease      *bool  `xml:"EnableSMBDirectoryLease,omitempty"`
	RemainingDays *int   `xml:"RemainingRetentionDays,omitempty"`
}

type shareItemXML struct {
	Name       string           `xml:"Name"`
	Snapshot   string           `xml:"Snapshot,omitempty"`
	Deleted    bool             `xml:"Deleted,omitempty"`
	Version    string           `xml:"Version,omitempty"`
	Properties sharePropsXML    `xml:"Properties"`
	Metadata   wire.MetadataXML `xml:"Metadata,omitempty"`
}

type listSharesXML struct {
	XMLName    xml.Name       `xml:"EnumerationResults"`
	Endpoint   string         `xml:"ServiceEndpoint,attr"`
	Prefix     string         `xml:"Prefix,omitempty"`
	Marker     string         `xml:"Marker,omitempty"`
	MaxResults int            `xml:"MaxResults,omitempty"`
	Shares     []shareItemXML `xml:"Shares>Share"`
	NextMarker string         `xml:"NextMarker"`
}

// parseSharesInclude reads include= of List Shares: a comma-separated subset
// of snapshots, metadata, deleted; anything else is 400
// InvalidQueryParameterValue.
func parseSharesInclude(v string) (map[string]bool, error) {
	out := map[string]bool{}
	if v == "" {
		return out, nil
	}
	for _, it := range strings.Split(v, ",") {
		it = strings.ToLower(strings.TrimSpace(it))
		switch it {
		case "snapshots", "metadata", "deleted":
			out[it] = true
		default:
			return nil, azerr.InvalidQuery("include", v)
		}
	}
	return out, nil
}

// listShares is List Shares: shares by name, each followed by its
// snapshots (include=snapshots) oldest first, with metadata
// (include=metadata), and the soft-deleted shares still retained
// (include=deleted) with Deleted, Version, DeletedTime and
// RemainingRetentionDays.
func (s *Service) listShares(r *req) (server.Response, error) {
	maxN, err := wire.ParseIntQuery(r.q, "maxresults", 1, math.MaxInt32, maxListShares)
	if err != nil {
		return server.Response{}, err
	}
	maxN = min(maxN, maxListShares)
	inc, err := parseSharesInclude(r.q.Get("include"))
	if err != nil {
		return server.Response{}, err
	}
	prefix, marker := r.q.Get("prefix"), r.q.Get("marker")
	out := listSharesXML{Endpoint: serviceEndpoint(r), Prefix: prefix, Marker: marker}
	if r.q.Has("maxresults") {
		out.MaxResults = maxN
	}
	got, err := s.f.ListShares(r.Context(), file.ListSharesInput{Account: r.Account, Prefix: prefix, Marker: marker, MaxResults: maxN, Snapshots: inc["snapshots"], Deleted: inc["deleted"], Now: r.Now})
	if err != nil {
		return server.Response{}, err
	}
	for _, it := range got.Shares {
		x := shareItem(it.Name, it.Snapshot, it.Share, inc["metadata"], r.Now)
		if d := it.Deleted; d != nil {
			x.Deleted, x.Version = true, d.Version
			x.Properties.DeletedTime = wire.FormatHTTPDate(d.Deleted)
			x.Properties.RemainingDays = &d.RemainingDays
		}
		out.Shares = append(out.Shares, x)
	}
	out.NextMarker = got.NextMarker
	return server.XML(http.StatusOK, out)
}

// shareItem is the listing element of share (or snapshot) sh at now.
func shareItem(name, snap string, sh *file.Share, withMeta bool, now time.Time) shareItemXML {
	eff := sh.Lease.Effective(now)
	p := sharePropsXML{
		LastModified: wire.FormatHTTPDate(sh.Modified), ETag: sh.ETag, Quota: sh.Quota,
		AccessTier: sh.Tier, LeaseStatus: eff.Status, LeaseState: eff.State, LeaseDuration: eff.Duration,
		Protocols: sh.Protocols,
	}
	if !sh.TierSince.IsZero() {
		p.TierChange = wire.FormatHTTPDate(sh.TierSince)
	}
	if sh.Protocols == file.ProtoNFS {
		p.RootSquash = sh.Squash
		v := boolOr(sh.SnapVDir, true)
		p.SnapVDir = &v
	} else {
		v := boolOr(sh.DirLease, true)
		p.DirLease = &v
	}
	it := shareItemXML{Name: name, Snapshot: snap, Properties: p}
	if withMeta {
		it.Metadata = wire.MetadataXML(sh.Meta)
	}
	return it
}
