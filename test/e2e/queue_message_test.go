package e2e

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/queueerror"
	"github.com/google/uuid"
)

func TestQueueMessageRoundTrip(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	texts := []string{
		"hello",
		"",
		`<xml attr="1">&amp; 'quotes' "double"</xml>`,
		"line1\nline2\r\nline3\rend\ttab",
		"  leading and trailing spaces  ",
		"héllo wörld — 世界 🎉",
		base64.StdEncoding.EncodeToString([]byte("binary\x00\x01\xff payload")),
		"]]> <![CDATA[ not a section",
		strings.Repeat("x", 64*1024),
		strings.Repeat("é", 32*1024),
	}
	now := e.clock.Now().Truncate(time.Second)
	for _, s := range texts {
		m := quEnqueue(t, e.ctx, q, s, nil)
		if m.MessageID == nil || m.PopReceipt == nil || *m.PopReceipt == "" {
			t.Fatalf("enqueue response lacks id or receipt: %+v", m)
		}
		if _, err := uuid.Parse(*m.MessageID); err != nil {
			t.Errorf("message id %q is not a GUID", *m.MessageID)
		}
		if !m.InsertionTime.Equal(now) || !m.TimeNextVisible.Equal(now) || !m.ExpirationTime.Equal(now.Add(7*24*time.Hour)) {
			t.Errorf("times: inserted %v next %v expires %v; clock %v", m.InsertionTime, m.TimeNextVisible, m.ExpirationTime, now)
		}
	}
	peeked, err := q.PeekMessages(e.ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	quMust(t, err)
	if len(peeked.Messages) != len(texts) {
		t.Fatalf("peeked %d, want %d", len(peeked.Messages), len(texts))
	}
	for i, p := range peeked.Messages {
		if *p.MessageText != texts[i] || *p.DequeueCount != 0 {
			t.Errorf("peek %d: %d bytes, dequeues %d; want %d bytes", i, len(*p.MessageText), *p.DequeueCount, len(texts[i]))
		}
	}
	got := quDequeue(t, e.ctx, q, 32, 30)
	if len(got) != len(texts) {
		t.Fatalf("dequeued %d, want %d", len(got), len(texts))
	}
	for i, m := range got {
		if *m.MessageText != texts[i] {
			t.Errorf("message %d: got %d bytes %.40q, want %.40q", i, len(*m.MessageText), *m.MessageText, texts[i])
		}
		if *m.DequeueCount != 1 || !m.TimeNextVisible.Equal(now.Add(30*time.Second)) || !m.InsertionTime.Equal(now) {
			t.Errorf("message %d: dequeues %d next %v inserted %v", i, *m.DequeueCount, m.TimeNextVisible, m.InsertionTime)
		}
	}
}

func TestQueueMessageOrder(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	for i := range 40 {
		quEnqueue(t, e.ctx, q, fmt.Sprint(i), nil)
	}
	// Peek sees the oldest first.
	if p := quPeekTexts(t, e.ctx, q); p[0] != "0" || p[31] != "31" {
		t.Fatalf("peek order: %v", p)
	}
	// One consumer gets insertion order, whatever the batch size.
	next := 0
	for _, n := range []int32{1, 3, 32, 4} {
		for _, m := range quDequeue(t, e.ctx, q, n, 60) {
			if *m.MessageText != fmt.Sprint(next) {
				t.Fatalf("got %s, want %d", *m.MessageText, next)
			}
			next++
		}
	}
	if next != 40 {
		t.Fatalf("dequeued %d of 40", next)
	}
	if got := quDequeue(t, e.ctx, q, 32, 60); len(got) != 0 {
		t.Errorf("empty queue returned %d messages", len(got))
	}
	// DequeueMessage (singular) asks for one.
	quEnqueue(t, e.ctx, q, "single", nil)
	resp, err := q.DequeueMessage(e.ctx, nil)
	quMust(t, err)
	if len(resp.Messages) != 1 || *resp.Messages[0].MessageText != "single" {
		t.Errorf("DequeueMessage: %v", resp.Messages)
	}
}

func TestQueueMessageBadInput(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	keep := quEnqueue(t, e.ctx, q, "keep", nil)

	tooLarge := []string{strings.Repeat("x", 64*1024+1), strings.Repeat("é", 32*1024+1), strings.Repeat(`"`, 300*1024)}
	for _, s := range tooLarge {
		_, err := q.EnqueueMessage(e.ctx, s, nil)
		quWant(t, err, http.StatusRequestEntityTooLarge, queueerror.RequestBodyTooLarge)
	}
	badBodies := map[string]string{
		"malformed":       "<QueueMessage><MessageText>x</MessageText>",
		"no MessageText":  "<QueueMessage><Text>x</Text></QueueMessage>",
		"wrong root":      "<Message><MessageText>x</MessageText></Message>",
		"element in text": "<QueueMessage><MessageText>a<b/></MessageText></QueueMessage>",
		"not xml":         "just text",
		"unknown entity":  "<QueueMessage><MessageText>&nbsp;</MessageText></QueueMessage>",
		"empty":           "",
	}
	for name, body := range badBodies {
		t.Run(name, func(t *testing.T) {
			_, err := q.EnqueueMessage(quWithBody(e.ctx, body), "ignored", nil)
			quWant(t, err, http.StatusBadRequest, queueerror.InvalidXMLDocument)
		})
	}

	i32 := func(v int32) *int32 { return &v }
	enqueueBad := []struct {
		name string
		o    azqueue.EnqueueMessageOptions
		code queueerror.Code
	}{
		{"visibility -1", azqueue.EnqueueMessageOptions{VisibilityTimeout: i32(-1)}, queueerror.OutOfRangeQueryParameterValue},
		{"visibility 7 days + 1", azqueue.EnqueueMessageOptions{VisibilityTimeout: i32(604801)}, queueerror.OutOfRangeQueryParameterValue},
		{"ttl 0", azqueue.EnqueueMessageOptions{TimeToLive: i32(0)}, queueerror.OutOfRangeQueryParameterValue},
		{"ttl -2", azqueue.EnqueueMessageOptions{TimeToLive: i32(-2)}, queueerror.OutOfRangeQueryParameterValue},
		{"visibility = ttl", azqueue.EnqueueMessageOptions{TimeToLive: i32(60), VisibilityTimeout: i32(60)}, queueerror.InvalidQueryParameterValue},
		{"visibility > ttl", azqueue.EnqueueMessageOptions{TimeToLive: i32(60), VisibilityTimeout: i32(61)}, queueerror.InvalidQueryParameterValue},
	}
	for _, tc := range enqueueBad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := q.EnqueueMessage(e.ctx, "bad", &tc.o)
			quWant(t, err, http.StatusBadRequest, tc.code)
		})
	}
	_, err := q.EnqueueMessage(quWithQuery(e.ctx, "messagettl", "soon"), "bad", nil)
	quWant(t, err, http.StatusBadRequest, queueerror.InvalidQueryParameterValue)

	dequeueBad := []azqueue.DequeueMessagesOptions{
		{NumberOfMessages: i32(0)},
		{NumberOfMessages: i32(33)},
		{VisibilityTimeout: i32(0)},
		{VisibilityTimeout: i32(604801)},
	}
	for _, o := range dequeueBad {
		_, err := q.DequeueMessages(e.ctx, &o)
		quWant(t, err, http.StatusBadRequest, queueerror.OutOfRangeQueryParameterValue)
	}
	for _, n := range []int32{0, 33, -1} {
		_, err := q.PeekMessages(e.ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: &n})
		quWant(t, err, http.StatusBadRequest, queueerror.OutOfRangeQueryParameterValue)
	}
	for _, vt := range []int32{-1, 604801} {
		_, err := q.UpdateMessage(e.ctx, *keep.MessageID, *keep.PopReceipt, "changed", &azqueue.UpdateMessageOptions{VisibilityTimeout: &vt})
		quWant(t, err, http.StatusBadRequest, queueerror.OutOfRangeQueryParameterValue)
	}
	_, err = q.UpdateMessage(quWithQuery(e.ctx, "visibilitytimeout", ""), *keep.MessageID, *keep.PopReceipt, "changed", nil)
	quWant(t, err, http.StatusBadRequest, queueerror.MissingRequiredQueryParameter)
	_, err = q.UpdateMessage(e.ctx, *keep.MessageID, *keep.PopReceipt, strings.Repeat("x", 64*1024+1), nil)
	quWant(t, err, http.StatusRequestEntityTooLarge, queueerror.RequestBodyTooLarge)
	_, err = q.UpdateMessage(quWithBody(e.ctx, "<QueueMessage>"), *keep.MessageID, *keep.PopReceipt, "x", nil)
	quWant(t, err, http.StatusBadRequest, queueerror.InvalidXMLDocument)

	// Nothing changed: the one message is still there, untouched, with
	// its original receipt valid.
	peeked, err := q.PeekMessages(e.ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: i32(32)})
	quMust(t, err)
	if len(peeked.Messages) != 1 || *peeked.Messages[0].MessageText != "keep" || *peeked.Messages[0].DequeueCount != 0 {
		t.Fatalf("queue after bad input: %d messages", len(peeked.Messages))
	}
	_, err = q.DeleteMessage(e.ctx, *keep.MessageID, *keep.PopReceipt, nil)
	quMust(t, err)
}

func TestQueuePopReceipts(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	a := quEnqueue(t, e.ctx, q, "a", nil)
	b := quEnqueue(t, e.ctx, q, "b", nil)

	// The receipt from Put Message deletes, until a dequeue replaces it.
	_, err := q.DeleteMessage(e.ctx, *a.MessageID, *a.PopReceipt, nil)
	quMust(t, err)
	_, err = q.DeleteMessage(e.ctx, *a.MessageID, *a.PopReceipt, nil)
	quWant(t, err, http.StatusNotFound, queueerror.MessageNotFound)

	got := quDequeue(t, e.ctx, q, 1, 30)[0]
	if *got.MessageID != *b.MessageID || *got.PopReceipt == *b.PopReceipt {
		t.Fatalf("dequeued %s with receipt %s", *got.MessageID, *got.PopReceipt)
	}
	cases := []struct {
		name, id, receipt string
		status            int
		code              queueerror.Code
	}{
		{"stale receipt (from put)", *b.MessageID, *b.PopReceipt, 404, queueerror.MessageNotFound},
		{"malformed receipt", *b.MessageID, "not-a-receipt", 400, queueerror.InvalidQueryParameterValue},
		{"azure-style receipt", *b.MessageID, "AgAAAAMAAAAAAAAAYUMWAIg+1gE=", 400, queueerror.InvalidQueryParameterValue},
		{"receipt of another message", *b.MessageID, *a.PopReceipt, 400, queueerror.PopReceiptMismatch},
		{"unknown message", uuid.NewString(), *got.PopReceipt, 404, queueerror.MessageNotFound},
		{"not a message id", "abc", *got.PopReceipt, 404, queueerror.MessageNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := q.DeleteMessage(e.ctx, tc.id, tc.receipt, nil)
			quWant(t, err, tc.status, tc.code)
			_, err = q.UpdateMessage(e.ctx, tc.id, tc.receipt, "changed", nil)
			quWant(t, err, tc.status, tc.code)
		})
	}
	_, err = q.DeleteMessage(quWithQuery(e.ctx, "popreceipt", ""), *b.MessageID, "x", nil)
	quWant(t, err, http.StatusBadRequest, queueerror.MissingRequiredQueryParameter)
	_, err = q.UpdateMessage(quWithQuery(e.ctx, "popreceipt", ""), *b.MessageID, "x", "changed", nil)
	quWant(t, err, http.StatusBadRequest, queueerror.MissingRequiredQueryParameter)

	// None of that changed the message; the latest receipt works.
	peek, err := q.PeekMessages(quWithQuery(e.ctx, "peekonly", "true"), nil)
	quMust(t, err)
	if len(peek.Messages) != 0 {
		t.Fatalf("message became visible: %v", peek.Messages)
	}
	if n := quCount(t, e.ctx, q); n != 1 {
		t.Fatalf("count %d", n)
	}
	_, err = q.DeleteMessage(e.ctx, *got.MessageID, *got.PopReceipt, nil)
	quMust(t, err)
	if n := quCount(t, e.ctx, q); n != 0 {
		t.Fatalf("count after delete %d", n)
	}
}

func TestQueueUpdateMessage(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	quEnqueue(t, e.ctx, q, "v1", nil)
	m := quDequeue(t, e.ctx, q, 1, 30)[0]

	// New text, visible at once: a new receipt, the old one is dead.
	up, err := q.UpdateMessage(e.ctx, *m.MessageID, *m.PopReceipt, "v2", &azqueue.UpdateMessageOptions{VisibilityTimeout: to.Ptr(int32(0))})
	quMust(t, err)
	if up.PopReceipt == nil || *up.PopReceipt == *m.PopReceipt || up.TimeNextVisible == nil {
		t.Fatalf("update response: %+v", up)
	}
	if !up.TimeNextVisible.Equal(e.clock.Now().Truncate(time.Second)) {
		t.Errorf("TimeNextVisible %v, clock %v", up.TimeNextVisible, e.clock.Now())
	}
	_, err = q.UpdateMessage(e.ctx, *m.MessageID, *m.PopReceipt, "v3", nil)
	quWant(t, err, http.StatusNotFound, queueerror.MessageNotFound)
	_, err = q.DeleteMessage(e.ctx, *m.MessageID, *m.PopReceipt, nil)
	quWant(t, err, http.StatusNotFound, queueerror.MessageNotFound)
	peeked, err := q.PeekMessages(e.ctx, nil)
	quMust(t, err)
	if len(peeked.Messages) != 1 || *peeked.Messages[0].MessageText != "v2" || *peeked.Messages[0].DequeueCount != 1 {
		t.Fatalf("after update: %+v", peeked.Messages)
	}

	// An update without a body keeps the text and only moves visibility.
	up2, err := q.UpdateMessage(quWithBody(e.ctx, ""), *m.MessageID, *up.PopReceipt, "ignored", &azqueue.UpdateMessageOptions{VisibilityTimeout: to.Ptr(int32(60))})
	quMust(t, err)
	if got := quDequeue(t, e.ctx, q, 1, 30); len(got) != 0 {
		t.Fatalf("updated message still visible")
	}
	// Chained updates: each receipt is good exactly once.
	up3, err := q.UpdateMessage(e.ctx, *m.MessageID, *up2.PopReceipt, "v4", &azqueue.UpdateMessageOptions{VisibilityTimeout: to.Ptr(int32(0))})
	quMust(t, err)
	_, err = q.UpdateMessage(e.ctx, *m.MessageID, *up2.PopReceipt, "v5", nil)
	quWant(t, err, http.StatusNotFound, queueerror.MessageNotFound)
	got := quDequeue(t, e.ctx, q, 1, 30)
	if len(got) != 1 || *got[0].MessageText != "v4" || *got[0].DequeueCount != 2 {
		t.Fatalf("after chained updates: %v", got)
	}
	// The dequeue issued a newer receipt than the update.
	_, err = q.DeleteMessage(e.ctx, *m.MessageID, *up3.PopReceipt, nil)
	quWant(t, err, http.StatusNotFound, queueerror.MessageNotFound)
	_, err = q.DeleteMessage(e.ctx, *m.MessageID, *got[0].PopReceipt, nil)
	quMust(t, err)
}

func TestQueueClearMessages(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	var first *azqueue.EnqueuedMessage
	for i := range 100 {
		m := quEnqueue(t, e.ctx, q, fmt.Sprint(i), nil)
		if i == 0 {
			first = m
		}
	}
	quDequeue(t, e.ctx, q, 10, 60)
	_, err := q.ClearMessages(e.ctx, nil)
	quMust(t, err)
	if n := quCount(t, e.ctx, q); n != 0 {
		t.Errorf("count after clear %d", n)
	}
	if got := quDequeue(t, e.ctx, q, 32, 30); len(got) != 0 {
		t.Errorf("dequeued %d after clear", len(got))
	}
	_, err = q.DeleteMessage(e.ctx, *first.MessageID, *first.PopReceipt, nil)
	quWant(t, err, http.StatusNotFound, queueerror.MessageNotFound)
	// The queue itself, its metadata and later messages are unaffected.
	quEnqueue(t, e.ctx, q, "after", nil)
	if texts := quPeekTexts(t, e.ctx, q); !quEqual(texts, []string{"after"}) {
		t.Errorf("after clear: %v", texts)
	}
	_, err = q.ClearMessages(e.ctx, nil)
	quMust(t, err)
	_, err = q.ClearMessages(e.ctx, nil)
	quMust(t, err)
}

func TestQueuePeekChangesNothing(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	for i := range 5 {
		quEnqueue(t, e.ctx, q, fmt.Sprint(i), nil)
	}
	inv := quDequeue(t, e.ctx, q, 2, 60)
	for range 3 {
		p, err := q.PeekMessages(e.ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
		quMust(t, err)
		if len(p.Messages) != 3 || *p.Messages[0].MessageText != "2" {
			t.Fatalf("peek: %d messages", len(p.Messages))
		}
		for _, m := range p.Messages {
			if *m.DequeueCount != 0 {
				t.Errorf("peek changed the dequeue count of %s", *m.MessageText)
			}
		}
	}
	one, err := q.PeekMessage(e.ctx, nil)
	quMust(t, err)
	if len(one.Messages) != 1 || *one.Messages[0].MessageText != "2" {
		t.Errorf("PeekMessage: %v", one.Messages)
	}
	got := quDequeue(t, e.ctx, q, 32, 60)
	if !quEqual(quTexts(got), []string{"2", "3", "4"}) {
		t.Errorf("dequeue after peeks: %v", quTexts(got))
	}
	// Receipts of the messages dequeued before the peeks still work.
	for _, m := range inv {
		_, err := q.DeleteMessage(e.ctx, *m.MessageID, *m.PopReceipt, nil)
		quMust(t, err)
	}
}
