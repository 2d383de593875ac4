package smb

import (
	"testing"

	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

func TestCreditWindow(t *testing.T) {
	w := newCreditWindow(16)
	// The window starts as {0}.
	if w.consume(1, 1) {
		t.Fatal("MessageId 1 accepted before any grant")
	}
	if !w.consume(0, 1) {
		t.Fatal("MessageId 0 refused")
	}
	if w.consume(0, 1) {
		t.Fatal("MessageId 0 accepted twice")
	}
	// NEGOTIATE-style grant: charge only.
	if g := w.grant(1, 31, 0); g != 1 {
		t.Fatalf("grant %d, want 1", g)
	}
	if !w.consume(1, 1) {
		t.Fatal("MessageId 1 refused")
	}
	// A large request is capped by the window size.
	if g := w.grant(1, 100, maxCredits); g != 16 {
		t.Fatalf("grant %d, want 16", g)
	}
	if w.low != 2 || w.span != 16 || w.granted != 16 {
		t.Fatalf("window %+v", w)
	}
	// Out of order inside the window; a skipped id keeps low back.
	if !w.consume(5, 1) || !w.consume(3, 1) {
		t.Fatal("out-of-order ids refused")
	}
	if w.low != 2 {
		t.Fatalf("low moved to %d past a hole", w.low)
	}
	if g := w.grant(1, 100, maxCredits); g != 0 {
		t.Fatalf("grant %d while the window is full", g)
	}
	// A multi-credit request needs its whole range unused.
	if w.consume(4, 2) {
		t.Fatal("range 4-5 accepted though 5 was used")
	}
	if !w.consume(6, 3) {
		t.Fatal("range 6-8 refused")
	}
	if w.consume(17, 2) || w.consume(18, 1) {
		t.Fatal("ids past the window accepted")
	}
	// Filling the hole slides the window.
	if !w.consume(2, 1) || w.low != 4 {
		t.Fatalf("after filling 2: low %d", w.low)
	}
	if !w.consume(4, 1) || w.low != 9 {
		t.Fatalf("after filling 4: low %d", w.low)
	}
	if w.granted != 9 || w.span != 9 {
		t.Fatalf("window %+v", w)
	}
	// Now there is room again; a charge of 0 counts as 1.
	if g := w.grant(0, 0, maxCredits); g != 1 {
		t.Fatalf("grant %d, want 1", g)
	}
	// Overflowing ranges are refused.
	if w.consume(^uint64(0), 2) {
		t.Fatal("wrapping range accepted")
	}
	// More credits than held: refused.
	if w.consume(w.low, w.granted+1) {
		t.Fatal("charge above the credits held accepted")
	}
}

func TestCreditWindowNeverStarves(t *testing.T) {
	w := newCreditWindow(maxCredits)
	mid := uint64(0)
	for i := 0; i < 100000; i++ {
		charge := uint64(i%3) + 1
		if charge > w.granted {
			charge = w.granted
		}
		if !w.consume(mid, charge) {
			t.Fatalf("step %d: %d..%d refused, window %+v", i, mid, mid+charge-1, *w)
		}
		mid += charge
		if w.grant(uint16(charge), uint16(i%40), maxCredits) == 0 && w.granted == 0 {
			t.Fatalf("step %d: client left without credits", i)
		}
		if w.granted > maxCredits || w.span > maxCredits {
			t.Fatalf("step %d: window %+v beyond the maximum", i, *w)
		}
	}
}

func TestChargeNeeded(t *testing.T) {
	for _, tc := range []struct{ send, recv, want uint64 }{
		{0, 0, 1}, {1, 0, 1}, {65536, 0, 1}, {65537, 0, 2}, {0, 8 << 20, 128}, {100, 1 << 20, 16},
	} {
		if got := chargeNeeded(tc.send, tc.recv); got != tc.want {
			t.Errorf("chargeNeeded(%d, %d) = %d, want %d", tc.send, tc.recv, got, tc.want)
		}
	}
}

func TestWildcardMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "anything.txt", true},
		{"*", ".", true},
		{"*.TXT", "A.TXT", true},
		{"*.TXT", "A.TXT.BAK", false},
		{"?.BIN", "G.BIN", true},
		{"?.BIN", "GG.BIN", false},
		{"A*B*C", "AXXBYYC", true},
		{"A*B*C", "AXXBYY", false},
		{"EXACT", "EXACT", true},
		{"EXACT", "EXACTLY", false},
		{"<.TXT", "FILE.TXT", true}, // DOS_STAR up to the last dot
		{"<", "FILE.TXT", false},    // cannot consume the last dot
		{"FILE>>>>>.TXT", "FILE.TXT", true},
		{"FILE\".TXT", "FILE.TXT", false},
		{"FILE\"", "FILE", true},
		{"**?", "", false},
	} {
		if got := wildcardMatch([]rune(tc.pattern), []rune(tc.name)); got != tc.want {
			t.Errorf("wildcardMatch(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestSplitPath(t *testing.T) {
	if c, err := splitPath("", false); err != nil || c != nil {
		t.Fatalf("root: %v %v", c, err)
	}
	if c, err := splitPath(`a\b\c`, false); err != nil || len(c) != 3 {
		t.Fatalf("a\\b\\c: %v %v", c, err)
	}
	if _, err := splitPath(`\a`, false); err == nil {
		t.Fatal("leading backslash accepted")
	}
	if c, err := splitPath(`\a\b`, true); err != nil || len(c) != 2 {
		t.Fatalf("rename target: %v %v", c, err)
	}
	if _, err := splitPath(`a\\b`, false); err == nil {
		t.Fatal("empty component accepted")
	}
	if _, err := splitPath(`a\..\b`, false); err != smb2.StatusObjectPathSyntaxBad {
		t.Fatalf(".. component: %v", err)
	}
}
