package e2e

// Harness for the Queue service tests: a server with only the Queue
// listener, a fake clock and azqueue clients with retries off. Helpers
// are prefixed "qu" so they never clash with the other services' files
// in this package.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/queueerror"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/clock"
)

type quEnv struct {
	t     *testing.T
	app   *app.App
	clock *clock.Fake
	svc   *azqueue.ServiceClient
	ctx   context.Context
}

// quStart runs a Queue-only server on a temporary directory. The fake
// clock starts at the real time because the SDK signs requests with the
// real time and the server rejects more than 15 minutes of skew: a test
// may advance the clock by a few minutes in total, not more.
func quStart(t *testing.T) *quEnv {
	t.Helper()
	a, clk := startApp(t, -1, 0, -1)
	return &quEnv{t: t, app: a, clock: clk, svc: quClient(t, a.QueueURL, app.DevKey), ctx: context.Background()}
}

func quClientOptions() *azqueue.ClientOptions {
	return &azqueue.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry:           policy.RetryOptions{MaxRetries: -1},
		Transport:       &http.Client{Timeout: 60 * time.Second},
		PerCallPolicies: []policy.Policy{quEditPolicy{}},
	}}
}

func quClient(t testing.TB, url, key string) *azqueue.ServiceClient {
	t.Helper()
	cred, err := azqueue.NewSharedKeyCredential(app.DevAccount, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := azqueue.NewServiceClientWithSharedKeyCredential(url, cred, quClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// quAnon is a client that sends no Authorization header.
func (e *quEnv) quAnon() *azqueue.ServiceClient {
	c, err := azqueue.NewServiceClientWithNoCredential(e.app.QueueURL, quClientOptions())
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// quNoAuthentication is the 401 code for anonymous requests; azqueue's
// enum lacks it.
const quNoAuthentication = queueerror.Code("NoAuthenticationInformation")

var quSeq atomic.Int64

// quName returns a fresh valid queue name.
func quName() string { return fmt.Sprintf("q%d-%d", time.Now().UnixNano()%1e9, quSeq.Add(1)) }

// quQueue creates a fresh queue and returns its client.
func (e *quEnv) quQueue() *azqueue.QueueClient {
	e.t.Helper()
	name := quName()
	_, err := e.svc.CreateQueue(e.ctx, name, nil)
	quMust(e.t, err)
	return e.svc.NewQueueClient(name)
}

func quMust(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// quWant asserts err is an Azure error with status and code, read the way
// the SDK reads it.
func quWant(t testing.TB, err error, status int, code queueerror.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %d %s, got success", status, code)
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want %d %s, got %v", status, code, err)
	}
	if re.StatusCode != status || re.ErrorCode != string(code) {
		t.Fatalf("want %d %s, got %d %s", status, code, re.StatusCode, re.ErrorCode)
	}
	if !queueerror.HasCode(err, code) {
		t.Fatalf("queueerror.HasCode(%s) is false for %v", code, err)
	}
}

// quStatus returns the HTTP status of a failed SDK call (0 on success).
func quStatus(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

// Request editing: a per-call policy (it runs before the Shared Key
// policy, so edited requests are still signed correctly) applies the
// function stored in the context.
type quEditKey struct{}

type quEditPolicy struct{}

// policyRequest is the request type edits work on.
type policyRequest = policy.Request

func (quEditPolicy) Do(req *policy.Request) (*http.Response, error) {
	if f, ok := req.Raw().Context().Value(quEditKey{}).(func(*policy.Request) error); ok {
		if err := f(req); err != nil {
			return nil, err
		}
	}
	return req.Next()
}

// quEdit returns ctx with a request edit applied by quEditPolicy.
func quEdit(ctx context.Context, f func(*policy.Request) error) context.Context {
	return context.WithValue(ctx, quEditKey{}, f)
}

// quWithBody replaces the request body.
func quWithBody(ctx context.Context, body string) context.Context {
	return quEdit(ctx, func(req *policy.Request) error {
		if body == "" {
			return req.SetBody(nil, "")
		}
		return req.SetBody(streaming.NopCloser(strings.NewReader(body)), "application/xml")
	})
}

// quWithQuery sets (or, with value "", deletes) query parameters.
func quWithQuery(ctx context.Context, kv ...string) context.Context {
	return quEdit(ctx, func(req *policy.Request) error {
		u := req.Raw().URL
		q := u.Query()
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				q.Del(kv[i])
			} else {
				q.Set(kv[i], kv[i+1])
			}
		}
		u.RawQuery = q.Encode()
		return nil
	})
}

// quEnqueue puts text and returns the message.
func quEnqueue(t testing.TB, ctx context.Context, q *azqueue.QueueClient, text string, o *azqueue.EnqueueMessageOptions) *azqueue.EnqueuedMessage {
	t.Helper()
	resp, err := q.EnqueueMessage(ctx, text, o)
	quMust(t, err)
	if len(resp.Messages) != 1 {
		t.Fatalf("enqueue returned %d messages", len(resp.Messages))
	}
	return resp.Messages[0]
}

// quDequeue gets up to n messages with visibility timeout vt seconds.
func quDequeue(t testing.TB, ctx context.Context, q *azqueue.QueueClient, n, vt int32) []*azqueue.DequeuedMessage {
	t.Helper()
	resp, err := q.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(n), VisibilityTimeout: to.Ptr(vt)})
	quMust(t, err)
	return resp.Messages
}

// quPeekTexts returns the texts of up to 32 visible messages.
func quPeekTexts(t testing.TB, ctx context.Context, q *azqueue.QueueClient) []string {
	t.Helper()
	resp, err := q.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	quMust(t, err)
	var out []string
	for _, m := range resp.Messages {
		out = append(out, *m.MessageText)
	}
	return out
}

// quCount returns x-ms-approximate-messages-count.
func quCount(t testing.TB, ctx context.Context, q *azqueue.QueueClient) int32 {
	t.Helper()
	resp, err := q.GetProperties(ctx, nil)
	quMust(t, err)
	if resp.ApproximateMessagesCount == nil {
		t.Fatal("no x-ms-approximate-messages-count")
	}
	return *resp.ApproximateMessagesCount
}

func quTexts(ms []*azqueue.DequeuedMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, *m.MessageText)
	}
	return out
}

func quEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
