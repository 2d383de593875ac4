// Verifying a SAS once parsed: an account SAS, a service SAS signed with
// an account key, or a user delegation SAS (delegation.go), chosen by what
// the SAS carries.

package auth

import "github.com/cerulean-storage/cerulean/internal/azerr"

// VerifyAccountSAS verifies the signature of an account SAS against any key
// of the request's account, then the time window, source IP and protocol.
// The string-to-sign is
//
//	account\nsp\nss\nsrt\nst\nse\nsip\nspr\nsv\n[ses\n when sv >= 2020-12-06]
//
// Every failure is 403: AuthenticationFailed (unknown account, bad
// signature, outside st/se), AuthorizationSourceIPMismatch or
// AuthorizationProtocolMismatch.
func VerifyAccountSAS(s *SAS, lookup Lookup, req SASRequest) error {
	if !s.IsAccount() {
		return sasFailed("The SAS is not an account SAS.")
	}
	if s.Identifier != "" {
		return sasFailed("An account SAS cannot reference a stored access policy.")
	}
	if s.Version < "2015-04-05" {
		return sasFailed("SAS version '" + s.Version + "' is not supported; use 2015-04-05 or later.")
	}
	acct, err := sasAccount(lookup, req.Account)
	if err != nil {
		return err
	}
	sts := AccountSASStringToSign(req.Account, s)
	if !sasMatches(acct.Keys, sts, s.Signature) {
		return sigMismatch(sts)
	}
	return checkConstraints(s.Start, s.Expiry, s, req)
}

// VerifySAS dispatches to VerifyAccountSAS or VerifyServiceSAS and returns
// the effective SAS to pass to Authorize.
func VerifySAS(s *SAS, lookup Lookup, req SASRequest, policy PolicyLookup) (SAS, error) {
	if s.IsAccount() {
		return *s, VerifyAccountSAS(s, lookup, req)
	}
	return VerifyServiceSAS(s, lookup, req, policy)
}

// VerifyServiceSAS verifies a service SAS for the request's account and
// canonical resource and returns the effective SAS: s with the stored
// access policy's st, se and sp merged in when si is given. policy may be
// nil when the caller has no ACL (then any si fails).
//
// The canonical resource is derived from sr and the request: sr=c (or a
// queue, table or sr=s share) signs the container; sr=b, bs, bv, f the full
// path; sr=d the first sdd segments of the path. The layout follows sv:
//
//	blob  >= 2020-12-06: sp st se res si sip spr sv sr ts ses rscc rscd rsce rscl rsct
//	blob  >= 2018-11-09: sp st se res si sip spr sv sr ts rscc rscd rsce rscl rsct
//	blob  older:         sp st se res si sip spr sv rscc rscd rsce rscl rsct
//	file:                sp st se res si sip spr sv rscc rscd rsce rscl rsct
//	queue:               sp st se res si sip spr sv
//	table:               sp st se res si sip spr sv spk srk epk erk
//
// Failures are 403 AuthenticationFailed (account, signature, policy, time),
// AuthorizationResourceTypeMismatch (sr does not fit the request),
// AuthorizationSourceIPMismatch or AuthorizationProtocolMismatch.
func VerifyServiceSAS(s *SAS, lookup Lookup, req SASRequest, policy PolicyLookup) (SAS, error) {
	eff := *s
	if s.IsAccount() {
		return eff, sasFailed("The SAS is not a service SAS.")
	}
	if s.Delegated {
		if req.Service != Blob && req.Service != File && req.Service != Queue {
			return eff, sasFailed("A user delegation SAS is valid for Blob Storage, Azure Files and Queue Storage only.")
		}
		acct, err := sasAccount(lookup, req.Account)
		if err != nil {
			return eff, err
		}
		if req.Container == "" {
			return eff, azerr.New(azerr.AuthorizationResourceTypeMismatch)
		}
		if err := verifyDelegationSAS(s, acct, req); err != nil {
			return eff, err
		}
		if eff.Expiry.IsZero() || eff.Permissions == "" {
			return eff, sasFailed("Signed expiry time and permissions are required in a user delegation SAS.")
		}
		return eff, checkConstraints(eff.Start, eff.Expiry, s, req)
	}
	if s.Version < "2015-04-05" {
		return eff, sasFailed("SAS version '" + s.Version + "' is not supported; use 2015-04-05 or later.")
	}
	acct, err := sasAccount(lookup, req.Account)
	if err != nil {
		return eff, err
	}
	if req.Container == "" {
		return eff, azerr.New(azerr.AuthorizationResourceTypeMismatch)
	}
	sts, err := ServiceSASStringToSign(s, req)
	if err != nil {
		return eff, err
	}
	if !sasMatches(acct.Keys, sts, s.Signature) {
		return eff, sigMismatch(sts)
	}
	if s.Identifier != "" {
		var p AccessPolicy
		ok := false
		if policy != nil {
			p, ok = policy(s.Identifier)
		}
		if !ok {
			return eff, sasFailed("The specified signed identifier '" + s.Identifier + "' does not exist.")
		}
		if (!p.Start.IsZero() && s.StartRaw != "") || (!p.Expiry.IsZero() && s.ExpiryRaw != "") || (p.Permissions != "" && s.Permissions != "") {
			return eff, sasFailed("A field is specified both in the SAS and in the stored access policy '" + s.Identifier + "'.")
		}
		if !p.Start.IsZero() {
			eff.Start = p.Start.UTC()
		}
		if !p.Expiry.IsZero() {
			eff.Expiry = p.Expiry.UTC()
		}
		if p.Permissions != "" {
			eff.Permissions = p.Permissions
		}
	}
	if eff.Expiry.IsZero() {
		return eff, sasFailed("Signed expiry time is missing from the SAS and its stored access policy.")
	}
	if eff.Permissions == "" {
		return eff, sasFailed("Signed permissions are missing from the SAS and its stored access policy.")
	}
	return eff, checkConstraints(eff.Start, eff.Expiry, s, req)
}
