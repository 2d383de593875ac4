package blobrest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestParseCPK: the key headers are checked before anything is read or
// written: a 256-bit key with its SHA-256 and AES256, over HTTPS; an
// algorithm alone is no key.
func TestParseCPK(t *testing.T) {
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	sum := sha256.Sum256(key)
	k64, s64 := base64.StdEncoding.EncodeToString(key), base64.StdEncoding.EncodeToString(sum[:])
	short := base64.StdEncoding.EncodeToString(key[:16])
	shortSum := sha256.Sum256(key[:16])
	for _, c := range []struct {
		name  string
		h     map[string]string
		https bool
		want  string // error code, "" for a key, "none" for no key
	}{
		{"no headers", nil, true, "none"},
		{"algorithm alone", map[string]string{"x-ms-encryption-algorithm": "AES256"}, true, "none"},
		{"a key", map[string]string{"x-ms-encryption-key": k64, "x-ms-encryption-key-sha256": s64, "x-ms-encryption-algorithm": "AES256"}, true, ""},
		{"over HTTP", map[string]string{"x-ms-encryption-key": k64, "x-ms-encryption-key-sha256": s64, "x-ms-encryption-algorithm": "AES256"}, false, azerr.InvalidInput},
		{"no SHA-256", map[string]string{"x-ms-encryption-key": k64, "x-ms-encryption-algorithm": "AES256"}, true, azerr.MissingRequiredHeader},
		{"SHA-256 alone", map[string]string{"x-ms-encryption-key-sha256": s64}, true, azerr.MissingRequiredHeader},
		{"no algorithm", map[string]string{"x-ms-encryption-key": k64, "x-ms-encryption-key-sha256": s64}, true, azerr.MissingRequiredHeader},
		{"another algorithm", map[string]string{"x-ms-encryption-key": k64, "x-ms-encryption-key-sha256": s64, "x-ms-encryption-algorithm": "AES128"}, true, azerr.InvalidHeaderValue},
		{"wrong SHA-256", map[string]string{"x-ms-encryption-key": k64, "x-ms-encryption-key-sha256": base64.StdEncoding.EncodeToString(make([]byte, 32)), "x-ms-encryption-algorithm": "AES256"}, true, azerr.InvalidHeaderValue},
		{"128-bit key", map[string]string{"x-ms-encryption-key": short, "x-ms-encryption-key-sha256": base64.StdEncoding.EncodeToString(shortSum[:]), "x-ms-encryption-algorithm": "AES256"}, true, azerr.InvalidHeaderValue},
		{"not base64", map[string]string{"x-ms-encryption-key": "!!", "x-ms-encryption-key-sha256": s64, "x-ms-encryption-algorithm": "AES256"}, true, azerr.InvalidHeaderValue},
	} {
		h := http.Header{}
		for k, v := range c.h {
			h.Set(k, v)
		}
		k, err := parseCPK(h, c.https, &cpkBlob)
		switch c.want {
		case "none":
			if k != nil || err != nil {
				t.Errorf("%s: %v %v, want no key", c.name, k, err)
			}
		case "":
			if err != nil || k == nil || k.SHA != s64 || k.Cipher == nil {
				t.Errorf("%s: %v %v", c.name, k, err)
			}
		default:
			if !azerr.Has(err, c.want) {
				t.Errorf("%s: %v, want %s", c.name, err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), k64) {
				t.Errorf("%s: the key is in the error: %v", c.name, err)
			}
		}
	}
}

// TestCPKDomain: through the domain API, a blob written with a key is
// read only with it, and its encrypted data items are never handed to a
// copy that sends no key (the File service's copy of a blob:
// CopySourceReader, 409 CannotVerifyCopySource).
func TestCPKDomain(t *testing.T) {
	s, _, c := domainEnv(t)
	ctx := context.Background()
	h := http.Header{}
	key := bytes.Repeat([]byte{9}, 32)
	sum := sha256.Sum256(key)
	h.Set("x-ms-encryption-key", base64.StdEncoding.EncodeToString(key))
	h.Set("x-ms-encryption-key-sha256", base64.StdEncoding.EncodeToString(sum[:]))
	h.Set("x-ms-encryption-algorithm", "AES256")
	k, err := parseCPK(h, true, &cpkBlob)
	if err != nil {
		t.Fatal(err)
	}
	ref := blobAt(c, "enc")
	if _, err := s.PutBlob(ctx, blob.PutBlobInput{Call: blob.Call{CPK: k}, Ref: ref, Type: blob.BlockBlob, Body: strings.NewReader("secret"), Length: 6}); err != nil {
		t.Fatal(err)
	}
	if _, got := readBlob(t, s, blob.GetBlobInput{Call: blob.Call{CPK: k}, Ref: ref}); got != "secret" {
		t.Fatalf("read %q", got)
	}
	_, err = s.GetBlob(ctx, blob.GetBlobInput{Ref: ref})
	wantCode(t, err, http.StatusConflict, azerr.BlobUsesCustomerSpecifiedEncryption)
	rd, err := s.CopySourceReader("/acct/cnt/enc", url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Store().View(ctx, func(tx kv.Tx) error {
		_, err := rd(tx, time.Now())
		return err
	})
	wantCode(t, err, http.StatusConflict, azerr.CannotVerifyCopySource)
}
