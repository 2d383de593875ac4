package blobrest

import (
	"encoding/xml"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

func parsePublicAccess(h http.Header) (string, error) {
	v := h.Get("X-Ms-Blob-Public-Access")
	switch v {
	case "", "container", "blob":
		return v, nil
	}
	return "", azerr.InvalidHeader("x-ms-blob-public-access", v)
}

// createContainer is Create Container's REST handler.
func (s *Service) createContainer(w http.ResponseWriter, r *req) error {
	if err := wire.ValidNewContainerName(r.container); err != nil {
		return err
	}
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return err
	}
	access, err := parsePublicAccess(r.Header)
	if err != nil {
		return err
	}
	out, err := s.CreateContainer(r.Context(), blob.CreateContainerInput{Call: r.call(), Ref: r.containerRef(), Metadata: meta, PublicAccess: access})
	if err != nil {
		return err
	}
	setETag(w, out.ETag, out.LastModified)
	w.WriteHeader(http.StatusCreated)
	return nil
}

// getContainerProperties is Get Container Properties' (and Get
// Container Metadata's) REST handler.
func (s *Service) getContainerProperties(w http.ResponseWriter, r *req) error {
	p, err := s.GetContainerProperties(r.Context(), blob.GetContainerPropertiesInput{Call: r.call(), Ref: r.containerRef(), LeaseID: r.Header.Get("X-Ms-Lease-Id")})
	if err != nil {
		return err
	}
	h := w.Header()
	setETag(w, p.ETag, p.LastModified)
	wire.WriteMetadata(h, p.Metadata)
	writeEffectiveLease(h, p.Lease)
	if p.PublicAccess != "" {
		h.Set("X-Ms-Blob-Public-Access", p.PublicAccess)
	}
	h.Set("X-Ms-Has-Immutability-Policy", strconv.FormatBool(p.HasImmutabilityPolicy))
	h.Set("X-Ms-Has-Legal-Hold", strconv.FormatBool(p.HasLegalHold))
	if p.ImmutableStorageWithVersioning {
		h.Set("X-Ms-Immutable-Storage-With-Versioning-Enabled", "true")
	}
	h.Set("X-Ms-Default-Encryption-Scope", p.DefaultEncryptionScope)
	h.Set("X-Ms-Deny-Encryption-Scope-Override", strconv.FormatBool(p.DenyEncryptionScopeOverride))
	w.WriteHeader(http.StatusOK)
	return nil
}

// writeEffectiveLease sets the x-ms-lease-* headers of a lease state.
func writeEffectiveLease(h server.HeaderSetter, e lease.Effective) {
	h.Set("X-Ms-Lease-Status", e.Status)
	h.Set("X-Ms-Lease-State", e.State)
	if e.Duration != "" {
		h.Set("X-Ms-Lease-Duration", e.Duration)
	}
}

// onlyDateConditions rejects If-Match / If-None-Match on container
// operations that accept only the date conditions.
func onlyDateConditions(c cond.Conditions) error {
	if len(c.IfMatch) > 0 || len(c.IfNoneMatch) > 0 {
		return azerr.Newf(azerr.UnsupportedHeader, "If-Match and If-None-Match are not supported for this container operation.")
	}
	return nil
}

// deleteContainer is Delete Container's REST handler.
func (s *Service) deleteContainer(w http.ResponseWriter, r *req) error {
	conds, err := cond.Parse(r.Header)
	if err != nil {
		return err
	}
	if err := onlyDateConditions(conds); err != nil {
		return err
	}
	if err := s.DeleteContainer(r.Context(), blob.DeleteContainerInput{Call: r.call(), Ref: r.containerRef(), Cond: conds, LeaseID: r.Header.Get("X-Ms-Lease-Id")}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

func (s *Service) setContainerMetadata(w http.ResponseWriter, r *req) error {
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return err
	}
	conds, err := cond.Parse(r.Header)
	if err != nil {
		return err
	}
	if err := onlyDateConditions(conds); err != nil {
		return err
	}
	if conds.IfUnmodifiedSince != nil {
		return azerr.Newf(azerr.UnsupportedHeader, "If-Unmodified-Since is not supported for Set Container Metadata.")
	}
	out, err := s.SetContainerMetadata(r.Context(), blob.SetContainerMetadataInput{Call: r.call(), Ref: r.containerRef(), Cond: conds, LeaseID: r.Header.Get("X-Ms-Lease-Id"), Metadata: meta})
	if err != nil {
		return err
	}
	setETag(w, out.ETag, out.LastModified)
	w.WriteHeader(http.StatusOK)
	return nil
}

type signedIdentifiers struct {
	XMLName xml.Name        `xml:"SignedIdentifiers"`
	Items   []blob.SignedID `xml:"SignedIdentifier"`
}

func (s *Service) getContainerACL(w http.ResponseWriter, r *req) error {
	acl, err := s.GetContainerACL(r.Context(), blob.GetContainerACLInput{Call: r.call(), Ref: r.containerRef(), LeaseID: r.Header.Get("X-Ms-Lease-Id")})
	if err != nil {
		return err
	}
	setETag(w, acl.ETag, acl.LastModified)
	if acl.PublicAccess != "" {
		w.Header().Set("X-Ms-Blob-Public-Access", acl.PublicAccess)
	}
	return server.WriteXML(w, http.StatusOK, signedIdentifiers{Items: acl.Policies})
}

func (s *Service) setContainerACL(w http.ResponseWriter, r *req) error {
	access, err := parsePublicAccess(r.Header)
	if err != nil {
		return err
	}
	conds, err := cond.Parse(r.Header)
	if err != nil {
		return err
	}
	if err := onlyDateConditions(conds); err != nil {
		return err
	}
	if r.ContentLength > 64<<10 {
		return azerr.New(azerr.RequestBodyTooLarge)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10+1))
	if err != nil {
		return extent.BodyErr(err)
	}
	if len(body) > 64<<10 {
		return azerr.New(azerr.RequestBodyTooLarge)
	}
	var acl signedIdentifiers
	if len(body) > 0 {
		if err := xml.Unmarshal(body, &acl); err != nil {
			return azerr.New(azerr.InvalidXMLDocument)
		}
	}
	if len(acl.Items) > 5 {
		return azerr.Newf(azerr.InvalidXMLDocument, "At most five stored access policies may be set.")
	}
	for _, it := range acl.Items {
		if it.ID == "" || len(it.ID) > 64 {
			return azerr.Newf(azerr.InvalidXMLDocument, "Signed identifier ids must be 1 to 64 characters.")
		}
		for _, t := range []string{it.Start, it.Expiry} {
			if t != "" {
				if _, err := time.Parse(time.RFC3339Nano, t); err != nil {
					return azerr.Newf(azerr.InvalidXMLNodeValue, "Invalid access policy time %q.", t)
				}
			}
		}
		for _, ch := range it.Permission {
			if !containsRune("racwdxltmeop", ch) {
				return azerr.Newf(azerr.InvalidXMLNodeValue, "Invalid permission %q.", it.Permission)
			}
		}
	}
	out, err := s.SetContainerACL(r.Context(), blob.SetContainerACLInput{Call: r.call(), Ref: r.containerRef(), Cond: conds, LeaseID: r.Header.Get("X-Ms-Lease-Id"), PublicAccess: access, Policies: acl.Items})
	if err != nil {
		return err
	}
	setETag(w, out.ETag, out.LastModified)
	w.WriteHeader(http.StatusOK)
	return nil
}

func containsRune(set string, r rune) bool {
	for _, c := range set {
		if c == r {
			return true
		}
	}
	return false
}

func (s *Service) leaseContainer(w http.ResponseWriter, r *req) error {
	lr, err := lease.ParseRequest(r.Header, lease.Container)
	if err != nil {
		return err
	}
	conds, err := cond.Parse(r.Header)
	if err != nil {
		return err
	}
	if err := onlyDateConditions(conds); err != nil {
		return err
	}
	out, err := s.LeaseContainer(r.Context(), blob.LeaseContainerInput{Call: r.call(), Ref: r.containerRef(), Cond: conds, Request: lr})
	if err != nil {
		return err
	}
	writeLeaseResult(w, out.Result)
	setETag(w, out.ETag, out.LastModified)
	w.WriteHeader(out.Result.Status)
	return nil
}

func writeLeaseResult(w http.ResponseWriter, res lease.Result) {
	if res.LeaseID != "" {
		w.Header().Set("X-Ms-Lease-Id", res.LeaseID)
	}
	if res.LeaseTime != nil {
		w.Header().Set("X-Ms-Lease-Time", strconv.Itoa(*res.LeaseTime))
	}
}
