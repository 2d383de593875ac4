package server

import (
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/wire"
	"github.com/google/uuid"
)

// The request id is a version 4 UUID in its text form: the bytes given,
// with the version and variant bits set, as the uuid package writes them.
func TestRequestIDIsUUIDv4(t *testing.T) {
	u := [16]byte{0xde, 0xad, 0xbe, 0xef, 0x01, 0x23, 0xff, 0x67, 0xff, 0xab, 0xcd, 0xef, 0x10, 0x32, 0x54, 0x76}
	want := uuid.UUID(u)
	want[6] = want[6]&0x0f | 0x40
	want[8] = want[8]&0x3f | 0x80
	if got := wire.FormatUUID(&u, 4); got != want.String() || got != "deadbeef-0123-4f67-bfab-cdef10325476" {
		t.Fatalf("FormatUUID = %q, want %q", got, want.String())
	}
	seen := map[string]bool{}
	for range 100 {
		id := newRequestID()
		p, err := uuid.Parse(id)
		if err != nil || p.Version() != 4 || p.Variant() != uuid.RFC4122 || len(id) != 36 {
			t.Fatalf("newRequestID() = %q: %v, version %d, variant %v", id, err, p.Version(), p.Variant())
		}
		if seen[id] {
			t.Fatalf("newRequestID() repeated %q", id)
		}
		seen[id] = true
	}
}

// httpDate formats each second once and still follows the clock, which
// clock control may move either way.
func TestHTTPDateFollowsTheSecond(t *testing.T) {
	base := time.Date(2026, 11, 29, 22, 30, 5, 0, time.UTC)
	for _, at := range []time.Time{base, base.Add(999 * time.Millisecond), base.Add(time.Second), base.Add(-time.Hour), base.Add(24 * time.Hour), base} {
		if got, want := httpDate(at), wire.FormatHTTPDate(at); got != want {
			t.Fatalf("httpDate(%v) = %q, want %q", at, got, want)
		}
	}
}
