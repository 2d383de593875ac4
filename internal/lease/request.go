package lease

import (
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// Lease request and response header names.
const (
	HeaderAction      = "x-ms-lease-action"
	HeaderLeaseID     = "x-ms-lease-id"
	HeaderProposedID  = "x-ms-proposed-lease-id"
	HeaderDuration    = "x-ms-lease-duration"
	HeaderBreakPeriod = "x-ms-lease-break-period"
	HeaderLeaseTime   = "x-ms-lease-time"
	HeaderLeaseState  = "x-ms-lease-state"
	HeaderLeaseStatus = "x-ms-lease-status"
)

// Lease actions (x-ms-lease-action).
const (
	ActionAcquire = "acquire"
	ActionRenew   = "renew"
	ActionChange  = "change"
	ActionRelease = "release"
	ActionBreak   = "break"
)

// Duration and break-period limits, in seconds.
const (
	MinDuration    = 15
	MaxDuration    = 60
	MaxBreakPeriod = 60
)

// Request is one lease action. LeaseID and ProposedID are GUIDs; Duration
// is set for acquire and BreakPeriod (optionally) for break.
type Request struct {
	Action      string
	LeaseID     string
	ProposedID  string
	Duration    *int
	BreakPeriod *int
}

// ParseRequest reads and validates the lease headers h (a front end's
// http.Header) of a Lease Blob/Container/File request. Errors are 400
// *azerr.Error values:
// MissingRequiredHeader for a missing x-ms-lease-action, x-ms-lease-duration
// (acquire), x-ms-lease-id (renew, change, release) or
// x-ms-proposed-lease-id (change); InvalidHeaderValue for an unknown action
// (renew included, for files), a duration other than -1 or 15..60 (-1 only
// for files), a break period outside 0..60, or an ID that is not a GUID.
// Headers that do not apply to the action are ignored, and so is
// x-ms-lease-break-period on files (file leases break immediately).
func ParseRequest(h Header, kind Kind) (Request, error) {
	rawAction := strings.TrimSpace(h.Get(HeaderAction))
	if rawAction == "" {
		return Request{}, azerr.MissingHeader(HeaderAction)
	}
	req := Request{
		Action:     strings.ToLower(rawAction),
		LeaseID:    strings.TrimSpace(h.Get(HeaderLeaseID)),
		ProposedID: strings.TrimSpace(h.Get(HeaderProposedID)),
	}
	switch req.Action {
	case ActionAcquire:
		raw := strings.TrimSpace(h.Get(HeaderDuration))
		if raw == "" {
			return Request{}, azerr.MissingHeader(HeaderDuration)
		}
		d, err := strconv.Atoi(raw)
		if err != nil || !validDuration(d, kind) {
			return Request{}, azerr.InvalidHeader(HeaderDuration, raw)
		}
		req.Duration = &d
	case ActionRenew:
		if kind == File {
			return Request{}, azerr.InvalidHeader(HeaderAction, rawAction)
		}
	case ActionChange, ActionRelease:
	case ActionBreak:
		if raw := strings.TrimSpace(h.Get(HeaderBreakPeriod)); raw != "" && kind != File {
			p, err := strconv.Atoi(raw)
			if err != nil || !validBreakPeriod(p) {
				return Request{}, azerr.InvalidHeader(HeaderBreakPeriod, raw)
			}
			req.BreakPeriod = &p
		}
	default:
		return Request{}, azerr.InvalidHeader(HeaderAction, rawAction)
	}
	return req.normalize(kind)
}

func validDuration(d int, kind Kind) bool {
	if kind == File {
		return d == Infinite
	}
	return d == Infinite || MinDuration <= d && d <= MaxDuration
}

func validBreakPeriod(p int) bool { return 0 <= p && p <= MaxBreakPeriod }

// normalize validates req for kind and returns it with IDs in canonical
// form and fields that do not apply to the action cleared.
func (req Request) normalize(kind Kind) (Request, error) {
	out := Request{Action: req.Action}
	switch req.Action {
	case ActionAcquire:
		if req.Duration == nil {
			return Request{}, azerr.MissingHeader(HeaderDuration)
		}
		d := *req.Duration
		if !validDuration(d, kind) {
			return Request{}, azerr.InvalidHeader(HeaderDuration, strconv.Itoa(d))
		}
		out.Duration = &d
		if req.ProposedID != "" {
			id, ok := ParseID(req.ProposedID)
			if !ok {
				return Request{}, azerr.InvalidHeader(HeaderProposedID, req.ProposedID)
			}
			out.ProposedID = id
		}
	case ActionRenew, ActionChange, ActionRelease:
		if kind == File && req.Action == ActionRenew {
			// Lease File has no renew action.
			return Request{}, azerr.InvalidHeader(HeaderAction, req.Action)
		}
		id, err := requiredID(HeaderLeaseID, req.LeaseID)
		if err != nil {
			return Request{}, err
		}
		out.LeaseID = id
		if req.Action == ActionChange {
			if out.ProposedID, err = requiredID(HeaderProposedID, req.ProposedID); err != nil {
				return Request{}, err
			}
		}
	case ActionBreak:
		if req.BreakPeriod != nil && kind != File {
			p := *req.BreakPeriod
			if !validBreakPeriod(p) {
				return Request{}, azerr.InvalidHeader(HeaderBreakPeriod, strconv.Itoa(p))
			}
			out.BreakPeriod = &p
		}
	case "":
		return Request{}, azerr.MissingHeader(HeaderAction)
	default:
		return Request{}, azerr.InvalidHeader(HeaderAction, req.Action)
	}
	return out, nil
}

func requiredID(header, v string) (string, error) {
	if v == "" {
		return "", azerr.MissingHeader(header)
	}
	id, ok := ParseID(v)
	if !ok {
		return "", azerr.InvalidHeader(header, v)
	}
	return id, nil
}

// Header is what ParseRequest reads of a request's headers; a front end
// passes its http.Header. (lease is domain state and rules, which do not
// import net/http.)
type Header interface {
	// Get returns the first value of the header key, case-insensitively.
	Get(key string) string
}

// Kind selects the resource a lease is on. It picks the
// ...With{Blob,Container,File,Share}Operation error-code names and, for
// File, the file-specific rules (infinite leases only, no renew, immediate
// break). Share leases (Lease Share) follow the container rules.
type Kind int

// Infinite is the Duration of a lease that never expires.
const Infinite = -1

// Lease kinds.
const (
	Blob Kind = iota
	Container
	File
	Share
)
