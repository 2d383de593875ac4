package lease

import (
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// FuzzApply runs random sequences of lease actions, writes and reads at
// random (possibly non-monotonic) times and checks that nothing panics and
// that every reachable state satisfies the invariants.
func FuzzApply(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{2, 0, 16, 0, 5, 3, 4, 70, 1, 1, 30, 200, 3, 0, 0, 0})
	f.Add([]byte{1, 0, 1, 20, 4, 1, 9, 99, 0, 2, 3, 4, 1, 0, 0, 0, 2, 1, 1})
	ids := []string{"", idA, idB, idC, "{" + idA + "}", "nope"}
	durations := []int{-1, 15, 16, 30, 59, 60, 0, 14, 61, -2}
	periods := []int{0, 1, 5, 15, 30, 60, -1, 61}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		kind := Kind(data[0] % 3)
		data = data[1:]
		l := Lease{}
		clock := now
		monotonic := true // the 60 s cap on x-ms-lease-time holds only if time never went back
		for len(data) >= 4 {
			op, a, b, dt := data[0], data[1], data[2], data[3]
			data = data[4:]
			// Mostly forward, sometimes backward, in sub-second steps.
			step := time.Duration(int(dt)-32) * 250 * time.Millisecond
			clock = clock.Add(step)
			monotonic = monotonic && step >= 0
			var req Request
			switch op % 8 {
			case 0:
				d := durations[int(a)%len(durations)]
				req = Request{Action: ActionAcquire, Duration: &d, ProposedID: ids[int(b)%len(ids)]}
			case 1:
				req = Request{Action: ActionRenew, LeaseID: ids[int(a)%len(ids)]}
			case 2:
				req = Request{Action: ActionChange, LeaseID: ids[int(a)%len(ids)], ProposedID: ids[int(b)%len(ids)]}
			case 3:
				req = Request{Action: ActionRelease, LeaseID: ids[int(a)%len(ids)]}
			case 4:
				req = Request{Action: ActionBreak}
				if b%3 != 0 {
					p := periods[int(a)%len(periods)]
					req.BreakPeriod = &p
				}
			case 5:
				if CheckWrite(l, ids[int(a)%len(ids)], kind, clock) == nil {
					l = OnWrite(l, clock)
				}
				checkInvariants(t, l, kind, clock)
				continue
			case 6:
				err := CheckRead(l, ids[int(a)%len(ids)], kind, clock)
				checkErr(t, err, 412)
				continue
			case 7:
				req = Request{Action: string([]byte{a, b})}
			}
			before := l.Effective(clock)
			res, err := Apply(l, req, kind, clock)
			if err != nil {
				checkErr(t, err, 0)
				continue
			}
			l = res.Lease
			checkInvariants(t, l, kind, clock)
			after := l.Effective(clock)
			switch req.Action {
			case ActionAcquire:
				if res.Status != 201 || after.State != StateLeased || res.LeaseID != l.ID {
					t.Fatalf("acquire from %+v: %+v", before, res)
				}
			case ActionRenew:
				if res.Status != 200 || after.State != StateLeased || res.LeaseID != l.ID {
					t.Fatalf("renew from %+v: %+v", before, res)
				}
			case ActionChange:
				if res.Status != 200 || after.State != StateLeased || res.LeaseID != l.ID {
					t.Fatalf("change from %+v: %+v", before, res)
				}
			case ActionRelease:
				if res.Status != 200 || l != (Lease{}) {
					t.Fatalf("release from %+v: %+v", before, res)
				}
			case ActionBreak:
				if res.Status != 202 || res.LeaseTime == nil || *res.LeaseTime < 0 || monotonic && *res.LeaseTime > 60 ||
					(*res.LeaseTime == 0) != (after.State == StateBroken) ||
					after.State != StateBroken && after.State != StateBreaking {
					t.Fatalf("break from %+v: %+v -> %+v", before, res, after)
				}
			}
		}
	})
}

func checkErr(t *testing.T, err error, status int) {
	t.Helper()
	if err == nil {
		return
	}
	e, ok := azerr.As(err)
	if !ok {
		t.Fatalf("error %v is not an *azerr.Error", err)
	}
	if status != 0 && e.Status != status || status == 0 && e.Status != 400 && e.Status != 409 {
		t.Fatalf("unexpected status %d for %v", e.Status, err)
	}
}

func checkInvariants(t *testing.T, l Lease, kind Kind, now time.Time) {
	t.Helper()
	for _, at := range []time.Time{now, now.Add(-time.Hour), now.Add(30 * time.Second), now.Add(time.Hour)} {
		eff := l.Effective(at)
		switch eff.State {
		case StateLeased:
			if l.ID == "" || eff.Status != StatusLocked || eff.Duration == "" {
				t.Fatalf("leased invariant: %+v %+v", l, eff)
			}
			if l.Duration != Infinite && (l.Duration < MinDuration || l.Duration > MaxDuration) {
				t.Fatalf("leased with duration %d", l.Duration)
			}
		case StateBreaking:
			if l.ID == "" || eff.Status != StatusLocked || eff.Duration != "" {
				t.Fatalf("breaking invariant: %+v %+v", l, eff)
			}
		case StateAvailable, StateExpired, StateBroken:
			if eff.Status != StatusUnlocked || eff.Duration != "" {
				t.Fatalf("unlocked invariant: %+v %+v", l, eff)
			}
		default:
			t.Fatalf("unknown state %q", eff.State)
		}
		if eff.State == StateAvailable && l.ID != "" {
			t.Fatalf("available with an ID: %+v", l)
		}
		if kind == File && (eff.State == StateBreaking || eff.State == StateExpired || eff.State == StateLeased && l.Duration != Infinite) {
			t.Fatalf("file lease in state %s: %+v", eff.State, l)
		}
		if l.ID != "" {
			if c, ok := ParseID(l.ID); !ok || c != l.ID {
				t.Fatalf("stored ID %q not canonical", l.ID)
			}
		}
	}
}
