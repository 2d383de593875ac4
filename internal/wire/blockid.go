package wire

import (
	"encoding/base64"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// MaxBlockIDLen is the maximum decoded length of a block ID (Put Block,
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-block:
// "Before it's encoded, the string must be less than or equal to 64 bytes in
// size").
const MaxBlockIDLen = 64

// DecodeBlockID decodes a block ID as sent in ?blockid= or a block list. It
// must be padded standard base64 (RFC 4648 §4; URL-safe base64 is not
// accepted: Put Block asks for "A valid Base64 string value"; azblob encodes
// block IDs with base64.StdEncoding) and decode to 1–64 bytes (Put Block).
// Decoding is strict: non-zero padding bits and embedded CR/LF are rejected,
// so each byte string has exactly one accepted spelling and IDs can be
// compared as strings (inferred). Anything else is 400 InvalidBlockId.
//
// The rule that all block IDs of one blob have the same decoded length is the
// caller's to enforce (400 InvalidBlobOrBlock, as Azurite answers; Put Block:
// "the length of the value specified for the blockid parameter must be the
// same size for each block").
func DecodeBlockID(s string) ([]byte, error) {
	if s == "" || strings.ContainsAny(s, "\r\n") {
		return nil, azerr.New(azerr.InvalidBlockID)
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(b) == 0 || len(b) > MaxBlockIDLen {
		return nil, azerr.New(azerr.InvalidBlockID)
	}
	return b, nil
}
