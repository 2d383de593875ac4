package lease

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

const (
	idA = "11111111-1111-4111-8111-111111111111"
	idB = "22222222-2222-4222-8222-222222222222"
	idC = "33333333-3333-4333-8333-333333333333"
)

var now = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

func sec(n int) time.Duration { return time.Duration(n) * time.Second }
func ip(n int) *int           { return &n }

// Fixtures, evaluated at now.
var (
	available   = Lease{}
	leasedInf   = Lease{ID: idA, State: StateLeased, Duration: Infinite}
	leasedFixed = Lease{ID: idA, State: StateLeased, Duration: 30, Expires: now.Add(sec(20))} // 20 s left
	breakingA   = Lease{ID: idA, State: StateBreaking, BreakAt: now.Add(sec(10))}
	brokenA     = Lease{ID: idA, State: StateBroken}
	brokenLazy  = Lease{ID: idA, State: StateBreaking, BreakAt: now.Add(-sec(1))} // breaking whose period has passed
	expiredA    = Lease{ID: idA, State: StateLeased, Duration: 15, Expires: now.Add(-sec(5))}
)

func acq(d int, proposed string) Request {
	return Request{Action: ActionAcquire, Duration: &d, ProposedID: proposed}
}
func renewR(id string) Request   { return Request{Action: ActionRenew, LeaseID: id} }
func releaseR(id string) Request { return Request{Action: ActionRelease, LeaseID: id} }
func changeR(id, proposed string) Request {
	return Request{Action: ActionChange, LeaseID: id, ProposedID: proposed}
}
func breakR(p *int) Request { return Request{Action: ActionBreak, BreakPeriod: p} }

const newID = "<new>" // want: a freshly generated ID

type cell struct {
	name string
	kind Kind
	from Lease
	req  Request
	// failure
	code string
	// success
	status    int
	state     string // effective state at now
	duration  string // effective duration at now
	id        string // stored ID after the action (newID: generated)
	leaseID   string // Result.LeaseID (newID: same as stored)
	leaseTime *int
	expires   time.Time // stored Expires, checked when non-zero
	breakAt   time.Time // stored BreakAt, checked when non-zero
}

// TestApplyTable covers every cell of the action × state table of Lease Blob
// (https://learn.microsoft.com/en-us/rest/api/storageservices/lease-blob,
// "Outcomes of lease operations on blobs by lease state"), with the container
// and file variants.
func TestApplyTable(t *testing.T) {
	cells := []cell{
		// acquire, no proposed ID
		{name: "acquire/available", from: available, req: acq(-1, ""), status: 201, state: StateLeased, duration: DurationInfinite, id: newID, leaseID: newID},
		{name: "acquire/leased", from: leasedInf, req: acq(-1, ""), code: azerr.LeaseAlreadyPresent},
		{name: "acquire/leased fixed", from: leasedFixed, req: acq(-1, ""), code: azerr.LeaseAlreadyPresent},
		{name: "acquire/breaking", from: breakingA, req: acq(-1, ""), code: azerr.LeaseAlreadyPresent},
		{name: "acquire/broken", from: brokenA, req: acq(15, ""), status: 201, state: StateLeased, duration: DurationFixed, id: newID, leaseID: newID, expires: now.Add(sec(15))},
		{name: "acquire/broken lazily", from: brokenLazy, req: acq(15, ""), status: 201, state: StateLeased, duration: DurationFixed, id: newID, leaseID: newID},
		{name: "acquire/expired", from: expiredA, req: acq(60, ""), status: 201, state: StateLeased, duration: DurationFixed, id: newID, leaseID: newID, expires: now.Add(sec(60))},
		// acquire, proposed A (the current ID)
		{name: "acquire A/available", from: available, req: acq(-1, idA), status: 201, state: StateLeased, duration: DurationInfinite, id: idA, leaseID: idA},
		{name: "acquire A/leased infinite->15s", from: leasedInf, req: acq(15, idA), status: 201, state: StateLeased, duration: DurationFixed, id: idA, leaseID: idA, expires: now.Add(sec(15))},
		{name: "acquire A/leased fixed->infinite", from: leasedFixed, req: acq(-1, idA), status: 201, state: StateLeased, duration: DurationInfinite, id: idA, leaseID: idA},
		{name: "acquire A/leased fixed restarts clock", from: leasedFixed, req: acq(30, idA), status: 201, state: StateLeased, duration: DurationFixed, id: idA, leaseID: idA, expires: now.Add(sec(30))},
		{name: "acquire A/breaking", from: breakingA, req: acq(-1, idA), code: azerr.LeaseIsBreakingAndCannotBeAcquired},
		{name: "acquire A/broken", from: brokenA, req: acq(-1, idA), status: 201, state: StateLeased, duration: DurationInfinite, id: idA, leaseID: idA},
		{name: "acquire A/expired", from: expiredA, req: acq(-1, idA), status: 201, state: StateLeased, duration: DurationInfinite, id: idA, leaseID: idA},
		{name: "acquire A braces/leased", from: leasedInf, req: acq(-1, "{11111111-1111-4111-8111-111111111111}"), status: 201, state: StateLeased, duration: DurationInfinite, id: idA, leaseID: idA},
		// acquire, proposed B
		{name: "acquire B/available", from: available, req: acq(-1, idB), status: 201, state: StateLeased, duration: DurationInfinite, id: idB, leaseID: idB},
		{name: "acquire B/leased", from: leasedInf, req: acq(-1, idB), code: azerr.LeaseAlreadyPresent},
		{name: "acquire B/breaking", from: breakingA, req: acq(-1, idB), code: azerr.LeaseAlreadyPresent},
		{name: "acquire B/broken", from: brokenA, req: acq(-1, idB), status: 201, state: StateLeased, duration: DurationInfinite, id: idB, leaseID: idB},
		{name: "acquire B/expired", from: expiredA, req: acq(-1, idB), status: 201, state: StateLeased, duration: DurationInfinite, id: idB, leaseID: idB},
		// renew with A
		{name: "renew A/available", from: available, req: renewR(idA), code: azerr.LeaseIDMismatchWithLeaseOperation},
		{name: "renew A/leased infinite", from: leasedInf, req: renewR(idA), status: 200, state: StateLeased, duration: DurationInfinite, id: idA, leaseID: idA},
		{name: "renew A/leased fixed restarts clock", from: leasedFixed, req: renewR(idA), status: 200, state: StateLeased, duration: DurationFixed, id: idA, leaseID: idA, expires: now.Add(sec(30))},
		{name: "renew A/breaking", from: breakingA, req: renewR(idA), code: azerr.LeaseIsBrokenAndCannotBeRenewed},
		{name: "renew A/broken", from: brokenA, req: renewR(idA), code: azerr.LeaseIsBrokenAndCannotBeRenewed},
		{name: "renew A/broken lazily", from: brokenLazy, req: renewR(idA), code: azerr.LeaseIsBrokenAndCannotBeRenewed},
		{name: "renew A/expired keeps duration", from: expiredA, req: renewR(idA), status: 200, state: StateLeased, duration: DurationFixed, id: idA, leaseID: idA, expires: now.Add(sec(15))},
		{name: "renew A/expired then written", from: OnWrite(expiredA, now), req: renewR(idA), code: azerr.LeaseIDMismatchWithLeaseOperation},
		// renew with B
		{name: "renew B/available", from: available, req: renewR(idB), code: azerr.LeaseIDMismatchWithLeaseOperation},
		{name: "renew B/leased", from: leasedInf, req: renewR(idB), code: azerr.LeaseIDMismatchWithLeaseOperation},
		{name: "renew B/breaking", from: breakingA, req: renewR(idB), code: azerr.LeaseIDMismatchWithLeaseOperation},
		{name: "renew B/broken", from: brokenA, req: renewR(idB), code: azerr.LeaseIDMismatchWithLeaseOperation},
		{name: "renew B/expired", from: expiredA, req: renewR(idB), code: azerr.LeaseIDMismatchWithLeaseOperation},
		// change A -> C
		{name: "change A->C/available", from: available, req: changeR(idA, idC), code: azerr.LeaseNotPresentWithLeaseOperation},
		{name: "change A->C/leased keeps duration and expiry", from: leasedFixed, req: changeR(idA, idC), status: 200, state: StateLeased, duration: DurationFixed, id: idC, leaseID: idC, expires: leasedFixed.Expires},
		{name: "change A->C/leased infinite", from: leasedInf, req: changeR(idA, idC), status: 200, state: StateLeased, duration: DurationInfinite, id: idC, leaseID: idC},
		{name: "change A->C/breaking", from: breakingA, req: changeR(idA, idC), code: azerr.LeaseIsBreakingAndCannotBeChanged},
		{name: "change A->C/broken", from: brokenA, req: changeR(idA, idC), code: azerr.LeaseNotPresentWithLeaseOperation},
		{name: "change A->C/expired", from: expiredA, req: changeR(idA, idC), code: azerr.LeaseNotPresentWithLeaseOperation},
		// change B -> A (retry: proposed == current)
		{name: "change B->A/available", from: available, req: changeR(idB, idA), code: azerr.LeaseNotPresentWithLeaseOperation},
		{name: "change B->A/leased retry", from: leasedFixed, req: changeR(idB, idA), status: 200, state: StateLeased, duration: DurationFixed, id: idA, leaseID: idA, expires: leasedFixed.Expires},
		{name: "change B->A/breaking", from: breakingA, req: changeR(idB, idA), code: azerr.LeaseIDMismatchWithLeaseOperation},
		{name: "change B->A/broken", from: brokenA, req: changeR(idB, idA), code: azerr.LeaseNotPresentWithLeaseOperation},
		{name: "change B->A/expired", from: expiredA, req: changeR(idB, idA), code: azerr.LeaseNotPresentWithLeaseOperation},
		// change B -> C
		{name: "change B->C/available", from: available, req: changeR(idB, idC), code: azerr.LeaseNotPresentWithLeaseOperation},
		{name: "change B->C/leased", from: leasedInf, req: changeR(idB, idC), code: azerr.LeaseIDMismatchWithLeaseOperation},
		{name: "change B->C/breaking", from: breakingA, req: changeR(idB, idC), code: azerr.LeaseIDMismatchWithLeaseOperation},
		{name: "change B->C/broken", from: brokenA, req: changeR(idB, idC), code: azerr.LeaseNotPresentWithLeaseOperation},
		{name: "change B->C/expired", from: expiredA, req: changeR(idB, idC), code: azerr.LeaseNotPresentWithLeaseOperation},
		// release with A
		{name: "release A/available", from: available, req: releaseR(idA), code: azerr.LeaseIDMismatchWithLeaseOperation},
		{name: "release A/leased", from: leasedInf, req: releaseR(idA), status: 200, state: StateAvailable},
		{name: "release A/breaking", from: breakingA, req: releaseR(idA), status: 200, state: StateAvailable},
		{name: "release A/broken", from: brokenA, req: releaseR(idA), status: 200, state: StateAvailable},
		{name: "release A/expired", from: expiredA, req: releaseR(idA), status: 200, state: StateAvailable},
		// release with B
		{name: "release B/available", from: available, req: releaseR(idB), code: azerr.LeaseIDMismatchWithLeaseOperation},
		{name: "release B/leased", from: leasedInf, req: releaseR(idB), code: azerr.LeaseIDMismatchWithLeaseOperation},
		{name: "release B/breaking", from: breakingA, req: releaseR(idB), code: azerr.LeaseIDMismatchWithLeaseOperation},
		{name: "release B/broken", from: brokenA, req: releaseR(idB), code: azerr.LeaseIDMismatchWithLeaseOperation},
		{name: "release B/expired", from: expiredA, req: releaseR(idB), code: azerr.LeaseIDMismatchWithLeaseOperation},
		// break, period 0
		{name: "break 0/available", from: available, req: breakR(ip(0)), code: azerr.LeaseNotPresentWithLeaseOperation},
		{name: "break 0/leased infinite", from: leasedInf, req: breakR(ip(0)), status: 202, state: StateBroken, id: idA, leaseTime: ip(0)},
		{name: "break 0/leased fixed", from: leasedFixed, req: breakR(ip(0)), status: 202, state: StateBroken, id: idA, leaseTime: ip(0)},
		{name: "break 0/breaking", from: breakingA, req: breakR(ip(0)), status: 202, state: StateBroken, id: idA, leaseTime: ip(0)},
		{name: "break 0/broken", from: brokenA, req: breakR(ip(0)), status: 202, state: StateBroken, id: idA, leaseTime: ip(0)},
		{name: "break 0/expired", from: expiredA, req: breakR(ip(0)), status: 202, state: StateBroken, id: idA, leaseTime: ip(0)},
		// break, period p > 0
		{name: "break 5/available", from: available, req: breakR(ip(5)), code: azerr.LeaseNotPresentWithLeaseOperation},
		{name: "break 5/leased infinite", from: leasedInf, req: breakR(ip(5)), status: 202, state: StateBreaking, id: idA, leaseTime: ip(5), breakAt: now.Add(sec(5))},
		{name: "break 60/leased infinite", from: leasedInf, req: breakR(ip(60)), status: 202, state: StateBreaking, id: idA, leaseTime: ip(60), breakAt: now.Add(sec(60))},
		{name: "break 5/leased fixed (period < time left)", from: leasedFixed, req: breakR(ip(5)), status: 202, state: StateBreaking, id: idA, leaseTime: ip(5), breakAt: now.Add(sec(5))},
		{name: "break 50/leased fixed (time left < period)", from: leasedFixed, req: breakR(ip(50)), status: 202, state: StateBreaking, id: idA, leaseTime: ip(20), breakAt: leasedFixed.Expires},
		{name: "break 5/breaking earlier new time", from: breakingA, req: breakR(ip(5)), status: 202, state: StateBreaking, id: idA, leaseTime: ip(5), breakAt: now.Add(sec(5))},
		{name: "break 30/breaking keeps earlier time", from: breakingA, req: breakR(ip(30)), status: 202, state: StateBreaking, id: idA, leaseTime: ip(10), breakAt: breakingA.BreakAt},
		{name: "break 5/broken", from: brokenA, req: breakR(ip(5)), status: 202, state: StateBroken, id: idA, leaseTime: ip(0)},
		{name: "break 5/broken lazily", from: brokenLazy, req: breakR(ip(5)), status: 202, state: StateBroken, id: idA, leaseTime: ip(0)},
		{name: "break 5/expired", from: expiredA, req: breakR(ip(5)), status: 202, state: StateBroken, id: idA, leaseTime: ip(0)},
		// break, no period
		{name: "break/available", from: available, req: breakR(nil), code: azerr.LeaseNotPresentWithLeaseOperation},
		{name: "break/released", from: mustApply(t, leasedInf, releaseR(idA), Blob).Lease, req: breakR(nil), code: azerr.LeaseNotPresentWithLeaseOperation},
		{name: "break/leased infinite: broken at once", from: leasedInf, req: breakR(nil), status: 202, state: StateBroken, id: idA, leaseTime: ip(0)},
		{name: "break/leased fixed: until expiry", from: leasedFixed, req: breakR(nil), status: 202, state: StateBreaking, id: idA, leaseTime: ip(20), breakAt: leasedFixed.Expires},
		{name: "break/breaking stays", from: breakingA, req: breakR(nil), status: 202, state: StateBreaking, id: idA, leaseTime: ip(10), breakAt: breakingA.BreakAt},
		{name: "break/broken stays", from: brokenA, req: breakR(nil), status: 202, state: StateBroken, id: idA, leaseTime: ip(0)},
		{name: "break/expired", from: expiredA, req: breakR(nil), status: 202, state: StateBroken, id: idA, leaseTime: ip(0)},
		// lease time rounds up partial seconds
		{name: "break/leased fixed 2.5s left", from: Lease{ID: idA, State: StateLeased, Duration: 15, Expires: now.Add(2500 * time.Millisecond)}, req: breakR(nil), status: 202, state: StateBreaking, id: idA, leaseTime: ip(3)},

		// Container leases follow the blob table.
		{name: "container acquire/leased", kind: Container, from: leasedInf, req: acq(-1, ""), code: azerr.LeaseAlreadyPresent},
		{name: "container break 5/leased", kind: Container, from: leasedInf, req: breakR(ip(5)), status: 202, state: StateBreaking, id: idA, leaseTime: ip(5)},
		{name: "container renew/fixed", kind: Container, from: leasedFixed, req: renewR(idA), status: 200, state: StateLeased, duration: DurationFixed, id: idA, leaseID: idA, expires: now.Add(sec(30))},

		// File leases (Lease File,
		// https://learn.microsoft.com/en-us/rest/api/storageservices/lease-file):
		// infinite only, no renew, immediate break.
		{name: "file acquire/available", kind: File, from: available, req: acq(-1, ""), status: 201, state: StateLeased, duration: DurationInfinite, id: newID, leaseID: newID},
		{name: "file acquire 15", kind: File, from: available, req: acq(15, ""), code: azerr.InvalidHeaderValue},
		{name: "file acquire/leased", kind: File, from: leasedInf, req: acq(-1, idB), code: azerr.LeaseAlreadyPresent},
		{name: "file acquire A/leased", kind: File, from: leasedInf, req: acq(-1, idA), status: 201, state: StateLeased, duration: DurationInfinite, id: idA, leaseID: idA},
		{name: "file acquire/broken", kind: File, from: brokenA, req: acq(-1, idB), status: 201, state: StateLeased, duration: DurationInfinite, id: idB, leaseID: idB},
		{name: "file renew", kind: File, from: leasedInf, req: renewR(idA), code: azerr.InvalidHeaderValue},
		{name: "file change", kind: File, from: leasedInf, req: changeR(idA, idC), status: 200, state: StateLeased, duration: DurationInfinite, id: idC, leaseID: idC},
		{name: "file change wrong id", kind: File, from: leasedInf, req: changeR(idB, idC), code: azerr.LeaseIDMismatchWithLeaseOperation},
		{name: "file release", kind: File, from: leasedInf, req: releaseR(idA), status: 200, state: StateAvailable},
		{name: "file release wrong id", kind: File, from: leasedInf, req: releaseR(idB), code: azerr.LeaseIDMismatchWithLeaseOperation},
		{name: "file break immediate", kind: File, from: leasedInf, req: breakR(nil), status: 202, state: StateBroken, id: idA, leaseTime: ip(0)},
		{name: "file break ignores period", kind: File, from: leasedInf, req: breakR(ip(30)), status: 202, state: StateBroken, id: idA, leaseTime: ip(0)},
		{name: "file break/available", kind: File, from: available, req: breakR(nil), code: azerr.LeaseNotPresentWithLeaseOperation},
		{name: "file break/broken", kind: File, from: brokenA, req: breakR(nil), status: 202, state: StateBroken, id: idA, leaseTime: ip(0)},

		// Invalid requests reaching Apply directly.
		{name: "acquire 14", from: available, req: acq(14, ""), code: azerr.InvalidHeaderValue},
		{name: "acquire 61", from: available, req: acq(61, ""), code: azerr.InvalidHeaderValue},
		{name: "acquire no duration", from: available, req: Request{Action: ActionAcquire}, code: azerr.MissingRequiredHeader},
		{name: "acquire bad proposed", from: available, req: acq(-1, "invalid"), code: azerr.InvalidHeaderValue},
		{name: "break 61", from: leasedInf, req: breakR(ip(61)), code: azerr.InvalidHeaderValue},
		{name: "renew no id", from: leasedInf, req: renewR(""), code: azerr.MissingRequiredHeader},
		{name: "change no proposed", from: leasedInf, req: changeR(idA, ""), code: azerr.MissingRequiredHeader},
		{name: "bogus action", from: leasedInf, req: Request{Action: "steal"}, code: azerr.InvalidHeaderValue},
	}
	for _, c := range cells {
		t.Run(c.name, func(t *testing.T) {
			res, err := Apply(c.from, c.req, c.kind, now)
			if c.code != "" {
				if !azerr.Has(err, c.code) {
					t.Fatalf("err = %v, want %s", err, c.code)
				}
				e, _ := azerr.As(err)
				if e.Status != azerr.Status(c.code) {
					t.Fatalf("status = %d", e.Status)
				}
				if c.code != azerr.InvalidHeaderValue && c.code != azerr.MissingRequiredHeader && e.Status != http.StatusConflict {
					t.Fatalf("lease-action failure status = %d, want 409", e.Status)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if res.Status != c.status {
				t.Errorf("status = %d, want %d", res.Status, c.status)
			}
			eff := res.Lease.Effective(now)
			if eff.State != c.state || eff.Duration != c.duration {
				t.Errorf("effective = %+v, want state %q duration %q", eff, c.state, c.duration)
			}
			switch c.id {
			case newID:
				if _, ok := ParseID(res.Lease.ID); !ok || res.Lease.ID == idA {
					t.Errorf("id = %q, want a fresh GUID", res.Lease.ID)
				}
			default:
				if res.Lease.ID != c.id {
					t.Errorf("id = %q, want %q", res.Lease.ID, c.id)
				}
			}
			wantLeaseID := c.leaseID
			if wantLeaseID == newID {
				wantLeaseID = res.Lease.ID
			}
			if res.LeaseID != wantLeaseID {
				t.Errorf("LeaseID = %q, want %q", res.LeaseID, wantLeaseID)
			}
			if (res.LeaseTime == nil) != (c.leaseTime == nil) || res.LeaseTime != nil && *res.LeaseTime != *c.leaseTime {
				t.Errorf("LeaseTime = %v, want %v", deref(res.LeaseTime), deref(c.leaseTime))
			}
			if !c.expires.IsZero() && !res.Lease.Expires.Equal(c.expires) {
				t.Errorf("Expires = %v, want %v", res.Lease.Expires, c.expires)
			}
			if !c.breakAt.IsZero() && !res.Lease.BreakAt.Equal(c.breakAt) {
				t.Errorf("BreakAt = %v, want %v", res.Lease.BreakAt, c.breakAt)
			}
			if c.state == StateAvailable && res.Lease != (Lease{}) {
				t.Errorf("released lease = %+v, want zero", res.Lease)
			}
		})
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func mustApply(t *testing.T, l Lease, req Request, kind Kind) Result {
	t.Helper()
	res, err := Apply(l, req, kind, now)
	if err != nil {
		t.Fatalf("Apply(%+v): %v", req, err)
	}
	return res
}

// TestEffective is the x-ms-lease-status / x-ms-lease-state /
// x-ms-lease-duration table of Get Blob Properties
// (https://learn.microsoft.com/en-us/rest/api/storageservices/get-blob-properties).
func TestEffective(t *testing.T) {
	released := Lease{}
	cases := []struct {
		name string
		l    Lease
		want Effective
	}{
		{"never leased", available, Effective{StateAvailable, StatusUnlocked, ""}},
		{"released", released, Effective{StateAvailable, StatusUnlocked, ""}},
		{"infinite held", leasedInf, Effective{StateLeased, StatusLocked, DurationInfinite}},
		{"fixed held", leasedFixed, Effective{StateLeased, StatusLocked, DurationFixed}},
		{"breaking", breakingA, Effective{StateBreaking, StatusLocked, ""}},
		{"broken", brokenA, Effective{StateBroken, StatusUnlocked, ""}},
		{"broken: period elapsed", brokenLazy, Effective{StateBroken, StatusUnlocked, ""}},
		{"fixed past expiry", expiredA, Effective{StateExpired, StatusUnlocked, ""}},
		{"fixed exactly at expiry", Lease{ID: idA, State: StateLeased, Duration: 15, Expires: now}, Effective{StateExpired, StatusUnlocked, ""}},
		{"breaking exactly at break time", Lease{ID: idA, State: StateBreaking, BreakAt: now}, Effective{StateBroken, StatusUnlocked, ""}},
		{"unknown stored state", Lease{ID: idA, State: "weird"}, Effective{StateAvailable, StatusUnlocked, ""}},
	}
	for _, c := range cases {
		if got := c.l.Effective(now); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestTimeline drives expiry and breaking→broken purely through now.
func TestTimeline(t *testing.T) {
	t0 := now
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

	res := mustApply(t, Lease{}, acq(15, idA), Blob)
	l := res.Lease
	for _, c := range []struct {
		s    float64
		want string
	}{{0, StateLeased}, {14.999, StateLeased}, {15, StateExpired}, {1000, StateExpired}} {
		if got := l.Effective(at(c.s)).State; got != c.want {
			t.Errorf("fixed lease at +%vs: %s, want %s", c.s, got, c.want)
		}
	}
	// Writes are gated until expiry, free afterwards.
	if err := CheckWrite(l, "", Blob, at(10)); !azerr.Has(err, azerr.LeaseIDMissing) {
		t.Errorf("write at +10s: %v", err)
	}
	if err := CheckWrite(l, "", Blob, at(16)); err != nil {
		t.Errorf("write at +16s: %v", err)
	}
	// Renew after expiry without a write keeps the 15 s duration.
	r, err := Apply(l, renewR(idA), Blob, at(100))
	if err != nil || !r.Lease.Expires.Equal(at(115)) || r.Lease.Duration != 15 {
		t.Fatalf("renew after expiry: %+v %v", r.Lease, err)
	}
	// A read in between does not matter; a write does.
	if OnWrite(l, at(10)) != l {
		t.Errorf("OnWrite of an active lease changed it")
	}
	written := OnWrite(l, at(20))
	if written != (Lease{}) {
		t.Errorf("OnWrite of an expired lease = %+v, want available", written)
	}
	if _, err := Apply(written, renewR(idA), Blob, at(21)); !azerr.Has(err, azerr.LeaseIDMismatchWithLeaseOperation) {
		t.Errorf("renew after write: %v", err)
	}

	// Break with a period: locked until the break time, then broken.
	inf := mustApply(t, Lease{}, acq(-1, idB), Blob).Lease
	br, err := Apply(inf, breakR(ip(10)), Blob, at(0))
	if err != nil || *br.LeaseTime != 10 {
		t.Fatalf("break: %+v %v", br, err)
	}
	for _, c := range []struct {
		s      float64
		state  string
		status string
	}{{0, StateBreaking, StatusLocked}, {9.9, StateBreaking, StatusLocked}, {10, StateBroken, StatusUnlocked}, {500, StateBroken, StatusUnlocked}} {
		eff := br.Lease.Effective(at(c.s))
		if eff.State != c.state || eff.Status != c.status {
			t.Errorf("breaking at +%vs: %+v", c.s, eff)
		}
	}
	// A second break with remaining time reports the time left.
	br2, err := Apply(br.Lease, breakR(nil), Blob, at(4))
	if err != nil || *br2.LeaseTime != 6 {
		t.Fatalf("break again: %+v %v", br2, err)
	}
	// Acquire is refused while breaking, allowed once broken.
	if _, err := Apply(br.Lease, acq(-1, ""), Blob, at(5)); !azerr.Has(err, azerr.LeaseAlreadyPresent) {
		t.Errorf("acquire while breaking: %v", err)
	}
	if _, err := Apply(br.Lease, acq(-1, ""), Blob, at(10)); err != nil {
		t.Errorf("acquire once broken: %v", err)
	}
	// A broken lease loses its ID on write.
	if got := OnWrite(br.Lease, at(11)); got != (Lease{}) {
		t.Errorf("OnWrite of broken = %+v", got)
	}
	if got := OnWrite(br.Lease, at(5)); got != br.Lease {
		t.Errorf("OnWrite of breaking = %+v", got)
	}
}

// TestAcquireIdempotency: the same proposed ID twice succeeds, no proposed
// ID twice fails.
func TestAcquireIdempotency(t *testing.T) {
	l := mustApply(t, Lease{}, acq(-1, idA), Blob).Lease
	if _, err := Apply(l, acq(-1, idA), Blob, now); err != nil {
		t.Errorf("repeat acquire with the same proposed ID: %v", err)
	}
	l2 := mustApply(t, Lease{}, acq(-1, ""), Blob).Lease
	if _, err := Apply(l2, acq(-1, ""), Blob, now); !azerr.Has(err, azerr.LeaseAlreadyPresent) {
		t.Errorf("repeat acquire without proposed ID: %v", err)
	}
	// Release twice.
	rel := mustApply(t, l, releaseR(idA), Blob).Lease
	if _, err := Apply(rel, releaseR(idA), Blob, now); !azerr.Has(err, azerr.LeaseIDMismatchWithLeaseOperation) {
		t.Errorf("second release: %v", err)
	}
}

// TestCheck covers which operations a lease gates and with which codes
// (Lease Blob: the outcomes of blob operations in each lease state; Blob
// service error codes),
// and the container and file variants.
func TestCheck(t *testing.T) {
	codes := map[Kind][2]string{
		Blob:      {azerr.LeaseIDMismatchWithBlobOperation, azerr.LeaseNotPresentWithBlobOperation},
		Container: {azerr.LeaseIDMismatchWithContainerOperation, azerr.LeaseNotPresentWithContainerOperation},
		File:      {azerr.LeaseIDMismatchWithFileOperation, azerr.LeaseNotPresentWithFileOperation},
	}
	states := []struct {
		name   string
		l      Lease
		active bool
	}{
		{"available", available, false},
		{"leased", leasedInf, true},
		{"leased fixed", leasedFixed, true},
		{"breaking", breakingA, true},
		{"expired", expiredA, false},
		{"broken", brokenA, false},
		{"broken lazily", brokenLazy, false},
	}
	for kind, kc := range codes {
		mismatch, notPresent := kc[0], kc[1]
		for _, s := range states {
			for _, hdr := range []struct {
				name, v string
			}{{"none", ""}, {"correct", idA}, {"correct braces upper", "{11111111-1111-4111-8111-111111111111}"}, {"wrong", idB}, {"not a guid", "nope"}} {
				var wantW, wantR string
				switch {
				case s.active && hdr.v == "":
					wantW = azerr.LeaseIDMissing
				case s.active && (hdr.v == idA || hdr.name == "correct braces upper"):
				case s.active:
					wantW, wantR = mismatch, mismatch
				case hdr.v != "":
					wantW, wantR = notPresent, notPresent
				}
				name := kind.String() + "/" + s.name + "/" + hdr.name
				check := func(op string, err error, want string) {
					t.Helper()
					if want == "" {
						if err != nil {
							t.Errorf("%s %s: %v, want ok", op, name, err)
						}
						return
					}
					if !azerr.Has(err, want) {
						t.Errorf("%s %s: %v, want %s", op, name, err, want)
					} else if e, _ := azerr.As(err); e.Status != http.StatusPreconditionFailed {
						t.Errorf("%s %s: status %d, want 412", op, name, e.Status)
					}
				}
				check("write", CheckWrite(s.l, hdr.v, kind, now), wantW)
				check("read", CheckRead(s.l, hdr.v, kind, now), wantR)
			}
		}
	}
}

func TestParseRequest(t *testing.T) {
	h := func(kv ...string) http.Header {
		hh := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			hh.Set(kv[i], kv[i+1])
		}
		return hh
	}
	cases := []struct {
		name   string
		kind   Kind
		h      http.Header
		code   string
		header string // HeaderName detail
		want   Request
	}{
		{name: "no action", h: h(), code: azerr.MissingRequiredHeader, header: HeaderAction},
		{name: "bad action", h: h(HeaderAction, "steal"), code: azerr.InvalidHeaderValue, header: HeaderAction},
		{name: "acquire", h: h(HeaderAction, "acquire", HeaderDuration, "-1"), want: acq(-1, "")},
		{name: "acquire mixed case", h: h(HeaderAction, "Acquire", HeaderDuration, "15"), want: acq(15, "")},
		{name: "acquire 60 proposed", h: h(HeaderAction, "acquire", HeaderDuration, "60", HeaderProposedID, "{11111111-1111-4111-8111-111111111111}"), want: acq(60, idA)},
		{name: "acquire N-form id", h: h(HeaderAction, "acquire", HeaderDuration, "60", HeaderProposedID, "11111111111141118111111111111111"), want: acq(60, idA)},
		{name: "acquire no duration", h: h(HeaderAction, "acquire"), code: azerr.MissingRequiredHeader, header: HeaderDuration},
		{name: "acquire 14", h: h(HeaderAction, "acquire", HeaderDuration, "14"), code: azerr.InvalidHeaderValue, header: HeaderDuration},
		{name: "acquire 61", h: h(HeaderAction, "acquire", HeaderDuration, "61"), code: azerr.InvalidHeaderValue, header: HeaderDuration},
		{name: "acquire 0", h: h(HeaderAction, "acquire", HeaderDuration, "0"), code: azerr.InvalidHeaderValue, header: HeaderDuration},
		{name: "acquire -2", h: h(HeaderAction, "acquire", HeaderDuration, "-2"), code: azerr.InvalidHeaderValue, header: HeaderDuration},
		{name: "acquire abc", h: h(HeaderAction, "acquire", HeaderDuration, "abc"), code: azerr.InvalidHeaderValue, header: HeaderDuration},
		{name: "acquire bad proposed", h: h(HeaderAction, "acquire", HeaderDuration, "-1", HeaderProposedID, "invalid"), code: azerr.InvalidHeaderValue, header: HeaderProposedID},
		{name: "renew", h: h(HeaderAction, "renew", HeaderLeaseID, idA), want: renewR(idA)},
		{name: "renew no id", h: h(HeaderAction, "renew"), code: azerr.MissingRequiredHeader, header: HeaderLeaseID},
		{name: "renew bad id", h: h(HeaderAction, "renew", HeaderLeaseID, "x"), code: azerr.InvalidHeaderValue, header: HeaderLeaseID},
		{name: "change", h: h(HeaderAction, "change", HeaderLeaseID, idA, HeaderProposedID, idB), want: changeR(idA, idB)},
		{name: "change no id", h: h(HeaderAction, "change", HeaderProposedID, idB), code: azerr.MissingRequiredHeader, header: HeaderLeaseID},
		{name: "change no proposed", h: h(HeaderAction, "change", HeaderLeaseID, idA), code: azerr.MissingRequiredHeader, header: HeaderProposedID},
		{name: "change bad proposed", h: h(HeaderAction, "change", HeaderLeaseID, idA, HeaderProposedID, "invalid"), code: azerr.InvalidHeaderValue, header: HeaderProposedID},
		{name: "release", h: h(HeaderAction, "release", HeaderLeaseID, idA, HeaderDuration, "junk"), want: releaseR(idA)},
		{name: "release no id", h: h(HeaderAction, "release"), code: azerr.MissingRequiredHeader, header: HeaderLeaseID},
		{name: "break", h: h(HeaderAction, "break", HeaderLeaseID, "ignored"), want: breakR(nil)},
		{name: "break 0", h: h(HeaderAction, "break", HeaderBreakPeriod, "0"), want: breakR(ip(0))},
		{name: "break 60", h: h(HeaderAction, "break", HeaderBreakPeriod, "60"), want: breakR(ip(60))},
		{name: "break 61", h: h(HeaderAction, "break", HeaderBreakPeriod, "61"), code: azerr.InvalidHeaderValue, header: HeaderBreakPeriod},
		{name: "break -1", h: h(HeaderAction, "break", HeaderBreakPeriod, "-1"), code: azerr.InvalidHeaderValue, header: HeaderBreakPeriod},
		{name: "break x", h: h(HeaderAction, "break", HeaderBreakPeriod, "x"), code: azerr.InvalidHeaderValue, header: HeaderBreakPeriod},
		{name: "container acquire 30", kind: Container, h: h(HeaderAction, "acquire", HeaderDuration, "30"), want: acq(30, "")},
		{name: "file acquire -1", kind: File, h: h(HeaderAction, "acquire", HeaderDuration, "-1"), want: acq(-1, "")},
		{name: "file acquire 30", kind: File, h: h(HeaderAction, "acquire", HeaderDuration, "30"), code: azerr.InvalidHeaderValue, header: HeaderDuration},
		{name: "file renew", kind: File, h: h(HeaderAction, "renew", HeaderLeaseID, idA), code: azerr.InvalidHeaderValue, header: HeaderAction},
		{name: "file break ignores period", kind: File, h: h(HeaderAction, "break", HeaderBreakPeriod, "99"), want: breakR(nil)},
	}
	for _, c := range cases {
		got, err := ParseRequest(c.h, c.kind)
		if c.code != "" {
			e, ok := azerr.As(err)
			if !ok || e.Code != c.code || e.Status != 400 {
				t.Errorf("%s: err %v, want 400 %s", c.name, err, c.code)
				continue
			}
			if len(e.Details) == 0 || e.Details[0] != (azerr.Detail{Name: "HeaderName", Value: c.header}) {
				t.Errorf("%s: details %+v, want HeaderName %s", c.name, e.Details, c.header)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.Action != c.want.Action || got.LeaseID != c.want.LeaseID || got.ProposedID != c.want.ProposedID ||
			deref(got.Duration) != deref(c.want.Duration) || deref(got.BreakPeriod) != deref(c.want.BreakPeriod) {
			t.Errorf("%s: %+v (dur %v, brk %v), want %+v", c.name, got, deref(got.Duration), deref(got.BreakPeriod), c.want)
		}
	}
}

func TestID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := NewID()
		c, ok := ParseID(id)
		if !ok || c != id || len(id) != 36 || id[14] != '4' || seen[id] {
			t.Fatalf("bad NewID %q", id)
		}
		seen[id] = true
	}
	for in, want := range map[string]string{
		idA:                                      idA,
		"11111111-1111-4111-8111-11111111111A":   "11111111-1111-4111-8111-11111111111a",
		"{11111111-1111-4111-8111-111111111111}": idA,
		"(11111111-1111-4111-8111-111111111111)": idA,
		"11111111111141118111111111111111":       idA,
		" " + idA + " ":                          idA,
		"":                                       "",
		"invalid":                                "",
		"{11111111-1111-4111-8111-111111111111)": "",
		"11111111-1111-4111-8111_111111111111":   "",
		"1111111g-1111-4111-8111-111111111111":   "",
	} {
		got, ok := ParseID(in)
		if got != want || ok != (want != "") {
			t.Errorf("ParseID(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// TestEncoding: a stored Lease survives JSON and gob unchanged.
func TestEncoding(t *testing.T) {
	for _, l := range []Lease{
		{},
		mustApply(t, Lease{}, acq(30, idA), Blob).Lease,
		mustApply(t, leasedInf, breakR(ip(10)), Blob).Lease,
		mustApply(t, leasedInf, breakR(nil), Blob).Lease,
	} {
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		var j Lease
		if err := json.Unmarshal(b, &j); err != nil || j != l {
			t.Errorf("json round trip %s: %+v, want %+v (%v)", b, j, l, err)
		}
		var buf bytes.Buffer
		var g Lease
		if err := gob.NewEncoder(&buf).Encode(l); err != nil {
			t.Fatal(err)
		}
		if err := gob.NewDecoder(&buf).Decode(&g); err != nil || !g.Expires.Equal(l.Expires) || !g.BreakAt.Equal(l.BreakAt) || g.ID != l.ID || g.State != l.State || g.Duration != l.Duration {
			t.Errorf("gob round trip: %+v, want %+v (%v)", g, l, err)
		}
	}
	if b, _ := json.Marshal(Lease{}); string(b) != "{}" {
		t.Errorf("zero lease encodes as %s", b)
	}
}

// TestApplyStripsMonotonic: stored times carry no monotonic reading, so
// a stored lease compares equal to its decoded copy.
func TestApplyStripsMonotonic(t *testing.T) {
	res, err := Apply(Lease{}, acq(15, ""), Blob, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if res.Lease.Expires != res.Lease.Expires.Round(0) || res.Lease.Expires.Location() != time.UTC {
		t.Errorf("Expires has a monotonic reading or non-UTC location")
	}
}
