package blob

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/testenv"
)

func wormCode(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	e, ok := azerr.As(err)
	if !ok {
		t.Fatalf("not an azerr: %v", err)
	}
	return e.Code
}

// TestContainerPolicyStateMachine: a policy is created Unlocked, changed
// only while Unlocked and under If-Match, locked once, then only
// extended to a longer period at most five times, and deleted only while
// Unlocked; the period is 1 to 146000 days and the two append flags
// exclude each other (containerworm.go).
func TestContainerPolicyStateMachine(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	code := func(err error) string { return wormCode(t, err) }
	for _, bad := range []WORMPolicyInput{{Days: 0}, {Days: 146001}, {Days: 5, AppendWrites: true, AppendWritesAll: true}} {
		if _, err := putPolicy(nil, bad, "", now); code(err) != azerr.InvalidInput {
			t.Fatalf("put %+v: %v", bad, err)
		}
	}
	if _, err := putPolicy(nil, WORMPolicyInput{Days: 1}, `"x"`, now); code(err) != azerr.ConditionNotMet {
		t.Fatalf("If-Match on a missing policy: %v", err)
	}
	p, err := putPolicy(nil, WORMPolicyInput{Days: 146000, AppendWrites: true}, "", now)
	if err != nil || p.State != WORMUnlocked || p.ETag == "" || len(p.History) != 1 {
		t.Fatalf("create: %+v %v", p, err)
	}
	if _, err := putPolicy(p, WORMPolicyInput{Days: 2}, "", now); code(err) != azerr.MissingRequiredHeader {
		t.Fatalf("update without If-Match: %v", err)
	}
	if _, err := putPolicy(p, WORMPolicyInput{Days: 2}, `"0xother"`, now); code(err) != azerr.ConditionNotMet {
		t.Fatalf("update with another ETag: %v", err)
	}
	p2, err := putPolicy(p, WORMPolicyInput{Days: 2}, p.ETag, now)
	if err != nil || p2.Days != 2 || p2.AppendWrites || p2.ETag == p.ETag || p.Days != 146000 {
		t.Fatalf("update unlocked (shorter): %+v %+v %v", p2, p, err)
	}
	if _, err := extendPolicy(p2, 3, p2.ETag, now); code(err) != azerr.InvalidOperation {
		t.Fatalf("extend unlocked: %v", err)
	}
	if _, err := lockPolicy(p2, p.ETag, now); code(err) != azerr.ConditionNotMet {
		t.Fatalf("lock with a stale ETag: %v", err)
	}
	if _, err := lockPolicy(p2, "", now); code(err) != azerr.MissingRequiredHeader {
		t.Fatalf("lock without If-Match: %v", err)
	}
	if err := deletePolicyCheck(p2, "*"); err != nil {
		t.Fatalf("delete unlocked: %v", err)
	}
	l, err := lockPolicy(p2, "*", now)
	if err != nil || l.State != WORMLocked {
		t.Fatalf("lock: %+v %v", l, err)
	}
	if _, err := lockPolicy(l, l.ETag, now); code(err) != azerr.InvalidOperation {
		t.Fatalf("lock twice: %v", err)
	}
	if _, err := putPolicy(l, WORMPolicyInput{Days: 9}, l.ETag, now); code(err) != azerr.InvalidOperation {
		t.Fatalf("update locked: %v", err)
	}
	if err := deletePolicyCheck(l, l.ETag); code(err) != azerr.InvalidOperation {
		t.Fatalf("delete locked: %v", err)
	}
	for _, d := range []int{2, 1} {
		if _, err := extendPolicy(l, d, l.ETag, now); code(err) != azerr.InvalidOperation {
			t.Fatalf("extend locked to %d days: %v", d, err)
		}
	}
	for i := 0; i < wormMaxExtensions; i++ {
		if l, err = extendPolicy(l, l.Days+1, l.ETag, now); err != nil {
			t.Fatalf("extension %d: %v", i+1, err)
		}
	}
	if l.Days != 2+wormMaxExtensions || l.Extensions != wormMaxExtensions || l.State != WORMLocked {
		t.Fatalf("after the extensions: %+v", l)
	}
	if _, err := extendPolicy(l, l.Days+1, l.ETag, now); code(err) != azerr.InvalidOperation {
		t.Fatalf("sixth extension: %v", err)
	}
	// Two puts, the lock and five extensions: the last seven are kept.
	if got := len(l.History); got != wormMaxHistory || l.History[0].Update != "put" || l.History[1].Update != "lock" {
		t.Fatalf("history: %+v", l.History)
	}
}

// TestContainerWORMRefuse: what a policy and a legal hold refuse, and
// the append allowances.
func TestContainerWORMRefuse(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	code := func(err error) string { return wormCode(t, err) }
	b := &blobRec{Created: now.Add(-24 * time.Hour), Modified: now}
	var none *containerWORM
	if err := none.refuse(b, wormWrite, now); err != nil {
		t.Fatal(err)
	}
	pol := &containerWORM{Policy: &wormPolicy{Days: 2, State: WORMUnlocked}}
	for _, op := range []wormOp{wormWrite, wormDelete, wormAppend} {
		if code(pol.refuse(b, op, now)) != azerr.BlobImmutableDueToPolicy {
			t.Fatalf("policy without append writes, op %d", op)
		}
	}
	// Past the retention (from the creation): deletes pass, changes
	// stay refused.
	later := now.Add(24 * time.Hour)
	if err := pol.refuse(b, wormDelete, later); err != nil {
		t.Fatalf("delete after the period: %v", err)
	}
	if code(pol.refuse(b, wormWrite, later)) != azerr.BlobImmutableDueToPolicy {
		t.Fatal("overwrite after the period")
	}
	// An append blob's retention counts from its last modification.
	ab := &blobRec{Type: AppendBlob, Created: b.Created, Modified: now}
	if code(pol.refuse(ab, wormDelete, later)) != azerr.BlobImmutableDueToPolicy || pol.refuse(ab, wormDelete, now.Add(48*time.Hour)) != nil {
		t.Fatal("append blob retention")
	}
	for _, flags := range [][2]bool{{true, false}, {false, true}} {
		pol.Policy.AppendWrites, pol.Policy.AppendWritesAll = flags[0], flags[1]
		if pol.refuse(b, wormAppend, now) != nil || code(pol.refuse(b, wormWrite, now)) != azerr.BlobImmutableDueToPolicy {
			t.Fatalf("append flags %v", flags)
		}
	}
	hold := &containerWORM{Hold: &wormHold{Tags: []string{"case1"}}}
	if code(hold.refuse(b, wormAppend, now)) != azerr.BlobImmutableDueToLegalHold || code(hold.refuse(b, wormDelete, later)) != azerr.BlobImmutableDueToLegalHold {
		t.Fatal("hold refuses appends without its flag, and deletes")
	}
	hold.Hold.AppendWritesAll = true
	if hold.refuse(b, wormAppend, now) != nil || code(hold.refuse(b, wormWrite, now)) != azerr.BlobImmutableDueToLegalHold {
		t.Fatal("hold with allowProtectedAppendWritesAll")
	}
	// A hold's append flag does not lift a policy without one.
	hold.Policy = &wormPolicy{Days: 2}
	if code(hold.refuse(b, wormAppend, now)) != azerr.BlobImmutableDueToLegalHold {
		t.Fatal("hold and a policy without append writes")
	}
	if _, err := checkHoldTags([]string{"ab"}); code(err) != azerr.InvalidInput {
		t.Fatal("short tag")
	}
	if tags, err := checkHoldTags([]string{"Case2024"}); err != nil || tags[0] != "case2024" {
		t.Fatalf("tag: %v %v", tags, err)
	}
}

// TestWORMOfRecord: wormOf reads a container's settings from its
// record; a record without them (a metadata name "w" included, which
// passes the byte search) answers nil, and settings survive other
// container writes (Set Container Metadata).
func TestWORMOfRecord(t *testing.T) {
	ctx := context.Background()
	store, chunks, clk := testenv.Stores(t)
	s := New(store, chunks, clk, nil)
	ref := ContainerRef{Account: "acct", Container: "cnt"}
	if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: ref, Metadata: map[string]string{"w": "{"}}); err != nil {
		t.Fatal(err)
	}
	read := func() *containerWORM {
		t.Helper()
		var w *containerWORM
		if err := store.View(ctx, func(tx kv.Tx) (err error) {
			w, err = wormOf(tx, ref.Account, ref.Container)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return w
	}
	if w := read(); w != nil {
		t.Fatalf("no settings: %+v", w)
	}
	if _, err := s.SetContainerLegalHold(ctx, ref, []string{"case1"}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetContainerMetadata(ctx, SetContainerMetadataInput{Ref: ref, Metadata: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	if w := read(); !w.holding() || w.Policy != nil {
		t.Fatalf("hold: %+v", w)
	}
	if _, err := s.ClearContainerLegalHold(ctx, ref, []string{"case1"}); err != nil {
		t.Fatal(err)
	}
	if w := read(); w != nil {
		t.Fatalf("cleared: %+v", w)
	}
	var raw []byte
	if err := store.View(ctx, func(tx kv.Tx) (err error) {
		raw, err = tx.Get(ContainerKey(ref.Account, ref.Container))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, wormTag) {
		t.Fatalf("a container without settings keeps the field: %s", raw)
	}
	if _, err := s.GetContainerWORM(ctx, ContainerRef{Account: "acct", Container: "nosuch"}); wormCode(t, err) != azerr.ContainerNotFound {
		t.Fatalf("missing container: %v", err)
	}
}

// readCounter counts the bytes read from it.
type readCounter struct {
	r io.Reader
	n int
}

func (c *readCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestContainerWORMSharedPaths: the writes that change a blob in place
// (Set Blob Properties and Metadata, Put Page, Append Block, Snapshot
// Blob, Delete Blob) meet the container's legal hold in the shared
// update path, from the container record read with the blob; the
// 100-continue pre-checks of Put Page and Append Block refuse before a
// byte of the body is read; writes no WORM rule refuses (Seal, tags)
// pass.
func TestContainerWORMSharedPaths(t *testing.T) {
	ctx := context.Background()
	store, chunks, clk := testenv.Stores(t)
	s := New(store, chunks, clk, nil)
	cref := ContainerRef{Account: "acct", Container: "cnt"}
	if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: cref}); err != nil {
		t.Fatal(err)
	}
	ref := func(name string) BlobRef { return BlobRef{Account: "acct", Container: "cnt", Blob: name} }
	for _, in := range []PutBlobInput{
		{Ref: ref("block"), Type: BlockBlob, Body: bytes.NewReader([]byte("abc")), Length: 3},
		{Ref: ref("page"), Type: PageBlob, Size: 1024},
		{Ref: ref("append"), Type: AppendBlob},
	} {
		if _, err := s.PutBlob(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SetContainerLegalHold(ctx, cref, []string{"case1"}, false); err != nil {
		t.Fatal(err)
	}
	code := func(err error) string { return wormCode(t, err) }
	const held = azerr.BlobImmutableDueToLegalHold
	ct := "text/plain"
	if _, err := s.SetBlobProperties(ctx, SetBlobPropertiesInput{Ref: ref("block"), HTTPHeaders: &HTTPHeaders{ContentType: ct}}); code(err) != held {
		t.Fatalf("Set Blob Properties: %v", err)
	}
	if _, err := s.SetBlobMetadata(ctx, SetBlobMetadataInput{Ref: ref("block"), Metadata: map[string]string{"k": "v"}}); code(err) != held {
		t.Fatalf("Set Blob Metadata: %v", err)
	}
	if _, err := s.SnapshotBlob(ctx, SnapshotBlobInput{Ref: ref("block")}); code(err) != held {
		t.Fatalf("Snapshot Blob: %v", err)
	}
	if _, err := s.DeleteBlob(ctx, DeleteBlobInput{Ref: ref("block")}); code(err) != held {
		t.Fatalf("Delete Blob: %v", err)
	}
	for _, first := range []bool{true, false} {
		body := &readCounter{r: bytes.NewReader(make([]byte, 512))}
		if _, err := s.PutPage(ctx, PutPageInput{Ref: ref("page"), Length: 512, Body: body, CheckFirst: first}); code(err) != held {
			t.Fatalf("Put Page (check first %v): %v", first, err)
		}
		if first && body.n != 0 {
			t.Fatalf("Put Page's pre-check read %d bytes of the body", body.n)
		}
		body = &readCounter{r: bytes.NewReader([]byte("more"))}
		if _, err := s.AppendBlock(ctx, AppendBlockInput{Ref: ref("append"), Length: 4, Body: body, CheckFirst: first}); code(err) != held {
			t.Fatalf("Append Block (check first %v): %v", first, err)
		}
		if first && body.n != 0 {
			t.Fatalf("Append Block's pre-check read %d bytes of the body", body.n)
		}
	}
	if _, err := s.SealBlob(ctx, SealBlobInput{Ref: ref("append")}); err != nil {
		t.Fatalf("Seal Blob under a hold: %v", err)
	}
	// The hold cleared, the same writes pass.
	if _, err := s.ClearContainerLegalHold(ctx, cref, []string{"case1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetBlobMetadata(ctx, SetBlobMetadataInput{Ref: ref("block"), Metadata: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutPage(ctx, PutPageInput{Ref: ref("page"), Length: 512, Body: bytes.NewReader(make([]byte, 512)), CheckFirst: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteBlob(ctx, DeleteBlobInput{Ref: ref("block")}); err != nil {
		t.Fatal(err)
	}
}
