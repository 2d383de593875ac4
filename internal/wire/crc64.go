package wire

import (
	"encoding/base64"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// ParseContentCRC64 decodes a transactional x-ms-content-crc64: anything
// but 8 Base64-encoded bytes is 400 InvalidCrc64, the code Microsoft's
// own tools give it next to InvalidMd5 (the Azure Storage Emulator's
// CommonStatusEntries.InvalidCrc64, "CRC64 value must be 64 bits and
// base64 encoded"; Microsoft.Azure.Storage.Common's
// StorageErrorCodeStrings.InvalidCrc64).
func ParseContentCRC64(v string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) != 8 {
		return nil, azerr.New(azerr.InvalidCRC64)
	}
	return b, nil
}
