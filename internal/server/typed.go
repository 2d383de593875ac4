package server

import (
	"bytes"
	"encoding/xml"
	"log/slog"
	"net/http"
	"net/textproto"

	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/wire"
	"github.com/cerulean-storage/cerulean/internal/xsm"
)

// Response is an operation's answer as a typed handler returns it: its
// status, the headers of its own it sets (the common ones are the
// middleware's) and a body. Render is the one place that writes one, so
// a front end whose handlers return Responses (Typed) does not touch the
// http.ResponseWriter below the dispatcher.
type Response struct {
	Status int
	// Header holds the operation's headers, names in canonical form,
	// in the order set.
	Header []HeaderField
	// Body is sent as it is, typed ContentType; nil: no body.
	Body        []byte
	ContentType string
	// Content is a read's bytes (a blob's, a file's), streamed after the
	// headers instead of Body; Render closes it whether it was sent or
	// not (a HEAD, an error before). Its Content-Length is among Header
	// (SetContentHeaders); a failure mid-stream aborts the connection, so
	// the client sees a cut body, never a short success.
	Content *extent.Body
	// Structured frames Content as a structured message (XSM/1.0,
	// x-ms-structured-body) of Content.Size() bytes: Render sets the
	// framing headers and the framed Content-Length.
	Structured bool
}

// Set sets the header name (canonicalised; a canonical name costs
// nothing) to value, replacing one set before: a *Response is a
// HeaderSetter, for the header writers the typed handlers share.
func (r *Response) Set(name, value string) {
	name = textproto.CanonicalMIMEHeaderKey(name)
	for i := range r.Header {
		if r.Header[i].Name == name {
			r.Header[i].Value = value
			return
		}
	}
	r.Header = append(r.Header, HeaderField{name, value})
}

// Get is the value of the header name (canonical form) set so far, or "".
func (r *Response) Get(name string) string {
	for i := len(r.Header) - 1; i >= 0; i-- {
		if r.Header[i].Name == name {
			return r.Header[i].Value
		}
	}
	return ""
}

// HeaderSetter is where an answer's headers go: an http.Header, or a
// typed handler's own collection of them.
type HeaderSetter interface{ Set(name, value string) }

// HeaderField is one response header.
type HeaderField struct{ Name, Value string }

// Bodiless is a Response of status without a body.
func Bodiless(status int) Response { return Response{Status: status} }

// With returns r with the header name (canonical form) set to value.
func (r Response) With(name, value string) Response {
	r.Header = append(r.Header, HeaderField{name, value})
	return r
}

// XMLDoc is a Response carrying doc, a whole XML document beginning with
// XMLDeclaration.
func XMLDoc(status int, doc []byte) Response {
	return Response{Status: status, Body: doc, ContentType: "application/xml"}
}

// XML is a Response carrying v encoded as WriteXML encodes it.
func XML(status int, v any) (Response, error) {
	var b bytes.Buffer
	b.Grow(512)
	b.WriteString(XMLDeclaration)
	if err := xml.NewEncoder(&b).Encode(v); err != nil {
		return Response{}, err
	}
	return XMLDoc(status, wire.TidyXML(b.Bytes())), nil
}

// RenderFor writes r to w: its headers, the status, then the body in one
// Write or the Content streamed. hr is the request (nil: a GET), whose Content is
// not read for a HEAD (a Body is written, for net/http to count and
// discard); a failure to stream it is logged to log (nil: not
// logged) before the connection is aborted.
func RenderFor(w http.ResponseWriter, hr *http.Request, log *slog.Logger, r Response) error {
	if r.Content != nil {
		defer r.Content.Close()
	}
	h := w.Header()
	// One allocation for every value (each slice capped at its one
	// element, as HeaderBlock's).
	n := len(r.Header)
	vals := make([]string, n+1)
	for i, f := range r.Header {
		vals[i] = f.Value
		h[f.Name] = vals[i : i+1 : i+1]
	}
	if r.Body != nil || (r.Content != nil && r.ContentType != "") {
		vals[n] = r.ContentType
		h["Content-Type"] = vals[n : n+1 : n+1]
	} else if r.Content != nil && !r.has("Content-Type") {
		// Content of no type is sent with none: net/http would sniff
		// one from the first bytes (a stored file's or blob's type is
		// what the client set, or nothing).
		h["Content-Type"] = nil
	}
	head := hr != nil && hr.Method == http.MethodHead
	if r.Content != nil {
		if r.Structured {
			if hr == nil {
				hr = &http.Request{Method: http.MethodGet}
			}
			xsm.Serve(w, hr, r.Status, r.Content.Size(), func(sw http.ResponseWriter) {
				if !head {
					sendContent(sw, hr, r.Content, log)
				}
			})
			return nil
		}
		w.WriteHeader(r.Status)
		if !head {
			sendContent(w, hr, r.Content, log)
		}
		return nil
	}
	w.WriteHeader(r.Status)
	if len(r.Body) == 0 {
		return nil
	}
	// Written for a HEAD too: net/http discards it and sends its
	// Content-Length, as the GET's (a HEAD of Get Share ACL, Get Queue
	// ACL).
	_, err := w.Write(r.Body)
	return err
}

// has reports whether the header name (canonical form) is among r's.
func (r *Response) has(name string) bool {
	for i := range r.Header {
		if r.Header[i].Name == name {
			return true
		}
	}
	return false
}

// sendContent streams b to w; a failure after the status line aborts the
// connection: the client sees a cut body, never a short success.
func sendContent(w http.ResponseWriter, hr *http.Request, b *extent.Body, log *slog.Logger) {
	if _, err := b.WriteTo(w); err != nil {
		if log != nil {
			path := ""
			if hr != nil && hr.URL != nil {
				path = hr.URL.Path
			}
			log.Debug("download: streaming failed", "path", path, "err", err)
		}
		panic(http.ErrAbortHandler)
	}
}

// Typed adapts a handler that returns its answer to one that writes it
// as Door.Serve does (RenderFor; the request and logger from R's
// HTTP() and S's Log(), when they have them): for tests and tools that
// call a handler without a Door.
func Typed[S, R any](h func(S, R) (Response, error)) func(S, http.ResponseWriter, R) error {
	return func(s S, w http.ResponseWriter, r R) error {
		resp, err := h(s, r)
		if err != nil {
			if resp.Content != nil {
				resp.Content.Close()
			}
			return err
		}
		var hr *http.Request
		if q, ok := any(r).(interface{ HTTP() *http.Request }); ok {
			hr = q.HTTP()
		}
		var log *slog.Logger
		if l, ok := any(s).(interface{ Log() *slog.Logger }); ok {
			log = l.Log()
		}
		return RenderFor(w, hr, log, resp)
	}
}

// HeaderBlock sets headers of h from one backing array of values, so
// that n headers cost one allocation instead of one each (a Header.Set
// allocates its value's slice). Each value's slice is capped at its one
// element: an Add to it later copies rather than overwrites the next.
type HeaderBlock struct {
	h    http.Header
	vals []string
}

// NewHeaderBlock returns a HeaderBlock over h with room for n values.
func NewHeaderBlock(h http.Header, n int) *HeaderBlock {
	return &HeaderBlock{h: h, vals: make([]string, 0, n)}
}

// Set sets the header name (canonicalised; a canonical name costs
// nothing) to value.
func (b *HeaderBlock) Set(name, value string) {
	b.vals = append(b.vals, value)
	i := len(b.vals)
	b.h[textproto.CanonicalMIMEHeaderKey(name)] = b.vals[i-1 : i : i]
}
