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
func (s *Service) createContainer(r *req) (server.Response, error) {
	if err := wire.ValidNewContainerName(r.container); err != nil {
		return server.Response{}, err
	}
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	access, err := parsePublicAccess(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.CreateContainer(r.Context(), blob.CreateContainerInput{Call: r.call(), Ref: r.containerRef(), Metadata: meta, PublicAccess: access})
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusCreated, 2)
	setETag(&resp, out.ETag, out.LastModified)
	return resp, nil
}

// getContainerProperties is Get Container Properties' (and Get
// Container Metadata's) REST handler.
func (s *Service) getContainerProperties(r *req) (server.Response, error) {
	p, err := s.GetContainerProperties(r.Context(), blob.GetContainerPropertiesInput{Call: r.call(), Ref: r.containerRef(), LeaseID: wire.Field(r.Header, "X-Ms-Lease-Id")})
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusOK, 12+len(p.Metadata))
	setETag(&resp, p.ETag, p.LastModified)
	setMetadata(&resp, p.Metadata)
	writeEffectiveLease(&resp, p.Lease)
	if p.PublicAccess != "" {
		resp.Set("X-Ms-Blob-Public-Access", p.PublicAccess)
	}
	resp.Set("X-Ms-Has-Immutability-Policy", strconv.FormatBool(p.HasImmutabilityPolicy))
	resp.Set("X-Ms-Has-Legal-Hold", strconv.FormatBool(p.HasLegalHold))
	if p.ImmutableStorageWithVersioning {
		resp.Set("X-Ms-Immutable-Storage-With-Versioning-Enabled", "true")
	}
	resp.Set("X-Ms-Default-Encryption-Scope", p.DefaultEncryptionScope)
	resp.Set("X-Ms-Deny-Encryption-Scope-Override", strconv.FormatBool(p.DenyEncryptionScopeOverride))
	return resp, nil
}

// writeEffectiveLease sets the x-ms-lease-* headers of a lease state.
func writeEffectiveLease(h *server.Response, e lease.Effective) {
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
func (s *Service) deleteContainer(r *req) (server.Response, error) {
	conds, err := cond.Parse(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	if err := onlyDateConditions(conds); err != nil {
		return server.Response{}, err
	}
	if err := s.DeleteContainer(r.Context(), blob.DeleteContainerInput{Call: r.call(), Ref: r.containerRef(), Cond: conds, LeaseID: wire.Field(r.Header, "X-Ms-Lease-Id")}); err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusAccepted), nil
}

func (s *Service) setContainerMetadata(r *req) (server.Response, error) {
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	conds, err := cond.Parse(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	if err := onlyDateConditions(conds); err != nil {
		return server.Response{}, err
	}
	if conds.IfUnmodifiedSince != nil {
		return server.Response{}, azerr.Newf(azerr.UnsupportedHeader, "If-Unmodified-Since is not supported for Set Container Metadata.")
	}
	out, err := s.SetContainerMetadata(r.Context(), blob.SetContainerMetadataInput{Call: r.call(), Ref: r.containerRef(), Cond: conds, LeaseID: wire.Field(r.Header, "X-Ms-Lease-Id"), Metadata: meta})
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusOK, 2)
	setETag(&resp, out.ETag, out.LastModified)
	return resp, nil
}

type signedIdentifiers struct {
	XMLName xml.Name        `xml:"SignedIdentifiers"`
	Items   []blob.SignedID `xml:"SignedIdentifier"`
}

func (s *Service) getContainerACL(r *req) (server.Response, error) {
	acl, err := s.GetContainerACL(r.Context(), blob.GetContainerACLInput{Call: r.call(), Ref: r.containerRef(), LeaseID: wire.Field(r.Header, "X-Ms-Lease-Id")})
	if err != nil {
		return server.Response{}, err
	}
	resp, err := server.XML(http.StatusOK, signedIdentifiers{Items: acl.Policies})
	if err != nil {
		return resp, err
	}
	resp.Header = make([]server.HeaderField, 0, 3)
	setETag(&resp, acl.ETag, acl.LastModified)
	if acl.PublicAccess != "" {
		resp.Set("X-Ms-Blob-Public-Access", acl.PublicAccess)
	}
	return resp, nil
}

func (s *Service) setContainerACL(r *req) (server.Response, error) {
	access, err := parsePublicAccess(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	conds, err := cond.Parse(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	if err := onlyDateConditions(conds); err != nil {
		return server.Response{}, err
	}
	if r.ContentLength > 64<<10 {
		return server.Response{}, azerr.New(azerr.RequestBodyTooLarge)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10+1))
	if err != nil {
		return server.Response{}, extent.BodyErr(err)
	}
	if len(body) > 64<<10 {
		return server.Response{}, azerr.New(azerr.RequestBodyTooLarge)
	}
	var acl signedIdentifiers
	if len(body) > 0 {
		if err := xml.Unmarshal(body, &acl); err != nil {
			return server.Response{}, azerr.New(azerr.InvalidXMLDocument)
		}
	}
	if len(acl.Items) > 5 {
		return server.Response{}, azerr.Newf(azerr.InvalidXMLDocument, "At most five stored access policies may be set.")
	}
	for _, it := range acl.Items {
		if it.ID == "" || len(it.ID) > 64 {
			return server.Response{}, azerr.Newf(azerr.InvalidXMLDocument, "Signed identifier ids must be 1 to 64 characters.")
		}
		for _, t := range []string{it.Start, it.Expiry} {
			if t != "" {
				if _, err := time.Parse(time.RFC3339Nano, t); err != nil {
					return server.Response{}, azerr.Newf(azerr.InvalidXMLNodeValue, "Invalid access policy time %q.", t)
				}
			}
		}
		for _, ch := range it.Permission {
			if !containsRune("racwdxltmeop", ch) {
				return server.Response{}, azerr.Newf(azerr.InvalidXMLNodeValue, "Invalid permission %q.", it.Permission)
			}
		}
	}
	out, err := s.SetContainerACL(r.Context(), blob.SetContainerACLInput{Call: r.call(), Ref: r.containerRef(), Cond: conds, LeaseID: wire.Field(r.Header, "X-Ms-Lease-Id"), PublicAccess: access, Policies: acl.Items})
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusOK, 2)
	setETag(&resp, out.ETag, out.LastModified)
	return resp, nil
}

func containsRune(set string, r rune) bool {
	for _, c := range set {
		if c == r {
			return true
		}
	}
	return false
}

func (s *Service) leaseContainer(r *req) (server.Response, error) {
	lr, err := lease.ParseRequest(r.Header, lease.Container)
	if err != nil {
		return server.Response{}, err
	}
	conds, err := cond.Parse(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	if err := onlyDateConditions(conds); err != nil {
		return server.Response{}, err
	}
	out, err := s.LeaseContainer(r.Context(), blob.LeaseContainerInput{Call: r.call(), Ref: r.containerRef(), Cond: conds, Request: lr})
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(out.Result.Status, 4)
	writeLeaseResult(&resp, out.Result)
	setETag(&resp, out.ETag, out.LastModified)
	return resp, nil
}

// writeLeaseResult sets the x-ms-lease-id and x-ms-lease-time a lease
// action answers.
func writeLeaseResult(resp *server.Response, res lease.Result) {
	if res.LeaseID != "" {
		resp.Set("X-Ms-Lease-Id", res.LeaseID)
	}
	if res.LeaseTime != nil {
		resp.Set("X-Ms-Lease-Time", strconv.Itoa(*res.LeaseTime))
	}
}
