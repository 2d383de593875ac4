// Package cond parses and evaluates the HTTP conditional headers of Blob
// (and later File/Table) requests: If-Match, If-None-Match,
// If-Modified-Since and If-Unmodified-Since, and their x-ms-source-*
// counterparts for copy sources.
package cond

import (
	"errors"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Header names.
const (
	HeaderIfMatch                 = "If-Match"
	HeaderIfNoneMatch             = "If-None-Match"
	HeaderIfModifiedSince         = "If-Modified-Since"
	HeaderIfUnmodifiedSince       = "If-Unmodified-Since"
	HeaderSourceIfMatch           = "x-ms-source-if-match"
	HeaderSourceIfNoneMatch       = "x-ms-source-if-none-match"
	HeaderSourceIfModifiedSince   = "x-ms-source-if-modified-since"
	HeaderSourceIfUnmodifiedSince = "x-ms-source-if-unmodified-since"
)

// Any is the wildcard ETag.
const Any = "*"

// ErrExists is returned by CheckWrite for If-None-Match: * on an existing
// resource. Callers map it to 409 BlobAlreadyExists/ContainerAlreadyExists
// (create-only semantics), or ignore it for operations where Azure lets
// it pass (Set Blob Properties/Metadata).
var ErrExists = errors.New("cond: If-None-Match: * and the resource exists")

// Conditions are the parsed conditional headers of one request. ETags are
// kept as sent (quotes included); "*" is kept as an element. Dates are UTC.
type Conditions struct {
	IfMatch           []string
	IfNoneMatch       []string
	IfModifiedSince   *time.Time
	IfUnmodifiedSince *time.Time
}

// Header is what the parsers read of a request's headers; a front end
// passes its http.Header. (cond evaluates conditions in the domain, which
// does not import net/http.)
type Header interface {
	// Values returns the values of the header key, case-insensitively.
	Values(key string) []string
}

// Parse reads If-Match, If-None-Match, If-Modified-Since and
// If-Unmodified-Since. A date that is not an HTTP date is 400
// InvalidHeaderValue naming the header.
func Parse(h Header) (Conditions, error) {
	return parse(h, HeaderIfMatch, HeaderIfNoneMatch, HeaderIfModifiedSince, HeaderIfUnmodifiedSince)
}

// ParseSource reads the x-ms-source-if-* headers of a copy request.
func ParseSource(h Header) (Conditions, error) {
	return parse(h, HeaderSourceIfMatch, HeaderSourceIfNoneMatch, HeaderSourceIfModifiedSince, HeaderSourceIfUnmodifiedSince)
}

func parse(h Header, match, noneMatch, modSince, unmodSince string) (Conditions, error) {
	var c Conditions
	var err error
	c.IfMatch = etagList(h.Values(match))
	c.IfNoneMatch = etagList(h.Values(noneMatch))
	if c.IfModifiedSince, err = date(h, modSince); err != nil {
		return Conditions{}, err
	}
	if c.IfUnmodifiedSince, err = date(h, unmodSince); err != nil {
		return Conditions{}, err
	}
	return c, nil
}

// IsEmpty reports whether no condition is set.
func (c Conditions) IsEmpty() bool {
	return len(c.IfMatch) == 0 && len(c.IfNoneMatch) == 0 && c.IfModifiedSince == nil && c.IfUnmodifiedSince == nil
}

// CheckRead evaluates the conditions of a read (GET/HEAD) of an existing
// resource with the 2013-08-15+ rule
//
//	If-Match AND If-Unmodified-Since AND (If-None-Match OR If-Modified-Since)
//
// An unmet If-Match or If-Unmodified-Since is 412 ConditionNotMet and takes
// precedence; otherwise an unmet If-None-Match/If-Modified-Since group is an
// *azerr.Error with Status 304 and Code ConditionNotMet (send no body).
// If-None-Match: * matches any existing resource, so it yields 304.
func (c Conditions) CheckRead(etag string, lastModified time.Time) error {
	lm := truncate(lastModified)
	if len(c.IfMatch) > 0 && !matches(c.IfMatch, etag) {
		return azerr.New(azerr.ConditionNotMet)
	}
	if c.IfUnmodifiedSince != nil && lm.After(*c.IfUnmodifiedSince) {
		return azerr.New(azerr.ConditionNotMet)
	}
	if len(c.IfNoneMatch) == 0 && c.IfModifiedSince == nil {
		return nil
	}
	if len(c.IfNoneMatch) > 0 && !matches(c.IfNoneMatch, etag) {
		return nil
	}
	if c.IfModifiedSince != nil && lm.After(*c.IfModifiedSince) {
		return nil
	}
	e := azerr.New(azerr.ConditionNotMet)
	e.Status = 304 // Not Modified
	return e
}

// CheckWrite evaluates the conditions of a write (PUT, POST, DELETE).
//
// On an existing resource every condition must hold, else 412
// ConditionNotMet; if they all hold but If-None-Match contains "*", the
// result is ErrExists. On a missing resource any If-Match (even "*") is 412
// ConditionNotMet; If-None-Match and the date conditions pass.
func (c Conditions) CheckWrite(exists bool, etag string, lastModified time.Time) error {
	if !exists {
		if len(c.IfMatch) > 0 {
			return azerr.New(azerr.ConditionNotMet)
		}
		return nil
	}
	if !c.holdsOnExisting(etag, lastModified) {
		return azerr.New(azerr.ConditionNotMet)
	}
	if hasAny(c.IfNoneMatch) {
		return ErrExists
	}
	return nil
}

// CheckSource evaluates x-ms-source-if-* conditions against an existing
// copy source: like CheckWrite, but any unmet condition (including
// If-None-Match: *, since the source exists) is 412 SourceConditionNotMet.
func (c Conditions) CheckSource(etag string, lastModified time.Time) error {
	if !c.holdsOnExisting(etag, lastModified) || hasAny(c.IfNoneMatch) {
		return azerr.New(azerr.SourceConditionNotMet)
	}
	return nil
}

// holdsOnExisting reports whether every condition holds for an existing
// resource, treating If-None-Match: * as holding (the caller decides).
func (c Conditions) holdsOnExisting(etag string, lastModified time.Time) bool {
	lm := truncate(lastModified)
	switch {
	case len(c.IfMatch) > 0 && !matches(c.IfMatch, etag):
		return false
	case c.IfUnmodifiedSince != nil && lm.After(*c.IfUnmodifiedSince):
		return false
	case c.IfModifiedSince != nil && !lm.After(*c.IfModifiedSince):
		return false
	}
	for _, v := range c.IfNoneMatch {
		if v != Any && sameETag(v, etag) {
			return false
		}
	}
	return true
}

// matches reports whether list contains "*" or an ETag equal to etag.
func matches(list []string, etag string) bool {
	for _, v := range list {
		if v == Any || sameETag(v, etag) {
			return true
		}
	}
	return false
}

func hasAny(list []string) bool {
	for _, v := range list {
		if v == Any {
			return true
		}
	}
	return false
}

// sameETag compares two ETags ignoring surrounding quotes.
func sameETag(a, b string) bool {
	a, b = unquote(a), unquote(b)
	return a != "" && a == b
}

func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

// etagList splits header values on commas outside double quotes, trimming
// blanks and dropping empty elements. It returns nil when nothing is left.
func etagList(values []string) []string {
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	for _, v := range values {
		inQuote, start := false, 0
		for i := 0; i < len(v); i++ {
			switch v[i] {
			case '"':
				inQuote = !inQuote
			case ',':
				if !inQuote {
					add(v[start:i])
					start = i + 1
				}
			}
		}
		add(v[start:])
	}
	return out
}

// date parses the first non-blank value of header name as an HTTP date.
func date(h Header, name string) (*time.Time, error) {
	for _, v := range h.Values(name) {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		t, err := wire.ParseHTTPDate(v)
		if err != nil {
			if t, err = time.Parse(time.RFC1123Z, v); err != nil {
				return nil, azerr.InvalidHeader(name, v)
			}
		}
		t = truncate(t)
		return &t, nil
	}
	return nil, nil
}

func truncate(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }
