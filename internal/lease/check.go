package lease

import (
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// CheckWrite gates a write (or delete) of the leased object on the
// request's x-ms-lease-id header value:
//
//   - leased or breaking: no ID → 412 LeaseIdMissing; another ID → 412
//     LeaseIdMismatchWith<Kind>Operation; the lease's ID → allowed;
//   - available, expired or broken: no ID → allowed; any ID → 412
//     LeaseNotPresentWith<Kind>Operation.
//
// For containers and shares only Delete Container/Share is a write in this
// sense; their other operations use CheckRead.
func CheckWrite(l Lease, leaseIDHeader string, kind Kind, now time.Time) error {
	id := strings.TrimSpace(leaseIDHeader)
	if l.Active(now.UTC()) {
		if id == "" {
			return azerr.New(azerr.LeaseIDMissing)
		}
		if !sameID(id, l.ID) {
			return azerr.New(mismatchCode(kind))
		}
		return nil
	}
	if id != "" {
		return azerr.New(notPresentCode(kind))
	}
	return nil
}

// CheckRead gates a read (or an operation where the lease ID is optional):
// no ID is always allowed; a supplied ID must be the ID of an active lease
// (412 LeaseIdMismatchWith<Kind>Operation, or 412
// LeaseNotPresentWith<Kind>Operation when there is no active lease).
func CheckRead(l Lease, leaseIDHeader string, kind Kind, now time.Time) error {
	id := strings.TrimSpace(leaseIDHeader)
	if id == "" {
		return nil
	}
	if !l.Active(now.UTC()) {
		return azerr.New(notPresentCode(kind))
	}
	if !sameID(id, l.ID) {
		return azerr.New(mismatchCode(kind))
	}
	return nil
}

// OnWrite returns the lease to store after a successful write of the
// object at now. An active (leased or breaking) lease is kept. An expired
// or broken lease is cleared to available, so it can no longer be renewed
// or released with its old ID (LeaseIdMismatchWithLeaseOperation).
func OnWrite(l Lease, now time.Time) Lease {
	switch l.stateAt(now.UTC()) {
	case StateExpired, StateBroken:
		return Lease{}
	}
	return l
}

func mismatchCode(kind Kind) string {
	switch kind {
	case Container:
		return azerr.LeaseIDMismatchWithContainerOperation
	case File:
		return azerr.LeaseIDMismatchWithFileOperation
	case Share:
		return azerr.LeaseIDMismatchWithShareOperation
	}
	return azerr.LeaseIDMismatchWithBlobOperation
}

func notPresentCode(kind Kind) string {
	switch kind {
	case Container:
		return azerr.LeaseNotPresentWithContainerOperation
	case File:
		return azerr.LeaseNotPresentWithFileOperation
	case Share:
		return azerr.LeaseNotPresentWithShareOperation
	}
	return azerr.LeaseNotPresentWithBlobOperation
}
