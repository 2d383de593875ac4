package handle

import (
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestShiftOwners: an advance of the server's clock (ShiftOwners in its
// transaction) keeps a live owner's handles alive for the rest of its
// lease, and leaves a dead owner dead.
func TestShiftOwners(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("live", 30*time.Second)
		e.heartbeat("dead", time.Second)
		e.mustOpen(OpenRequest{FileID: "f", Owner: "live", Access: Read | Write, ShareAccess: ShareNone, SessionID: "s1"})
		e.clk.Advance(2 * time.Second) // "dead" lapsed
		e.must(func(tx kv.Tx) error { return ShiftOwners(tx, e.now(), 2*time.Minute) })
		e.clk.Advance(2 * time.Minute)
		live := func(owner string) bool {
			var ok bool
			e.view(func(tx kv.Tx) error {
				var err error
				ok, err = OwnerLive(tx, e.now(), owner)
				return err
			})
			return ok
		}
		if !live("live") || !e.hasOpen("f") {
			t.Fatal("a live owner's handle died with the advance")
		}
		if live("dead") {
			t.Fatal("a dead owner came back with the advance")
		}
		e.clk.Advance(28 * time.Second) // the rest of the lease
		if live("live") || e.hasOpen("f") {
			t.Fatal("the shifted lease outlived its 30 s")
		}
	})
}
