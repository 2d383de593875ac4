package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// SAS is a parsed Shared Access Signature. The *Raw fields keep the query
// values exactly as sent: the string-to-sign is built from them, never from
// re-formatted times.
//
// A token is an account SAS when it carries ss or srt, and a service SAS
// otherwise (sr for blob/file, tn for table, neither for queue).
type SAS struct {
	Version       string // sv
	Services      string // ss (account SAS): b q t f
	ResourceTypes string // srt (account SAS): s c o
	Permissions   string // sp, as sent (empty when a stored policy supplies it)

	StartRaw, ExpiryRaw string    // st, se as sent
	Start, Expiry       time.Time // zero when absent

	IP       string // sip as sent: one address or "start-end"
	IPStart  netip.Addr
	IPEnd    netip.Addr
	Protocol string // spr: "", "https" or "https,http"

	Resource       string // sr: b c bs bv d (blob), s f (file)
	Identifier     string // si: stored access policy
	DirectoryDepth int    // sdd, for sr=d; -1 when absent

	EncryptionScope string // ses

	// Table SAS.
	TableName                                  string // tn
	StartPartitionKey, StartRowKey             string // spk, srk
	EndPartitionKey, EndRowKey                 string // epk, erk
	HasStartPK, HasStartRK, HasEndPK, HasEndRK bool

	// Response header overrides (rscc, rscd, rsce, rscl, rsct): signed by
	// blob and file service SAS; the caller applies them to GET responses.
	CacheControl, ContentDisposition, ContentEncoding, ContentLanguage, ContentType string

	// Delegated reports a user delegation SAS (skoid present), verified
	// with the key Get User Delegation Key derived (see delegation.go).
	Delegated  bool
	delegation *delegationFields

	SignatureRaw string // sig as sent (decoded from the query)
	Signature    []byte
}

// IsAccount reports whether s is an account SAS.
func (s *SAS) IsAccount() bool { return s.Services != "" || s.ResourceTypes != "" }

// sasTimeFormats are the ISO 8601 forms Azure accepts for st and se.
var sasTimeFormats = []string{
	"2006-01-02T15:04:05.0000000Z",
	"2006-01-02T15:04:05Z",
	"2006-01-02T15:04Z",
	"2006-01-02",
	time.RFC3339Nano,
}

// ParseSASTime parses an st/se value (or a stored access policy's Start
// or Expiry) in any ISO 8601 form Azure accepts.
func ParseSASTime(v string) (time.Time, bool) { return parseSASTime(v) }

func parseSASTime(v string) (time.Time, bool) {
	for _, f := range sasTimeFormats {
		if t, err := time.Parse(f, v); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// sasFailed is the 403 AuthenticationFailed every SAS verification failure
// reports; detail goes to AuthenticationErrorDetail.
func sasFailed(detail string) *azerr.Error { return authFailed(detail) }

// RawQueryHasSig reports whether raw, a URL's query as sent, has a sig
// parameter however it is written, one url.ParseQuery drops included (a
// bad percent escape in its name or value, a ';' in it): such a request
// is SAS-signed, with a signature that is not well formed, and not an
// anonymous one.
func RawQueryHasSig(raw string) bool {
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		for kv != "" {
			var part string
			part, kv, _ = strings.Cut(kv, ";")
			k, _, _ := strings.Cut(part, "=")
			if u, err := url.QueryUnescape(k); err == nil {
				k = u
			}
			if k == "sig" {
				return true
			}
		}
	}
	return false
}

// MalformedSignature is the 403 AuthenticationFailed of a SAS whose sig is
// not base64 of 32 bytes, or cannot be read from the query.
func MalformedSignature() *azerr.Error { return sasFailed("Signature fields not well formed.") }

// ParseSAS extracts a SAS from the request query q. It returns ok=false (and
// no error) when q has no sig parameter: the request is not SAS-signed.
//
// Malformed fields are rejected with 403 AuthenticationFailed and an
// AuthenticationErrorDetail naming the field, as Azure does: a missing sv,
// a sig that is not base64 of 32 bytes, unparsable st/se, a bad sip or spr,
// unknown ss/srt letters, an account SAS without ss, srt or sp, a bad sr or
// sdd, or any SAS parameter given more than once.
func ParseSAS(q url.Values) (SAS, bool, error) {
	sigs, ok := q["sig"]
	if !ok {
		return SAS{}, false, nil
	}
	for _, k := range [...]string{"sig", "sv", "ss", "srt", "sp", "st", "se", "sip", "spr", "sr", "si", "sdd", "ses",
		"tn", "spk", "srk", "epk", "erk", "rscc", "rscd", "rsce", "rscl", "rsct", "skoid"} {
		if len(q[k]) > 1 {
			return SAS{}, true, sasFailed("The query parameter '" + k + "' is specified more than once.")
		}
	}
	s := SAS{
		Version:            q.Get("sv"),
		Services:           q.Get("ss"),
		ResourceTypes:      q.Get("srt"),
		Permissions:        q.Get("sp"),
		StartRaw:           q.Get("st"),
		ExpiryRaw:          q.Get("se"),
		IP:                 q.Get("sip"),
		Protocol:           q.Get("spr"),
		Resource:           q.Get("sr"),
		Identifier:         q.Get("si"),
		DirectoryDepth:     -1,
		EncryptionScope:    q.Get("ses"),
		TableName:          q.Get("tn"),
		StartPartitionKey:  q.Get("spk"),
		StartRowKey:        q.Get("srk"),
		EndPartitionKey:    q.Get("epk"),
		EndRowKey:          q.Get("erk"),
		CacheControl:       q.Get("rscc"),
		ContentDisposition: q.Get("rscd"),
		ContentEncoding:    q.Get("rsce"),
		ContentLanguage:    q.Get("rscl"),
		ContentType:        q.Get("rsct"),
		Delegated:          q.Has("skoid"),
		SignatureRaw:       sigs[0],
	}
	s.HasStartPK, s.HasStartRK, s.HasEndPK, s.HasEndRK = q.Has("spk"), q.Has("srk"), q.Has("epk"), q.Has("erk")
	if s.Delegated {
		d, err := parseDelegation(q)
		if err != nil {
			return s, true, err
		}
		s.delegation = d
	}

	if s.Version == "" {
		return s, true, sasFailed("sv is mandatory. Cannot be empty")
	}
	if !validVersion(s.Version) {
		return s, true, sasFailed("The value for one of the query parameters specified in the request URI is invalid: sv '" + s.Version + "'.")
	}
	sig, err := base64.StdEncoding.DecodeString(s.SignatureRaw)
	if err != nil || len(sig) != sha256.Size {
		return s, true, MalformedSignature()
	}
	s.Signature = sig
	if s.StartRaw != "" {
		t, ok := parseSASTime(s.StartRaw)
		if !ok {
			return s, true, sasFailed("Signed start time '" + s.StartRaw + "' is not a valid ISO 8601 time.")
		}
		s.Start = t
	}
	if s.ExpiryRaw != "" {
		t, ok := parseSASTime(s.ExpiryRaw)
		if !ok {
			return s, true, sasFailed("Signed expiry time '" + s.ExpiryRaw + "' is not a valid ISO 8601 time.")
		}
		s.Expiry = t
	}
	if s.IP != "" {
		lo, hi, ok := parseIPRange(s.IP)
		if !ok {
			return s, true, sasFailed("Signed IP '" + s.IP + "' is not a valid IP address or range.")
		}
		s.IPStart, s.IPEnd = lo, hi
	}
	switch s.Protocol {
	case "", "https", "https,http", "http,https":
	default:
		return s, true, sasFailed("Signed protocol '" + s.Protocol + "' must be 'https' or 'https,http'.")
	}
	if !lettersIn(s.Permissions, "abcdefilmoprtuwxy") {
		return s, true, sasFailed("Signed permissions '" + s.Permissions + "' contain an invalid permission.")
	}
	if s.IsAccount() {
		if s.Services == "" || !lettersIn(s.Services, "bqtf") {
			return s, true, sasFailed("Signed services '" + s.Services + "' must be a non-empty combination of b, q, t and f.")
		}
		if s.ResourceTypes == "" || !lettersIn(s.ResourceTypes, "sco") {
			return s, true, sasFailed("Signed resource types '" + s.ResourceTypes + "' must be a non-empty combination of s, c and o.")
		}
		if s.Permissions == "" {
			return s, true, sasFailed("sp is mandatory. Cannot be empty")
		}
		if s.ExpiryRaw == "" {
			return s, true, sasFailed("se is mandatory. Cannot be empty")
		}
	}
	switch s.Resource {
	case "", "b", "c", "bs", "bv", "d", "s", "f":
	default:
		return s, true, sasFailed("Signed resource '" + s.Resource + "' is not valid.")
	}
	if v, ok := q["sdd"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 0 || s.Resource != "d" {
			return s, true, sasFailed("Signed directory depth '" + v[0] + "' is not valid.")
		}
		s.DirectoryDepth = n
	} else if s.Resource == "d" {
		return s, true, sasFailed("sdd is mandatory for a directory SAS.")
	}
	return s, true, nil
}

// validVersion reports whether v looks like YYYY-MM-DD.
func validVersion(v string) bool {
	_, err := time.Parse("2006-01-02", v)
	return err == nil
}

func lettersIn(s, alphabet string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(alphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}

// parseIPRange parses "a.b.c.d" or "a.b.c.d-e.f.g.h".
func parseIPRange(v string) (lo, hi netip.Addr, ok bool) {
	a, b, isRange := strings.Cut(v, "-")
	lo, err := netip.ParseAddr(a)
	if err != nil || lo.Zone() != "" {
		return lo, hi, false
	}
	lo = lo.Unmap()
	hi = lo
	if isRange {
		if hi, err = netip.ParseAddr(b); err != nil || hi.Zone() != "" {
			return lo, hi, false
		}
		hi = hi.Unmap()
		if lo.Is4() != hi.Is4() || hi.Less(lo) {
			return lo, hi, false
		}
	}
	return lo, hi, true
}

// SASRequest is what the request contributes to SAS verification.
type SASRequest struct {
	Account string  // from the URL (first path segment, or host)
	Service Service // the service the request was sent to
	// Container is the container, queue, table or share name ("" for
	// service-level requests). Table names compare case-insensitively.
	Container string
	// Path is the decoded blob name or file path ("" for container-level
	// requests).
	Path string
	// Snapshot is the decoded ?snapshot= value, VersionID the ?versionid=
	// value (blob only); they fill the signed-timestamp slot of sr=bs / bv.
	Snapshot, VersionID string
	ClientIP            netip.Addr // the peer address; invalid when unknown
	HTTPS               bool       // whether the request arrived over TLS
	Now                 time.Time
	// Header and Query are the request's, for the headers and query
	// parameters a user delegation SAS signs (srh, srq).
	Header http.Header
	Query  url.Values
	// Bearer is the verified bearer token sent with a user-bound user
	// delegation SAS (sduoid); nil when the request carries none.
	Bearer *Principal
}

// AccessPolicy is a stored access policy (a signed identifier of a
// container, queue, table or share ACL). Zero fields are unset.
type AccessPolicy struct {
	Start, Expiry time.Time
	Permissions   string
}

// PolicyLookup resolves a signed identifier (si) in the ACL of the SAS's
// container, queue, table or share. The caller binds it to that resource.
type PolicyLookup func(id string) (AccessPolicy, bool)

// AccountSASStringToSign returns the account SAS string-to-sign for s.
func AccountSASStringToSign(account string, s *SAS) string {
	parts := []string{account, s.Permissions, s.Services, s.ResourceTypes, s.StartRaw, s.ExpiryRaw, s.IP, s.Protocol, s.Version}
	if s.Version >= "2020-12-06" {
		parts = append(parts, s.EncryptionScope)
	}
	return strings.Join(parts, "\n") + "\n"
}

// ServiceSASStringToSign returns the service SAS string-to-sign of s for
// the request's resource. It fails with 403 AuthorizationResourceTypeMismatch
// when sr (or tn) does not fit the request.
func ServiceSASStringToSign(s *SAS, req SASRequest) (string, error) {
	res, err := canonicalSASResource(s, req)
	if err != nil {
		return "", err
	}
	parts := []string{s.Permissions, s.StartRaw, s.ExpiryRaw, res, s.Identifier, s.IP, s.Protocol, s.Version}
	overrides := []string{s.CacheControl, s.ContentDisposition, s.ContentEncoding, s.ContentLanguage, s.ContentType}
	switch req.Service {
	case Blob:
		if s.Version >= "2018-11-09" {
			ts := ""
			switch s.Resource {
			case "bs":
				ts = req.Snapshot
			case "bv":
				ts = req.VersionID
			}
			parts = append(parts, s.Resource, ts)
			if s.Version >= "2020-12-06" {
				parts = append(parts, s.EncryptionScope)
			}
		}
		parts = append(parts, overrides...)
	case File:
		parts = append(parts, overrides...)
	case Table:
		parts = append(parts, s.StartPartitionKey, s.StartRowKey, s.EndPartitionKey, s.EndRowKey)
	}
	return strings.Join(parts, "\n"), nil
}

func canonicalSASResource(s *SAS, req SASRequest) (string, error) {
	mismatch := azerr.New(azerr.AuthorizationResourceTypeMismatch)
	base := "/" + req.Service.String() + "/" + req.Account + "/"
	switch req.Service {
	case Queue:
		if s.Resource != "" {
			return "", mismatch
		}
		return base + req.Container, nil
	case Table:
		if s.Resource != "" || s.TableName == "" || !strings.EqualFold(s.TableName, req.Container) {
			return "", mismatch
		}
		return base + strings.ToLower(s.TableName), nil
	case File:
		switch s.Resource {
		case "s":
			return base + req.Container, nil
		case "f":
			if req.Path == "" {
				return "", mismatch
			}
			return base + req.Container + "/" + strings.TrimPrefix(req.Path, "/"), nil
		}
		return "", mismatch
	case Blob:
		switch s.Resource {
		case "c":
			return base + req.Container, nil
		case "b", "bs", "bv":
			if req.Path == "" {
				return "", mismatch
			}
			return base + req.Container + "/" + req.Path, nil
		case "d":
			if req.Path == "" {
				return "", mismatch
			}
			segs := strings.Split(strings.Trim(req.Path, "/"), "/")
			// The directory must be a proper ancestor of (or equal to) the
			// target; depth 0 is the container root.
			if s.DirectoryDepth > len(segs) {
				return "", mismatch
			}
			if s.DirectoryDepth == 0 {
				return base + req.Container + "/", nil
			}
			return base + req.Container + "/" + strings.Join(segs[:s.DirectoryDepth], "/"), nil
		}
		return "", mismatch
	}
	return "", mismatch
}

func sasAccount(lookup Lookup, name string) (Account, error) {
	var acct Account
	ok := false
	if lookup != nil && name != "" {
		acct, ok = lookup(name)
	}
	if !ok || len(acct.Keys) == 0 {
		return acct, sasFailed("The account '" + name + "' does not exist.")
	}
	return acct, nil
}

func sigMismatch(sts string) *azerr.Error {
	return sasFailed("Signature did not match. String to sign used was " + sts)
}

// sasMatches reports whether any key signs sts to want (constant time per
// key; every key is tried).
func sasMatches(keys [][]byte, sts string, want []byte) bool {
	ok := false
	for _, k := range keys {
		h := hmac.New(sha256.New, k)
		h.Write([]byte(sts))
		if hmac.Equal(h.Sum(nil), want) {
			ok = true
		}
	}
	return ok && len(want) == sha256.Size
}

const sasTimeLayout = "Mon, 02 Jan 2006 15:04:05 GMT"

// checkConstraints applies the time window, sip and spr of s to req.
func checkConstraints(start, expiry time.Time, s *SAS, req SASRequest) error {
	now := req.Now.UTC()
	if !start.IsZero() && !expiry.IsZero() && !expiry.After(start) {
		return sasFailed("Signed expiry time [" + expiry.Format(sasTimeLayout) + "] must be after signed start time [" + start.Format(sasTimeLayout) + "]")
	}
	if (!start.IsZero() && now.Before(start)) || (!expiry.IsZero() && !now.Before(expiry)) {
		st := ""
		if !start.IsZero() {
			st = start.Format(sasTimeLayout)
		}
		return sasFailed("Signature not valid in the specified time frame: Start [" + st + "] - Expiry [" +
			expiry.Format(sasTimeLayout) + "] - Current [" + now.Format(sasTimeLayout) + "]")
	}
	if s.IP != "" {
		ip := req.ClientIP.Unmap()
		if !ip.IsValid() || ip.Is4() != s.IPStart.Is4() || ip.Less(s.IPStart) || s.IPEnd.Less(ip) {
			return azerr.New(azerr.AuthorizationSourceIPMismatch).With(detailName,
				"This request is not authorized to perform this operation using this source IP "+ip.String()+".")
		}
	}
	if s.Protocol == "https" && !req.HTTPS {
		return azerr.New(azerr.AuthorizationProtocolMismatch)
	}
	return nil
}

// ResourceType is the level an operation works at (the srt letters).
type ResourceType byte

// The resource types.
const (
	ServiceLevel   ResourceType = 's' // account/service operations
	ContainerLevel ResourceType = 'c' // container, queue, table, share (and directory) operations
	ObjectLevel    ResourceType = 'o' // blob, message, entity, file operations
)

// Operation is what a request needs from a SAS.
type Operation struct {
	Resource ResourceType
	// Permissions lists the acceptable permission letters: any one of them
	// suffices (Put Blob, for instance, accepts "cw"). Usually one letter;
	// empty means the operation needs no particular permission.
	Permissions string
}

// Authorize checks an already verified SAS (for a service SAS: the
// effective SAS VerifyServiceSAS returned) against what op needs on
// service svc. Failures are 403 AuthorizationServiceMismatch (account SAS
// without svc in ss), AuthorizationResourceTypeMismatch (account SAS
// without op's level in srt; a service SAS used at service level, or sr
// narrower than the operation) and AuthorizationPermissionMismatch.
func Authorize(s *SAS, svc Service, op Operation) error {
	if s.IsAccount() {
		if strings.IndexByte(s.Services, serviceLetter(svc)) < 0 {
			return azerr.New(azerr.AuthorizationServiceMismatch)
		}
		if strings.IndexByte(s.ResourceTypes, byte(op.Resource)) < 0 {
			return azerr.New(azerr.AuthorizationResourceTypeMismatch)
		}
	} else if !serviceSASCovers(s, svc, op.Resource) {
		return azerr.New(azerr.AuthorizationResourceTypeMismatch)
	}
	if op.Permissions == "" || strings.ContainsAny(s.Permissions, op.Permissions) {
		return nil
	}
	return azerr.New(azerr.AuthorizationPermissionMismatch)
}

func serviceLetter(svc Service) byte {
	switch svc {
	case Blob:
		return 'b'
	case Queue:
		return 'q'
	case Table:
		return 't'
	case File:
		return 'f'
	}
	return 0
}

// serviceSASCovers reports whether a service SAS reaches an operation at
// level rt: never service level; container level only for sr=c/s, queues
// (metadata, properties); objects always (the signature already pins
// which ones).
func serviceSASCovers(s *SAS, svc Service, rt ResourceType) bool {
	switch rt {
	case ObjectLevel:
		switch svc {
		case Blob:
			return s.Resource == "c" || s.Resource == "b" || s.Resource == "bs" || s.Resource == "bv" || s.Resource == "d"
		case File:
			return s.Resource == "s" || s.Resource == "f"
		case Queue:
			return s.Resource == ""
		case Table:
			return s.Resource == "" && s.TableName != ""
		}
	case ContainerLevel:
		switch svc {
		case Blob:
			return s.Resource == "c" || s.Resource == "d"
		case File:
			return s.Resource == "s"
		case Queue:
			return s.Resource == ""
		}
	}
	return false
}

// AllowsEntity reports whether a table SAS's partition/row key range
// (spk/srk .. epk/erk, inclusive) admits the entity (pk, rk). Tokens
// without a range admit everything.
func (s *SAS) AllowsEntity(pk, rk string) bool {
	if s.HasStartPK {
		if pk < s.StartPartitionKey {
			return false
		}
		if pk == s.StartPartitionKey && s.HasStartRK && rk < s.StartRowKey {
			return false
		}
	}
	if s.HasEndPK {
		if pk > s.EndPartitionKey {
			return false
		}
		if pk == s.EndPartitionKey && s.HasEndRK && rk > s.EndRowKey {
			return false
		}
	}
	return true
}

// Principal is the identity of a bearer token: its object id (oid) and
// tenant id (tid) claims, and the group object ids its groups claim lists
// (Entra ID access tokens carry them; "Microsoft identity platform access
// tokens", claims reference). Data Lake Storage Gen2 ACLs decide a
// principal's access by its oid and groups. UPN is the user's principal
// name, from the upn claim, else unique_name, else preferred_username
// (tokens of users carry one of them, those of applications none).
type Principal struct {
	OID, TID string
	Groups   []string
	UPN      string
}

// DelegationKey is a user delegation key's signed fields, as Get User
// Delegation Key returns them and a user delegation SAS carries them.
type DelegationKey struct {
	OID, TID          string // skoid, sktid
	Start, Expiry     string // skt, ske: ISO 8601 UTC, as formatted by the service
	Service, Version  string // sks ("b"), skv
	DelegatedUserTID  string // skdutid; "" when the key names none
	StartT, ExpiryT   time.Time
	hasDelegatedUserT bool
}

// delegationFields are the user delegation SAS parameters besides the
// service SAS ones.
type delegationFields struct {
	Key                                DelegationKey
	AuthorizedOID, UnauthorizedOID     string // saoid, suoid
	CorrelationID                      string // scid
	DelegatedUserOID                   string // sduoid
	SignedRequestHeaders, SignedParams string // srh, srq: comma-separated names
}

// parseDelegation fills the delegation fields of a SAS carrying skoid.
func parseDelegation(q url.Values) (*delegationFields, error) {
	for _, k := range [...]string{"sktid", "skt", "ske", "sks", "skv", "saoid", "suoid", "scid", "skdutid", "sduoid", "srh", "srq"} {
		if len(q[k]) > 1 {
			return nil, sasFailed("The query parameter '" + k + "' is specified more than once.")
		}
	}
	d := &delegationFields{
		Key: DelegationKey{
			OID: q.Get("skoid"), TID: q.Get("sktid"), Start: q.Get("skt"), Expiry: q.Get("ske"),
			Service: q.Get("sks"), Version: q.Get("skv"), DelegatedUserTID: q.Get("skdutid"),
			hasDelegatedUserT: q.Has("skdutid"),
		},
		AuthorizedOID: q.Get("saoid"), UnauthorizedOID: q.Get("suoid"), CorrelationID: q.Get("scid"),
		DelegatedUserOID: q.Get("sduoid"), SignedRequestHeaders: q.Get("srh"), SignedParams: q.Get("srq"),
	}
	for name, v := range map[string]string{"skoid": d.Key.OID, "sktid": d.Key.TID, "skt": d.Key.Start, "ske": d.Key.Expiry, "sks": d.Key.Service, "skv": d.Key.Version} {
		if v == "" {
			return nil, sasFailed("The user delegation SAS is missing the '" + name + "' parameter.")
		}
	}
	var ok bool
	if d.Key.StartT, ok = parseSASTime(d.Key.Start); !ok {
		return nil, sasFailed("skt '" + d.Key.Start + "' is not a valid time.")
	}
	if d.Key.ExpiryT, ok = parseSASTime(d.Key.Expiry); !ok {
		return nil, sasFailed("ske '" + d.Key.Expiry + "' is not a valid time.")
	}
	if d.AuthorizedOID != "" && d.UnauthorizedOID != "" {
		return nil, sasFailed("saoid and suoid cannot both be given.")
	}
	return d, nil
}
