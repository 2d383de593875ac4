// Package auth verifies Azure Storage Shared Key and Shared Key Lite
// signatures for the Blob, Queue, Table and File services.
//
// Everything here is a pure function of the request, the account lookup and
// the caller's clock: no state, no I/O. Authenticate is the entry point; the
// string-to-sign builders are exported for tests and for diagnostics.
//
// The canonical forms follow what the Azure SDKs for Go put on the wire
// (azblob v1.8.3, azfile v1.7.1, azqueue v1.0.1, aztables v1.4.1):
//
//   - the canonicalized resource uses the request path exactly as sent
//     (escaped), so on path-style URLs the account appears twice;
//   - canonicalized x-ms-* headers are sorted in two ways (azblob/azfile use a
//     culture-style comparator, azqueue plain byte order) and a signature
//     matching either order is accepted;
//   - aztables signs with SharedKeyLite: "x-ms-date\n" + resource.
package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Account is a storage account and its decoded keys. Any key may sign.
type Account struct {
	Name string
	Keys [][]byte
}

// Lookup finds an account by name.
type Lookup func(name string) (Account, bool)

// MaxClockSkew is how far the request date may be from the server's clock,
// in either direction.
const MaxClockSkew = 15 * time.Minute

const detailName = "AuthenticationErrorDetail"

// SecondarySuffix marks the read-only secondary endpoint of an account
// in a path-style URL (/{account}-secondary/...), as Azure's RA-GRS
// secondary and the emulators serve it.
const SecondarySuffix = "-secondary"

// AccountFromPath returns the first path segment of the raw (escaped) URL
// path: path-style URLs are /{account}/... . It returns "" when the path has
// no first segment.
func AccountFromPath(escapedPath string) string {
	p := strings.TrimPrefix(escapedPath, "/")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		p = p[:i]
	}
	return p
}

// ParseAuthorization splits an Authorization header value of the form
// "<scheme> <account>:<signature>". It fails, with a 400
// InvalidAuthenticationInfo error, on anything else, including schemes other
// than SharedKey and SharedKeyLite.
func ParseAuthorization(v string) (scheme Scheme, account, signature string, err error) {
	name, rest, ok := strings.Cut(v, " ")
	if !ok {
		return 0, "", "", invalidInfo("The Authorization header is not of the form '<scheme> <account>:<signature>'.")
	}
	switch name {
	case "SharedKey":
		scheme = SharedKey
	case "SharedKeyLite":
		scheme = SharedKeyLite
	default:
		return 0, "", "", invalidInfo("The authentication scheme '" + name + "' is not supported; use SharedKey or SharedKeyLite.")
	}
	account, signature, ok = strings.Cut(strings.TrimLeft(rest, " "), ":")
	if !ok || account == "" || signature == "" {
		return 0, "", "", invalidInfo("The Authorization header is not of the form '<scheme> <account>:<signature>'.")
	}
	if strings.ContainsAny(account, " \t") || strings.ContainsAny(signature, " \t") {
		return 0, "", "", invalidInfo("The Authorization header is not of the form '<scheme> <account>:<signature>'.")
	}
	return scheme, account, signature, nil
}

func invalidInfo(detail string) *azerr.Error {
	return azerr.New(azerr.InvalidAuthenticationInfo).With(detailName, detail)
}

func authFailed(detail string) *azerr.Error {
	return azerr.New(azerr.AuthenticationFailed).With(detailName, detail)
}

// Authenticate checks the Authorization header of r for service svc.
//
// It returns (account, true, nil) on a valid SharedKey or SharedKeyLite
// signature made with any key of the account; ("", false, nil) when the
// request has no Authorization header (anonymous: the caller decides); and an
// *azerr.Error otherwise:
//   - 400 InvalidAuthenticationInfo for a malformed header;
//   - 403 AuthenticationFailed, with an AuthenticationErrorDetail, when the
//     header's account does not match the URL's first path segment or is
//     unknown, when x-ms-date/Date is missing, unparsable or more than
//     MaxClockSkew away from now, or when the signature does not match.
func Authenticate(r *http.Request, svc Service, lookup Lookup, now time.Time) (string, bool, error) {
	vals := r.Header["Authorization"]
	if len(vals) == 0 {
		return "", false, nil
	}
	if len(vals) > 1 {
		return "", false, invalidInfo("The request carries more than one Authorization header.")
	}
	scheme, name, sig, err := ParseAuthorization(vals[0])
	if err != nil {
		return "", false, err
	}

	path, query := requestTarget(r)
	// The read-only secondary endpoint {account}-secondary is signed with
	// the account's own name and keys.
	urlAccount := AccountFromPath(path)
	if urlAccount != name && urlAccount != name+SecondarySuffix {
		return "", false, authFailed("The account '" + name + "' in the Authorization header does not match the account '" + urlAccount + "' in the request URL.")
	}
	if r.Context().Value(accountInHostKey{}) != nil {
		// Signed in the virtual-host form, where the path does not
		// name the account (see WithAccountInHost).
		path = strings.TrimPrefix(path, "/"+urlAccount)
	}
	var acct Account
	ok := false
	if lookup != nil {
		acct, ok = lookup(name)
	}
	if !ok || len(acct.Keys) == 0 {
		return "", false, authFailed("The account '" + name + "' does not exist.")
	}

	var b builder
	b.init(r, name, path, query)
	dateValue := b.h.date()
	if dateValue == "" {
		return "", false, authFailed("Request date header not specified.")
	}
	date, perr := wire.ParseHTTPDate(dateValue)
	if perr != nil {
		return "", false, authFailed("The date header value '" + dateValue + "' is not a valid HTTP date.")
	}
	if d := now.Sub(date); d > MaxClockSkew || d < -MaxClockSkew {
		return "", false, authFailed("Request date header too old or too far in the future: '" + dateValue + "'. It must be within 15 minutes of the server time '" + wire.FormatHTTPDate(now) + "'.")
	}

	// A SHA-256 MAC is 44 base64 characters; anything else cannot match.
	var sigBuf [sha256.Size + 1]byte
	var want []byte
	if len(sig) == base64.StdEncoding.EncodedLen(sha256.Size) {
		if n, err := base64.StdEncoding.Decode(sigBuf[:], []byte(sig)); err == nil && n == sha256.Size {
			want = sigBuf[:n]
		}
	}

	// Strings-to-sign are built after a blockSize-byte gap that macInto
	// fills with the inner HMAC pad.
	var stack [1024]byte
	first := b.build(stack[:blockSize], svc, scheme, preferredOrder(svc))
	if want != nil && matches(acct.Keys, first, want) {
		return name, true, nil
	}
	if svc != Table && b.h.ordersDiffer() {
		second := b.build(make([]byte, blockSize, len(first)), svc, scheme, otherOrder(preferredOrder(svc)))
		if want != nil && matches(acct.Keys, second, want) {
			return name, true, nil
		}
	}
	return "", false, authFailed("The MAC signature found in the HTTP request '" + sig +
		"' is not the same as any computed signature. Server used following string to sign: '" + string(first[blockSize:]) + "'.")
}

// preferredOrder is the header order the service's Go SDK uses; its
// string-to-sign is the one reported in a mismatch detail.
func preferredOrder(svc Service) HeaderOrder {
	if svc == Queue {
		return OrdinalOrder
	}
	return CultureOrder
}

func otherOrder(o HeaderOrder) HeaderOrder {
	if o == CultureOrder {
		return OrdinalOrder
	}
	return CultureOrder
}

// matches reports whether any key's HMAC of buf[blockSize:] equals want,
// comparing in constant time.
func matches(keys [][]byte, buf []byte, want []byte) bool {
	for _, k := range keys {
		mac := macInto(k, buf)
		if hmac.Equal(mac[:], want) {
			return true
		}
	}
	return false
}

const blockSize = 64 // SHA-256 block size

// macInto returns HMAC-SHA256(key, buf[blockSize:]) (RFC 2104) without
// allocating: it overwrites buf[:blockSize] with the inner pad so the inner
// hash is a single sha256.Sum256 call.
func macInto(key []byte, buf []byte) [sha256.Size]byte {
	var k [blockSize]byte
	if len(key) > blockSize {
		sum := sha256.Sum256(key)
		copy(k[:], sum[:])
	} else {
		copy(k[:], key)
	}
	for i := range k {
		buf[i] = k[i] ^ 0x36
	}
	inner := sha256.Sum256(buf)
	var outer [blockSize + sha256.Size]byte
	for i := range k {
		outer[i] = k[i] ^ 0x5c
	}
	copy(outer[blockSize:], inner[:])
	return sha256.Sum256(outer[:])
}

// ComputeSignature returns base64(HMAC-SHA256(key, stringToSign)), the
// signature part of a SharedKey/SharedKeyLite Authorization header. It is
// the reference implementation (crypto/hmac) for tests and tools;
// Authenticate uses an allocation-free equivalent.
func ComputeSignature(key []byte, stringToSign string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(stringToSign))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

type accountInHostKey struct{}

// WithAccountInHost marks a request whose path was rewritten to name the
// account first (the path-style form this server routes) although it was
// sent, and signed, in the virtual-host form without it (/container/...):
// batch sub-requests of the Python SDK, and requests some SDK
// code builds without the account (see server.accountInHost). Shared Key
// then verifies the signature over the path as sent.
func WithAccountInHost(ctx context.Context) context.Context {
	return context.WithValue(ctx, accountInHostKey{}, true)
}
