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

// header is a name/value pair: a canonicalized x-ms-* header (lowercased
// name, values joined with ",") or a decoded query parameter.
type header struct{ name, value string }

// list is a slice of headers that lives inside its owner while it is short,
// so a builder on the stack needs no heap allocation for it.
type list struct {
	n      int
	inline [16]header
	extra  []header // used instead of inline once it overflows
}

func (l *list) add(h header) {
	if l.extra == nil && l.n < len(l.inline) {
		l.inline[l.n] = h
		l.n++
		return
	}
	if l.extra == nil {
		l.extra = append(make([]header, 0, 2*len(l.inline)), l.inline[:l.n]...)
	}
	l.extra = append(l.extra, h)
}

func (l *list) items() []header {
	if l.extra != nil {
		return l.extra
	}
	return l.inline[:l.n]
}

// truncate keeps the first n items.
func (l *list) truncate(n int) {
	if l.extra != nil {
		l.extra = l.extra[:n]
		return
	}
	l.n = n
}

// reqHeaders is everything a string-to-sign needs from the request headers,
// gathered in one pass over the header map. Names are matched without regard
// to case, so both server-side (canonical keys) and client-side requests
// (the SDKs set lowercase x-ms-* keys directly) work.
type reqHeaders struct {
	std     [numStd]string
	xmsDate string
	version string
	xms     list // sorted in CultureOrder
}

func (rh *reqHeaders) collect(h http.Header) {
	var exact [numStd]bool
	nameBytes := 0
	for k, v := range h {
		if len(k) >= 5 && strings.EqualFold(k[:5], "x-ms-") {
			value := ""
			switch len(v) {
			case 0:
			case 1:
				value = v[0]
			default:
				value = strings.Join(v, ",")
			}
			if len(v) > 0 {
				switch {
				case strings.EqualFold(k, "x-ms-date"):
					rh.xmsDate = v[0]
				case strings.EqualFold(k, "x-ms-version"):
					rh.version = v[0]
				}
			}
			// name holds the raw key until the names are lowercased below.
			rh.xms.add(header{k, value})
			nameBytes += len(k)
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
	xs := rh.xms.items()
	if len(xs) == 0 {
		return
	}
	// Lowercase (and trim) every name into one string: one allocation
	// instead of one per header.
	buf := make([]byte, 0, nameBytes)
	var endsInline [16]int
	ends := endsInline[:0]
	for _, x := range xs {
		buf = appendLower(buf, strings.TrimSpace(x.name))
		ends = append(ends, len(buf))
	}
	names := string(buf)
	start := 0
	for i := range xs {
		xs[i].name = names[start:ends[i]]
		start = ends[i]
	}
	if len(xs) > 1 {
		slices.SortFunc(xs, func(a, b header) int {
			if c := CompareHeaderNames(a.name, b.name); c != 0 {
				return c
			}
			return strings.Compare(a.value, b.value)
		})
		rh.xms.truncate(len(mergeDuplicates(xs)))
	}
}

// appendLower appends s lowercased as strings.ToLower would.
func appendLower(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return append(buf, strings.ToLower(s)...)
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return buf
}

// mergeDuplicates joins adjacent headers with the same name (possible only
// when a header map holds two spellings of one name) in place and returns
// the shortened slice.
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

func byName(a, b header) int { return strings.Compare(a.name, b.name) }

// ordersDiffer reports whether ordinal order differs from culture order.
func (rh *reqHeaders) ordersDiffer() bool {
	return !slices.IsSortedFunc(rh.xms.items(), byName)
}

// appendHeaders appends the canonicalized headers, one "name:value\n" line
// each, in the given order.
func (rh *reqHeaders) appendHeaders(buf []byte, order HeaderOrder) []byte {
	hs := rh.xms.items()
	if order == OrdinalOrder && rh.ordersDiffer() {
		hs = slices.Clone(hs)
		slices.SortStableFunc(hs, byName)
	}
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

// builder assembles strings-to-sign for one request. It is meant to live on
// the caller's stack.
type builder struct {
	method  string
	account string
	path    string
	query   string
	h       reqHeaders
	params  list // parsed and sorted query, for the full resource
	parsed  bool
}

func (b *builder) init(r *http.Request, account, path, query string) {
	b.method, b.account, b.path, b.query = r.Method, account, path, query
	b.h.collect(r.Header)
}

func (b *builder) sortedParams() []header {
	if !b.parsed {
		parseQuery(&b.params, b.query)
		sortParams(b.params.items())
		b.parsed = true
	}
	return b.params.items()
}

// build appends to buf the string-to-sign for svc and scheme, with x-ms-*
// headers (where the scheme signs them) in the given order.
func (b *builder) build(buf []byte, svc Service, scheme Scheme, order HeaderOrder) []byte {
	std := &b.h.std
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
		buf = b.h.appendHeaders(buf, order)
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
	buf = b.h.appendHeaders(buf, order)
	return appendResource(buf, b.account, b.path, b.sortedParams())
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
	path, query := requestTarget(r)
	var b builder
	b.init(r, account, path, query)
	return string(b.build(nil, svc, scheme, order))
}

// CanonicalizedHeaders returns the canonicalized x-ms-* headers of h: names
// lowercased and trimmed, repeated values joined with ",", one "name:value\n"
// line per header, sorted in the given order.
func CanonicalizedHeaders(h http.Header, order HeaderOrder) string {
	var rh reqHeaders
	rh.collect(h)
	return string(rh.appendHeaders(nil, order))
}

// CanonicalizedResource returns the Shared Key (Blob, Queue, File)
// canonicalized resource: "/" + account + the escaped path as sent ("/" if
// empty), then for each query parameter, by lowercased name in byte order, a
// line "\n" + name + ":" + its URL-decoded values sorted and joined with ",".
// Parameters that do not decode are left out.
func CanonicalizedResource(account, escapedPath, rawQuery string) string {
	var params list
	parseQuery(&params, rawQuery)
	return string(appendResource(nil, account, escapedPath, sortParams(params.items())))
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

func appendResource(buf []byte, account, escapedPath string, params []header) []byte {
	buf = appendAccountPath(buf, account, escapedPath)
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

// sortParams sorts query parameters by name, then value.
func sortParams(params []header) []header {
	slices.SortFunc(params, func(a, b header) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(a.value, b.value)
	})
	return params
}

func appendResourceLite(buf []byte, account, escapedPath, rawQuery string) []byte {
	buf = appendAccountPath(buf, account, escapedPath)
	if comp, ok := compValue(rawQuery); ok {
		buf = append(buf, "?comp="...)
		buf = append(buf, comp...)
	}
	return buf
}

// parseQuery adds the pairs of a raw query to l, names lowercased and both
// parts decoded the way url.ParseQuery does, dropping the pairs it would
// reject.
func parseQuery(l *list, q string) {
	for q != "" {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		if pair == "" || strings.Contains(pair, ";") {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k, err := unescape(k)
		if err != nil {
			continue
		}
		v, err = unescape(v)
		if err != nil {
			continue
		}
		l.add(header{strings.ToLower(k), v})
	}
}

// unescape is url.QueryUnescape without its cost for plain strings.
func unescape(s string) (string, error) {
	if !strings.ContainsAny(s, "%+") {
		return s, nil
	}
	return url.QueryUnescape(s)
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
		k, err := unescape(k)
		if err != nil || len(k) != 4 || !strings.EqualFold(k, "comp") {
			continue
		}
		if v, err := unescape(v); err == nil {
			return v, true
		}
	}
	return "", false
}

// requestTarget returns the escaped path and raw query of r as sent. A
// server-side request keeps its request-target verbatim in RequestURI, which
// is preferred because URL.EscapedPath may re-encode characters the client
// left alone; client-side requests (and absolute-form targets) use r.URL.
func requestTarget(r *http.Request) (path, query string) {
	if ru := r.RequestURI; ru != "" && ru[0] == '/' {
		path, query, _ = strings.Cut(ru, "?")
		if i := strings.IndexByte(query, '#'); i >= 0 {
			query = query[:i]
		}
		return path, query
	}
	if r.URL == nil {
		return "", ""
	}
	return r.URL.EscapedPath(), r.URL.RawQuery
}
