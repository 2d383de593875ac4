package queue

import (
	"encoding/base64"
	"encoding/binary"
	"strings"

	"github.com/google/uuid"
)

// A pop receipt names one message and one generation of it:
//
//	base64url-unpadded( 0x01 | message id (16 bytes) | generation (8 bytes, big-endian) )
//
// The message record stores its current generation; Put Message issues
// generation 0 and every Get Messages or Update Message of the message bumps
// it and issues the new one. Only a receipt carrying the current generation
// can delete or update the message, which gives the real service's outcomes
// without storing receipts (Delete Message,
// https://learn.microsoft.com/en-us/rest/api/storageservices/delete-message2;
// Update Message; the real service's answers to stale receipts are reported
// in Azure/azure-storage-net#285, Azure/azure-storage-python#300 and
// Azure/azure-storage-queue-go#20):
//
//	receipt cannot be decoded              400 InvalidQueryParameterValue (MicrosoftDocs/feedback#2842)
//	receipt decodes to another message id  400 PopReceiptMismatch (Queue error codes; inferred)
//	generation older than the current one  404 MessageNotFound (azure-storage-net#285)
//	generation newer than ever issued      400 PopReceiptMismatch (inferred)
//
// The unpadded URL alphabet keeps receipts intact in hand-written URLs
// (Azure's padded standard base64 loses its "+" when not escaped,
// MicrosoftDocs/feedback#2842). Receipts are opaque to clients.
type PopReceipt struct {
	ID  uuid.UUID
	Gen uint64
}

const receiptVersion = 1

// receiptLen is the decoded length of a receipt.
const receiptLen = 1 + 16 + 8

func (r PopReceipt) String() string {
	var b [receiptLen]byte
	b[0] = receiptVersion
	copy(b[1:17], r.ID[:])
	binary.BigEndian.PutUint64(b[17:], r.Gen)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ParsePopReceipt decodes a pop receipt as String writes it; ok is false
// if s is not one.
func ParsePopReceipt(s string) (PopReceipt, bool) {
	if base64.RawURLEncoding.DecodedLen(len(s)) != receiptLen {
		return PopReceipt{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != receiptLen || b[0] != receiptVersion {
		return PopReceipt{}, false
	}
	var r PopReceipt
	copy(r.ID[:], b[1:17])
	r.Gen = binary.BigEndian.Uint64(b[17:])
	// Reject non-canonical encodings (stray low bits in the last character)
	// so that each receipt has exactly one spelling.
	if r.String() != s {
		return PopReceipt{}, false
	}
	return r, true
}

// parseMessageID returns the canonical form of a message id from a URL
// path: a GUID in the 8-4-4-4-12 form, any case. ok is false otherwise.
func parseMessageID(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return "", false
	}
	c := u.String()
	if !strings.EqualFold(c, s) {
		return "", false
	}
	return c, true
}
