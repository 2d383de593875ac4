package server

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"log/slog"
	"net/http"
	"syscall"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// errorXML is the body Blob, Queue and File send with an error.
type errorXML struct {
	XMLName xml.Name `xml:"Error"`
	Code    string   `xml:"Code"`
	Message string   `xml:"Message"`
	Details []detailXML
}

type detailXML struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

// ToAzure converts any error into an *azerr.Error: Azure errors pass
// through, store faults and a full disk become ServerBusy, a deadline or
// the request's own cancellation OperationTimedOut, a full in-memory chunk
// store (--in-memory with --extent-memory-limit) 409
// MemoryExtentStoreAtSizeLimit as Azurite answers it, everything else
// InternalError (logged, never leaked).
func ToAzure(ctx context.Context, log *slog.Logger, err error) *azerr.Error {
	if e, ok := azerr.As(err); ok {
		return e
	}
	var full *chunk.FullError
	switch {
	case errors.As(err, &full):
		log.WarnContext(ctx, "in-memory store full", "limit", full.Limit)
		return azerr.Newf(azerr.MemoryExtentStoreAtSizeLimit,
			"Cannot add an extent chunk to the in-memory store. Size limit of %d bytes will be exceeded.", full.Limit)
	case errors.Is(err, context.DeadlineExceeded):
		return azerr.New(azerr.OperationTimedOut)
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		// The client went away (or the server is shutting down): nothing
		// failed here, and nobody reads the answer.
		log.InfoContext(ctx, "request canceled", "err", err)
		return azerr.New(azerr.OperationTimedOut)
	case storeUnavailable(err):
		log.ErrorContext(ctx, "store unavailable", "err", err)
		return azerr.New(azerr.ServerBusy)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		// Azure has no disk-full code. ServerBusy (503, "Please retry
		// your request", Common REST API error codes) says what holds:
		// nothing is wrong with the request, it fails for now and will
		// succeed unchanged once space returns; the SDKs retry it with
		// backoff. InternalError would claim a fault of the server.
		log.ErrorContext(ctx, "disk full", "err", err)
		return azerr.New(azerr.ServerBusy)
	}
	log.ErrorContext(ctx, "internal error", "err", err)
	return azerr.New(azerr.InternalError)
}

// WriteXMLError renders e as Azure's XML error body (no body for HEAD or
// 304). The common headers were set by the middleware already.
func WriteXMLError(w http.ResponseWriter, r *http.Request, e *azerr.Error) {
	h := w.Header()
	for k, v := range e.Headers {
		h.Set(k, v)
	}
	h.Set("X-Ms-Error-Code", e.Code)
	if r.Method == http.MethodHead || e.Status == http.StatusNotModified {
		w.WriteHeader(e.Status)
		return
	}
	body := errorXML{Code: e.Code, Message: e.Message + "\nRequestId:" + h.Get("X-Ms-Request-Id") + "\nTime:" + nowISO(h)}
	for _, d := range e.Details {
		body.Details = append(body.Details, detailXML{XMLName: xml.Name{Local: d.Name}, Value: d.Value})
	}
	out, _ := xml.Marshal(body)
	h.Set("Content-Type", "application/xml")
	w.WriteHeader(e.Status)
	_, _ = w.Write([]byte(XMLDeclaration))
	_, _ = w.Write(wire.TidyXML(out))
}

// XMLDeclaration begins every XML response body.
const XMLDeclaration = `<?xml version="1.0" encoding="utf-8"?>`

// WriteXML sends v as an XML document with the given status, in one Write.
func WriteXML(w http.ResponseWriter, status int, v any) error {
	var b bytes.Buffer
	b.Grow(512)
	b.WriteString(XMLDeclaration)
	if err := xml.NewEncoder(&b).Encode(v); err != nil {
		return err
	}
	return WriteXMLDoc(w, status, wire.TidyXML(b.Bytes()))
}

// WriteXMLDoc sends doc, a whole XML document (beginning with
// XMLDeclaration), with the given status, in one Write.
func WriteXMLDoc(w http.ResponseWriter, status int, doc []byte) error {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	_, err := w.Write(doc)
	return err
}

// NoRoute is the error for a request no operation of a service matches:
// 400 InvalidQueryParameterValue naming comp when a comp was given (an
// unknown or misplaced component), else 405 UnsupportedHttpVerb.
func NoRoute(comp string) error {
	if comp != "" {
		return azerr.InvalidQuery("comp", comp)
	}
	return azerr.New(azerr.UnsupportedHTTPVerb)
}

// Unsupported names the Azure operations a service knows of but does not
// serve, by the restype and comp that select them ("container/rename":
// Rename Container; "/query": Query Blob Contents), so a client calling
// one learns which operation is missing instead of getting a generic
// error about a query parameter. README "Not supported yet" lists them.
type Unsupported map[string]string

// NoRoute is the error for a request no operation of the service
// matches: NotSupported for an operation u names, else NoRoute(comp).
func (u Unsupported) NoRoute(sel Selectors) error {
	if op, ok := u[sel.Restype+"/"+sel.Comp]; ok {
		return NotSupported(op)
	}
	return NoRoute(sel.Comp)
}

// NotSupported is the answer to an Azure operation this server does not
// serve: 501 NotImplemented (the code Azure's catalog has for "The
// requested operation is not implemented on the specified resource", which
// the SDKs do not retry) with a message naming the operation.
func NotSupported(op string) error {
	return azerr.Newf(azerr.NotImplemented, "%s is not supported by Cerulean yet (see README, Not supported yet).", op)
}

// storeUnavailable reports whether err is a fault of the store (kv's
// ErrUnavailable and ErrClosed, and whatever wraps them): they say so
// through an Unavailable method, so this package need not import kv.
func storeUnavailable(err error) bool {
	var u interface{ Unavailable() bool }
	return errors.As(err, &u) && u.Unavailable()
}
