package queue

import (
	"context"
	"errors"
	"strings"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/policy"
)

// The Queue service's domain API. Every operation is one method of the
// shape (ctx, XxxInput) (XxxOutput, error). The REST front end
// (internal/queue/queuerest) parses a request into the input, calls the
// method and renders its output or its azerr error; nothing in this
// package sees an *http.Request, a header name or a ResponseWriter.
// Every method runs its checks and writes in one kv transaction and takes
// its time from the service's injected clock.

// CreateQueueInput is Create Queue.
type CreateQueueInput struct {
	QueueID
	Metadata map[string]string
}

// CreateQueueOutput is the outcome of Create Queue.
type CreateQueueOutput struct {
	// Created is false when the queue already existed with the same
	// metadata.
	Created bool
}

// CreateQueue creates the queue. Created is false when it already exists
// with the same metadata; with other metadata the error is 409
// QueueAlreadyExists (Create Queue,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-queue4).
func (s *Service) CreateQueue(ctx context.Context, in CreateQueueInput) (out CreateQueueOutput, err error) {
	inc := newIncarnation()
	err = s.store.Update(ctx, func(tx kv.Tx) error {
		out.Created = false
		q, err := loadQueue(tx, in.Account, in.Name)
		if err == nil {
			if !sameMetadata(q.Meta, in.Metadata) {
				return azerr.New(azerr.QueueAlreadyExists)
			}
			return nil
		}
		if !azerr.Has(err, azerr.QueueNotFound) {
			return err
		}
		if s.reclaimer != nil {
			// A deleted queue of this name whose messages the
			// reclaimer has not purged yet: 409 QueueBeingDeleted, as
			// Azure answers for at least 30 s after Delete Queue (Queue
			// service error codes).
			p := kv.Key("qg", in.Account, in.Name)
			busy := false
			if err := tx.Scan(p, kv.PrefixEnd(p), 1, false, func(_, _ []byte) bool { busy = true; return false }); err != nil {
				return err
			}
			if busy {
				return azerr.New(azerr.QueueBeingDeleted)
			}
		}
		out.Created = true
		return putQueue(tx, in.Account, in.Name, &queueRec{Inc: inc, Meta: in.Metadata})
	})
	if azerr.Has(err, azerr.QueueBeingDeleted) {
		s.reclaimer.Kick()
	}
	return out, err
}

// sameMetadata reports whether a and b hold the same metadata: names
// compare case-insensitively (they are case-insensitive on the wire),
// values exactly. Create Queue of an existing queue succeeds only when it
// does.
func sameMetadata(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	lb := make(map[string]string, len(b))
	for k, v := range b {
		lb[strings.ToLower(k)] = v
	}
	for k, v := range a {
		if w, ok := lb[strings.ToLower(k)]; !ok || w != v {
			return false
		}
	}
	return true
}

// DeleteQueueInput is Delete Queue.
type DeleteQueueInput struct {
	QueueID
}

// DeleteQueueOutput is the outcome of Delete Queue (nothing beyond
// success).
type DeleteQueueOutput struct{}

// DeleteQueue removes the queue record at once; its messages become
// unreachable in the same transaction and are purged in the background,
// or before it returns without a reclaimer (see purge.go).
func (s *Service) DeleteQueue(ctx context.Context, in DeleteQueueInput) (DeleteQueueOutput, error) {
	id := in.QueueID
	var inc string
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		q, err := loadQueue(tx, id.Account, id.Name)
		if err != nil {
			return err
		}
		inc = q.Inc
		if err := tx.Delete(queueKey(id.Account, id.Name)); err != nil {
			return err
		}
		return tx.Put(graveKey(id.Account, id.Name, inc), nil)
	})
	if err != nil {
		return DeleteQueueOutput{}, err
	}
	s.purgeNow(ctx, id, inc)
	return DeleteQueueOutput{}, nil
}

// GetQueuePropertiesInput is Get Queue Metadata (Get Queue Properties).
type GetQueuePropertiesInput struct {
	QueueID
}

// GetQueuePropertiesOutput is what Get Queue Metadata returns.
type GetQueuePropertiesOutput struct {
	Metadata map[string]string
	// ApproximateMessageCount counts the messages not yet expired,
	// visible or not.
	ApproximateMessageCount int64
}

// GetQueueProperties reads the metadata and counts the unexpired
// messages (Get Queue Metadata,
// https://learn.microsoft.com/en-us/rest/api/storageservices/get-queue-metadata).
func (s *Service) GetQueueProperties(ctx context.Context, in GetQueuePropertiesInput) (GetQueuePropertiesOutput, error) {
	id := in.QueueID
	var out GetQueuePropertiesOutput
	tt := s.txTime()
	err := s.store.View(ctx, func(tx kv.Tx) error {
		q, err := loadQueue(tx, id.Account, id.Name)
		if err != nil {
			return err
		}
		out.Metadata = q.Meta
		out.ApproximateMessageCount, err = countMessages(tx, id.Account, id.Name, q.Inc, tt.now())
		return err
	})
	return out, err
}

// countMessages counts the unexpired messages of a queue from the
// visibility index, whose values carry each message's expiry.
func countMessages(tx kv.Tx, acct, name, inc string, now int64) (int64, error) {
	var n int64
	prefix := visPrefix(acct, name, inc)
	var derr error
	err := tx.Scan(prefix, kv.PrefixEnd(prefix), 0, false, func(k, v []byte) bool {
		var exp int64
		if exp, _, derr = parseIndexValue(k, v); derr != nil {
			return false
		}
		if now < exp {
			n++
		}
		return true
	})
	if err == nil {
		err = derr
	}
	return n, err
}

// SetQueueMetadataInput is Set Queue Metadata.
type SetQueueMetadataInput struct {
	QueueID
	// Metadata replaces the queue's metadata whole.
	Metadata map[string]string
}

// SetQueueMetadataOutput is the outcome of Set Queue Metadata (nothing
// beyond success).
type SetQueueMetadataOutput struct{}

// SetQueueMetadata replaces the metadata; last writer wins.
func (s *Service) SetQueueMetadata(ctx context.Context, in SetQueueMetadataInput) (SetQueueMetadataOutput, error) {
	return SetQueueMetadataOutput{}, s.store.Update(ctx, func(tx kv.Tx) error {
		q, err := loadQueue(tx, in.Account, in.Name)
		if err != nil {
			return err
		}
		q.Meta = in.Metadata
		return putQueue(tx, in.Account, in.Name, q)
	})
}

// GetQueueACLInput is Get Queue ACL.
type GetQueueACLInput struct {
	QueueID
}

// GetQueueACLOutput is the queue's ACL.
type GetQueueACLOutput struct {
	// Policies are the stored access policies, in the order set.
	Policies []policy.Stored
}

// GetQueueACL returns the queue's stored access policies.
func (s *Service) GetQueueACL(ctx context.Context, in GetQueueACLInput) (GetQueueACLOutput, error) {
	var out GetQueueACLOutput
	err := s.store.View(ctx, func(tx kv.Tx) error {
		q, err := loadQueue(tx, in.Account, in.Name)
		if err == nil {
			out.Policies = q.ACL
		}
		return err
	})
	return out, err
}

// SetQueueACLInput is Set Queue ACL.
type SetQueueACLInput struct {
	QueueID
	// Policies replace the stored access policies whole; the caller has
	// validated them (at most five, ids of 1–64 characters, times in the
	// 7-digit ISO form, permissions from "raup").
	Policies []policy.Stored
}

// SetQueueACLOutput is the outcome of Set Queue ACL (nothing beyond
// success).
type SetQueueACLOutput struct{}

// SetQueueACL replaces the stored access policies; last writer wins.
func (s *Service) SetQueueACL(ctx context.Context, in SetQueueACLInput) (SetQueueACLOutput, error) {
	return SetQueueACLOutput{}, s.store.Update(ctx, func(tx kv.Tx) error {
		q, err := loadQueue(tx, in.Account, in.Name)
		if err != nil {
			return err
		}
		q.ACL = in.Policies
		return putQueue(tx, in.Account, in.Name, q)
	})
}

// ListQueuesInput is List Queues.
type ListQueuesInput struct {
	Account string
	Prefix  string
	// Marker is the name of the first queue to return, as handed out in
	// NextMarker.
	Marker string
	// MaxResults is the page size, at least 1 (the front end clamps it
	// to 5,000).
	MaxResults   int
	WithMetadata bool
}

// QueueItem is one queue of a listing; Metadata is nil unless asked for.
type QueueItem struct {
	Name     string
	Metadata map[string]string
}

// ListQueuesOutput is one page of List Queues.
type ListQueuesOutput struct {
	Queues []QueueItem
	// NextMarker is the first queue of the next page, "" on the last.
	NextMarker string
}

// ListQueues lists the account's queues in name order.
func (s *Service) ListQueues(ctx context.Context, in ListQueuesInput) (ListQueuesOutput, error) {
	var out ListQueuesOutput
	base := queuesPrefix(in.Account)
	start := kv.AppendPartial(append([]byte(nil), base...), in.Prefix)
	end := kv.PrefixEnd(start)
	if in.Marker != "" && in.Marker > in.Prefix {
		start = queueKey(in.Account, in.Marker)
	}
	err := s.store.View(ctx, func(tx kv.Tx) error {
		out = ListQueuesOutput{Queues: out.Queues[:0]}
		var decodeErr error
		err := tx.Scan(start, end, in.MaxResults+1, false, func(k, v []byte) bool {
			parts, ok := kv.Split(k)
			if !ok || len(parts) != 3 {
				return true
			}
			if len(out.Queues) == in.MaxResults {
				out.NextMarker = parts[2]
				return false
			}
			it := QueueItem{Name: parts[2]}
			if in.WithMetadata {
				var q queueRec
				if decodeErr = json.Unmarshal(v, &q); decodeErr != nil {
					return false
				}
				it.Metadata = q.Meta
				if it.Metadata == nil {
					it.Metadata = map[string]string{}
				}
			}
			out.Queues = append(out.Queues, it)
			return true
		})
		return errors.Join(err, decodeErr)
	})
	return out, err
}

// Message is a message as an operation returns it. Which fields a
// response carries depends on the operation: Put Message has no
// DequeueCount or Text, Peek Messages no PopReceipt or TimeNextVisible.
type Message struct {
	ID              string
	InsertionTime   time.Time
	ExpirationTime  time.Time
	TimeNextVisible time.Time
	PopReceipt      PopReceipt
	DequeueCount    uint64
	Text            string
}

// messageOf converts a stored message; withText copies its text.
// messagesOf is the typed form of messages handed out or peeked, with
// their text.
func messagesOf(got []*message) []Message {
	out := make([]Message, len(got))
	for i, m := range got {
		out[i] = messageOf(m, true)
	}
	return out
}

func messageOf(m *message, withText bool) Message {
	out := Message{
		ID:              m.ID,
		InsertionTime:   unixTime(m.Inserted),
		ExpirationTime:  unixTime(m.Expires),
		TimeNextVisible: unixTime(m.VisibleAt),
		PopReceipt:      receiptOf(m),
		DequeueCount:    m.Dequeues,
	}
	if withText {
		out.Text = string(m.Text)
	}
	return out
}

func receiptOf(m *message) PopReceipt {
	return PopReceipt{ID: uuid.MustParse(m.ID), Gen: m.Gen}
}

// PutMessageInput is Put Message.
type PutMessageInput struct {
	QueueID
	// Text is the message text (at most 64 KiB of UTF-8; the front end
	// checks the limit).
	Text string
	// Visibility delays the message's first visibility (0–7 days).
	Visibility time.Duration
	// TTL is the time to live; 0 means the message never expires.
	TTL time.Duration
}

// PutMessageOutput is the message Put Message added: its id, times and
// a pop receipt, without DequeueCount or Text.
type PutMessageOutput struct {
	Message
}

// PutMessage adds a message and returns it with a pop receipt usable at
// once (Put Message,
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-message).
func (s *Service) PutMessage(ctx context.Context, in PutMessageInput) (PutMessageOutput, error) {
	id := uuid.NewString()
	tt := s.txTime()
	var m *message
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		q, err := loadQueue(tx, in.Account, in.Name)
		if err != nil {
			return err
		}
		if m == nil {
			// Built on the first run only: a retried fn writes the same
			// message (id, sequence number and times).
			now := tt.now()
			m = &message{
				ID:        id,
				Seq:       s.nextSeq(now),
				Inserted:  now,
				Expires:   never,
				VisibleAt: now + int64(in.Visibility),
				Text:      []byte(in.Text),
			}
			if in.TTL > 0 && int64(in.TTL) < never-now {
				m.Expires = now + int64(in.TTL)
			}
		}
		return writeMessage(tx, in.Account, in.Name, q.Inc, m)
	})
	if err != nil {
		return PutMessageOutput{}, err
	}
	return PutMessageOutput{messageOf(m, false)}, nil
}

// GetMessagesInput is Get Messages.
type GetMessagesInput struct {
	QueueID
	// Count is 1–32.
	Count int
	// Visibility is how long the messages stay invisible (1 s–7 days).
	Visibility time.Duration
}

// GetMessagesOutput is the messages Get Messages handed out.
type GetMessagesOutput struct {
	// Messages are the dequeued messages, with their text and new
	// receipts; none when no message is visible.
	Messages []Message
}

// GetMessages dequeues up to Count visible messages, each with a new pop
// receipt, TimeNextVisible = now + Visibility and DequeueCount
// incremented. See dequeue.go.
func (s *Service) GetMessages(ctx context.Context, in GetMessagesInput) (GetMessagesOutput, error) {
	loadKey := in.Account + "/" + in.Name
	slot, shared, turn := s.load.acquire(loadKey)
	defer s.load.release(loadKey, slot)
	first := -1 // alone: the oldest messages of the whole queue
	if shared {
		first = (slot + s.shardOffset) % numShards
	}
	if !kv.SingleWriter(s.store) {
		// One transaction at a time per queue in this process (doc.go,
		// "Concurrent consumers"): concurrent ones mostly conflict and
		// run again.
		select {
		case turn <- struct{}{}:
		case <-ctx.Done():
			return GetMessagesOutput{}, ctx.Err()
		}
		defer func() { <-turn }()
	}
	tt := s.txTime()
	var got []*message
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		got = nil
		q, err := loadQueue(tx, in.Account, in.Name)
		if err != nil {
			return err
		}
		got, err = dequeue(tx, in.Account, in.Name, q.Inc, tt.now(), in.Count, first, in.Visibility)
		return err
	})
	if err != nil {
		return GetMessagesOutput{}, err
	}
	return GetMessagesOutput{messagesOf(got)}, nil
}

// PeekMessagesInput is Peek Messages.
type PeekMessagesInput struct {
	QueueID
	// Count is 1–32.
	Count int
}

// PeekMessagesOutput is the messages Peek Messages saw.
type PeekMessagesOutput struct {
	// Messages are visible messages with their text, without receipts.
	Messages []Message
}

// PeekMessages returns up to Count visible messages without changing
// anything (Peek Messages,
// https://learn.microsoft.com/en-us/rest/api/storageservices/peek-messages).
func (s *Service) PeekMessages(ctx context.Context, in PeekMessagesInput) (PeekMessagesOutput, error) {
	id, count := in.QueueID, in.Count
	tt := s.txTime()
	var got []*message
	err := s.store.View(ctx, func(tx kv.Tx) error {
		q, err := loadQueue(tx, id.Account, id.Name)
		if err != nil {
			return err
		}
		got, err = peek(tx, id.Account, id.Name, q.Inc, tt.now(), count)
		return err
	})
	if err != nil {
		return PeekMessagesOutput{}, err
	}
	return PeekMessagesOutput{messagesOf(got)}, nil
}

// MessageRef names one message and the pop receipt that claims it.
type MessageRef struct {
	QueueID
	// MessageID is the id as addressed, not yet validated: an id that is
	// no message id is 404 MessageNotFound.
	MessageID  string
	PopReceipt PopReceipt
}

// checkReceipt applies the pop receipt rules (receipt.go) to the current
// state of m.
func checkReceipt(rc PopReceipt, m *message) error {
	if rc.ID.String() != m.ID {
		return azerr.New(azerr.PopReceiptMismatch)
	}
	if rc.Gen < m.Gen {
		// Stale: another dequeue or an update issued a newer receipt.
		return azerr.New(azerr.MessageNotFound)
	}
	if rc.Gen > m.Gen {
		return azerr.New(azerr.PopReceiptMismatch)
	}
	return nil
}

// loadForReceipt loads the message ref names for Delete/Update Message:
// 404 QueueNotFound, 404 MessageNotFound (missing, expired or not a
// message id), then the receipt rules.
func loadForReceipt(tx kv.Tx, ref MessageRef, now int64) (*queueRec, *message, error) {
	q, err := loadQueue(tx, ref.Account, ref.Name)
	if err != nil {
		return nil, nil, err
	}
	id, ok := parseMessageID(ref.MessageID)
	if !ok {
		return nil, nil, azerr.New(azerr.MessageNotFound)
	}
	m, ok, err := loadMessage(tx, ref.Account, ref.Name, q.Inc, id)
	if err != nil {
		return nil, nil, err
	}
	if !ok || m.expired(now) {
		return nil, nil, azerr.New(azerr.MessageNotFound)
	}
	if err := checkReceipt(ref.PopReceipt, m); err != nil {
		return nil, nil, err
	}
	return q, m, nil
}

// DeleteMessageInput is Delete Message.
type DeleteMessageInput struct {
	MessageRef
}

// DeleteMessageOutput is the outcome of Delete Message (nothing beyond
// success).
type DeleteMessageOutput struct{}

// DeleteMessage deletes the message its latest receipt names. A receipt
// stays valid after the visibility timeout passes until a newer one is
// issued (Azure/azure-storage-net#285).
func (s *Service) DeleteMessage(ctx context.Context, in DeleteMessageInput) (DeleteMessageOutput, error) {
	ref := in.MessageRef
	tt := s.txTime()
	return DeleteMessageOutput{}, s.store.Update(ctx, func(tx kv.Tx) error {
		q, m, err := loadForReceipt(tx, ref, tt.now())
		if err != nil {
			return err
		}
		return removeMessage(tx, ref.Account, ref.Name, q.Inc, m)
	})
}

// UpdateMessageOutput is the updated message: its new pop receipt and
// time next visible (DequeueCount and Text are not reported).
type UpdateMessageOutput struct {
	Message
}

// UpdateMessageInput is Update Message.
type UpdateMessageInput struct {
	MessageRef
	// Visibility is the new visibility timeout (0–7 days) from now.
	Visibility time.Duration
	// Text replaces the text when not nil.
	Text *string
}

// UpdateMessage makes the message visible at now + Visibility (not past
// its expiry: 400 InvalidQueryParameterValue, to which the caller adds
// the parameter's details) and replaces its text when one is given. It
// returns the message with its new receipt (the old one dies) and time
// next visible; DequeueCount is unchanged. Last writer wins: any holder
// of the latest receipt may update (Update Message,
// https://learn.microsoft.com/en-us/rest/api/storageservices/update-message;
// a maintainer's explanation in Azure/azure-storage-python#300).
func (s *Service) UpdateMessage(ctx context.Context, in UpdateMessageInput) (UpdateMessageOutput, error) {
	tt := s.txTime()
	var updated *message
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		now := tt.now()
		q, m, err := loadForReceipt(tx, in.MessageRef, now)
		if err != nil {
			return err
		}
		visibleAt := now + int64(in.Visibility)
		if m.Expires != never && visibleAt > m.Expires {
			// "The visibility timeout of a message cannot be set to a
			// value later than the expiry time" (Update Message).
			return azerr.Newf(azerr.InvalidQueryParameterValue, "The visibility timeout cannot extend past the message's expiry time.")
		}
		if err := removeMessage(tx, in.Account, in.Name, q.Inc, m); err != nil {
			return err
		}
		m.VisibleAt = visibleAt
		m.Gen++
		if in.Text != nil {
			m.Text = []byte(*in.Text)
		}
		updated = m
		return writeMessage(tx, in.Account, in.Name, q.Inc, m)
	})
	if err != nil {
		return UpdateMessageOutput{}, err
	}
	return UpdateMessageOutput{messageOf(updated, false)}, nil
}

// ClearMessagesInput is Clear Messages.
type ClearMessagesInput struct {
	QueueID
}

// ClearMessagesOutput is the outcome of Clear Messages (nothing beyond
// success).
type ClearMessagesOutput struct{}

// ClearMessages gives the queue a new incarnation, so every message
// disappears in one atomic write, then purges the old incarnation's keys
// (Clear Messages,
// https://learn.microsoft.com/en-us/rest/api/storageservices/clear-messages).
func (s *Service) ClearMessages(ctx context.Context, in ClearMessagesInput) (ClearMessagesOutput, error) {
	id := in.QueueID
	inc := newIncarnation()
	var old string
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		q, err := loadQueue(tx, id.Account, id.Name)
		if err != nil {
			return err
		}
		old = q.Inc
		q.Inc = inc
		if err := putQueue(tx, id.Account, id.Name, q); err != nil {
			return err
		}
		return tx.Put(graveKey(id.Account, id.Name, old), nil)
	})
	if err != nil {
		return ClearMessagesOutput{}, err
	}
	s.purgeNow(ctx, id, old)
	return ClearMessagesOutput{}, nil
}
