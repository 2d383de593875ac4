package auth

import (
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// User delegation keys and user delegation SAS ("Get User Delegation
// Key" and "Create a user delegation SAS" in the Azure Storage REST
// reference, https://learn.microsoft.com/rest/api/storageservices/create-user-delegation-sas).
//
// A caller authenticated with a Microsoft Entra ID bearer token asks
// for a key valid between two times; SAS tokens signed with that key
// carry the key's fields (skoid, sktid, skt, ske, sks, skv, and skdutid
// when the key names a delegated user's tenant), so the service can
// recompute the key from the token alone. Here the key is an HMAC of those
// fields under the account key: no key is stored, a key works on every
// front end sharing the accounts, and it stops working when the account
// key it was derived from is rotated away, as on Azure.

// BearerPrincipal returns the oid, tid, groups and user name claims of a bearer token
// that VerifyBearer accepted.
func BearerPrincipal(tok string) Principal {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return Principal{}
	}
	var c struct {
		Oid        string   `json:"oid"`
		Tid        string   `json:"tid"`
		Groups     []string `json:"groups"`
		UPN        string   `json:"upn"`
		UniqueName string   `json:"unique_name"`
		Preferred  string   `json:"preferred_username"`
	}
	if decodeSegment(parts[1], &c) != nil {
		return Principal{}
	}
	upn := cmp.Or(c.UPN, c.UniqueName, c.Preferred)
	return Principal{OID: c.Oid, TID: c.Tid, Groups: c.Groups, UPN: upn}
}

// MaxDelegationKeyLifetime is how far ahead of now a key may expire: "The
// expiry time must be within seven days of the current time" (Get User
// Delegation Key, Request body).
const MaxDelegationKeyLifetime = 7 * 24 * time.Hour

// DelegationKeyTimeFormat is how the service writes SignedStart and
// SignedExpiry, and how SAS signers copy them into skt and ske.
const DelegationKeyTimeFormat = "2006-01-02T15:04:05Z"

// DelegationKeyValue derives the key (the Value element of Get User
// Delegation Key, base64) from an account key and the key's fields.
func DelegationKeyValue(accountKey []byte, k DelegationKey) []byte {
	m := hmac.New(sha256.New, accountKey)
	m.Write([]byte(strings.Join([]string{"user-delegation-key", k.OID, k.TID, k.Start, k.Expiry, k.Service, k.Version, k.DelegatedUserTID}, "\n")))
	return m.Sum(nil)
}

// verifyDelegationSAS verifies a user delegation SAS: the key's service
// and validity, then the signature under the key derived from any of the
// account's keys. It returns nil or a 403.
func verifyDelegationSAS(s *SAS, acct Account, req SASRequest) error {
	d := s.delegation
	if d == nil {
		return sasFailed("The user delegation SAS is malformed.")
	}
	if s.Identifier != "" {
		return sasFailed("A user delegation SAS cannot reference a stored access policy.")
	}
	if s.Version < "2018-11-09" {
		return sasFailed("User delegation SAS needs sv 2018-11-09 or later.")
	}
	if !strings.Contains(d.Key.Service, serviceLetterString(req.Service)) {
		return sasFailed("The user delegation key is not valid for this service (sks '" + d.Key.Service + "').")
	}
	if req.Now.Before(d.Key.StartT) {
		return sasFailed("The user delegation key is not yet valid (skt '" + d.Key.Start + "').")
	}
	if !req.Now.Before(d.Key.ExpiryT) {
		return sasFailed("The user delegation key has expired (ske '" + d.Key.Expiry + "').")
	}
	if req.Service == File && s.Version < FileDelegationSASVersion {
		return sasFailed("A user delegation SAS for Azure Files needs sv " + FileDelegationSASVersion + " or later.")
	}
	if req.Service == Queue && s.Version < QueueDelegationSASVersion {
		return sasFailed("A user delegation SAS for Queue Storage needs sv " + QueueDelegationSASVersion + " or later.")
	}
	stsOf := DelegationSASStringToSign
	switch req.Service {
	case File:
		stsOf = FileDelegationSASStringToSign
	case Queue:
		stsOf = QueueDelegationSASStringToSign
	}
	sts, err := stsOf(s, req)
	if err != nil {
		return err
	}
	signed := false
	for _, k := range acct.Keys {
		m := hmac.New(sha256.New, DelegationKeyValue(k, d.Key))
		m.Write([]byte(sts))
		if hmac.Equal(m.Sum(nil), s.Signature) {
			signed = true
			break
		}
	}
	if !signed {
		return sigMismatch(sts)
	}
	return checkDelegatedUser(d, req.Bearer)
}

// checkDelegatedUser checks a user-bound SAS (sduoid, "Create a user
// delegation SAS": the SAS "must be used in conjunction with an Entra ID
// token that has been issued to the user specified in this value") against
// the bearer token sent with it: its oid must be sduoid, and when the key
// names the delegated user's tenant (skdutid) its tid must be that tenant
// (inferred: the cross-tenant key exists for a user of that tenant).
// Azure answers a user-bound SAS sent without the token 403
// AuthenticationFailed (azure-sdk-for-net, Azure.Storage.Blobs tests,
// ContainerIdentitySAS_DelegatedObjectId_Fail); another user's token is
// refused the same way.
func checkDelegatedUser(d *delegationFields, bearer *Principal) error {
	if d.DelegatedUserOID == "" {
		return nil
	}
	switch {
	case bearer == nil:
		return sasFailed("This SAS names a delegated user (sduoid): send it with that user's bearer token.")
	case bearer.OID != d.DelegatedUserOID:
		return sasFailed("The bearer token's object id (oid '" + bearer.OID + "') is not the SAS's delegated user (sduoid '" + d.DelegatedUserOID + "').")
	case d.Key.DelegatedUserTID != "" && bearer.TID != d.Key.DelegatedUserTID:
		return sasFailed("The bearer token's tenant (tid '" + bearer.TID + "') is not the delegated user's tenant (skdutid '" + d.Key.DelegatedUserTID + "').")
	}
	return nil
}

// DelegatedUserOID is the delegated user a user delegation SAS is bound
// to (sduoid), "" for any other SAS.
func (s *SAS) DelegatedUserOID() string {
	if s.delegation == nil {
		return ""
	}
	return s.delegation.DelegatedUserOID
}

// serviceLetterString is the sks letter of a service.
func serviceLetterString(svc Service) string {
	return string(serviceLetter(svc))
}

// DelegationSASStringToSign returns the string-to-sign of a blob user
// delegation SAS for the request's resource. The layout follows sv, each
// version adding fields to the one before:
//
//	2018-11-09: sp st se res skoid sktid skt ske sks skv sip spr sv sr ts rscc rscd rsce rscl rsct
//	2020-02-10: … skv saoid suoid scid sip …
//	2020-12-06: … ts ses rscc …
//	2025-07-05: … scid skdutid sduoid sip …
//	2026-04-06: … ses srh srq rscc …
//
// srh and srq sign the named request headers ("name:value\n" each) and
// query parameters ("\nname:value" each) with the values the request
// carries, so a request without them fails the signature check.
func DelegationSASStringToSign(s *SAS, req SASRequest) (string, error) {
	d := s.delegation
	res, err := canonicalSASResource(s, req)
	if err != nil {
		return "", err
	}
	parts := []string{s.Permissions, s.StartRaw, s.ExpiryRaw, res, d.Key.OID, d.Key.TID, d.Key.Start, d.Key.Expiry, d.Key.Service, d.Key.Version}
	if s.Version >= "2020-02-10" {
		parts = append(parts, d.AuthorizedOID, d.UnauthorizedOID, d.CorrelationID)
	}
	if s.Version >= "2025-07-05" {
		parts = append(parts, d.Key.DelegatedUserTID, d.DelegatedUserOID)
	}
	ts := ""
	switch s.Resource {
	case "bs":
		ts = req.Snapshot
	case "bv":
		ts = req.VersionID
	}
	parts = append(parts, s.IP, s.Protocol, s.Version, s.Resource, ts)
	if s.Version >= "2020-12-06" {
		parts = append(parts, s.EncryptionScope)
	}
	if s.Version >= "2026-04-06" {
		parts = append(parts, signedHeaders(d.SignedRequestHeaders, req.Header), signedQuery(d.SignedParams, req.Query))
	}
	parts = append(parts, s.CacheControl, s.ContentDisposition, s.ContentEncoding, s.ContentLanguage, s.ContentType)
	return strings.Join(parts, "\n"), nil
}

// FileDelegationSASVersion is the first signed version of a user
// delegation SAS for Azure Files (inferred: the earliest sv the SDKs'
// recorded tests sign one with, azure-sdk-for-js storage-file-share
// test/node/sas.spec.ts "ShareClient.generateUserDelegationSasUrl should
// work"; the key comes from Get User Delegation Key on the File endpoint
// from 2026-02-06, azfile 1.5.4 and azure-storage-file-share 12.24.0b1).
const FileDelegationSASVersion = "2025-07-05"

// FileDelegationSASStringToSign returns the string-to-sign of a user
// delegation SAS for a share (sr=s) or a file (sr=f):
//
//	sp st se res skoid sktid skt ske sks skv skdutid sduoid sip spr sv rscc rscd rsce rscl rsct
//
// as .NET's ShareSasBuilder, Java's ShareSasImplUtil, Python's
// FileSharedAccessSignature and JavaScript's generateFileSASQueryParameters
// lay it out: no saoid/suoid/scid, sr or signed timestamp, unlike a blob
// one. (azfile 1.7.1's SignWithUserDelegation signs a blob-like layout,
// with saoid, suoid, scid, sr and two empty fields, that this does not
// accept.)
func FileDelegationSASStringToSign(s *SAS, req SASRequest) (string, error) {
	f, err := sharedDelegationLayout(s, req)
	if err != nil {
		return "", err
	}
	f = append(f, s.CacheControl, s.ContentDisposition, s.ContentEncoding, s.ContentLanguage, s.ContentType)
	return strings.Join(f, "\n"), nil
}

// QueueDelegationSASVersion is the first signed version of a user
// delegation SAS for Queue Storage: the service version that added it
// (2026-02-06: azure-storage-queue 12.15.0b1 get_user_delegation_key and
// generate_queue_sas(user_delegation_key=...), Azure.Storage.Queues
// 12.25.0-beta.1 "Added support for User Delegation SAS").
const QueueDelegationSASVersion = "2026-02-06"

// QueueDelegationSASStringToSign returns the string-to-sign of a user
// delegation SAS for a queue:
//
//	sp st se res skoid sktid skt ske sks skv skdutid sduoid sip spr sv
//
// as .NET's QueueSasBuilder and Java's QueueSasImplUtil lay it out: no
// signed identifier (a delegation SAS cannot name a stored policy), no
// sr (a queue SAS has none, as with Shared Key), no response overrides.
func QueueDelegationSASStringToSign(s *SAS, req SASRequest) (string, error) {
	f, err := sharedDelegationLayout(s, req)
	if err != nil {
		return "", err
	}
	return strings.Join(f, "\n"), nil
}

// sharedDelegationLayout is the fields the File and Queue delegation layouts
// share, in order: sp st se res skoid sktid skt ske sks skv skdutid
// sduoid sip spr sv.
func sharedDelegationLayout(s *SAS, req SASRequest) ([]string, error) {
	d := s.delegation
	res, err := canonicalSASResource(s, req)
	if err != nil {
		return nil, err
	}
	return []string{s.Permissions, s.StartRaw, s.ExpiryRaw, res,
		d.Key.OID, d.Key.TID, d.Key.Start, d.Key.Expiry, d.Key.Service, d.Key.Version, d.Key.DelegatedUserTID, d.DelegatedUserOID,
		s.IP, s.Protocol, s.Version}, nil
}

func signedHeaders(names string, h http.Header) string {
	if names == "" {
		return ""
	}
	var b strings.Builder
	for _, n := range strings.Split(names, ",") {
		b.WriteString(n)
		b.WriteByte(':')
		b.WriteString(h.Get(n))
		b.WriteByte('\n')
	}
	return b.String()
}

func signedQuery(names string, q url.Values) string {
	if names == "" {
		return ""
	}
	var b strings.Builder
	for _, n := range strings.Split(names, ",") {
		b.WriteByte('\n')
		b.WriteString(n)
		b.WriteByte(':')
		b.WriteString(q.Get(n))
	}
	return b.String()
}

// ErrBearerOnly is Azure's answer to Get User Delegation Key authorized
// any other way than with a bearer token.
func ErrBearerOnly() *azerr.Error {
	return authFailed("Only authentication scheme Bearer is supported")
}
