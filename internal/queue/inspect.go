package queue

import (
	"context"
	"sort"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// MessageState is one message as an operator sees it, invisible ones
// included (the web console's queue view): what Peek Messages cannot
// show.
type MessageState struct {
	ID           string
	Inserted     time.Time
	Expires      time.Time
	NextVisible  time.Time
	Visible      bool
	DequeueCount uint64
	// ReceiptOutstanding: a Get Messages or Update Message issued a pop
	// receipt that still deletes or updates the message (a receipt stays
	// valid until a newer one is issued, Azure/azure-storage-net#285).
	// Put Message's receipt is not counted: every message has one.
	ReceiptOutstanding bool
	Text               string
}

// InspectMessages returns up to limit unexpired messages of a queue in
// the order they were put, visible or not, read in one view
// transaction; it changes nothing. 404 QueueNotFound for a missing
// queue.
func (s *Service) InspectMessages(ctx context.Context, id QueueID, limit int) ([]MessageState, error) {
	now := s.txTime().now()
	var got []*message
	err := s.store.View(ctx, func(tx kv.Tx) error {
		q, err := loadQueue(tx, id.Account, id.Name)
		if err != nil {
			return err
		}
		prefix := msgPrefix(id.Account, id.Name, q.Inc)
		var derr error
		err = tx.Scan(prefix, kv.PrefixEnd(prefix), 0, false, func(k, v []byte) bool {
			parts, ok := kv.Split(k)
			if !ok || len(parts) == 0 {
				return true
			}
			m, err := decodeMessage(parts[len(parts)-1], v)
			if err != nil {
				derr = err
				return false
			}
			if !m.expired(now) {
				got = append(got, m)
			}
			return true
		})
		if err == nil {
			err = derr
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Seq < got[j].Seq })
	if limit > 0 && len(got) > limit {
		got = got[:limit]
	}
	out := make([]MessageState, len(got))
	for i, m := range got {
		out[i] = MessageState{ID: m.ID, Inserted: unixTime(m.Inserted), Expires: unixTime(m.Expires), NextVisible: unixTime(m.VisibleAt),
			Visible: m.VisibleAt <= now, DequeueCount: m.Dequeues, ReceiptOutstanding: m.Gen > 0, Text: string(m.Text)}
	}
	return out, nil
}
