package blobrest

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
)

// The domain helpers of the front end's tests (the domain's own tests,
// internal/blob/domain_test.go, have their twins), and the handler tests
// that check the order and form of the errors a request gets.

func domainEnv(t *testing.T) (*Service, func(time.Duration), blob.ContainerRef) {
	t.Helper()
	s, clk := dtService(t)
	c := blob.ContainerRef{Account: "acct", Container: "cnt"}
	if _, err := s.CreateContainer(context.Background(), blob.CreateContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	return s, clk.Advance, c
}

func blobAt(c blob.ContainerRef, name string) blob.BlobRef {
	return blob.BlobRef{Account: c.Account, Container: c.Container, Blob: name}
}

// wantCode fails unless err is the Azure error status/code.
func wantCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	ae, ok := azerr.As(err)
	if !ok || ae.Status != status || ae.Code != code {
		t.Fatalf("got %v, want %d %s", err, status, code)
	}
}

func readBlob(t *testing.T, s *Service, in blob.GetBlobInput) (blob.GetBlobOutput, string) {
	t.Helper()
	out, err := s.GetBlob(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	rc := out.Body.Reader()
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return out, string(b)
}

// The handlers report a malformed read condition or tag condition only
// once the blob is found, and a malformed write condition at once, as
// they did before the domain calls.
func TestHandlersConditionErrorOrder(t *testing.T) {
	e, _ := newSDEnv(t)
	bad := map[string]string{"If-Modified-Since": "not a date"}
	badTags := map[string]string{"x-ms-if-tags": `"k" = `}
	e.fails(azerr.BlobNotFound, 404, http.MethodGet, "/acct/cnt/missing", bad)
	e.fails(azerr.BlobNotFound, 404, http.MethodHead, "/acct/cnt/missing", bad)
	e.fails(azerr.BlobNotFound, 404, http.MethodGet, "/acct/cnt/missing", badTags)
	e.put("there", blob.AppendBlob, "")
	e.fails(azerr.InvalidHeaderValue, 400, http.MethodGet, "/acct/cnt/there", bad)
	e.fails(azerr.InvalidHeaderValue, 400, http.MethodGet, "/acct/cnt/there", badTags)
	e.fails(azerr.InvalidHeaderValue, 400, http.MethodPut, "/acct/cnt/missing?comp=metadata", bad)
	e.fails(azerr.BlobNotFound, 404, http.MethodPut, "/acct/cnt/missing?comp=metadata", badTags)
	e.fails(azerr.InvalidHeaderValue, 400, http.MethodPut, "/acct/cnt/there?comp=metadata", badTags)
	// The response's Date and Last-Modified are the request's time.
	w := e.ok(http.MethodPut, "/acct/cnt/there?comp=metadata", map[string]string{"x-ms-meta-a": "b"}, "")
	if lm := w.Header().Get("Last-Modified"); lm != e.s.Clock().Now().UTC().Format(http.TimeFormat) {
		t.Fatalf("Last-Modified %q at %v", lm, e.s.Clock().Now())
	}
}

// A digest that does not match is reported as the client spelled it.
func TestHandlersDigestMismatchAsSent(t *testing.T) {
	e, _ := newSDEnv(t)
	// MD5("") is 1B2M2Y8AsgTpgAmY7PhCfg==; a final "h" instead of "g"
	// sets padding bits, which Base64 decoding ignores: the same bytes,
	// another spelling, and not the digest of "x".
	sent := "1B2M2Y8AsgTpgAmY7PhCfh=="
	for _, hdr := range []map[string]string{
		{"x-ms-blob-type": blob.BlockBlob, "Content-MD5": sent},
		{"x-ms-blob-type": blob.BlockBlob, "x-ms-blob-content-md5": sent},
	} {
		_, err := e.do(http.MethodPut, "/acct/cnt/b", hdr, "x")
		ae, ok := azerr.As(err)
		if !ok || ae.Code != azerr.MD5Mismatch || len(ae.Details) == 0 || ae.Details[0] != (azerr.Detail{Name: "UserSpecifiedMd5", Value: sent}) {
			t.Fatalf("%v: %v", hdr, err)
		}
	}
}
