package blobrest

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/extent"
)

// parseCPK reads a request's customer-provided key from the three
// headers names holds: key, key-sha256 and algorithm, under the prefix
// x-ms-encryption- for the request's blob (cpkBlob) or
// x-ms-source-encryption- for a From URL source (cpkSource). No key is
// nil: an algorithm alone is ignored (@azure/storage-blob 12.6 sent
// x-ms-encryption-algorithm on every request,
// Azure/azure-sdk-for-js#16673). A key needs its SHA-256 and
// the algorithm AES256 (400 MissingRequiredHeader / InvalidHeaderValue),
// a 256-bit key whose SHA-256 is the one sent, and HTTPS: the key is a
// secret ("To send the encryption key as part of the request, a client
// must establish a secure connection to Azure Storage using HTTPS"; the
// code, 400 InvalidInput, is inferred: no source gives the service's).
func parseCPK(h http.Header, https bool, names *cpkNames) (*blob.CPK, error) {
	keyName, shaName, algName := names.lower[0], names.lower[1], names.lower[2]
	key64, sha64 := h.Get(names.canon[0]), h.Get(names.canon[1])
	if key64 == "" {
		if sha64 != "" {
			return nil, azerr.MissingHeader(keyName)
		}
		return nil, nil
	}
	if sha64 == "" {
		return nil, azerr.MissingHeader(shaName)
	}
	alg := h.Get(names.canon[2])
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
	return &blob.CPK{SHA: base64.StdEncoding.EncodeToString(sum[:]), Cipher: c}, nil
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
		w.Header().Set("X-Ms-Encryption-Key-Sha256", w.sha)
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

// ParseCPK reads the customer-provided key of a request of another
// front end that writes or reads through this service (the dfs
// endpoint's Path - Create, append and flush): x-ms-encryption-key,
// -key-sha256 and -algorithm as parseCPK checks them.
func ParseCPK(h http.Header, https bool) (*blob.CPK, error) {
	return parseCPK(h, https, &cpkBlob)
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

// cpkNames are the names of the three customer-provided key headers
// under one prefix: in lower case, as the service names them in its
// errors, and canonical, to look them up without canonicalising a copy
// per request.
type cpkNames struct {
	lower, canon [3]string // key, key-sha256, algorithm
}

func newCPKNames(prefix string) cpkNames {
	var n cpkNames
	for i, name := range [3]string{"key", "key-sha256", "algorithm"} {
		n.lower[i] = prefix + name
		n.canon[i] = http.CanonicalHeaderKey(prefix + name)
	}
	return n
}

// The request's own key (x-ms-encryption-…) and a From URL source's
// (x-ms-source-encryption-…).
var (
	cpkBlob   = newCPKNames("x-ms-encryption-")
	cpkSource = newCPKNames("x-ms-source-encryption-")
)
