package azerr

import "testing"

// TestStatusUnknownCode: a code outside the catalog maps to 500, and a
// catalog code to its own status.
func TestStatusUnknownCode(t *testing.T) {
	if got := Status("NoSuchCodeAnywhere"); got != 500 {
		t.Fatalf("Status(unknown) = %d, want 500", got)
	}
	if got := Status(QueueNotFound); got != 404 {
		t.Fatalf("Status(QueueNotFound) = %d, want 404", got)
	}
}
