package blob

import (
	"crypto/subtle"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
)

// Customer-provided keys ("Provide an encryption key on a request to Blob
// storage", https://learn.microsoft.com/en-us/azure/storage/blobs/encryption-customer-provided-keys;
// the headers are parsed by blobrest/cpk.go): a request may carry an
// AES-256 key (x-ms-encryption-key, with its SHA-256 in
// x-ms-encryption-key-sha256 and x-ms-encryption-algorithm: AES256).
// The content it writes is stored encrypted with that key
// (extent.Cipher); the blob record keeps only the key's SHA-256, and
// every later request that reads or writes the blob's content or
// metadata must carry the same key:
//
//   - without a key: 409 BlobUsesCustomerSpecifiedEncryption;
//   - with another key: 409 BlobCustomerSpecifiedEncryptionMismatch;
//   - with a key on a blob written without one: 409
//     BlobDoesNotUseCustomerSpecifiedEncryption.
//
// A write that replaces the blob (Put Blob, Put Block List, Put Blob From
// URL) takes the key of its request. Each snapshot keeps the key of the
// blob it was taken of. Answers carry x-ms-encryption-key-sha256.

// cipherOf returns k's cipher (nil: no key).
func cipherOf(k *CPK) *extent.Cipher {
	if k == nil {
		return nil
	}
	return k.Cipher
}

// shaOf returns k's SHA-256 ("": no key).
func shaOf(k *CPK) string {
	if k == nil {
		return ""
	}
	return k.SHA
}

// checkCPK checks that k is the key blob b was written with (none when
// b has none).
func checkCPK(b *blobRec, k *CPK) error { return cpkMismatch(b.CPK, shaOf(k)) }

// cpkMismatch checks that the key SHA-256 sent (sent, "" for none) is
// the one content was written with (have, "" for none).
func cpkMismatch(have, sent string) error {
	switch {
	case have != "" && sent == "":
		return azerr.New(azerr.BlobUsesCustomerSpecifiedEncryption)
	case have == "" && sent != "":
		return azerr.New(azerr.BlobDoesNotUseCustomerSpecifiedEncryption)
	case subtle.ConstantTimeCompare([]byte(have), []byte(sent)) != 1:
		return azerr.New(azerr.BlobCustomerSpecifiedEncryptionMismatch)
	}
	return nil
}

// fromURLKeys checks the keys of a From URL write whose source record is
// src and whose parts the destination shares: the source key sent
// (srcKey, x-ms-source-encryption-key) must be the one the source was
// written with (fromURLSourceKey), and the destination's (dstKey) the
// same, as shared data items decrypt only under the key they were
// encrypted with (fromSource copies the bytes otherwise).
func fromURLKeys(src *blobRec, srcKey, dstKey *CPK) error {
	if err := fromURLSourceKey(src, srcKey); err != nil {
		return err
	}
	have := ""
	if src != nil {
		have = src.CPK
	}
	if have != shaOf(dstKey) {
		// The source was rewritten under another key since fromSource
		// looked.
		return azerr.Newf(azerr.CannotVerifyCopySource, "The copy source changed while it was read.").WithStatus(409)
	}
	return nil
}

// fromURLSourceKey checks the source key sent against the key the
// source src was written with: 409 CannotVerifyCopySource with the
// customer-provided key's message (the .NET SDK's recorded
// StageBlockFromUri test with a wrong source key).
func fromURLSourceKey(src *blobRec, srcKey *CPK) error {
	have := ""
	if src != nil {
		have = src.CPK
	}
	if err := cpkMismatch(have, shaOf(srcKey)); err != nil {
		e, _ := azerr.As(err)
		return azerr.Newf(azerr.CannotVerifyCopySource, "%s", e.Message).WithStatus(409)
	}
	return nil
}

// copySourceKey refuses a Copy Blob source written with a
// customer-provided key: Copy Blob takes no source key, so such a
// source cannot be read. The service answers 409 CannotVerifyCopySource
// with BlobUsesCustomerSpecifiedEncryption's message (as quoted in
// Azure/azure-sdk-for-java#18072).
func copySourceKey(src *blobRec) error {
	if src.CPK != "" {
		return azerr.Newf(azerr.CannotVerifyCopySource, "%s", azerr.New(azerr.BlobUsesCustomerSpecifiedEncryption).Message).WithStatus(409)
	}
	return nil
}
