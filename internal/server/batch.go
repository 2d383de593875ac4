package server

import (
	"bytes"
	"context"
	"net/http"
)

type batchVersionKey struct{}

// SubResponse is the recorded response to a batch sub-request.
type SubResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// ServeSub runs sub-request hr of the batch r through the service's whole
// front end, as if it had arrived on its own (version check,
// authentication of its own signature or SAS, routing, error rendering),
// and records the response. Sub-requests carry no x-ms-version: they are
// processed with the batch's. hr's context must derive from r's.
func (r *Request) ServeSub(hr *http.Request) *SubResponse {
	ctx := context.WithValue(hr.Context(), batchVersionKey{}, r.Version)
	rec := &recorder{header: http.Header{}}
	r.serve(rec, hr.WithContext(ctx))
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &SubResponse{Status: rec.status, Header: rec.header, Body: rec.body.Bytes()}
}

// recorder is the http.ResponseWriter of a sub-request.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *recorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(p)
}
