package blob

import (
	"context"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/lease"
)

// TestInspectLease: the inspection reports a fixed lease's expiry, a
// breaking lease's break time, an infinite lease without expiry, and
// nothing for a missing blob; it changes no lease.
func TestInspectLease(t *testing.T) {
	s, advance, c := domainEnv(t)
	ctx := context.Background()
	ref := blobAt(c, "b")
	putBlock(t, s, ref, "x", Access{})
	if _, ok, err := s.InspectLease(ctx, blobAt(c, "missing")); ok || err != nil {
		t.Fatalf("missing blob: %v %v", ok, err)
	}
	d := 30
	if _, err := s.LeaseBlob(ctx, LeaseBlobInput{Ref: ref, Request: lease.Request{Action: lease.ActionAcquire, Duration: &d}}); err != nil {
		t.Fatal(err)
	}
	now := s.clock.Now()
	st, ok, err := s.InspectLease(ctx, ref)
	if err != nil || !ok || st.State != lease.StateLeased || st.Duration != lease.DurationFixed || !st.Expires.Equal(now.Add(30*time.Second)) {
		t.Fatalf("fixed lease: %+v %v %v", st, ok, err)
	}
	p := 10
	if _, err := s.LeaseBlob(ctx, LeaseBlobInput{Ref: ref, Request: lease.Request{Action: lease.ActionBreak, BreakPeriod: &p}}); err != nil {
		t.Fatal(err)
	}
	st, _, _ = s.InspectLease(ctx, ref)
	if st.State != lease.StateBreaking || !st.BreakAt.Equal(now.Add(10*time.Second)) || !st.Expires.IsZero() {
		t.Fatalf("breaking lease: %+v", st)
	}
	advance(11 * time.Second)
	inf := -1
	if _, err := s.LeaseBlob(ctx, LeaseBlobInput{Ref: ref, Request: lease.Request{Action: lease.ActionAcquire, Duration: &inf}}); err != nil {
		t.Fatal(err)
	}
	st, _, _ = s.InspectLease(ctx, ref)
	if st.State != lease.StateLeased || st.Duration != lease.DurationInfinite || !st.Expires.IsZero() {
		t.Fatalf("infinite lease: %+v", st)
	}
}

// TestInspectContainerLease: a container's fixed lease with its expiry;
// nothing for a missing container.
func TestInspectContainerLease(t *testing.T) {
	s, _, c := domainEnv(t)
	ctx := context.Background()
	if _, ok, err := s.InspectContainerLease(ctx, c.Account, "missing"); ok || err != nil {
		t.Fatalf("missing container: %v %v", ok, err)
	}
	d := 20
	if _, err := s.LeaseContainer(ctx, LeaseContainerInput{Ref: c, Request: lease.Request{Action: lease.ActionAcquire, Duration: &d}}); err != nil {
		t.Fatal(err)
	}
	st, ok, err := s.InspectContainerLease(ctx, c.Account, c.Container)
	if err != nil || !ok || st.State != lease.StateLeased || !st.Expires.Equal(s.clock.Now().Add(20*time.Second)) {
		t.Fatalf("container lease: %+v %v %v", st, ok, err)
	}
}

// TestInspectLeaseHierarchical: a hierarchical account's file keeps its
// lease on its namespace node; the inspection reads it there, with the
// fixed lease's expiry, and reports nothing for a missing path.
func TestInspectLeaseHierarchical(t *testing.T) {
	s, _, _ := hnsEnv(t)
	ctx := context.Background()
	ref := BlobRef{Account: "acct", Container: "fs", Blob: "f"}
	if _, ok, err := s.InspectLease(ctx, BlobRef{Account: "acct", Container: "fs", Blob: "missing"}); ok || err != nil {
		t.Fatalf("missing path: %v %v", ok, err)
	}
	d := 45
	if _, err := s.LeasePath(ctx, LeasePathInput{PathRef: PathRef{Account: "acct", Filesystem: "fs", Path: "f"},
		Request: lease.Request{Action: lease.ActionAcquire, Duration: &d}}); err != nil {
		t.Fatal(err)
	}
	now := s.clock.Now()
	st, ok, err := s.InspectLease(ctx, ref)
	if err != nil || !ok || st.State != lease.StateLeased || st.Duration != lease.DurationFixed || !st.Expires.Equal(now.Add(45*time.Second)) {
		t.Fatalf("the file's lease: %+v %v %v", st, ok, err)
	}
}
