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
func parseCPK(h http.Header, https bool, prefix string) (*blob.CPK, error) {
	keyName, shaName, algName := prefix+"key", prefix+"key-sha256", prefix+"algorithm"
	key64, sha64 := headerOf(h, keyName), headerOf(h, shaName)
	if key64 == "" {
		if sha64 != "" {
			return nil, azerr.MissingHeader(keyName)
		}
		return nil, nil
	}
	if sha64 == "" {
		return nil, azerr.MissingHeader(shaName)
	}
	alg := headerOf(h, algName)
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

// cpkKeys are the canonical forms of the customer-provided key headers'
// names, which parseCPK builds in lower case (as the service names them
// in its errors): looked up without canonicalising a copy per request.
var cpkKeys = func() map[string]string {
	m := map[string]string{}
	for _, p := range []string{"x-ms-encryption-", "x-ms-source-encryption-"} {
		for _, n := range []string{"key", "key-sha256", "algorithm"} {
			m[p+n] = http.CanonicalHeaderKey(p + n)
		}
	}
	return m
}()

// headerOf is h.Get(name) for one of cpkKeys' names.
func headerOf(h http.Header, name string) string {
	if k, ok := cpkKeys[name]; ok {
		name = k
	}
	return h.Get(name)
}
