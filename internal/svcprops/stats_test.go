package svcprops

import (
	"net/http"
	"testing"
	"time"
)

// TestLiveStatsDate: LastSyncTime is the RFC 1123 GMT date net/http
// writes (the package spells the layout out to stay free of net/http),
// in UTC whatever the zone of now.
func TestLiveStatsDate(t *testing.T) {
	now := time.Date(2026, 3, 1, 13, 4, 5, 0, time.FixedZone("X", 3600))
	if got, want := LiveStats(now).Sync, now.UTC().Format(http.TimeFormat); got != want {
		t.Fatalf("Sync = %q, want %q", got, want)
	}
	if got := LiveStats(now).Sync; got != "Sun, 01 Mar 2026 12:04:05 GMT" {
		t.Fatalf("Sync = %q", got)
	}
}
