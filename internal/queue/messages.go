package queue

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/google/uuid"
)

func httpTime(ns int64) string { return unixTime(ns).Format(http.TimeFormat) }

// messageOut renders m; with a receipt for Put/Get, with the dequeue
// count and text for Get/Peek.
func messageOut(m *message, withReceipt, withText bool) messageXML {
	x := messageXML{
		MessageID:      m.ID,
		InsertionTime:  httpTime(m.Inserted),
		ExpirationTime: httpTime(m.Expires),
	}
	if withReceipt {
		x.PopReceipt = receiptOf(m).String()
		x.TimeNextVisible = httpTime(m.VisibleAt)
	}
	if withText {
		d, t := m.Dequeues, string(m.Text)
		x.DequeueCount, x.MessageText = &d, &t
	}
	return x
}

func receiptOf(m *message) receipt {
	return receipt{ID: uuid.MustParse(m.ID), Gen: m.Gen}
}

// putMessage (Put Message): 201 with the new message's id, times and a pop
// receipt (usable to delete or update it at once) (Put Message,
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-message;
// azqueue's EnqueueMessage returns it).
func (s *Service) putMessage(w http.ResponseWriter, r *req) error {
	p, err := parsePutParams(r.q, r.Version)
	if err != nil {
		return err
	}
	text, _, err := readMessageBody(r.Request.Request, false)
	if err != nil {
		return err
	}
	id := uuid.NewString()
	tt := s.txTime(r)
	var m *message
	err = s.store.Update(r.Context(), func(tx kv.Tx) error {
		q, err := loadQueue(tx, r.Account, r.queue)
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
				VisibleAt: now + int64(p.Visibility),
				Text:      []byte(text),
			}
			if p.TTL > 0 && int64(p.TTL) < never-now {
				m.Expires = now + int64(p.TTL)
			}
		}
		return writeMessage(tx, r.Account, r.queue, q.Inc, m)
	})
	if err != nil {
		return err
	}
	return writeMessages(w, http.StatusCreated, messagesListXML{Items: []messageXML{messageOut(m, true, false)}})
}

// getMessages (Get Messages): dequeues up to numofmessages visible
// messages, each with a new pop receipt, TimeNextVisible = now +
// visibilitytimeout and DequeueCount incremented. See dequeue.go.
func (s *Service) getMessages(w http.ResponseWriter, r *req) error {
	n, vt, err := parseGetParams(r.q)
	if err != nil {
		return err
	}
	loadKey := r.Account + "/" + r.queue
	slot, shared := s.load.acquire(loadKey)
	defer s.load.release(loadKey, slot)
	first := -1 // alone: the oldest messages of the whole queue
	if shared {
		first = (slot + s.shardOffset) % numShards
	}
	tt := s.txTime(r)
	var got []*message
	err = s.store.Update(r.Context(), func(tx kv.Tx) error {
		got = nil
		q, err := loadQueue(tx, r.Account, r.queue)
		if err != nil {
			return err
		}
		got, err = dequeue(tx, r.Account, r.queue, q.Inc, tt.now(), n, first, vt)
		return err
	})
	if err != nil {
		return err
	}
	out := messagesListXML{Items: make([]messageXML, 0, len(got))}
	for _, m := range got {
		out.Items = append(out.Items, messageOut(m, true, true))
	}
	return writeMessages(w, http.StatusOK, out)
}

// peekMessages (Peek Messages): visible messages without receipts; nothing
// changes (Peek Messages,
// https://learn.microsoft.com/en-us/rest/api/storageservices/peek-messages).
func (s *Service) peekMessages(w http.ResponseWriter, r *req) error {
	n, err := parsePeekParams(r.q)
	if err != nil {
		return err
	}
	tt := s.txTime(r)
	var got []*message
	err = s.store.View(r.Context(), func(tx kv.Tx) error {
		q, err := loadQueue(tx, r.Account, r.queue)
		if err != nil {
			return err
		}
		got, err = peek(tx, r.Account, r.queue, q.Inc, tt.now(), n)
		return err
	})
	if err != nil {
		return err
	}
	out := messagesListXML{Items: make([]messageXML, 0, len(got))}
	for _, m := range got {
		out.Items = append(out.Items, messageOut(m, false, true))
	}
	return writeMessages(w, http.StatusOK, out)
}

// checkReceipt applies the pop receipt rules (receipt.go) to the current
// state of m.
func checkReceipt(rc receipt, m *message) error {
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

// loadForReceipt loads the message named in the path for Delete/Update
// Message: 404 QueueNotFound, 404 MessageNotFound (missing, expired or
// not a message id), then the receipt rules.
func loadForReceipt(tx kv.Tx, r *req, rc receipt, now int64) (*queueRec, *message, error) {
	q, err := loadQueue(tx, r.Account, r.queue)
	if err != nil {
		return nil, nil, err
	}
	id, ok := parseMessageID(r.msgID)
	if !ok {
		return nil, nil, azerr.New(azerr.MessageNotFound)
	}
	m, ok, err := loadMessage(tx, r.Account, r.queue, q.Inc, id)
	if err != nil {
		return nil, nil, err
	}
	if !ok || m.expired(now) {
		return nil, nil, azerr.New(azerr.MessageNotFound)
	}
	if err := checkReceipt(rc, m); err != nil {
		return nil, nil, err
	}
	return q, m, nil
}

// deleteMessage (Delete Message): 204 with the latest receipt. A receipt
// stays valid after the visibility timeout passes until a newer one is
// issued (Azure/azure-storage-net#285).
func (s *Service) deleteMessage(w http.ResponseWriter, r *req) error {
	rc, err := parseReceiptParam(r.q)
	if err != nil {
		return err
	}
	tt := s.txTime(r)
	err = s.store.Update(r.Context(), func(tx kv.Tx) error {
		q, m, err := loadForReceipt(tx, r, rc, tt.now())
		if err != nil {
			return err
		}
		return removeMessage(tx, r.Account, r.queue, q.Inc, m)
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// updateMessage (Update Message): new visibility (now + visibilitytimeout,
// 0–604800 s, not past the message's expiry) and, when a body is sent, new
// text. 204 with x-ms-popreceipt (a new receipt; the old one dies) and
// x-ms-time-next-visible. DequeueCount is unchanged. Last writer wins: any
// holder of the latest receipt may update (Update Message,
// https://learn.microsoft.com/en-us/rest/api/storageservices/update-message;
// a maintainer's explanation in Azure/azure-storage-python#300).
func (s *Service) updateMessage(w http.ResponseWriter, r *req) error {
	rc, err := parseReceiptParam(r.q)
	if err != nil {
		return err
	}
	vt, err := parseUpdateVisibility(r.q)
	if err != nil {
		return err
	}
	text, hasText, err := readMessageBody(r.Request.Request, true)
	if err != nil {
		return err
	}
	tt := s.txTime(r)
	var updated *message
	err = s.store.Update(r.Context(), func(tx kv.Tx) error {
		now := tt.now()
		q, m, err := loadForReceipt(tx, r, rc, now)
		if err != nil {
			return err
		}
		visibleAt := now + int64(vt)
		if m.Expires != never && visibleAt > m.Expires {
			// "The visibility timeout of a message cannot be set to a
			// value later than the expiry time" (Update Message).
			return azerr.Newf(azerr.InvalidQueryParameterValue, "The visibility timeout cannot extend past the message's expiry time.").
				With("QueryParameterName", "visibilitytimeout").With("QueryParameterValue", r.q.Get("visibilitytimeout"))
		}
		if err := removeMessage(tx, r.Account, r.queue, q.Inc, m); err != nil {
			return err
		}
		m.VisibleAt = visibleAt
		m.Gen++
		if hasText {
			m.Text = []byte(text)
		}
		updated = m
		return writeMessage(tx, r.Account, r.queue, q.Inc, m)
	})
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("x-ms-popreceipt", receiptOf(updated).String())
	h.Set("x-ms-time-next-visible", httpTime(updated.VisibleAt))
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// clearMessages (Clear Messages): gives the queue a new incarnation, so every
// message disappears in one atomic write, then purges the old incarnation's
// keys. 204 (Clear Messages,
// https://learn.microsoft.com/en-us/rest/api/storageservices/clear-messages).
func (s *Service) clearMessages(w http.ResponseWriter, r *req) error {
	inc := newIncarnation()
	var old string
	err := s.store.Update(r.Context(), func(tx kv.Tx) error {
		q, err := loadQueue(tx, r.Account, r.queue)
		if err != nil {
			return err
		}
		old = q.Inc
		q.Inc = inc
		if err := putQueue(tx, r.Account, r.queue, q); err != nil {
			return err
		}
		return tx.Put(graveKey(r.Account, r.queue, old), nil)
	})
	if err != nil {
		return err
	}
	s.purgeNow(r, old)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
