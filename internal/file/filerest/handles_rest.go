package filerest

import (
	"math"
	"net/http"
	"strconv"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// The front end of List Handles and Force Close Handles (the domain side
// is domain_handles.go): parsing their headers and query, rendering.

// maxHandleResults is the largest List Handles page (List Handles,
// https://learn.microsoft.com/en-us/rest/api/storageservices/list-handles,
// maxresults "up to 5,000").
const maxHandleResults = 5000

// parseRecursive reads x-ms-recursive.
func parseRecursive(r *req) (bool, error) {
	return flagHeader(r.Header, "x-ms-recursive")
}

func parseHandleMarker(r *req) (handle.Position, error) {
	m := r.q.Get("marker")
	p, err := handle.DecodeMarker(m)
	if err != nil {
		return handle.Position{}, file.BadHandleMarker(m)
	}
	return p, nil
}

// handleXML is a <Handle> of List Handles (azfile generated Handle:
// OpenTime and LastReconnectTime are RFC 1123, Path may be Encoded).
type handleXML struct {
	HandleID          string           `xml:"HandleId"`
	Path              wire.EncodedName `xml:"Path"`
	FileID            string           `xml:"FileId"`
	ParentID          string           `xml:"ParentId"`
	SessionID         string           `xml:"SessionId"`
	ClientIP          string           `xml:"ClientIp"`
	OpenTime          string           `xml:"OpenTime"`
	LastReconnectTime string           `xml:"LastReconnectTime,omitempty"`
	AccessRights      []string         `xml:"AccessRightList>AccessRight"`
}

type handleEntriesXML struct {
	Handles []handleXML `xml:"Handle"`
}

type listHandlesXML struct {
	XMLName    struct{}         `xml:"EnumerationResults"`
	Entries    handleEntriesXML `xml:"Entries"`
	NextMarker string           `xml:"NextMarker"`
}

// handleXMLOf renders a listed handle.
func handleXMLOf(h handle.Handle) handleXML {
	x := handleXML{
		HandleID: h.HandleID, Path: wire.EncodedName(h.Path), FileID: h.FileID, ParentID: h.ParentID,
		SessionID: h.SessionID, ClientIP: h.ClientIP, OpenTime: wire.FormatHTTPDate(h.OpenTime),
		AccessRights: h.Access.Rights(),
	}
	if !h.LastReconnectTime.IsZero() {
		x.LastReconnectTime = wire.FormatHTTPDate(h.LastReconnectTime)
	}
	return x
}

// listHandles implements List Handles on a file, a directory or the
// share root (x-ms-recursive: the directory's whole subtree). A share
// snapshot has no open handles: its listing is empty (inferred).
func (s *Service) listHandles(r *req) (server.Response, error) {
	maxN, err := wire.ParseIntQuery(r.q, "maxresults", 1, math.MaxInt32, maxHandleResults)
	if err != nil {
		return server.Response{}, err
	}
	maxN = min(maxN, maxHandleResults)
	after, err := parseHandleMarker(r)
	if err != nil {
		return server.Response{}, err
	}
	recursive, err := parseRecursive(r)
	if err != nil {
		return server.Response{}, err
	}
	got, err := s.f.ListHandles(r.Context(), file.ListHandlesInput{Ref: refOf(r), Recursive: recursive, After: after, MaxResults: maxN})
	if err != nil {
		return server.Response{}, err
	}
	out := listHandlesXML{Entries: handleEntriesXML{Handles: make([]handleXML, 0, len(got.Handles))}, NextMarker: got.NextMarker}
	for _, h := range got.Handles {
		out.Entries.Handles = append(out.Entries.Handles, handleXMLOf(h))
	}
	return server.XML(http.StatusOK, out)
}

// forceCloseHandles implements Force Close Handles: x-ms-handle-id "*" closes
// every handle of the scope, an ID only that handle (none closed if it is not
// open: not an error) (Force Close Handles,
// https://learn.microsoft.com/en-us/rest/api/storageservices/force-close-handles).
// At most forceCloseBatch handles close per request; x-ms-marker then says
// where the next request resumes. A closed delete-on-close handle, or the
// last handle of a delete-pending item, deletes the item in the same
// transaction.
func (s *Service) forceCloseHandles(r *req) (server.Response, error) {
	hid := wire.Field(r.Header, "X-Ms-Handle-Id")
	if hid == "" {
		return server.Response{}, azerr.MissingHeader("x-ms-handle-id")
	}
	if _, ok := handle.ParseHandleID(hid); !ok && hid != "*" {
		return server.Response{}, azerr.InvalidHeader("x-ms-handle-id", hid)
	}
	after, err := parseHandleMarker(r)
	if err != nil {
		return server.Response{}, err
	}
	recursive, err := parseRecursive(r)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.f.ForceCloseHandles(r.Context(), file.ForceCloseHandlesInput{Ref: refOf(r), Recursive: recursive, HandleID: hid, After: after})
	if err != nil {
		return server.Response{}, err
	}
	closed, next := out.Closed, out.NextMarker
	resp := server.Bodiless(http.StatusOK)
	resp.Set("X-Ms-Number-Of-Handles-Closed", strconv.Itoa(closed))
	resp.Set("X-Ms-Number-Of-Handles-Failed", "0")
	if next != "" {
		resp.Set("X-Ms-Marker", next)
	}
	return resp, nil
}
