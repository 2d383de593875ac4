package queuerest

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/queue"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// The message operations' HTTP layer: each handler parses the request
// into the typed input of its internal/queue method (api.go there),
// calls it and renders the result.

// messageOut renders m; with a receipt for Put/Get, with the dequeue
// count and text for Get/Peek.
func messageOut(m *queue.Message, withReceipt, withText bool) messageXML {
	x := messageXML{
		MessageID:      m.ID,
		InsertionTime:  wire.FormatHTTPDate(m.InsertionTime),
		ExpirationTime: wire.FormatHTTPDate(m.ExpirationTime),
	}
	if withReceipt {
		x.PopReceipt = m.PopReceipt.String()
		x.TimeNextVisible = wire.FormatHTTPDate(m.TimeNextVisible)
	}
	if withText {
		x.DequeueCount, x.MessageText = &m.DequeueCount, &m.Text
	}
	return x
}

// putMessage (Put Message): 201 with the new message's id, times and a pop
// receipt (usable to delete or update it at once) (Put Message,
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-message;
// azqueue's EnqueueMessage returns it).
func (s *Service) putMessage(r *req) (server.Response, error) {
	p, err := parsePutParams(r.q, r.Version)
	if err != nil {
		return server.Response{}, err
	}
	text, _, err := readMessageBody(r.Request.Request, false)
	if err != nil {
		return server.Response{}, err
	}
	m, err := s.q.PutMessage(r.Context(), queue.PutMessageInput{QueueID: r.id(), Text: text, Visibility: p.Visibility, TTL: p.TTL})
	if err != nil {
		return server.Response{}, err
	}
	return messagesResponse(http.StatusCreated, messagesListXML{Items: []messageXML{messageOut(&m.Message, true, false)}})
}

// getMessages (Get Messages): up to numofmessages visible messages, each
// with a new pop receipt (Get Messages,
// https://learn.microsoft.com/en-us/rest/api/storageservices/get-messages).
func (s *Service) getMessages(r *req) (server.Response, error) {
	n, vt, err := parseGetParams(r.q)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.q.GetMessages(r.Context(), queue.GetMessagesInput{QueueID: r.id(), Count: n, Visibility: vt})
	if err != nil {
		return server.Response{}, err
	}
	got := out.Messages
	list := messagesListXML{Items: make([]messageXML, len(got))}
	for i := range got {
		list.Items[i] = messageOut(&got[i], true, true)
	}
	return messagesResponse(http.StatusOK, list)
}

// peekMessages (Peek Messages): visible messages without receipts; nothing
// changes (Peek Messages,
// https://learn.microsoft.com/en-us/rest/api/storageservices/peek-messages).
func (s *Service) peekMessages(r *req) (server.Response, error) {
	n, err := parsePeekParams(r.q)
	if err != nil {
		return server.Response{}, err
	}
	peeked, err := s.q.PeekMessages(r.Context(), queue.PeekMessagesInput{QueueID: r.id(), Count: n})
	if err != nil {
		return server.Response{}, err
	}
	got := peeked.Messages
	out := messagesListXML{Items: make([]messageXML, len(got))}
	for i := range got {
		out.Items[i] = messageOut(&got[i], false, true)
	}
	return messagesResponse(http.StatusOK, out)
}

// deleteMessage (Delete Message): 204 (Delete Message,
// https://learn.microsoft.com/en-us/rest/api/storageservices/delete-message2).
func (s *Service) deleteMessage(r *req) (server.Response, error) {
	rc, err := parseReceiptParam(r.q)
	if err != nil {
		return server.Response{}, err
	}
	if _, err := s.q.DeleteMessage(r.Context(), queue.DeleteMessageInput{MessageRef: queue.MessageRef{QueueID: r.id(), MessageID: r.msgID, PopReceipt: rc}}); err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusNoContent), nil
}

// updateMessage (Update Message): visibilitytimeout 0–604800 s and, when
// a body is sent, new text. 204 with x-ms-popreceipt (a new receipt; the
// old one dies) and x-ms-time-next-visible (Update Message,
// https://learn.microsoft.com/en-us/rest/api/storageservices/update-message).
func (s *Service) updateMessage(r *req) (server.Response, error) {
	rc, err := parseReceiptParam(r.q)
	if err != nil {
		return server.Response{}, err
	}
	vt, err := parseUpdateVisibility(r.q)
	if err != nil {
		return server.Response{}, err
	}
	text, hasText, err := readMessageBody(r.Request.Request, true)
	if err != nil {
		return server.Response{}, err
	}
	in := queue.UpdateMessageInput{MessageRef: queue.MessageRef{QueueID: r.id(), MessageID: r.msgID, PopReceipt: rc}, Visibility: vt}
	if hasText {
		in.Text = &text
	}
	m, err := s.q.UpdateMessage(r.Context(), in)
	if err != nil {
		if e, ok := azerr.As(err); ok && e.Code == azerr.InvalidQueryParameterValue {
			// The visibility timeout reaches past the message's expiry.
			e.With("QueryParameterName", "visibilitytimeout").With("QueryParameterValue", r.q.Get("visibilitytimeout"))
		}
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusNoContent).
		With("X-Ms-Popreceipt", m.PopReceipt.String()).
		With("X-Ms-Time-Next-Visible", wire.FormatHTTPDate(m.TimeNextVisible)), nil
}

// clearMessages (Clear Messages): 204 (Clear Messages,
// https://learn.microsoft.com/en-us/rest/api/storageservices/clear-messages).
func (s *Service) clearMessages(r *req) (server.Response, error) {
	if _, err := s.q.ClearMessages(r.Context(), queue.ClearMessagesInput{QueueID: r.id()}); err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusNoContent), nil
}
