package wire

import (
	"crypto/md5"
	"encoding/base64"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// ParseContentMD5 decodes a Content-MD5 (or x-ms-blob-content-md5,
// x-ms-source-content-md5) header value: padded standard base64 of exactly 16
// bytes, as azblob sends it. Anything else, including the empty string, is
// 400 InvalidMd5 (Common REST API error codes,
// https://learn.microsoft.com/en-us/rest/api/storageservices/common-rest-api-error-codes).
// Callers decide whether an absent or empty header means "no MD5" before
// calling.
func ParseContentMD5(h string) ([]byte, error) {
	if strings.ContainsAny(h, "\r\n") {
		return nil, azerr.New(azerr.InvalidMD5)
	}
	b, err := base64.StdEncoding.DecodeString(h)
	if err != nil || len(b) != md5.Size {
		return nil, azerr.New(azerr.InvalidMD5)
	}
	return b, nil
}
