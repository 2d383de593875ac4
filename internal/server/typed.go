package server

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"net/textproto"

	"github.com/cerulean-storage/cerulean/internal/wire"
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
}

// HeaderSetter is where an answer's headers go: an http.Header, or a
// typed handler's own collection of them.
type HeaderSetter interface{ Set(name, value string) }

// HeaderField is one response header.
type HeaderField struct{ Name, Value string }

// Status is a Response of status without a body.
func Status(status int) Response { return Response{Status: status} }

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

// Render writes r to w: its headers, the status, then the body in one
// Write.
func Render(w http.ResponseWriter, r Response) error {
	h := w.Header()
	// One allocation for every value (each slice capped at its one
	// element, as HeaderBlock's).
	n := len(r.Header)
	vals := make([]string, n+1)
	for i, f := range r.Header {
		vals[i] = f.Value
		h[f.Name] = vals[i : i+1 : i+1]
	}
	if r.Body != nil {
		vals[n] = r.ContentType
		h["Content-Type"] = vals[n : n+1 : n+1]
	}
	w.WriteHeader(r.Status)
	if len(r.Body) == 0 {
		return nil
	}
	_, err := w.Write(r.Body)
	return err
}

// Typed adapts a handler that returns its answer to a route table's
// handler type: the answer is rendered by Render, an error is the
// dispatcher's to answer.
func Typed[S, R any](h func(S, R) (Response, error)) func(S, http.ResponseWriter, R) error {
	return func(s S, w http.ResponseWriter, r R) error {
		resp, err := h(s, r)
		if err != nil {
			return err
		}
		return Render(w, resp)
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
