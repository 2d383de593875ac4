package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

// QueueClient returns an azqueue service client for url (a Queue account
// URL such as http://127.0.0.1:10001/devstoreaccount1) with a connection
// pool sized for conns concurrent clients and SDK retries off.
func QueueClient(url, account, key string, conns int) (*azqueue.ServiceClient, error) {
	cred, err := azqueue.NewSharedKeyCredential(account, key)
	if err != nil {
		return nil, err
	}
	opts := &azqueue.ClientOptions{ClientOptions: sdkOptions(conns)}
	return azqueue.NewServiceClientWithSharedKeyCredential(url, cred, opts)
}

// errLost reports messages still in the queue after every worker
// finished: each iteration deletes one message, so none should be left.
var errLost = errors.New("messages left in the queue after the run")

// QueueWorkload drives one queue with clients concurrent workers for d.
// Each iteration is one message's full life: Put Message, Get Messages
// (one message, 30 s visibility) and Delete Message with the receipt it
// got, which need not be the message this worker put. Result.Ops counts
// messages fully processed, so Result.OpsPerSec is messages per second
// and the latencies are those of a whole put → get → delete cycle.
//
// A Get Messages may legitimately find nothing although the worker's own
// put committed: another worker took that message, and a message put
// concurrently carries a later request time than this get's, so it is
// not visible yet at this get's time. The worker then asks again (up to
// 1000 times). After the run the queue must be empty; otherwise
// QueueWorkload returns errLost with the result. The queue is created
// first and deleted at the end.
func QueueWorkload(ctx context.Context, url, account, key string, clients int, d time.Duration) (Result, error) {
	c, err := QueueClient(url, account, key, clients)
	if err != nil {
		return Result{}, err
	}
	name := fmt.Sprintf("bench%d", time.Now().UnixNano())
	if _, err := c.CreateQueue(ctx, name, nil); err != nil {
		return Result{}, fmt.Errorf("creating queue %s: %w", name, err)
	}
	q := c.NewQueueClient(name)
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_, _ = q.Delete(dctx, nil)
	}()
	body := strings.Repeat("0123456789abcdef", 16) // 256 bytes
	one := &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(1)), VisibilityTimeout: to.Ptr(int32(30))}
	res := Run(ctx, fmt.Sprintf("Queue put+get+delete (%d clients)", clients), clients, d, func(ctx context.Context, _ int, _ int64) error {
		_, err := q.EnqueueMessage(ctx, body, nil)
		if err != nil {
			return fmt.Errorf("put: %w", err)
		}
		var got azqueue.DequeueMessagesResponse
		for attempt := 0; len(got.Messages) == 0; attempt++ {
			if attempt == 1000 {
				return errors.New("get messages found nothing 1000 times in a row after a put")
			}
			got, err = q.DequeueMessages(ctx, one)
			if err != nil {
				return fmt.Errorf("get: %w", err)
			}
		}
		m := got.Messages[0]
		if _, err := q.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil); err != nil {
			return fmt.Errorf("delete: %w", err)
		}
		return nil
	})
	props, err := q.GetProperties(ctx, nil)
	if err != nil {
		return res, fmt.Errorf("counting leftover messages: %w", err)
	}
	if n := props.ApproximateMessagesCount; n != nil && *n != 0 && res.Errors == 0 {
		return res, fmt.Errorf("%w: %d", errLost, *n)
	}
	return res, nil
}
