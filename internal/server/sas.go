package server

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/policy"
)

// SASTarget is the service-specific resource a request addresses.
type SASTarget struct {
	Container string // container, queue or table; "" at service level
	Path      string // decoded blob name; "" otherwise
}

// AuthorizeSAS verifies r.SAS for target (policy resolves a signed
// identifier in the target's ACL; it may be nil) and checks it against
// rule; ok=false means the operation does not accept SAS at all (403
// AuthorizationFailure). It returns the effective SAS (stored policy
// merged in). Every failure is a 403 from the auth package.
func (r *Request) AuthorizeSAS(target SASTarget, policy auth.PolicyLookup, rule SASRule, ok bool) (*auth.SAS, error) {
	if r.SAS == nil {
		return nil, azerr.New(azerr.NoAuthenticationInformation)
	}
	return r.authorizeToken(r.SAS, r.URL.Query(), r.kind, target, policy, rule, ok)
}

// AuthorizeSourceSAS verifies a SAS carried by another URL of this
// account (a copy source, whose query is q) for target and rule, with
// this request's time, client address and protocol.
func (r *Request) AuthorizeSourceSAS(q url.Values, target SASTarget, policy auth.PolicyLookup, rule SASRule) (*auth.SAS, error) {
	tok, signed, err := auth.ParseSAS(q)
	if err != nil {
		return nil, err
	}
	if !signed {
		return nil, azerr.New(azerr.NoAuthenticationInformation)
	}
	return r.authorizeToken(&tok, q, r.kind, target, policy, rule, true)
}

// AuthorizeForeignSourceSAS is AuthorizeSourceSAS for a copy source of
// another service of this account, svc (a blob copied to a file, or a
// file to a blob): the SAS is verified and checked as one of svc.
func (r *Request) AuthorizeForeignSourceSAS(svc auth.Service, q url.Values, target SASTarget, policy auth.PolicyLookup, rule SASRule) (*auth.SAS, error) {
	tok, signed, err := auth.ParseSAS(q)
	if err != nil {
		return nil, err
	}
	if !signed {
		return nil, azerr.New(azerr.NoAuthenticationInformation)
	}
	return r.authorizeToken(&tok, q, svc, target, policy, rule, true)
}

// SASFirst returns err, an error found in the request before its SAS was
// checked (no such operation, a malformed name, header or parameter),
// unless the SAS fails authentication (a wrong signature, an expired or
// not yet valid token, another address or protocol): that 403
// AuthenticationFailed is returned instead, as Azure authenticates a
// request before it looks at the operation, and a caller without a valid
// token learns nothing about the request. target and policy are what the
// URL names; a token for another resource is left to the operation's own
// check, which the request did not reach.
func (r *Request) SASFirst(err error, target SASTarget, policy auth.PolicyLookup) error {
	if err == nil || r.SAS == nil {
		return err
	}
	_, verr := r.verifyToken(r.SAS, r.URL.Query(), r.kind, target, policy)
	var e *azerr.Error
	if errors.As(verr, &e) && e.Code == azerr.AuthenticationFailed {
		return verr
	}
	return err
}

func (r *Request) authorizeToken(tok *auth.SAS, q url.Values, svc auth.Service, target SASTarget, policy auth.PolicyLookup, rule SASRule, ok bool) (*auth.SAS, error) {
	eff, err := r.verifyToken(tok, q, svc, target, policy)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, azerr.New(azerr.AuthorizationFailure)
	}
	if err := CheckSASRule(&eff, svc, rule); err != nil {
		return nil, err
	}
	return &eff, nil
}

// verifyToken verifies tok (signature, times, address, protocol, stored
// policy) for target and returns the effective SAS.
func (r *Request) verifyToken(tok *auth.SAS, q url.Values, svc auth.Service, target SASTarget, policy auth.PolicyLookup) (auth.SAS, error) {
	sreq := auth.SASRequest{
		Account:   r.Account,
		Service:   svc,
		Container: target.Container,
		Path:      target.Path,
		Snapshot:  q.Get("snapshot"),
		VersionID: q.Get("versionid"),
		HTTPS:     r.HTTPS,
		Now:       r.Now,
		Header:    r.Header,
		Query:     q,
		Bearer:    r.sasBearer,
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		sreq.ClientIP = ap.Addr().Unmap()
	}
	return auth.VerifySAS(tok, r.accounts, sreq, policy)
}

// CheckSASRule checks an already verified, effective SAS against rule on
// service svc (AuthorizeSAS does this; a service also calls it for the
// parts of a batch).
func CheckSASRule(eff *auth.SAS, svc auth.Service, rule SASRule) error {
	if rule.AccountOnly && !eff.IsAccount() {
		return azerr.New(azerr.AuthorizationResourceTypeMismatch)
	}
	perms := rule.AnyOf
	if rule.SinceAnyOf != "" && eff.Version >= rule.Since {
		perms += rule.SinceAnyOf
	}
	if err := auth.Authorize(eff, svc, auth.Operation{Resource: rule.Resource, Permissions: perms}); err != nil {
		return err
	}
	if rule.AccountPermission && !eff.IsAccount() {
		return azerr.New(azerr.AuthorizationPermissionMismatch)
	}
	for i := 0; i < len(rule.AllOf); i++ {
		if strings.IndexByte(eff.Permissions, rule.AllOf[i]) < 0 {
			return azerr.New(azerr.AuthorizationPermissionMismatch)
		}
	}
	return nil
}

// ApplySASOverrides applies the response header overrides (rscc, rscd, rsce,
// rscl, rsct) of eff, a verified service SAS, to a Get Blob, Get Blob
// Properties, Get File or Get File Properties response (Create a service SAS,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas,
// "Specify query parameters to override response headers (Blob Storage and
// Azure Files only)"), replacing the headers of those names set before.
// An account SAS (or no SAS) overrides nothing.
func ApplySASOverrides(r *Response, eff *auth.SAS) {
	if eff == nil || eff.IsAccount() {
		return
	}
	for _, o := range [...]struct{ name, v string }{
		{"Cache-Control", eff.CacheControl},
		{"Content-Disposition", eff.ContentDisposition},
		{"Content-Encoding", eff.ContentEncoding},
		{"Content-Language", eff.ContentLanguage},
		{"Content-Type", eff.ContentType},
	} {
		if o.v != "" {
			r.Set(o.name, o.v)
		}
	}
}

// Policies returns a PolicyLookup over stored access policies given as
// (id, start, expiry, permission) strings, as the ACLs keep them. load is
// called when the SAS names a signed identifier, inside the request, so
// a changed or revoked policy takes effect at once.
func Policies(load func() ([]policy.Stored, error)) auth.PolicyLookup {
	return func(id string) (auth.AccessPolicy, bool) {
		ps, err := load()
		if err != nil {
			return auth.AccessPolicy{}, false
		}
		for _, p := range ps {
			if p.ID != id {
				continue
			}
			ap := auth.AccessPolicy{Permissions: p.Permission}
			if p.Start != "" {
				t, ok := auth.ParseSASTime(p.Start)
				if !ok {
					return auth.AccessPolicy{}, false
				}
				ap.Start = t
			}
			if p.Expiry != "" {
				t, ok := auth.ParseSASTime(p.Expiry)
				if !ok {
					return auth.AccessPolicy{}, false
				}
				ap.Expiry = t
			}
			return ap, true
		}
		return auth.AccessPolicy{}, false
	}
}
