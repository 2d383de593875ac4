package auth

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// The standard headers that take part in a string-to-sign, in Shared Key
// order. Their slots index reqHeaders.std.
const (
	hContentEncoding = iota
	hContentLanguage
	hContentLength
	hContentMD5
	hContentType
	hDate
	hIfModifiedSince
	hIfMatch
	hIfNoneMatch
	hIfUnmodifiedSince
	hRange
	numStd
)

var stdNames = [numStd]string{
	"Content-Encoding",
	"Content-Language",
	"Content-Length",
	"Content-Md5",
	"Content-Type",
	"Date",
	"If-Modified-Since",
	"If-Match",
	"If-None-Match",
	"If-Unmodified-Since",
	"Range",
}

// header is one canonicalized x-ms-* header: lowercased name, values joined
// with ",".
type header struct{ name, value string }

// reqHeaders is everything a string-to-sign needs from the request headers,
// gathered in one pass over the header map. Names are matched without regard
// to case, so both server-side (canonical keys) and client-side requests
// (the SDKs set lowercase x-ms-* keys directly) work.
type reqHeaders struct {
	std     [numStd]string
	xms     []header // sorted in CultureOrder
	xmsDate string
	version string
}

func collectHeaders(h http.Header) reqHeaders {
	var rh reqHeaders
	var exact [numStd]bool
	for k, v := range h {
		if len(k) >= 5 && strings.EqualFold(k[:5], "x-ms-") {
			name := strings.TrimSpace(strings.ToLower(k))
			value := ""
			switch len(v) {
			case 0:
			case 1:
				value = v[0]
			default:
				value = strings.Join(v, ",")
			}
			rh.xms = append(rh.xms, header{name, value})
			if len(v) > 0 {
				switch name {
				case "x-ms-date":
					rh.xmsDate = v[0]
				case "x-ms-version":
					rh.version = v[0]
				}
			}
			continue
		}
		for i, std := range stdNames {
			if len(k) != len(std) || !strings.EqualFold(k, std) {
				continue
			}
			// Prefer the canonical spelling if a map somehow holds both.
			if len(v) > 0 && (k == std || !exact[i]) {
				rh.std[i] = v[0]
				exact[i] = k == std
			}
			break
		}
	}
	if len(rh.xms) > 1 {
		slices.SortFunc(rh.xms, func(a, b header) int {
			if c := CompareHeaderNames(a.name, b.name); c != 0 {
				return c
			}
			return strings.Compare(a.value, b.value)
		})
		rh.xms = mergeDuplicates(rh.xms)
	}
	return rh
}

// mergeDuplicates joins adjacent headers with the same name (possible only
// when a header map holds two spellings of one name).
func mergeDuplicates(hs []header) []header {
	out := hs[:1]
	for _, h := range hs[1:] {
		if last := &out[len(out)-1]; last.name == h.name {
			last.value += "," + h.value
			continue
		}
		out = append(out, h)
	}
	return out
}

// date returns x-ms-date when set, otherwise Date.
func (rh *reqHeaders) date() string {
	if rh.xmsDate != "" {
		return rh.xmsDate
	}
	return rh.std[hDate]
}

// ordersDiffer reports whether ordinal order differs from culture order.
func (rh *reqHeaders) ordersDiffer() bool {
	return !slices.IsSortedFunc(rh.xms, func(a, b header) int { return strings.Compare(a.name, b.name) })
}

func (rh *reqHeaders) sorted(order HeaderOrder) []header {
	if order != OrdinalOrder || !rh.ordersDiffer() {
		return rh.xms
	}
	hs := slices.Clone(rh.xms)
	slices.SortStableFunc(hs, func(a, b header) int { return strings.Compare(a.name, b.name) })
	return hs
}

func appendHeaders(buf []byte, hs []header) []byte {
	for _, h := range hs {
		buf = append(buf, h.name...)
		buf = append(buf, ':')
		buf = append(buf, h.value...)
		buf = append(buf, '\n')
	}
	return buf
}

func appendLine(buf []byte, s string) []byte {
	buf = append(buf, s...)
	return append(buf, '\n')
}

// builder assembles strings-to-sign for one request.
type builder struct {
	method  string
	account string
	path    string
	query   string
	h       reqHeaders
}

func newBuilder(r *http.Request, account string) *builder {
	path, query := requestTarget(r)
	return &builder{method: r.Method, account: account, path: path, query: query, h: collectHeaders(r.Header)}
}

// build returns the string-to-sign for svc and scheme, with x-ms-* headers
// (where the scheme signs them) in the given order.
func (b *builder) build(svc Service, scheme Scheme, order HeaderOrder) []byte {
	std := &b.h.std
	buf := make([]byte, 0, 256+len(b.path)+len(b.query)+32*len(b.h.xms))
	if svc == Table {
		if scheme == SharedKeyLite {
			buf = appendLine(buf, b.h.date())
		} else {
			buf = appendLine(buf, b.method)
			buf = appendLine(buf, std[hContentMD5])
			buf = appendLine(buf, std[hContentType])
			buf = appendLine(buf, b.h.date())
		}
		return appendResourceLite(buf, b.account, b.path, b.query)
	}

	// Blob, Queue, File: the Date field is empty when x-ms-date is used.
	date := std[hDate]
	if b.h.xmsDate != "" {
		date = ""
	}
	if scheme == SharedKeyLite {
		buf = appendLine(buf, b.method)
		buf = appendLine(buf, std[hContentMD5])
		buf = appendLine(buf, std[hContentType])
		buf = appendLine(buf, date)
		buf = appendHeaders(buf, b.h.sorted(order))
		return appendResourceLite(buf, b.account, b.path, b.query)
	}
	contentLength := std[hContentLength]
	if contentLength == "0" && !(b.h.version != "" && b.h.version < "2015-02-21") {
		contentLength = ""
	}
	buf = appendLine(buf, b.method)
	buf = appendLine(buf, std[hContentEncoding])
	buf = appendLine(buf, std[hContentLanguage])
	buf = appendLine(buf, contentLength)
	buf = appendLine(buf, std[hContentMD5])
	buf = appendLine(buf, std[hContentType])
	buf = appendLine(buf, date)
	buf = appendLine(buf, std[hIfModifiedSince])
	buf = appendLine(buf, std[hIfMatch])
	buf = appendLine(buf, std[hIfNoneMatch])
	buf = appendLine(buf, std[hIfUnmodifiedSince])
	buf = appendLine(buf, std[hRange])
	buf = appendHeaders(buf, b.h.sorted(order))
	return appendResource(buf, b.account, b.path, b.query)
}

// StringToSign returns the string-to-sign the server computes for r under
// svc and scheme for the given account, with canonicalized x-ms-* headers in
// the given order (ignored for Table, whose schemes sign no x-ms-* headers).
//
//   - Blob/Queue/File SharedKey: VERB, Content-Encoding, Content-Language,
//     Content-Length (empty when "0" from version 2015-02-21), Content-MD5,
//     Content-Type, Date (empty when x-ms-date is set), If-Modified-Since,
//     If-Match, If-None-Match, If-Unmodified-Since, Range, each followed by
//     "\n"; then CanonicalizedHeaders and CanonicalizedResource.
//   - Blob/Queue/File SharedKeyLite: VERB, Content-MD5, Content-Type, Date,
//     each followed by "\n"; then CanonicalizedHeaders and
//     CanonicalizedResourceLite.
//   - Table SharedKey: VERB, Content-MD5, Content-Type, Date (x-ms-date
//     preferred), each followed by "\n"; then CanonicalizedResourceLite.
//   - Table SharedKeyLite: Date (x-ms-date preferred) + "\n" +
//     CanonicalizedResourceLite.
func StringToSign(r *http.Request, svc Service, scheme Scheme, account string, order HeaderOrder) string {
	return string(newBuilder(r, account).build(svc, scheme, order))
}

// CanonicalizedHeaders returns the canonicalized x-ms-* headers of h: names
// lowercased and trimmed, repeated values joined with ",", one "name:value\n"
// line per header, sorted in the given order.
func CanonicalizedHeaders(h http.Header, order HeaderOrder) string {
	rh := collectHeaders(h)
	return string(appendHeaders(nil, rh.sorted(order)))
}

// CanonicalizedResource returns the Shared Key (Blob, Queue, File)
// canonicalized resource: "/" + account + the escaped path as sent ("/" if
// empty), then for each query parameter, by lowercased name in byte order, a
// line "\n" + name + ":" + its URL-decoded values sorted and joined with ",".
// Parameters that do not decode are left out.
func CanonicalizedResource(account, escapedPath, rawQuery string) string {
	return string(appendResource(nil, account, escapedPath, rawQuery))
}

// CanonicalizedResourceLite returns the canonicalized resource of Shared Key
// Lite and of both Table schemes: "/" + account + the escaped path as sent,
// plus "?comp=" + the decoded comp value when the query has one.
func CanonicalizedResourceLite(account, escapedPath, rawQuery string) string {
	return string(appendResourceLite(nil, account, escapedPath, rawQuery))
}

func appendAccountPath(buf []byte, account, escapedPath string) []byte {
	buf = append(buf, '/')
	buf = append(buf, account...)
	if escapedPath == "" {
		return append(buf, '/')
	}
	return append(buf, escapedPath...)
}

func appendResource(buf []byte, account, escapedPath, rawQuery string) []byte {
	buf = appendAccountPath(buf, account, escapedPath)
	params := parseQuery(rawQuery)
	if len(params) == 0 {
		return buf
	}
	slices.SortFunc(params, func(a, b header) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(a.value, b.value)
	})
	for i, p := range params {
		if i > 0 && params[i-1].name == p.name {
			buf = append(buf, ',')
		} else {
			buf = append(buf, '\n')
			buf = append(buf, p.name...)
			buf = append(buf, ':')
		}
		buf = append(buf, p.value...)
	}
	return buf
}

func appendResourceLite(buf []byte, account, escapedPath, rawQuery string) []byte {
	buf = appendAccountPath(buf, account, escapedPath)
	if comp, ok := compValue(rawQuery); ok {
		buf = append(buf, "?comp="...)
		buf = append(buf, comp...)
	}
	return buf
}

// parseQuery splits a raw query into lowercased, decoded name/value pairs
// the way url.ParseQuery does, dropping the pairs it would reject.
func parseQuery(q string) []header {
	if q == "" {
		return nil
	}
	params := make([]header, 0, 1+strings.Count(q, "&"))
	for q != "" {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		if pair == "" || strings.Contains(pair, ";") {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k, err := url.QueryUnescape(k)
		if err != nil {
			continue
		}
		v, err = url.QueryUnescape(v)
		if err != nil {
			continue
		}
		params = append(params, header{strings.ToLower(k), v})
	}
	return params
}

// compValue returns the decoded value of the first comp parameter.
func compValue(q string) (string, bool) {
	for q != "" {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		k, v, _ := strings.Cut(pair, "=")
		if strings.Contains(pair, ";") {
			continue
		}
		if strings.ContainsAny(k, "%+") {
			var err error
			if k, err = url.QueryUnescape(k); err != nil {
				continue
			}
		}
		if len(k) != 4 || !strings.EqualFold(k, "comp") {
			continue
		}
		if v, err := url.QueryUnescape(v); err == nil {
			return v, true
		}
	}
	return "", false
}
