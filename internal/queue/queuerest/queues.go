package queuerest

import (
	"encoding/xml"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/policy"
	"github.com/cerulean-storage/cerulean/internal/queue"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// createQueue: 201 when created; 204 when the queue exists with identical
// metadata; 409 QueueAlreadyExists when it exists with different metadata
// (Create Queue,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-queue4;
// azqueue accepts 201 and 204).
func (s *Service) createQueue(r *req) (server.Response, error) {
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.q.CreateQueue(r.Context(), queue.CreateQueueInput{QueueID: r.id(), Metadata: meta})
	if err != nil {
		return server.Response{}, err
	}
	if out.Created {
		return server.Bodiless(http.StatusCreated), nil
	}
	return server.Bodiless(http.StatusNoContent), nil
}

// deleteQueue (Delete Queue): 204 (Delete Queue,
// https://learn.microsoft.com/en-us/rest/api/storageservices/delete-queue3).
func (s *Service) deleteQueue(r *req) (server.Response, error) {
	if _, err := s.q.DeleteQueue(r.Context(), queue.DeleteQueueInput{QueueID: r.id()}); err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusNoContent), nil
}

// getQueueMetadata (Get Queue Metadata / Properties): the metadata headers
// and x-ms-approximate-messages-count, which counts the messages not yet
// expired (visible or not) (Get Queue Metadata,
// https://learn.microsoft.com/en-us/rest/api/storageservices/get-queue-metadata).
func (s *Service) getQueueMetadata(r *req) (server.Response, error) {
	p, err := s.q.GetQueueProperties(r.Context(), queue.GetQueuePropertiesInput{QueueID: r.id()})
	if err != nil {
		return server.Response{}, err
	}
	resp := server.Bodiless(http.StatusOK)
	for k, v := range p.Metadata { // as wire.WriteMetadata writes them
		resp = resp.With(wire.MetaPrefix+k, v)
	}
	// The SDK parses the count as an int32.
	return resp.With("X-Ms-Approximate-Messages-Count", strconv.FormatInt(min(p.ApproximateMessageCount, math.MaxInt32), 10)), nil
}

// setQueueMetadata replaces the metadata: 204, last writer wins.
func (s *Service) setQueueMetadata(r *req) (server.Response, error) {
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	if _, err := s.q.SetQueueMetadata(r.Context(), queue.SetQueueMetadataInput{QueueID: r.id(), Metadata: meta}); err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusNoContent), nil
}

// Stored access policies on the wire.
type signedIdentifiersXML struct {
	XMLName xml.Name            `xml:"SignedIdentifiers"`
	Items   []signedIdentityXML `xml:"SignedIdentifier"`
}

type signedIdentityXML struct {
	ID     string           `xml:"Id"`
	Policy *accessPolicyXML `xml:"AccessPolicy"`
}

type accessPolicyXML struct {
	Start      string `xml:"Start,omitempty"`
	Expiry     string `xml:"Expiry,omitempty"`
	Permission string `xml:"Permission,omitempty"`
}

// maxSignedIdentifiers is Azure's limit of stored access policies per queue
// (Set Queue ACL,
// https://learn.microsoft.com/en-us/rest/api/storageservices/set-queue-acl).
const maxSignedIdentifiers = 5

// queuePermissions are the letters a queue access policy may hold, in the
// documented order: read, add, update, process (Create a service SAS,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas;
// azqueue's AccessPolicyPermission writes them so).
const queuePermissions = "raup"

func (s *Service) getQueueACL(r *req) (server.Response, error) {
	acl, err := s.q.GetQueueACL(r.Context(), queue.GetQueueACLInput{QueueID: r.id()})
	if err != nil {
		return server.Response{}, err
	}
	out := signedIdentifiersXML{Items: []signedIdentityXML{}}
	for _, p := range acl.Policies {
		out.Items = append(out.Items, signedIdentityXML{ID: p.ID, Policy: &accessPolicyXML{Start: p.Start, Expiry: p.Expiry, Permission: p.Permission}})
	}
	return server.XML(http.StatusOK, out)
}

// parseACL validates a Set Queue ACL body: at most five identifiers with ids
// of 1–64 characters (400 InvalidXmlDocument), ISO 8601 times and permissions
// from "raup" (400 InvalidXmlNodeValue) (Set Queue ACL,
// https://learn.microsoft.com/en-us/rest/api/storageservices/set-queue-acl;
// codes I, as for containers). An empty body clears the ACL.
func parseACL(body []byte) ([]policy.Stored, error) {
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil, nil
	}
	var in signedIdentifiersXML
	if err := xml.Unmarshal(body, &in); err != nil {
		return nil, azerr.New(azerr.InvalidXMLDocument)
	}
	if len(in.Items) > maxSignedIdentifiers {
		return nil, azerr.Newf(azerr.InvalidXMLDocument, "At most %d stored access policies may be set.", maxSignedIdentifiers)
	}
	var out []policy.Stored
	seen := map[string]bool{}
	for _, it := range in.Items {
		if it.ID == "" || len(it.ID) > 64 {
			return nil, azerr.Newf(azerr.InvalidXMLDocument, "Signed identifier ids must be 1 to 64 characters.")
		}
		if seen[it.ID] {
			return nil, azerr.Newf(azerr.InvalidXMLDocument, "The signed identifier %q is given twice.", it.ID)
		}
		seen[it.ID] = true
		p := policy.Stored{ID: it.ID}
		if it.Policy != nil {
			for _, f := range []struct{ in, out *string }{{&it.Policy.Start, &p.Start}, {&it.Policy.Expiry, &p.Expiry}} {
				v := strings.TrimSpace(*f.in)
				if v == "" {
					continue
				}
				t, err := wire.ParseISOTime(v)
				if err != nil {
					return nil, azerr.Newf(azerr.InvalidXMLNodeValue, "Invalid access policy time %q.", v)
				}
				*f.out = wire.FormatISO7(t)
			}
			perm := it.Policy.Permission
			for _, c := range perm {
				if !strings.ContainsRune(queuePermissions, c) {
					return nil, azerr.Newf(azerr.InvalidXMLNodeValue, "Invalid permission %q.", perm)
				}
			}
			p.Permission = perm
		}
		out = append(out, p)
	}
	return out, nil
}

// setQueueACL replaces the stored access policies: 204, last writer wins.
func (s *Service) setQueueACL(r *req) (server.Response, error) {
	if r.ContentLength > 64<<10 {
		return server.Response{}, azerr.New(azerr.RequestBodyTooLarge)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10+1))
	if err != nil {
		if _, ok := azerr.As(err); ok {
			return server.Response{}, err // the front end's own verdict (a stalled body), kept whole
		}
		return server.Response{}, azerr.Newf(azerr.InvalidInput, "The request body could not be read.")
	}
	if len(body) > 64<<10 {
		return server.Response{}, azerr.New(azerr.RequestBodyTooLarge)
	}
	acl, err := parseACL(body)
	if err != nil {
		return server.Response{}, err
	}
	if _, err := s.q.SetQueueACL(r.Context(), queue.SetQueueACLInput{QueueID: r.id(), Policies: acl}); err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusNoContent), nil
}

// List Queues.

const maxListResults = 5000

// metaXML is the listings' <Metadata> element.
type metaXML = wire.MetadataXML

type queueItemXML struct {
	Name     string  `xml:"Name"`
	Metadata metaXML `xml:"Metadata,omitempty"`
}

type listQueuesXML struct {
	XMLName    xml.Name       `xml:"EnumerationResults"`
	Endpoint   string         `xml:"ServiceEndpoint,attr"`
	Prefix     string         `xml:"Prefix,omitempty"`
	Marker     string         `xml:"Marker,omitempty"`
	MaxResults int            `xml:"MaxResults,omitempty"`
	Queues     []queueItemXML `xml:"Queues>Queue"`
	NextMarker string         `xml:"NextMarker"`
}

// listQueues: prefix, marker (the name of the first queue to return, as
// handed out in NextMarker), maxresults (1–5000 accepted; larger values are
// clamped, as List Containers documents for its maxresults and List Queues,
// https://learn.microsoft.com/en-us/rest/api/storageservices/list-queues1,
// for its default of 5,000; below 1: 400 OutOfRangeQueryParameterValue) and
// include=metadata (anything else: 400 InvalidQueryParameterValue).
func (s *Service) listQueues(r *req) (server.Response, error) {
	maxN, err := wire.ParseIntQuery(r.q, "maxresults", 1, math.MaxInt32, maxListResults)
	if err != nil {
		return server.Response{}, err
	}
	maxN = min(maxN, maxListResults)
	withMeta := false
	if inc := r.q.Get("include"); inc != "" {
		for _, it := range strings.Split(inc, ",") {
			if !strings.EqualFold(strings.TrimSpace(it), "metadata") {
				return server.Response{}, azerr.InvalidQuery("include", inc)
			}
			withMeta = true
		}
	}
	in := queue.ListQueuesInput{Account: r.Account, Prefix: r.q.Get("prefix"), Marker: r.q.Get("marker"), MaxResults: maxN, WithMetadata: withMeta}
	list, err := s.q.ListQueues(r.Context(), in)
	if err != nil {
		return server.Response{}, err
	}
	out := listQueuesXML{Endpoint: endpoint(r), Prefix: in.Prefix, Marker: in.Marker, Queues: make([]queueItemXML, len(list.Queues)), NextMarker: list.NextMarker}
	if r.q.Has("maxresults") {
		out.MaxResults = maxN
	}
	for i, q := range list.Queues {
		out.Queues[i] = queueItemXML{Name: q.Name, Metadata: metaXML(q.Metadata)}
	}
	return server.XML(http.StatusOK, out)
}

func endpoint(r *req) string {
	return r.AccountURL() + "/"
}
