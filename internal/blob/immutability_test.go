package blob

import (
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// TestPolicyStateMachine: an Unlocked policy may be shortened, extended,
// locked and deleted; a Locked one only extended (the same date is no
// change), never unlocked nor deleted; an until-date must be in the
// future ("Set Blob Immutability Policy", "Delete Blob Immutability
// Policy").
func TestPolicyStateMachine(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	code := func(err error) string {
		if err == nil {
			return ""
		}
		e, ok := azerr.As(err)
		if !ok {
			t.Fatalf("not an azerr: %v", err)
		}
		return e.Code
	}
	if _, err := nextPolicy(nil, now, PolicyUnlocked, now); code(err) != azerr.InvalidHeaderValue {
		t.Fatalf("until now: %v", err)
	}
	p, err := nextPolicy(nil, now.Add(2*time.Hour), PolicyUnlocked, now)
	if err != nil || p.Mode != PolicyUnlocked {
		t.Fatalf("set: %v %v", p, err)
	}
	if p, err = nextPolicy(p, now.Add(time.Hour), PolicyUnlocked, now); err != nil || !p.Until.Equal(now.Add(time.Hour)) {
		t.Fatalf("shorten unlocked: %v %v", p, err)
	}
	if err := deletePolicy(p); err != nil {
		t.Fatalf("delete unlocked: %v", err)
	}
	if p, err = nextPolicy(p, now.Add(time.Hour), PolicyLocked, now); err != nil || p.Mode != PolicyLocked {
		t.Fatalf("lock: %v %v", p, err)
	}
	for _, c := range []struct {
		until time.Time
		mode  string
		want  string
	}{
		{now.Add(59 * time.Minute), PolicyLocked, azerr.BlobImmutableDueToPolicy}, // shorten
		{now.Add(2 * time.Hour), PolicyUnlocked, azerr.BlobImmutableDueToPolicy},  // unlock
		{now.Add(time.Hour), PolicyLocked, ""},                                    // same date
		{now.Add(3 * time.Hour), PolicyLocked, ""},                                // extend
	} {
		q, err := nextPolicy(p, c.until, c.mode, now)
		if code(err) != c.want {
			t.Fatalf("locked to %v %s: %v, want %q", c.until, c.mode, err, c.want)
		}
		if err == nil && (q.Mode != PolicyLocked || !q.Until.Equal(c.until)) {
			t.Fatalf("locked to %v: %v", c.until, q)
		}
	}
	if code(deletePolicy(p)) != azerr.ImmutabilityPolicyDeleteOnLockedPolicy {
		t.Fatal("a locked policy was deleted")
	}
	// Expiry on the clock: protection against deletion ends; writes of
	// metadata stay refused while the version has a policy.
	b := &blobRec{Imm: p}
	if code(b.deleteProtected(now.Add(59*time.Minute))) != azerr.BlobImmutableDueToPolicy {
		t.Fatal("unexpired policy did not protect")
	}
	if err := b.deleteProtected(now.Add(time.Hour)); err != nil {
		t.Fatalf("expired policy protects: %v", err)
	}
	if code(b.writeProtected()) != azerr.BlobImmutableDueToPolicy {
		t.Fatal("expired policy lets metadata be written")
	}
	b.Hold = true
	if code(b.deleteProtected(now.Add(time.Hour))) != azerr.BlobImmutableDueToLegalHold {
		t.Fatal("legal hold did not protect")
	}
	b = &blobRec{}
	if b.deleteProtected(now) != nil || b.writeProtected() != nil {
		t.Fatal("a blob without policy or hold is protected")
	}
}
