package blob

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
)

// Customer-provided keys ("Provide an encryption key on a request to Blob
// storage", https://learn.microsoft.com/en-us/azure/storage/blobs/encryption-customer-provided-keys):
// a request may carry an AES-256 key (x-ms-encryption-key, with its
// SHA-256 in x-ms-encryption-key-sha256 and x-ms-encryption-algorithm:
// AES256). The content it writes is stored encrypted with that key
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

// CPK is the customer-provided key of a request: its SHA-256 (base64, as
// sent and stored) and the cipher for the request's content.
type CPK struct {
	SHA    string
	Cipher *extent.Cipher
}

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

// parseCPK reads a request's customer-provided key from the headers
// named prefix+"key", prefix+"key-sha256" and prefix+"algorithm"
// (x-ms-encryption-… for the request's blob, x-ms-source-encryption-…
// for a From URL source). No key is nil: an algorithm alone is ignored
// (@azure/storage-blob 12.6 sent x-ms-encryption-algorithm on every
// request, Azure/azure-sdk-for-js#16673). A key needs its SHA-256 and
// the algorithm AES256 (400 MissingRequiredHeader / InvalidHeaderValue),
// a 256-bit key whose SHA-256 is the one sent, and HTTPS: the key is a
// secret ("To send the encryption key as part of the request, a client
// must establish a secure connection to Azure Storage using HTTPS"; the
// code, 400 InvalidInput, is inferred: no source gives the service's).
func parseCPK(h http.Header, https bool, prefix string) (*CPK, error) {
	keyName, shaName, algName := prefix+"key", prefix+"key-sha256", prefix+"algorithm"
	key64, sha64 := h.Get(keyName), h.Get(shaName)
	if key64 == "" {
		if sha64 != "" {
			return nil, azerr.MissingHeader(keyName)
		}
		return nil, nil
	}
	if sha64 == "" {
		return nil, azerr.MissingHeader(shaName)
	}
	alg := h.Get(algName)
	if alg == "" {
		return nil, azerr.MissingHeader(algName)
	}
	if alg != "AES256" {
		return nil, azerr.InvalidHeader(algName, alg)
	}
	if !https {
		return nil, azerr.Newf(azerr.InvalidInput, "A customer-provided encryption key can only be sent over HTTPS.")
	}
	key, err := base64.StdEncoding.DecodeString(key64)
	if err != nil || len(key) != 32 {
		return nil, azerr.InvalidHeader(keyName, "(hidden)")
	}
	sum := sha256.Sum256(key)
	want, err := base64.StdEncoding.DecodeString(sha64)
	if err != nil || subtle.ConstantTimeCompare(want, sum[:]) != 1 {
		return nil, azerr.InvalidHeader(shaName, sha64)
	}
	c, err := extent.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return &CPK{SHA: base64.StdEncoding.EncodeToString(sum[:]), Cipher: c}, nil
}

// cpkWriter adds x-ms-encryption-key-sha256 to a successful answer to a
// request that carried a key.
type cpkWriter struct {
	http.ResponseWriter
	sha   string
	wrote bool
}

func (w *cpkWriter) WriteHeader(code int) {
	if !w.wrote && code < 300 {
		w.Header().Set("x-ms-encryption-key-sha256", w.sha)
	}
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *cpkWriter) Write(p []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

func (w *cpkWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

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

// ParseCPK reads the customer-provided key of a request of another
// front end that writes or reads through this service (the dfs
// endpoint's Path - Create, append and flush): x-ms-encryption-key,
// -key-sha256 and -algorithm as parseCPK checks them.
func ParseCPK(h http.Header, https bool) (*CPK, error) {
	return parseCPK(h, https, "x-ms-encryption-")
}

// errCPKCopy refuses a customer-provided key on Copy Blob (asynchronous
// or with x-ms-requires-sync): it is not among the Blob operations that
// take one ("Provide an encryption key on a request to Blob storage",
// the operations that support customer-provided keys), and the copy,
// which takes its content from a source, would be written without it:
// refused, never ignored.
func errCPKCopy() error {
	return azerr.Newf(azerr.UnsupportedHeader, "Customer-provided encryption keys are not supported by Copy Blob.").With("HeaderName", "x-ms-encryption-key")
}
