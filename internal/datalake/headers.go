package datalake

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
)

// The header parsers of the Path operations. A malformed value is 400
// InvalidHeaderValue naming its header, but for x-ms-acl and
// x-ms-permissions, which have codes of their own.

// badACL is the dfs endpoint's answer to a malformed x-ms-acl.
func badACL(v string) error {
	return azerr.New(azerr.InvalidAccessControlList).With("HeaderName", "x-ms-acl").With("HeaderValue", v)
}

// parseACLHeaders reads x-ms-permissions, x-ms-umask and x-ms-acl (nil
// when absent): a malformed permission is 400 InvalidPermission, a
// malformed ACL 400 InvaldAccessControlList (sic; see azerr).
func parseACLHeaders(h http.Header) (perm, umask *acl.Mode, a *acl.ACL, err error) {
	if v := h.Get("X-Ms-Permissions"); v != "" {
		m, err := acl.ParseMode(v)
		if err != nil {
			return nil, nil, nil, azerr.New(azerr.InvalidPermission).With("HeaderName", "x-ms-permissions").With("HeaderValue", v)
		}
		perm = &m
	}
	if v := h.Get("X-Ms-Umask"); v != "" {
		m, err := acl.ParseUmask(v)
		if err != nil {
			return nil, nil, nil, azerr.InvalidHeader("x-ms-umask", v)
		}
		umask = &m
	}
	if v := h.Get("X-Ms-Acl"); v != "" {
		parsed, err := acl.Parse(v)
		if err != nil {
			return nil, nil, nil, badACL(v)
		}
		a = &parsed
	}
	return perm, umask, a, nil
}

// parseContentProps reads the x-ms-content-* and x-ms-cache-control
// headers of Path Create (the file's content headers); x-ms-content-md5
// is base64.
func parseContentProps(h http.Header) (ns.ContentProps, error) {
	p := ns.ContentProps{
		Type:        h.Get("X-Ms-Content-Type"),
		Encoding:    h.Get("X-Ms-Content-Encoding"),
		Language:    h.Get("X-Ms-Content-Language"),
		Disposition: h.Get("X-Ms-Content-Disposition"),
		CacheCtl:    h.Get("X-Ms-Cache-Control"),
	}
	if v := h.Get("X-Ms-Content-Md5"); v != "" {
		md, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return p, azerr.InvalidHeader("x-ms-content-md5", v)
		}
		p.MD5 = md
	}
	return p, nil
}

// parseExpiry reads x-ms-expiry-option and x-ms-expiry-time of Path
// Create (a file's expiry; Path - Create: "RelativeToNow" takes
// milliseconds from now, "Absolute" an RFC 1123 time, "NeverExpire" no
// time). It returns the expiry (zero: none) and whether one was given.
// RelativeToCreation is Set Expiry's, not Path Create's.
func parseExpiry(option, value string, now time.Time) (time.Time, bool, error) {
	if option == "" {
		if value != "" {
			return time.Time{}, false, azerr.MissingHeader("x-ms-expiry-option")
		}
		return time.Time{}, false, nil
	}
	switch {
	case strings.EqualFold(option, "NeverExpire"):
		if value != "" {
			return time.Time{}, false, azerr.InvalidHeader("x-ms-expiry-time", value)
		}
		return time.Time{}, true, nil
	case strings.EqualFold(option, "RelativeToNow"):
		ms, err := strconv.ParseInt(value, 10, 64)
		if err != nil || ms < 0 || ms > int64(100*365*24*time.Hour/time.Millisecond) {
			return time.Time{}, false, azerr.InvalidHeader("x-ms-expiry-time", value)
		}
		return now.Add(time.Duration(ms) * time.Millisecond), true, nil
	case strings.EqualFold(option, "Absolute"):
		t, err := http.ParseTime(value)
		if err != nil {
			return time.Time{}, false, azerr.InvalidHeader("x-ms-expiry-time", value)
		}
		return t.UTC(), true, nil
	}
	return time.Time{}, false, azerr.InvalidHeader("x-ms-expiry-option", option)
}

// parseRenameSource reads x-ms-rename-source, "/{filesystem}/{path}"
// with the path percent-encoded and possibly a SAS query after it
// (Path - Create): the source filesystem and path. A path-style request
// (the account first in its URL) names its source the same way,
// "/{account}/{filesystem}/{path}", as the azdatalake SDK builds it from
// the source client's URL path: with accountFirst the account is taken
// off.
func parseRenameSource(v, account string, accountFirst bool) (fs, path string, err error) {
	bad := azerr.InvalidHeader("x-ms-rename-source", v)
	raw, _, _ := strings.Cut(v, "?")
	raw, ok := strings.CutPrefix(raw, "/")
	if !ok {
		return "", "", bad
	}
	if accountFirst {
		if rest, ok := strings.CutPrefix(raw, account+"/"); ok {
			raw = rest
		}
	}
	fs, p, ok := strings.Cut(raw, "/")
	if !ok || fs == "" {
		return "", "", bad
	}
	path, err = url.PathUnescape(p)
	if err != nil || strings.Trim(path, "/") == "" {
		return "", "", bad
	}
	return fs, strings.Trim(path, "/"), nil
}
