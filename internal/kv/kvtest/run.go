// Run, on top: every suite of the package against one store.

package kvtest

import (
	"testing"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Run runs the suite, one subtest per property.
//
// open must return a new, empty store for the calling (sub)test and close it
// at the test's cleanup; the suite may already have closed it, so Close on a
// closed store must not panic (it may return an error).
//
// reopen must close s and return a store over the same data, as a process
// restart would. If reopen is nil the durability subtests are skipped.
func Run(t *testing.T, open func(t *testing.T) kv.Store, reopen func(t *testing.T, s kv.Store) kv.Store) {
	su := &suite{open: open, reopen: reopen}
	tests := []struct {
		name string
		fn   func(*testing.T, *suite)
	}{
		{"GetPutDelete", testGetPutDelete},
		{"BuffersCopied", testBuffersCopied},
		{"GetThenPut", testGetThenPut},
		{"EmptyValue", testEmptyValue},
		{"ReadOnlyView", testReadOnlyView},
		{"ScanOrderAndBounds", testScanOrderAndBounds},
		{"ScanRandomRanges", testScanRandomRanges},
		{"ScanManyKeys", testScanManyKeys},
		{"ScanTupleKeys", testScanTupleKeys},
		{"ScanWriteInCallback", testScanWriteInCallback},
		{"ReadYourWrites", testReadYourWrites},
		{"UncommittedInvisible", testUncommittedInvisible},
		{"ErrorCommitsNothing", testErrorCommitsNothing},
		{"ConcurrentFailures", testConcurrentFailures},
		{"SnapshotIsolation", testSnapshotIsolation},
		{"CounterNoLostUpdate", testCounterNoLostUpdate},
		{"WriteSkew", testWriteSkew},
		{"WriteSkewScan", testWriteSkewScan},
		{"Prefetch", testPrefetch},
		{"WriteSkewPrefetch", testWriteSkewPrefetch},
		{"PrefetchRanges", testPrefetchRanges},
		{"LargeValues", testLargeValues},
		{"BigAdjacentDelete", testBigAdjacentDelete},
		{"Durability", testDurability},
		{"DurabilityConcurrent", testDurabilityConcurrent},
		{"ContextDone", testContextDone},
		{"Closed", testClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, su) })
	}
}
