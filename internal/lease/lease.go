// Package lease is the lease state machine shared by blobs, containers and
// files (Lease Blob, Lease Container, Lease File).
//
// It is pure: no I/O and no clock. The caller stores a Lease next to the
// leased object, passes the request time in, and stores Result.Lease back
// when Apply succeeds. Time-driven transitions (a fixed lease expiring, a
// breaking lease becoming broken) are never materialised by a timer; they
// are computed from the stored timestamps against the time passed in.
package lease

import (
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

func (k Kind) String() string {
	switch k {
	case Blob:
		return "blob"
	case Container:
		return "container"
	case File:
		return "file"
	case Share:
		return "share"
	}
	return "unknown"
}

// Lease states (x-ms-lease-state). Stored states are "" (never leased or
// released), StateLeased, StateBreaking and StateBroken; StateAvailable and
// StateExpired only appear in Effective.
const (
	StateAvailable = "available"
	StateLeased    = "leased"
	StateExpired   = "expired"
	StateBreaking  = "breaking"
	StateBroken    = "broken"
)

// Lease status (x-ms-lease-status) and duration (x-ms-lease-duration) values.
const (
	StatusLocked     = "locked"
	StatusUnlocked   = "unlocked"
	DurationInfinite = "infinite"
	DurationFixed    = "fixed"
)

// Lease is the stored lease state of one object. The zero value is "never
// leased". It holds only exported plain fields so it encodes compactly with
// encoding/json and encoding/gob; times are stored in UTC without a
// monotonic reading.
type Lease struct {
	ID       string    `json:"id,omitempty"`
	State    string    `json:"st,omitempty"`  // "", leased, breaking, broken
	Duration int       `json:"dur,omitempty"` // -1 infinite, else seconds (while leased)
	Expires  time.Time `json:"exp,omitzero"`  // end of a fixed lease
	BreakAt  time.Time `json:"brk,omitzero"`  // end of the break period (breaking)
}

// Effective is what GET, HEAD and listings report for a lease at a given time.
type Effective struct {
	State    string // available, leased, expired, breaking, broken
	Status   string // locked, unlocked
	Duration string // infinite, fixed, or "" when not leased
}

// stateAt computes the effective lease state at now.
func (l Lease) stateAt(now time.Time) string {
	switch l.State {
	case StateLeased:
		if l.ID == "" || l.Duration != Infinite && !now.Before(l.Expires) {
			return StateExpired
		}
		return StateLeased
	case StateBreaking:
		if l.ID == "" || !now.Before(l.BreakAt) {
			return StateBroken
		}
		return StateBreaking
	case StateBroken:
		return StateBroken
	}
	return StateAvailable
}

// Effective returns the lease state, status and duration to report at now.
func (l Lease) Effective(now time.Time) Effective {
	switch st := l.stateAt(now); st {
	case StateLeased:
		d := DurationFixed
		if l.Duration == Infinite {
			d = DurationInfinite
		}
		return Effective{State: st, Status: StatusLocked, Duration: d}
	case StateBreaking:
		return Effective{State: st, Status: StatusLocked}
	default:
		return Effective{State: st, Status: StatusUnlocked}
	}
}

// Active reports whether the lease is locked (leased or breaking) at now.
func (l Lease) Active(now time.Time) bool {
	st := l.stateAt(now)
	return st == StateLeased || st == StateBreaking
}

// Result is the outcome of a successful lease action.
type Result struct {
	Lease     Lease  // the new state to store
	LeaseID   string // x-ms-lease-id to return (acquire, renew, change), else ""
	LeaseTime *int   // x-ms-lease-time to return (break), else nil
	Status    int    // 201 acquire, 200 renew/change/release, 202 break
}

// Apply performs one lease action on l at now. Failures are *azerr.Error:
// 400 for an invalid request (see ParseRequest) and 409 for an action the
// lease's state does not allow (Azure's action × state table).
func Apply(l Lease, req Request, kind Kind, now time.Time) (Result, error) {
	req, err := req.normalize(kind)
	if err != nil {
		return Result{}, err
	}
	now = now.UTC() // also drops the monotonic reading
	st := l.stateAt(now)
	switch req.Action {
	case ActionAcquire:
		return acquireLease(l, st, req, now)
	case ActionRenew:
		return renewLease(l, st, req, now)
	case ActionChange:
		return changeLease(l, st, req)
	case ActionRelease:
		return releaseLease(l, st, req)
	default: // ActionBreak; normalize rejected anything else
		return breakLease(l, st, req, kind, now)
	}
}

func conflict(code string) (Result, error) { return Result{}, azerr.New(code) }

func leased(id string, dur int, now time.Time) Lease {
	l := Lease{ID: id, State: StateLeased, Duration: dur}
	if dur != Infinite {
		l.Expires = now.Add(time.Duration(dur) * time.Second)
	}
	return l
}

func acquireLease(l Lease, st string, req Request, now time.Time) (Result, error) {
	dur := *req.Duration
	switch st {
	case StateLeased:
		// Only the holder may acquire again (idempotent retry or a new
		// duration); the clock restarts.
		if !sameID(req.ProposedID, l.ID) {
			return conflict(azerr.LeaseAlreadyPresent)
		}
		nl := leased(l.ID, dur, now)
		return Result{Lease: nl, LeaseID: nl.ID, Status: 201}, nil
	case StateBreaking:
		if sameID(req.ProposedID, l.ID) {
			return conflict(azerr.LeaseIsBreakingAndCannotBeAcquired)
		}
		return conflict(azerr.LeaseAlreadyPresent)
	default: // available, expired, broken
		id := req.ProposedID
		if id == "" {
			id = NewID()
		}
		nl := leased(id, dur, now)
		return Result{Lease: nl, LeaseID: nl.ID, Status: 201}, nil
	}
}

func renewLease(l Lease, st string, req Request, now time.Time) (Result, error) {
	if !sameID(req.LeaseID, l.ID) {
		return conflict(azerr.LeaseIDMismatchWithLeaseOperation)
	}
	switch st {
	case StateLeased, StateExpired:
		// An expired lease still holds its ID until the object is written
		// (OnWrite) or leased again; renewing it keeps the original duration.
		nl := leased(l.ID, l.Duration, now)
		return Result{Lease: nl, LeaseID: nl.ID, Status: 200}, nil
	case StateBreaking, StateBroken:
		return conflict(azerr.LeaseIsBrokenAndCannotBeRenewed)
	default: // available: the stored ID is empty, so sameID failed above
		return conflict(azerr.LeaseIDMismatchWithLeaseOperation)
	}
}

func changeLease(l Lease, st string, req Request) (Result, error) {
	switch st {
	case StateLeased:
		switch {
		case sameID(req.LeaseID, l.ID):
			nl := l
			nl.ID = req.ProposedID
			return Result{Lease: nl, LeaseID: nl.ID, Status: 200}, nil
		case sameID(req.ProposedID, l.ID):
			// Retry of a change that already happened.
			return Result{Lease: l, LeaseID: l.ID, Status: 200}, nil
		}
		return conflict(azerr.LeaseIDMismatchWithLeaseOperation)
	case StateBreaking:
		if sameID(req.LeaseID, l.ID) {
			return conflict(azerr.LeaseIsBreakingAndCannotBeChanged)
		}
		return conflict(azerr.LeaseIDMismatchWithLeaseOperation)
	default: // available, expired, broken
		return conflict(azerr.LeaseNotPresentWithLeaseOperation)
	}
}

func releaseLease(l Lease, st string, req Request) (Result, error) {
	if st == StateAvailable || !sameID(req.LeaseID, l.ID) {
		return conflict(azerr.LeaseIDMismatchWithLeaseOperation)
	}
	return Result{Lease: Lease{}, Status: 200}, nil
}

func breakLease(l Lease, st string, req Request, kind Kind, now time.Time) (Result, error) {
	broken := func() (Result, error) {
		zero := 0
		return Result{Lease: Lease{ID: l.ID, State: StateBroken}, LeaseTime: &zero, Status: 202}, nil
	}
	breaking := func(at time.Time) (Result, error) {
		if !now.Before(at) {
			return broken()
		}
		secs := int((at.Sub(now) + time.Second - 1) / time.Second) // round up
		return Result{Lease: Lease{ID: l.ID, State: StateBreaking, BreakAt: at}, LeaseTime: &secs, Status: 202}, nil
	}
	if st == StateAvailable {
		return conflict(azerr.LeaseNotPresentWithLeaseOperation)
	}
	if kind == File {
		return broken() // file leases break immediately
	}
	var period time.Duration
	if req.BreakPeriod != nil {
		period = time.Duration(*req.BreakPeriod) * time.Second
	}
	switch st {
	case StateLeased:
		switch {
		case l.Duration == Infinite && req.BreakPeriod == nil:
			return broken()
		case l.Duration == Infinite:
			return breaking(now.Add(period))
		case req.BreakPeriod == nil:
			return breaking(l.Expires) // a fixed lease breaks when it would expire
		default:
			at := now.Add(period)
			if l.Expires.Before(at) {
				at = l.Expires
			}
			return breaking(at)
		}
	case StateBreaking:
		at := l.BreakAt
		if req.BreakPeriod != nil && now.Add(period).Before(at) {
			at = now.Add(period)
		}
		return breaking(at)
	default: // expired, broken
		return broken()
	}
}
