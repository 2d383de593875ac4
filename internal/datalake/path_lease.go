package datalake

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// leasePath is Path - Lease
// (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/path/lease):
// POST with x-ms-lease-action acquire, break, change, renew or release,
// x-ms-lease-duration, x-ms-lease-break-period, x-ms-lease-id and
// x-ms-proposed-lease-id as Lease Blob takes them, and the conditions.
// The lease is the path's one lease (blob.Service.LeasePath), which the
// Blob view's Lease Blob changes too. 201 for acquire, 202 for break,
// 200 otherwise.
func (s *Service) leasePath(r *req) (server.Response, error) {
	ans := &answer{}
	lr, err := lease.ParseRequest(r.Header, lease.Blob)
	if err != nil {
		return server.Response{}, err
	}
	c, err := cond.Parse(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.blob.LeasePath(r.Context(), blob.LeasePathInput{Call: r.callAs(), PathRef: r.pathRef(), Cond: c, Request: lr})
	if err != nil {
		return server.Response{}, nsErr(err)
	}
	h := ans
	if out.Result.LeaseID != "" {
		h.Set("X-Ms-Lease-Id", out.Result.LeaseID)
	}
	if out.Result.LeaseTime != nil {
		h.Set("X-Ms-Lease-Time", strconv.Itoa(*out.Result.LeaseTime))
	}
	setETag(h, out.ETag, out.LastModified)
	h.Set("Content-Length", "0")
	return ans.done(out.Result.Status)
}

// parseLeaseAction reads the lease headers of an append or flush:
// x-ms-lease-id, x-ms-lease-action (acquire, auto-renew, release,
// acquire-release), x-ms-proposed-lease-id and x-ms-lease-duration
// (Path - Update). Lease ids must be GUIDs (400 InvalidHeaderValue).
func parseLeaseAction(h http.Header) (blob.PathLeaseAction, error) {
	a := blob.PathLeaseAction{Action: strings.ToLower(strings.TrimSpace(h.Get(lease.HeaderAction)))}
	for _, f := range []struct {
		name string
		dst  *string
	}{{lease.HeaderLeaseID, &a.LeaseID}, {lease.HeaderProposedID, &a.ProposedID}} {
		v := strings.TrimSpace(h.Get(f.name))
		if v == "" {
			continue
		}
		id, ok := lease.ParseID(v)
		if !ok {
			return a, azerr.InvalidHeader(f.name, v)
		}
		*f.dst = id
	}
	switch a.Action {
	case "", blob.PathLeaseAutoRenew, blob.PathLeaseRelease:
		if a.Action != "" && a.LeaseID == "" {
			return a, azerr.MissingHeader(lease.HeaderLeaseID)
		}
	case blob.PathLeaseAcquire, blob.PathLeaseAcquireRelease:
		d, err := blob.ParseLeaseDuration(strings.TrimSpace(h.Get(lease.HeaderDuration)))
		if err != nil {
			return a, err
		}
		if d == nil {
			return a, azerr.MissingHeader(lease.HeaderDuration)
		}
		if a.ProposedID == "" {
			return a, azerr.MissingHeader(lease.HeaderProposedID)
		}
		a.Duration = d
	default:
		return a, azerr.InvalidHeader(lease.HeaderAction, h.Get(lease.HeaderAction))
	}
	return a, nil
}

// parseCreateLease reads x-ms-proposed-lease-id and x-ms-lease-duration
// of Path Create, which create the item with a lease (both or neither:
// 400 MissingRequiredHeader naming the other; the id a GUID, the
// duration -1 or 15 to 60 seconds).
func parseCreateLease(h http.Header) (*lease.Request, error) {
	id, dur := strings.TrimSpace(h.Get(lease.HeaderProposedID)), strings.TrimSpace(h.Get(lease.HeaderDuration))
	switch {
	case id == "" && dur == "":
		return nil, nil
	case id == "":
		return nil, azerr.MissingHeader(lease.HeaderProposedID)
	case dur == "":
		return nil, azerr.MissingHeader(lease.HeaderDuration)
	}
	pid, ok := lease.ParseID(id)
	if !ok {
		return nil, azerr.InvalidHeader(lease.HeaderProposedID, id)
	}
	d, err := blob.ParseLeaseDuration(dur)
	if err != nil {
		return nil, err
	}
	return &lease.Request{Action: lease.ActionAcquire, ProposedID: pid, Duration: d}, nil
}
