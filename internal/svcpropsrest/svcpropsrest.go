// Package svcpropsrest is the REST front end of Service Properties and
// Stats (internal/svcprops): one set of handlers, Get/Set Service
// Properties and Get Service Stats, that every service's route table
// names, instantiated for its own front end and request types. What
// differs between the services is the svcprops.Kind of the
// svcprops.Service their front end returns (the document's elements,
// whether stats exist); the wire form is the same for all: an XML
// document, 202 on Set, Stats on the secondary endpoint only, errors in
// the service's own format (rendered by internal/server).
package svcpropsrest

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// Owner is a service front end that keeps service properties: the
// receiver of the service's route handlers.
type Owner interface {
	ServiceProperties() *svcprops.Service
}

// Req is a service's parsed request; every one embeds *server.Request,
// whose Base method gives the common part back.
type Req interface {
	Base() *server.Request
}

// GetProperties is Get Service Properties: 200 with the account's
// StorageServiceProperties document, the kind's elements only.
func GetProperties[S Owner, R Req](s S, r R) (server.Response, error) {
	sr := r.Base()
	out, err := s.ServiceProperties().GetProperties(sr.Context(), svcprops.GetPropertiesInput{Account: sr.Account})
	if err != nil {
		return server.Response{}, err
	}
	return server.XML(http.StatusOK, out.Properties)
}

// SetProperties is Set Service Properties: a declared body over 64 KiB
// is refused before it is read (413 RequestBodyTooLarge), the body is
// parsed and checked for the kind (svcprops.Parse), the elements it has
// replace the stored ones; 202 Accepted (Set Blob Service Properties,
// https://learn.microsoft.com/en-us/rest/api/storageservices/set-blob-service-properties;
// azfile expects 202 as well).
func SetProperties[S Owner, R Req](s S, r R) (server.Response, error) {
	sr := r.Base()
	if err := svcprops.CheckLength(sr.ContentLength); err != nil {
		return server.Response{}, err
	}
	props := s.ServiceProperties()
	p, err := svcprops.Parse(sr.Body, props.Kind())
	if err != nil {
		return server.Response{}, err
	}
	if _, err := props.SetProperties(sr.Context(), svcprops.SetPropertiesInput{Account: sr.Account, Properties: p}); err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusAccepted), nil
}

// GetStats is Get Service Stats (Blob, Queue, Table). The operation is
// served on the secondary endpoint only ({account}-secondary) (Get Blob
// Service Stats: "This operation is available only on the secondary
// location endpoint"); on the primary it is 400
// InvalidQueryParameterValue naming comp=stats.
func GetStats[S Owner, R Req](s S, r R) (server.Response, error) {
	sr := r.Base()
	if !sr.Secondary {
		return server.Response{}, azerr.Newf(azerr.InvalidQueryParameterValue, "Get Service Stats is served on the secondary location endpoint only.").
			With("QueryParameterName", "comp").With("QueryParameterValue", "stats")
	}
	out, err := s.ServiceProperties().GetStats(sr.Context(), svcprops.GetStatsInput{Account: sr.Account, Now: sr.Now})
	if err != nil {
		return server.Response{}, err
	}
	return server.XML(http.StatusOK, out.Stats)
}
