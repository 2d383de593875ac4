package blobrest

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
)

// Version-level immutability (blob/immutability.go): Set and Delete Blob
// Immutability Policy (?comp=immutabilityPolicies), Set Blob Legal Hold
// (?comp=legalhold), the policy and hold a write sets on the version it
// makes, and the policy and hold reads report.

const (
	hPolicyUntil = "X-Ms-Immutability-Policy-Until-Date"
	hPolicyMode  = "X-Ms-Immutability-Policy-Mode"
	hLegalHold   = "X-Ms-Legal-Hold"
)

// parsePolicyHeaders reads x-ms-immutability-policy-until-date (RFC
// 1123; required says whether it must be there) and
// x-ms-immutability-policy-mode (Unlocked when absent).
func parsePolicyHeaders(h http.Header, required bool) (until time.Time, mode string, err error) {
	v := firstHeader(h, hPolicyUntil)
	if v == "" {
		if required {
			return until, "", azerr.MissingHeader("x-ms-immutability-policy-until-date")
		}
	} else if until, err = http.ParseTime(v); err != nil {
		return until, "", azerr.InvalidHeader("x-ms-immutability-policy-until-date", v)
	}
	m := firstHeader(h, hPolicyMode)
	mode, ok := blob.ParsePolicyMode(m)
	if !ok {
		return until, "", azerr.InvalidHeader("x-ms-immutability-policy-mode", m)
	}
	if m != "" && v == "" {
		return until, "", azerr.MissingHeader("x-ms-immutability-policy-until-date")
	}
	return until, mode, nil
}

// firstHeader is h's first value of the canonical name key ("" if none),
// without canonicalizing it again.
func firstHeader(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// parseLegalHold reads x-ms-legal-hold (true or false).
func parseLegalHold(h http.Header, required bool) (hold, given bool, err error) {
	v := firstHeader(h, hLegalHold)
	if v == "" {
		if required {
			return false, false, azerr.MissingHeader("x-ms-legal-hold")
		}
		return false, false, nil
	}
	switch strings.ToLower(v) {
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	return false, false, azerr.InvalidHeader("x-ms-legal-hold", v)
}

// writeImmutability reads the immutability headers of a write (Put
// Blob, Put Block List, Copy Blob, Copy Blob From URL): nil when none is given, which is the cost of
// three map lookups on every write.
func writeImmutability(h http.Header) (*blob.Immutability, error) {
	if h[hPolicyUntil] == nil && h[hPolicyMode] == nil && h[hLegalHold] == nil {
		return nil, nil
	}
	until, mode, err := parsePolicyHeaders(h, false)
	if err != nil {
		return nil, err
	}
	hold, _, err := parseLegalHold(h, false)
	if err != nil {
		return nil, err
	}
	return &blob.Immutability{Until: until, Mode: mode, Hold: hold}, nil
}

// setImmutabilityPolicy is Set Blob Immutability Policy's REST handler.
func (s *Service) setImmutabilityPolicy(r *req) (server.Response, error) {
	until, mode, err := parsePolicyHeaders(r.Header, true)
	if err != nil {
		return server.Response{}, err
	}
	var ius time.Time
	if v := wire.Field(r.Header, "If-Unmodified-Since"); v != "" {
		if ius, err = http.ParseTime(v); err != nil {
			return server.Response{}, azerr.InvalidHeader("If-Unmodified-Since", v)
		}
	}
	out, err := s.SetImmutabilityPolicy(r.Context(), blob.SetImmutabilityPolicyInput{Call: r.call(), Ref: r.ref(), Until: until, Mode: mode, IfUnmodifiedSince: ius})
	if err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusOK).
		With("X-Ms-Immutability-Policy-Until-Date", wire.FormatHTTPDate(out.Until)).
		With("X-Ms-Immutability-Policy-Mode", strings.ToLower(out.Mode)), nil
}

// deleteImmutabilityPolicy is Delete Blob Immutability Policy's REST
// handler.
func (s *Service) deleteImmutabilityPolicy(r *req) (server.Response, error) {
	if err := s.DeleteImmutabilityPolicy(r.Context(), blob.DeleteImmutabilityPolicyInput{Call: r.call(), Ref: r.ref()}); err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusOK), nil
}

// setLegalHold is Set Blob Legal Hold's REST handler.
func (s *Service) setLegalHold(r *req) (server.Response, error) {
	hold, _, err := parseLegalHold(r.Header, true)
	if err != nil {
		return server.Response{}, err
	}
	if err := s.SetLegalHold(r.Context(), blob.SetLegalHoldInput{Call: r.call(), Ref: r.ref(), Hold: hold}); err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusOK).With("X-Ms-Legal-Hold", strconv.FormatBool(hold)), nil
}

// writeImmutabilityHeaders sets a read's x-ms-immutability-policy-* and
// x-ms-legal-hold (Get Blob, Get Blob Properties); the mode reads in
// lower case, as azblob's recorded TestUploadBlockWithImmutabilityPolicy
// expects.
func writeImmutabilityHeaders(h *server.Response, p *blob.BlobProperties) {
	if p.ImmutabilityMode != "" {
		h.Set("X-Ms-Immutability-Policy-Until-Date", wire.FormatHTTPDate(p.ImmutabilityUntil))
		h.Set("X-Ms-Immutability-Policy-Mode", strings.ToLower(p.ImmutabilityMode))
	}
	if p.LegalHold {
		h.Set("X-Ms-Legal-Hold", "true")
	}
}
