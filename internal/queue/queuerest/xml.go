package queuerest

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// errNoMessageText is returned by parseMessageXML for a well-formed
// document without <MessageText>.
var errNoMessageText = errors.New("queue: no MessageText element")

// parseMessageXML parses a Put/Update Message body,
//
//	<QueueMessage><MessageText>text</MessageText></QueueMessage>
//
// and returns the text, unescaped, exactly as the client sent it (the service
// stores it opaquely and never requires base64: Put Message,
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-message,
// accepts any XML-valid text, and azqueue sends it as is). Rules: the root
// must be QueueMessage (any namespace); it must hold exactly one MessageText
// whose content is character data only (no child elements); other children of
// the root are ignored; nothing but comments, processing instructions and
// white space may surround the root. encoding/xml enforces well-formedness,
// UTF-8 and the XML character range, so the text always survives a round trip
// through xml.EscapeText.
func parseMessageXML(body []byte) (string, error) {
	if text, ok := plainMessageText(body); ok {
		return text, nil
	}
	return decodeMessageXML(body)
}

const (
	msgOpen  = "<QueueMessage><MessageText>"
	msgClose = "</MessageText></QueueMessage>"
)

// plainMessageText answers the body every SDK sends for a text that needs
// no unescaping (base64, or plain ASCII without markup characters),
// without the XML decoder: an optional XML declaration, then exactly
// <QueueMessage><MessageText>text</MessageText></QueueMessage>, text being
// printable ASCII other than < > & ] plus tab and line feed. ok is false
// for anything else, which decodeMessageXML then parses (and
// FuzzParseMessageXML holds the two equal where this one answers).
func plainMessageText(body []byte) (text string, ok bool) {
	for _, decl := range [...]string{`<?xml version="1.0" encoding="utf-8"?>`, `<?xml version="1.0" encoding="UTF-8"?>`} {
		if rest, found := bytes.CutPrefix(body, []byte(decl)); found {
			body = bytes.TrimLeft(rest, " \t\n")
			break
		}
	}
	inner, found := bytes.CutPrefix(body, []byte(msgOpen))
	if !found {
		return "", false
	}
	inner, found = bytes.CutSuffix(inner, []byte(msgClose))
	if !found {
		return "", false
	}
	for _, c := range inner {
		if (c < 0x20 && c != '\t' && c != '\n') || c > 0x7e || c == '<' || c == '>' || c == '&' || c == ']' {
			return "", false
		}
	}
	return string(inner), true
}

// decodeMessageXML is parseMessageXML with the XML decoder.
func decodeMessageXML(body []byte) (string, error) {
	d := xml.NewDecoder(bytes.NewReader(body))
	var (
		text    string
		found   bool
		rootEnd bool
		depth   int
	)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case rootEnd:
				return "", errors.New("queue: content after the root element")
			case depth == 0:
				if t.Name.Local != "QueueMessage" {
					return "", errors.New("queue: root element is not QueueMessage")
				}
				depth = 1
			case t.Name.Local == "MessageText":
				if found {
					return "", errors.New("queue: MessageText given twice")
				}
				s, err := charDataOnly(d)
				if err != nil {
					return "", err
				}
				text, found = s, true
			default:
				if err := d.Skip(); err != nil {
					return "", err
				}
			}
		case xml.EndElement:
			// The decoder matches end tags to start tags, so this closes
			// the root.
			depth = 0
			rootEnd = true
		case xml.CharData:
			if depth == 0 && len(bytes.TrimSpace(t)) != 0 {
				return "", errors.New("queue: text outside the root element")
			}
		case xml.Directive:
			return "", errors.New("queue: DTDs are not allowed")
		}
	}
	if !rootEnd {
		return "", errors.New("queue: no root element")
	}
	if !found {
		return "", errNoMessageText
	}
	return text, nil
}

// charDataOnly reads the content of the element just opened up to its
// end tag; a child element is an error.
func charDataOnly(d *xml.Decoder) (string, error) {
	var b []byte
	for {
		tok, err := d.Token()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
		switch t := tok.(type) {
		case xml.CharData:
			b = append(b, t...)
		case xml.EndElement:
			return string(b), nil
		case xml.StartElement:
			return "", errors.New("queue: MessageText holds an element")
		case xml.Directive:
			return "", errors.New("queue: DTDs are not allowed")
		}
	}
}

// buildMessageXML is the request body a client sends for text (used by
// tests and the fuzz target's round-trip check).
func buildMessageXML(text string) []byte {
	var b bytes.Buffer
	b.WriteString("<QueueMessage><MessageText>")
	_ = xml.EscapeText(&b, []byte(text))
	b.WriteString("</MessageText></QueueMessage>")
	return b.Bytes()
}

// readMessageBody reads and parses a Put/Update Message body. Errors:
//   - text over 64 KiB (or a body too large to hold a 64 KiB text): 413
//     RequestBodyTooLarge, "The request body is too large and exceeds the
//     maximum permissible limit.", as the service answers a 64 KiB + 1 B
//     message (azure-sdk-for-js storage-queue test/node/messageid.spec.ts,
//     "update message negative with 65537B (64KB+1B) characters", recorded
//     against Azure); the 400 MessageTooLarge of the error code list is
//     not what the service sends;
//   - a malformed document, or one without MessageText: 400
//     InvalidXmlDocument (Queue error codes).
//
// When optional is true an empty body is allowed (Update Message without
// new content) and present is false.
func readMessageBody(r *http.Request, optional bool) (text string, present bool, err error) {
	if r.ContentLength > maxBodyBytes {
		return "", false, azerr.New(azerr.RequestBodyTooLarge)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		if _, ok := azerr.As(err); ok {
			return "", false, err // the front end's own verdict (a stalled body), kept whole
		}
		return "", false, azerr.Newf(azerr.InvalidInput, "The request body could not be read.")
	}
	if len(body) > maxBodyBytes {
		return "", false, azerr.New(azerr.RequestBodyTooLarge)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return "", false, nil
		}
		return "", false, azerr.New(azerr.InvalidXMLDocument)
	}
	text, err = parseMessageXML(body)
	if err != nil {
		return "", false, azerr.New(azerr.InvalidXMLDocument)
	}
	if len(text) > maxMessageBytes {
		return "", false, azerr.New(azerr.RequestBodyTooLarge)
	}
	return text, true, nil
}

// messagesListXML is the body of Put, Get and Peek Messages.
type messagesListXML struct {
	XMLName xml.Name     `xml:"QueueMessagesList"`
	Items   []messageXML `xml:"QueueMessage"`
}

// messageXML is one <QueueMessage>; the element order is Azure's
// (MessageId, InsertionTime, ExpirationTime, PopReceipt, TimeNextVisible,
// DequeueCount, MessageText) and absent elements are omitted (Peek has no
// PopReceipt/TimeNextVisible; Put has no DequeueCount/MessageText).
type messageXML struct {
	MessageID       string  `xml:"MessageId"`
	InsertionTime   string  `xml:"InsertionTime"`
	ExpirationTime  string  `xml:"ExpirationTime"`
	PopReceipt      string  `xml:"PopReceipt,omitempty"`
	TimeNextVisible string  `xml:"TimeNextVisible,omitempty"`
	DequeueCount    *uint64 `xml:"DequeueCount,omitempty"`
	MessageText     *string `xml:"MessageText,omitempty"`
}

// messagesResponse answers l as the response document. It renders exactly what
// server.WriteXML renders for l (TestMessagesXMLMatchesMarshal holds the two
// equal), without reflection: these three bodies are most of the queue's
// responses, and encoding/xml was 6% of the server's CPU in the queue
// benchmark.
func messagesResponse(status int, l messagesListXML) (server.Response, error) {
	b := make([]byte, 0, 64+len(l.Items)*400)
	b = append(b, server.XMLDeclaration...)
	return server.XMLDoc(status, l.appendXML(b)), nil
}

func (l *messagesListXML) appendXML(b []byte) []byte {
	b = append(b, "<QueueMessagesList>"...)
	for i := range l.Items {
		b = l.Items[i].appendXML(b)
	}
	return append(b, "</QueueMessagesList>"...)
}

func (m *messageXML) appendXML(b []byte) []byte {
	b = append(b, "<QueueMessage>"...)
	b = appendElement(b, "MessageId", m.MessageID)
	b = appendElement(b, "InsertionTime", m.InsertionTime)
	b = appendElement(b, "ExpirationTime", m.ExpirationTime)
	if m.PopReceipt != "" {
		b = appendElement(b, "PopReceipt", m.PopReceipt)
	}
	if m.TimeNextVisible != "" {
		b = appendElement(b, "TimeNextVisible", m.TimeNextVisible)
	}
	if m.DequeueCount != nil {
		b = append(b, "<DequeueCount>"...)
		b = strconv.AppendUint(b, *m.DequeueCount, 10)
		b = append(b, "</DequeueCount>"...)
	}
	if m.MessageText != nil {
		b = appendElement(b, "MessageText", *m.MessageText)
	}
	return append(b, "</QueueMessage>"...)
}

// appendElement appends <name>text</name>, text escaped as Azure writes
// character data (wire.AppendXMLText).
func appendElement(b []byte, name, text string) []byte {
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, '>')
	b = wire.AppendXMLText(b, text)
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, '>')
}
