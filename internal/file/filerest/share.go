package filerest

import (
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Share access tiers (Create Share,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-share,
// x-ms-access-tier). Standard shares default to TransactionOptimized; NFS
// shares exist only on premium accounts, whose tier is Premium. Cerulean
// accepts every tier and protocol on its one account instead of emulating
// account kinds.
var shareTiers = []string{"TransactionOptimized", "Hot", "Cool", "Premium"}

// Root squash settings of NFS shares (Create Share,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-share,
// x-ms-root-squash).
var rootSquashes = []string{"NoRootSquash", "RootSquash", "AllSquash"}

// canonical returns the element of set equal to v ignoring case.
func canonical(set []string, v string) (string, bool) {
	for _, s := range set {
		if strings.EqualFold(s, v) {
			return s, true
		}
	}
	return "", false
}

// shareOptions are the share property headers of Create Share and Set
// Share Properties; nil or "" fields were not sent.
type shareOptions struct {
	quota     *int
	tier      string
	protocols string // Create Share only
	squash    string
	dirLease  *bool
	snapVDir  *bool
}

// parseShareOptions reads the share property headers: a quota outside
// 1–102,400 GiB, an unknown tier, protocol or root squash, or a boolean
// that is not true/false is 400 InvalidHeaderValue (azfile
// TestShareSetQuotaNegative expects InvalidHeaderValue for quota -1). The
// provisioning and paid-bursting headers of premium shares are accepted
// and ignored: Cerulean does not throttle (inferred).
func parseShareOptions(h http.Header, create bool) (shareOptions, error) {
	var o shareOptions
	if v := h.Get("X-Ms-Share-Quota"); v != "" {
		q, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || q < 1 || q > file.MaxQuotaGiB {
			return o, azerr.InvalidHeader("x-ms-share-quota", v)
		}
		o.quota = &q
	}
	if v := h.Get("X-Ms-Access-Tier"); v != "" {
		t, ok := canonical(shareTiers, strings.TrimSpace(v))
		if !ok {
			return o, azerr.InvalidHeader("x-ms-access-tier", v)
		}
		o.tier = t
	}
	if v := h.Get("X-Ms-Enabled-Protocols"); v != "" && create {
		p, ok := canonical([]string{file.ProtoSMB, file.ProtoNFS}, strings.TrimSpace(v))
		if !ok {
			return o, azerr.InvalidHeader("x-ms-enabled-protocols", v)
		}
		o.protocols = p
	}
	if v := h.Get("X-Ms-Root-Squash"); v != "" {
		sq, ok := canonical(rootSquashes, strings.TrimSpace(v))
		if !ok {
			return o, azerr.InvalidHeader("x-ms-root-squash", v)
		}
		o.squash = sq
	}
	for _, b := range []struct {
		name string
		dst  **bool
	}{
		{"x-ms-enable-smb-directory-lease", &o.dirLease},
		{"x-ms-enable-snapshot-virtual-directory-access", &o.snapVDir},
	} {
		if v := h.Get(b.name); v != "" {
			x, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return o, azerr.InvalidHeader(b.name, v)
			}
			*b.dst = &x
		}
	}
	return o, nil
}

// options is o as the domain's ShareOptions.
func (o shareOptions) options() file.ShareOptions {
	return file.ShareOptions{Quota: o.quota, Tier: o.tier, Protocols: o.protocols, Squash: o.squash, DirLease: o.dirLease, SnapVDir: o.snapVDir}
}

// setShareHeaders sets the headers of Get Share Properties.
func setShareHeaders(h *server.Response, sh *file.Share, r *req) {
	setShareETag(h, sh)
	setMetadata(h, sh.Meta)
	h.Set("X-Ms-Share-Quota", strconv.Itoa(sh.Quota))
	h.Set("X-Ms-Access-Tier", sh.Tier)
	if !sh.TierSince.IsZero() {
		h.Set("X-Ms-Access-Tier-Change-Time", wire.FormatHTTPDate(sh.TierSince))
	}
	h.Set("X-Ms-Enabled-Protocols", sh.Protocols)
	if sh.Protocols == file.ProtoNFS {
		h.Set("X-Ms-Root-Squash", sh.Squash)
		h.Set("X-Ms-Enable-Snapshot-Virtual-Directory-Access", strconv.FormatBool(boolOr(sh.SnapVDir, true)))
	} else {
		h.Set("X-Ms-Enable-Smb-Directory-Lease", strconv.FormatBool(boolOr(sh.DirLease, true)))
	}
	eff := sh.Lease.Effective(r.Now)
	h.Set(lease.HeaderLeaseStatus, eff.Status)
	h.Set(lease.HeaderLeaseState, eff.State)
	if eff.Duration != "" {
		h.Set("X-Ms-Lease-Duration", eff.Duration)
	}
}

func (s *Service) createShare(r *req) (server.Response, error) {
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	o, err := parseShareOptions(r.Header, true)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.f.CreateShare(r.Context(), file.CreateShareInput{Ref: refOf(r), Meta: meta, Options: o.options()})
	if err != nil {
		return server.Response{}, err
	}
	sh := out.Share
	resp := server.Bodiless(http.StatusCreated)
	setShareETag(&resp, sh)
	resp.Set("X-Ms-Share-Quota", strconv.Itoa(sh.Quota))
	return resp, nil
}

// getShareProperties serves Get Share Properties and Get Share Metadata
// (HEAD or GET), on the share or on a snapshot.
func (s *Service) getShareProperties(r *req) (server.Response, error) {
	out, err := s.f.GetShareProperties(r.Context(), file.GetSharePropertiesInput{Ref: refOf(r)})
	if err != nil {
		return server.Response{}, err
	}
	resp := server.Response{Status: http.StatusOK, Header: make([]server.HeaderField, 0, 12+len(out.Share.Meta))}
	setShareHeaders(&resp, out.Share, r)
	return resp, nil
}

func (s *Service) setShareProperties(r *req) (server.Response, error) {
	o, err := parseShareOptions(r.Header, false)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.f.SetShareProperties(r.Context(), file.SetSharePropertiesInput{Ref: refOf(r), Options: o.options()})
	if err != nil {
		return server.Response{}, err
	}
	sh := out.Share
	resp := server.Bodiless(http.StatusOK)
	setShareETag(&resp, sh)
	resp.Set("X-Ms-Share-Quota", strconv.Itoa(sh.Quota))
	return resp, nil
}

func (s *Service) setShareMetadata(r *req) (server.Response, error) {
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.f.SetShareMetadata(r.Context(), file.SetShareMetadataInput{Ref: refOf(r), Meta: meta})
	if err != nil {
		return server.Response{}, err
	}
	resp := server.Bodiless(http.StatusOK)
	setShareETag(&resp, out.Share)
	return resp, nil
}

// leaseShare is Lease Share: the container lease state machine (15–60 s or
// infinite, renew, break periods) on the share or on a snapshot, with the
// …WithShareOperation codes (Lease Share,
// https://learn.microsoft.com/en-us/rest/api/storageservices/lease-share). A
// lease action is not a write: ETag and Last-Modified stay.
func (s *Service) leaseShare(r *req) (server.Response, error) {
	lr, err := lease.ParseRequest(r.Header, lease.Share)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.f.LeaseShare(r.Context(), file.LeaseShareInput{Ref: refOf(r), Request: lr})
	if err != nil {
		return server.Response{}, err
	}
	res, sh := out.Result, out.Share
	resp := server.Bodiless(res.Status)
	if res.LeaseID != "" {
		resp.Set(lease.HeaderLeaseID, res.LeaseID)
	}
	if res.LeaseTime != nil {
		resp.Set(lease.HeaderLeaseTime, strconv.Itoa(*res.LeaseTime))
	}
	setShareETag(&resp, sh)
	return resp, nil
}

type shareStatsXML struct {
	XMLName xml.Name `xml:"ShareStats"`
	Usage   int64    `xml:"ShareUsageBytes"`
}

// getShareStats is Get Share Stats (GetShareStats).
func (s *Service) getShareStats(r *req) (server.Response, error) {
	out, err := s.f.GetShareStats(r.Context(), file.GetShareStatsInput{Ref: refOf(r)})
	if err != nil {
		return server.Response{}, err
	}
	resp, err := server.XML(http.StatusOK, shareStatsXML{Usage: out.UsageBytes})
	if err != nil {
		return server.Response{}, err
	}
	setShareETag(&resp, out.Share)
	return resp, nil
}
