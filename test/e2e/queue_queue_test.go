package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/queueerror"
)

// quMeta lower-cases metadata names (Go's HTTP client canonicalises
// response header names, so Get Properties returns "Color" for "color").
func quMeta(m map[string]*string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[strings.ToLower(k)] = *v
	}
	return out
}

func quSameMeta(got map[string]*string, want map[string]string) bool {
	g := quMeta(got)
	if len(g) != len(want) {
		return false
	}
	for k, v := range want {
		if g[k] != v {
			return false
		}
	}
	return true
}

func TestQueueCreate(t *testing.T) {
	e := quStart(t)
	status := func(name string, meta map[string]*string) (int, error) {
		var raw *http.Response
		_, err := e.svc.CreateQueue(policy.WithCaptureResponse(e.ctx, &raw), name, &azqueue.CreateOptions{Metadata: meta})
		if err != nil {
			return quStatus(err), err
		}
		return raw.StatusCode, nil
	}
	m1 := map[string]*string{"color": to.Ptr("blue"), "Size": to.Ptr("10")}
	if s, err := status("orders", m1); s != http.StatusCreated {
		t.Fatalf("create: %d %v", s, err)
	}
	// Same metadata (names compared without case): 204, nothing changes.
	if s, err := status("orders", map[string]*string{"COLOR": to.Ptr("blue"), "size": to.Ptr("10")}); s != http.StatusNoContent {
		t.Fatalf("create again, same metadata: %d %v", s, err)
	}
	for _, m := range []map[string]*string{
		nil,
		{"color": to.Ptr("red"), "size": to.Ptr("10")},
		{"color": to.Ptr("blue")},
		{"color": to.Ptr("blue"), "size": to.Ptr("10"), "x": to.Ptr("1")},
	} {
		_, err := status("orders", m)
		quWant(t, err, http.StatusConflict, queueerror.QueueAlreadyExists)
	}
	props, err := e.svc.NewQueueClient("orders").GetProperties(e.ctx, nil)
	quMust(t, err)
	if !quSameMeta(props.Metadata, map[string]string{"color": "blue", "size": "10"}) {
		t.Errorf("metadata changed by a failed create: %v", quMeta(props.Metadata))
	}
	// Without metadata, twice.
	if s, _ := status("plain", nil); s != http.StatusCreated {
		t.Fatalf("create plain: %d", s)
	}
	if s, _ := status("plain", nil); s != http.StatusNoContent {
		t.Fatalf("create plain again: %d", s)
	}
	// Bad metadata is rejected before anything is created.
	for _, m := range []map[string]*string{{"1bad": to.Ptr("x")}, {"bad-name": to.Ptr("x")}} {
		_, err := status("badmeta", m)
		quWant(t, err, http.StatusBadRequest, queueerror.InvalidMetadata)
	}
	_, err = status("badmeta", map[string]*string{"big": to.Ptr(strings.Repeat("v", 8*1024))})
	quWant(t, err, http.StatusBadRequest, queueerror.MetadataTooLarge)
	_, err = e.svc.NewQueueClient("badmeta").GetProperties(e.ctx, nil)
	quWant(t, err, http.StatusNotFound, queueerror.QueueNotFound)
}

func TestQueueNames(t *testing.T) {
	e := quStart(t)
	valid := []string{"abc", "a-b-c", "123", "a1-2b", strings.Repeat("q", 63)}
	for _, n := range valid {
		_, err := e.svc.CreateQueue(e.ctx, n, nil)
		quMust(t, err)
	}
	invalid := []struct {
		name string
		code queueerror.Code
	}{
		{"ab", queueerror.OutOfRangeInput},
		{"a", queueerror.OutOfRangeInput},
		{strings.Repeat("q", 64), queueerror.OutOfRangeInput},
		{"Upper", queueerror.InvalidResourceName},
		{"a--b", queueerror.InvalidResourceName},
		{"-abc", queueerror.InvalidResourceName},
		{"abc-", queueerror.InvalidResourceName},
		{"ab_c", queueerror.InvalidResourceName},
		{"ab.c", queueerror.InvalidResourceName},
		{"héllo", queueerror.InvalidResourceName},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.CreateQueue(e.ctx, tc.name, nil)
			quWant(t, err, http.StatusBadRequest, tc.code)
			// Every queue-level operation validates the name first.
			q := e.svc.NewQueueClient(tc.name)
			_, err = q.GetProperties(e.ctx, nil)
			quWant(t, err, http.StatusBadRequest, tc.code)
			_, err = q.EnqueueMessage(e.ctx, "x", nil)
			quWant(t, err, http.StatusBadRequest, tc.code)
			_, err = q.Delete(e.ctx, nil)
			quWant(t, err, http.StatusBadRequest, tc.code)
		})
	}
	names, _, _ := quList(t, e, nil)
	if len(names) != len(valid) {
		t.Errorf("queues after invalid creates: %v", names)
	}
}

func TestQueueDelete(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	for i := range 20 {
		quEnqueue(t, e.ctx, q, fmt.Sprint(i), nil)
	}
	old := quDequeue(t, e.ctx, q, 1, 30)[0]
	_, err := q.Delete(e.ctx, nil)
	quMust(t, err)
	_, err = q.Delete(e.ctx, nil)
	quWant(t, err, http.StatusNotFound, queueerror.QueueNotFound)
	_, err = q.GetProperties(e.ctx, nil)
	quWant(t, err, http.StatusNotFound, queueerror.QueueNotFound)
	// Recreated under the same name at once (a queue this small is
	// purged before Delete Queue answers, reclaim.Inline), the queue
	// starts empty and the old receipts are dead.
	_, err = q.Create(e.ctx, nil)
	quMust(t, err)
	if n := quCount(t, e.ctx, q); n != 0 {
		t.Errorf("recreated queue holds %d messages", n)
	}
	_, err = q.DeleteMessage(e.ctx, *old.MessageID, *old.PopReceipt, nil)
	quWant(t, err, http.StatusNotFound, queueerror.MessageNotFound)
}

func TestQueueMetadata(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	props, err := q.GetProperties(e.ctx, nil)
	quMust(t, err)
	if len(props.Metadata) != 0 || *props.ApproximateMessagesCount != 0 {
		t.Fatalf("fresh queue: %v, count %d", props.Metadata, *props.ApproximateMessagesCount)
	}
	_, err = q.SetMetadata(e.ctx, &azqueue.SetMetadataOptions{Metadata: map[string]*string{"a": to.Ptr("1"), "b": to.Ptr("two words")}})
	quMust(t, err)
	for i := range 3 {
		quEnqueue(t, e.ctx, q, fmt.Sprint(i), nil)
	}
	props, err = q.GetProperties(e.ctx, nil)
	quMust(t, err)
	if !quSameMeta(props.Metadata, map[string]string{"a": "1", "b": "two words"}) || *props.ApproximateMessagesCount != 3 {
		t.Fatalf("got %v, count %d", quMeta(props.Metadata), *props.ApproximateMessagesCount)
	}
	// Invisible messages still count.
	quDequeue(t, e.ctx, q, 2, 60)
	if n := quCount(t, e.ctx, q); n != 3 {
		t.Errorf("count with 2 invisible: %d", n)
	}
	// Set replaces the whole set; an empty set clears it.
	_, err = q.SetMetadata(e.ctx, &azqueue.SetMetadataOptions{Metadata: map[string]*string{"c": to.Ptr("3")}})
	quMust(t, err)
	props, err = q.GetProperties(e.ctx, nil)
	quMust(t, err)
	if !quSameMeta(props.Metadata, map[string]string{"c": "3"}) {
		t.Errorf("after replace: %v", quMeta(props.Metadata))
	}
	_, err = q.SetMetadata(e.ctx, &azqueue.SetMetadataOptions{Metadata: map[string]*string{"bad-name": to.Ptr("x")}})
	quWant(t, err, http.StatusBadRequest, queueerror.InvalidMetadata)
	_, err = q.SetMetadata(e.ctx, &azqueue.SetMetadataOptions{Metadata: map[string]*string{"big": to.Ptr(strings.Repeat("v", 9000))}})
	quWant(t, err, http.StatusBadRequest, queueerror.MetadataTooLarge)
	props, err = q.GetProperties(e.ctx, nil)
	quMust(t, err)
	if !quSameMeta(props.Metadata, map[string]string{"c": "3"}) {
		t.Errorf("a rejected set changed metadata: %v", quMeta(props.Metadata))
	}
	_, err = q.SetMetadata(e.ctx, nil)
	quMust(t, err)
	props, err = q.GetProperties(e.ctx, nil)
	quMust(t, err)
	if len(props.Metadata) != 0 {
		t.Errorf("after clearing: %v", props.Metadata)
	}
}

// TestQueueMetadataLastWriterWins: concurrent Set Queue Metadata calls
// all succeed (queues have no ETags) and one of them wins whole.
func TestQueueMetadataLastWriterWins(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	const writers = 16
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := fmt.Sprint(i)
			_, err := q.SetMetadata(e.ctx, &azqueue.SetMetadataOptions{Metadata: map[string]*string{"writer": to.Ptr(v), "copy": to.Ptr(v)}})
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	props, err := q.GetProperties(e.ctx, nil)
	quMust(t, err)
	m := quMeta(props.Metadata)
	if len(m) != 2 || m["writer"] != m["copy"] {
		t.Errorf("torn metadata: %v", m)
	}
}

func TestQueueACL(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	got, err := q.GetAccessPolicy(e.ctx, nil)
	quMust(t, err)
	if len(got.SignedIdentifiers) != 0 {
		t.Fatalf("fresh queue ACL: %v", got.SignedIdentifiers)
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	expiry := start.Add(48 * time.Hour)
	perm := (&azqueue.AccessPolicyPermission{Read: true, Process: true}).String()
	acl := []*azqueue.SignedIdentifier{
		{ID: to.Ptr("readers"), AccessPolicy: &azqueue.AccessPolicy{Start: &start, Expiry: &expiry, Permission: &perm}},
		{ID: to.Ptr("all"), AccessPolicy: &azqueue.AccessPolicy{Permission: to.Ptr("raup")}},
	}
	_, err = q.SetAccessPolicy(e.ctx, &azqueue.SetAccessPolicyOptions{QueueACL: acl})
	quMust(t, err)
	got, err = q.GetAccessPolicy(e.ctx, nil)
	quMust(t, err)
	if len(got.SignedIdentifiers) != 2 {
		t.Fatalf("ACL: %v", got.SignedIdentifiers)
	}
	r := got.SignedIdentifiers[0]
	if *r.ID != "readers" || !r.AccessPolicy.Start.Equal(start) || !r.AccessPolicy.Expiry.Equal(expiry) || *r.AccessPolicy.Permission != "rp" {
		t.Errorf("readers: id %s start %v expiry %v perm %v", *r.ID, r.AccessPolicy.Start, r.AccessPolicy.Expiry, *r.AccessPolicy.Permission)
	}
	if a := got.SignedIdentifiers[1]; *a.ID != "all" || *a.AccessPolicy.Permission != "raup" || a.AccessPolicy.Start != nil {
		t.Errorf("all: %+v", a.AccessPolicy)
	}

	id := func(i int) *azqueue.SignedIdentifier {
		return &azqueue.SignedIdentifier{ID: to.Ptr(fmt.Sprint("id", i)), AccessPolicy: &azqueue.AccessPolicy{Permission: to.Ptr("r")}}
	}
	bad := []struct {
		name string
		acl  []*azqueue.SignedIdentifier
		body string
		code queueerror.Code
	}{
		{name: "six policies", acl: []*azqueue.SignedIdentifier{id(1), id(2), id(3), id(4), id(5), id(6)}, code: queueerror.InvalidXMLDocument},
		{name: "id too long", acl: []*azqueue.SignedIdentifier{{ID: to.Ptr(strings.Repeat("i", 65))}}, code: queueerror.InvalidXMLDocument},
		{name: "duplicate id", acl: []*azqueue.SignedIdentifier{id(1), id(1)}, code: queueerror.InvalidXMLDocument},
		{name: "blob permission", acl: []*azqueue.SignedIdentifier{{ID: to.Ptr("w"), AccessPolicy: &azqueue.AccessPolicy{Permission: to.Ptr("rw")}}}, code: queueerror.InvalidXMLNodeValue},
		{name: "bad time", body: "<SignedIdentifiers><SignedIdentifier><Id>x</Id><AccessPolicy><Start>yesterday</Start></AccessPolicy></SignedIdentifier></SignedIdentifiers>", code: queueerror.InvalidXMLNodeValue},
		{name: "malformed", body: "<SignedIdentifiers><SignedIdentifier>", code: queueerror.InvalidXMLDocument},
	}
	_, err = q.SetAccessPolicy(quWithBody(e.ctx, "<SignedIdentifiers>"+strings.Repeat(" ", 64<<10)+"</SignedIdentifiers>"), nil)
	quWant(t, err, http.StatusRequestEntityTooLarge, queueerror.RequestBodyTooLarge)
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			ctx := e.ctx
			if b.body != "" {
				ctx = quWithBody(ctx, b.body)
			}
			_, err := q.SetAccessPolicy(ctx, &azqueue.SetAccessPolicyOptions{QueueACL: b.acl})
			quWant(t, err, http.StatusBadRequest, b.code)
		})
	}
	got, err = q.GetAccessPolicy(e.ctx, nil)
	quMust(t, err)
	if len(got.SignedIdentifiers) != 2 {
		t.Errorf("a rejected set changed the ACL: %v", got.SignedIdentifiers)
	}

	// Five is the limit; an empty list clears.
	_, err = q.SetAccessPolicy(e.ctx, &azqueue.SetAccessPolicyOptions{QueueACL: []*azqueue.SignedIdentifier{id(1), id(2), id(3), id(4), id(5)}})
	quMust(t, err)
	_, err = q.SetAccessPolicy(e.ctx, nil)
	quMust(t, err)
	got, err = q.GetAccessPolicy(e.ctx, nil)
	quMust(t, err)
	if len(got.SignedIdentifiers) != 0 {
		t.Errorf("after clearing: %v", got.SignedIdentifiers)
	}
}

// TestQueueNotFound: every queue and message operation on a missing queue
// is 404 QueueNotFound and creates nothing.
func TestQueueNotFound(t *testing.T) {
	e := quStart(t)
	other := e.quQueue()
	m := quEnqueue(t, e.ctx, other, "x", nil)
	q := e.svc.NewQueueClient("missing-queue")
	calls := map[string]func() error{
		"delete":       func() error { _, err := q.Delete(e.ctx, nil); return err },
		"get metadata": func() error { _, err := q.GetProperties(e.ctx, nil); return err },
		"set metadata": func() error {
			_, err := q.SetMetadata(e.ctx, &azqueue.SetMetadataOptions{Metadata: map[string]*string{"a": to.Ptr("b")}})
			return err
		},
		"get acl":        func() error { _, err := q.GetAccessPolicy(e.ctx, nil); return err },
		"set acl":        func() error { _, err := q.SetAccessPolicy(e.ctx, nil); return err },
		"enqueue":        func() error { _, err := q.EnqueueMessage(e.ctx, "x", nil); return err },
		"dequeue":        func() error { _, err := q.DequeueMessages(e.ctx, nil); return err },
		"peek":           func() error { _, err := q.PeekMessages(e.ctx, nil); return err },
		"clear":          func() error { _, err := q.ClearMessages(e.ctx, nil); return err },
		"update message": func() error { _, err := q.UpdateMessage(e.ctx, *m.MessageID, *m.PopReceipt, "y", nil); return err },
		"delete message": func() error { _, err := q.DeleteMessage(e.ctx, *m.MessageID, *m.PopReceipt, nil); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			quWant(t, call(), http.StatusNotFound, queueerror.QueueNotFound)
		})
	}
	if names, _, _ := quList(t, e, nil); len(names) != 1 {
		t.Errorf("queues: %v", names)
	}
	if texts := quPeekTexts(t, e.ctx, other); !quEqual(texts, []string{"x"}) {
		t.Errorf("other queue: %v", texts)
	}
}
