package filerest

import (
	"strconv"

	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// leaseFile implements Lease File (PUT ?comp=lease, version 2019-02-02 and
// later) (Lease File,
// https://learn.microsoft.com/en-us/rest/api/storageservices/lease-file):
// acquire (infinite only, 201), change (200), release (200) and break
// (immediate, 202); there is no renew. The lease state machine and its 409
// codes are package lease's (kind File). A lease action is not a write: ETag
// and Last-Modified stay (Lease File: "The Lease File operation does not
// modify this property"). Acquire fails with 409 SharingViolation while an
// SMB handle has Write or Delete access (Managing file locks,
// https://learn.microsoft.com/en-us/rest/api/storageservices/managing-file-locks).
// On a share snapshot the router refuses it (400) (Lease File: "Requesting a
// lease against a file in a share snapshot results in status code 400").
func (s *Service) leaseFile(r *req) (server.Response, error) {
	lr, err := lease.ParseRequest(r.Header, lease.File)
	if err != nil {
		return server.Response{}, err
	}
	if err := requireEmptyBody(r); err != nil {
		return server.Response{}, err
	}
	out, err := s.f.LeaseFile(r.Context(), file.LeaseFileInput{Ref: refOf(r), Request: lr})
	if err != nil {
		return server.Response{}, err
	}
	e, res := out.Entry, out.Result
	resp := server.Bodiless(res.Status)
	setETag(&resp, e)
	// x-ms-lease-id for acquire and change. Inferred: not for break: the REST
	// specification lists it on the break response too, but Lease Blob
	// does not send it there and the ID of a broken lease is no business
	// of whoever broke it.
	if res.LeaseID != "" {
		resp.Set(lease.HeaderLeaseID, res.LeaseID)
	}
	if res.LeaseTime != nil {
		// Always 0: "0 is returned for immediate breaks" (Lease File).
		resp.Set(lease.HeaderLeaseTime, strconv.Itoa(*res.LeaseTime))
	}
	return resp, nil
}
