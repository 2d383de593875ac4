package server

import (
	"log/slog"
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/wire"
	"github.com/cerulean-storage/cerulean/internal/xsm"
)

// Door is one service's dispatch: what its front end contributes (the
// parsing of its URLs, its routing, what a SAS is checked against,
// its anonymous access and its own checks) to the one order in which
// every REST front end serves a routed request (Serve). S is the
// service's front end, R its parsed request; the route table's handlers
// take both and return their answer (Response), which Serve renders: no
// handler touches the http.ResponseWriter. A front end fills one Door,
// once, and its ServeAzure calls Serve.
type Door[S, R any] struct {
	// Paths maps the service's URL paths to its levels (nil: Parse
	// reads the path itself, as Table's OData URLs need).
	Paths *Paths
	// Parse reads from the request what routing needs: the names its
	// path addresses (as Paths split it), its query.
	Parse func(*Request, Path) R
	// Route finds the request's operation in the service's route table
	// (and checks what the table cannot: names, selectors outside it),
	// recording it on the request; its error is answered after the SAS,
	// if any, is authenticated (SASFirst).
	Route func(S, R) (*Route[func(S, R) (Response, error)], error)
	// Target is what the URL names and the stored access policies that
	// may complete a SAS for it, for SASFirst on an unrouted request;
	// called only when the request carries a SAS.
	Target func(S, R) (SASTarget, auth.PolicyLookup)
	// AuthorizeSAS checks the request's SAS against the routed
	// operation's rule.
	AuthorizeSAS func(S, R) error
	// Anonymous decides a request without credentials (no Shared Key,
	// bearer token or SAS) once it is routed. Nil: the service takes no
	// anonymous request, and refuses one with 401
	// NoAuthenticationInformation before its URL is read (Queue, Table
	// and Files have no anonymous access: Authorize requests to Azure
	// Storage,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/authorize-requests-to-azure-storage).
	Anonymous func(S, R) error
	// Extras, if set, are the service's own checks of an authorized
	// request before its handler (the Blob change feed's read-only
	// container, customer-provided keys, ...); it may wrap the response
	// writer the answer is rendered to.
	Extras func(S, http.ResponseWriter, R) (http.ResponseWriter, error)
	// Answer, if set, maps a handler's error to the service's answer
	// (File's refusals of the domain to Azure error codes).
	Answer func(error) error
}

// Serve dispatches sr: parse, route, then either the routing error
// (after SASFirst: a forged or expired SAS is answered as such whatever
// else is wrong) or the operation's authorization (its SAS rule, a
// bearer-only operation's refusal of any SAS, the service's anonymous
// rule), the service's extras, the structured body of an operation that
// takes one, the handler, and the rendering of its answer (RenderFor; a
// read's content is streamed, a refusal's closed unsent). An x-ms-structured-body on an operation
// whose entry does not take one is refused as a routing error is, so no
// framing is ever stored as content.
func (d *Door[S, R]) Serve(s S, w http.ResponseWriter, sr *Request) error {
	if d.Anonymous == nil && !sr.Authenticated && sr.SAS == nil {
		return azerr.New(azerr.NoAuthenticationInformation)
	}
	var p Path
	if d.Paths != nil {
		p = d.Paths.Split(sr)
	}
	r := d.Parse(sr, p)
	rt, err := d.Route(s, r)
	structured := wire.Field(sr.Header, "X-Ms-Structured-Body") // hStructuredBody, canonical: no copy made
	if err == nil && structured != "" && rt.Structured == 0 {
		err = azerr.New(azerr.UnsupportedHeader).With("HeaderName", hStructuredBody).With("HeaderValue", structured)
	}
	if err != nil {
		if sr.SAS == nil {
			return err
		}
		target, policies := d.Target(s, r)
		return sr.SASFirst(err, target, policies)
	}
	switch {
	case sr.SAS != nil:
		if rt.BearerOnly {
			// Refused as Shared Key is, 403 AuthenticationFailed
			// "Only authentication scheme Bearer is supported",
			// rather than as an operation a SAS may not call.
			return auth.ErrBearerOnly()
		}
		err = d.AuthorizeSAS(s, r)
	case !sr.Authenticated && d.Anonymous != nil:
		err = d.Anonymous(s, r)
	}
	if err != nil {
		return err
	}
	if d.Extras != nil {
		if w, err = d.Extras(s, w, r); err != nil {
			return err
		}
	}
	if structured != "" && rt.Structured == StructuredRequest {
		dec, err := xsm.DecodeRequest(sr.Request)
		if err != nil {
			return err
		}
		w = xsm.Acknowledge(w, dec)
	}
	resp, err := rt.Handler(s, r)
	if err != nil {
		if resp.Content != nil {
			resp.Content.Close()
		}
		if d.Answer != nil {
			err = d.Answer(err)
		}
		return err
	}
	var log *slog.Logger
	if l, ok := any(s).(interface{ Log() *slog.Logger }); ok {
		log = l.Log()
	}
	return RenderFor(w, sr.Request, log, resp)
}

// hStructuredBody is the header of a structured message (XSM/1.0 with
// CRC64 segments): on a write, its body is one; on a read, it asks for
// one.
const hStructuredBody = "x-ms-structured-body"
