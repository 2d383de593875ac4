package queue

import (
	"bytes"
	"encoding/base64"
	"math"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/google/uuid"
)

func TestReceiptRoundTrip(t *testing.T) {
	ids := []uuid.UUID{uuid.Nil, uuid.MustParse("0b1a9c3e-5f2d-4c6b-8a7e-9d0f1e2c3b4a"), uuid.Max}
	gens := []uint64{0, 1, 2, 255, 256, 1 << 32, math.MaxUint64}
	seen := map[string]bool{}
	for _, id := range ids {
		for _, g := range gens {
			r := PopReceipt{ID: id, Gen: g}
			s := r.String()
			if seen[s] {
				t.Fatalf("receipt %q issued twice", s)
			}
			seen[s] = true
			if strings.ContainsAny(s, "+/=") {
				t.Errorf("receipt %q is not URL-safe", s)
			}
			got, ok := ParsePopReceipt(s)
			if !ok || got != r {
				t.Errorf("ParsePopReceipt(%q) = %v, %v; want %v", s, got, ok, r)
			}
		}
	}
}

func TestReceiptMalformed(t *testing.T) {
	valid := PopReceipt{ID: uuid.MustParse("0b1a9c3e-5f2d-4c6b-8a7e-9d0f1e2c3b4a"), Gen: 7}.String()
	raw, _ := base64.RawURLEncoding.DecodeString(valid)
	badVersion := append([]byte{2}, raw[1:]...)
	// The last character carries 4 unused bits (25 bytes need 33⅓
	// characters): flipping the lowest one decodes to the same bytes.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	i := strings.IndexByte(alphabet, valid[len(valid)-1])
	nonCanonical := valid[:len(valid)-1] + string(alphabet[i^1])
	if b, err := base64.RawURLEncoding.DecodeString(nonCanonical); err != nil || string(b) != string(raw) {
		t.Fatalf("test setup: %q does not decode to the same bytes", nonCanonical)
	}
	tests := []struct {
		name, in string
	}{
		{"empty", ""},
		{"garbage", "not a receipt"},
		{"azure style", "AgAAAAMAAAAAAAAAYUMWAIg+1gE="},
		{"padded", valid + "="},
		{"std alphabet", base64.StdEncoding.EncodeToString(raw)},
		{"short", valid[:len(valid)-2]},
		{"long", valid + "AA"},
		{"bad version", base64.RawURLEncoding.EncodeToString(badVersion)},
		{"non-canonical", nonCanonical},
		{"space", valid[:5] + " " + valid[6:]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.in == valid {
				t.Skip("mutation produced the valid receipt")
			}
			if r, ok := ParsePopReceipt(tc.in); ok {
				t.Errorf("ParsePopReceipt(%q) = %v, accepted", tc.in, r)
			}
		})
	}
}

func TestParseMessageID(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"0b1a9c3e-5f2d-4c6b-8a7e-9d0f1e2c3b4a", "0b1a9c3e-5f2d-4c6b-8a7e-9d0f1e2c3b4a", true},
		{"0B1A9C3E-5F2D-4C6B-8A7E-9D0F1E2C3B4A", "0b1a9c3e-5f2d-4c6b-8a7e-9d0f1e2c3b4a", true},
		{"0b1a9c3e5f2d4c6b8a7e9d0f1e2c3b4a", "", false},
		{"{0b1a9c3e-5f2d-4c6b-8a7e-9d0f1e2c3b4a}", "", false},
		{"urn:uuid:0b1a9c3e-5f2d-4c6b-8a7e-9d0f1e2c3b4a", "", false},
		{"0b1a9c3e-5f2d-4c6b-8a7e-9d0f1e2c3b4g", "", false},
		{"", "", false},
		{"messageid", "", false},
	}
	for _, tc := range tests {
		got, ok := parseMessageID(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseMessageID(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestCheckReceipt(t *testing.T) {
	id := uuid.MustParse("0b1a9c3e-5f2d-4c6b-8a7e-9d0f1e2c3b4a")
	other := uuid.MustParse("1b1a9c3e-5f2d-4c6b-8a7e-9d0f1e2c3b4a")
	m := &message{ID: id.String(), Gen: 3}
	tests := []struct {
		name string
		rc   PopReceipt
		code string // "" = accepted
	}{
		{"current", PopReceipt{id, 3}, ""},
		{"stale", PopReceipt{id, 2}, "MessageNotFound"},
		{"put receipt after dequeues", PopReceipt{id, 0}, "MessageNotFound"},
		{"never issued", PopReceipt{id, 4}, "PopReceiptMismatch"},
		{"other message", PopReceipt{other, 3}, "PopReceiptMismatch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkReceipt(tc.rc, m)
			wantCode(t, err, tc.code)
		})
	}
}

// wantCode asserts err carries the Azure code (code "" means no error).
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("unexpected error %v", err)
		}
		return
	}
	e, ok := azerr.As(err)
	if !ok || e.Code != code {
		t.Fatalf("got %v, want %s", err, code)
	}
	if e.Status != azerr.Status(code) {
		t.Fatalf("status %d for %s, catalog says %d", e.Status, code, azerr.Status(code))
	}
}

// TestAppendOrderedInt: the in-place encoding of a visibility time is
// the component kv.AppendComponent makes of orderedInt, zero bytes
// escaped included.
func TestAppendOrderedInt(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 1 << 8, 1<<63 - 1, -1 << 63, 1700000000000000000, 256 * 256} {
		want := kv.AppendComponent([]byte("p"), orderedInt(v))
		if got := appendOrderedInt([]byte("p"), v); !bytes.Equal(got, want) {
			t.Fatalf("%d: %x, want %x", v, got, want)
		}
	}
}
