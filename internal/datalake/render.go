package datalake

import (
	"encoding/json"
	"net/textproto"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// headerSetter is where a dfs answer's headers go: an answer, or an
// http.Header.
type headerSetter = server.HeaderSetter

// setETag sets ETag and Last-Modified.
func setETag(h headerSetter, etag string, modified time.Time) {
	h.Set("Etag", etag)
	h.Set("Last-Modified", wire.FormatHTTPDate(modified))
}

// answer is a dfs operation's answer as its handler builds it: the
// headers in the order set, then the status and, for the listings and
// access-control results, a JSON body; server.Render writes it.
type answer struct{ resp server.Response }

// Set sets the header name (any case) to value.
func (a *answer) Set(name, value string) {
	a.resp.Header = append(a.resp.Header, server.HeaderField{Name: textproto.CanonicalMIMEHeaderKey(name), Value: value})
}

// done is the answer with status and no body.
func (a *answer) done(status int) (server.Response, error) {
	a.resp.Status = status
	return a.resp, nil
}

// json is the answer with status and v as the dfs endpoint's JSON body.
func (a *answer) json(status int, v any) (server.Response, error) {
	out, err := json.Marshal(v)
	if err != nil {
		return server.Response{}, err
	}
	a.resp.Status, a.resp.Body, a.resp.ContentType = status, out, "application/json;charset=utf-8"
	return a.resp, nil
}

// fileTime is t as a Windows file time (100 ns ticks since 1601), "0" for
// the zero time.
func fileTime(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	const epochDiff = 116444736000000000 // 1601-01-01 to 1970-01-01 in ticks
	return strconv.FormatInt(t.UnixNano()/100+epochDiff, 10)
}

// unquote is an ETag without its quotes, as listings carry it.
func unquote(etag string) string {
	if len(etag) >= 2 && etag[0] == '"' && etag[len(etag)-1] == '"' {
		return etag[1 : len(etag)-1]
	}
	return etag
}
