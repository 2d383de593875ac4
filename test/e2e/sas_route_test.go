package e2e

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	bsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	blobservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	fsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	fileservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	qsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestSASBeforeRouting: a request with a forged, expired or not yet
// valid SAS gets 403 AuthenticationFailed even when the request is also
// malformed (an unknown comp, a method no operation has, a bad name):
// the token is checked before anything about the operation is answered.
// With a valid token the same request gets its 400 (or 405).
func TestSASBeforeRouting(t *testing.T) {
	a, _ := startApp4(t, 0, 0, 0, 0)
	now := time.Now().UTC()

	// Account SAS tokens (all services, resource types and permissions)
	// from each SDK's own builder, valid from start to expiry.
	tokens := map[string]func(start, expiry time.Time) string{
		"blob": func(start, expiry time.Time) string {
			cred, err := blobservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
			must(t, err)
			qp, err := bsas.AccountSignatureValues{Protocol: bsas.ProtocolHTTPSandHTTP, StartTime: start, ExpiryTime: expiry,
				Permissions: "rwdlacup", ResourceTypes: "sco"}.SignWithSharedKey(cred)
			must(t, err)
			return qp.Encode()
		},
		"queue": func(start, expiry time.Time) string {
			cred, err := azqueue.NewSharedKeyCredential(app.DevAccount, app.DevKey)
			must(t, err)
			qp, err := qsas.AccountSignatureValues{Protocol: qsas.ProtocolHTTPSandHTTP, StartTime: start, ExpiryTime: expiry,
				Permissions: "rwdlacup", ResourceTypes: "sco"}.SignWithSharedKey(cred)
			must(t, err)
			return qp.Encode()
		},
		"table": func(start, expiry time.Time) string {
			cred, err := aztables.NewSharedKeyCredential(app.DevAccount, app.DevKey)
			must(t, err)
			qp, err := aztables.AccountSASSignatureValues{Protocol: aztables.SASProtocolHTTPSandHTTP, StartTime: start, ExpiryTime: expiry,
				Permissions: "rwdlau", Services: "t", ResourceTypes: "sco"}.Sign(cred)
			must(t, err)
			return qp.Encode()
		},
		"file": func(start, expiry time.Time) string {
			cred, err := fileservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
			must(t, err)
			qp, err := fsas.AccountSignatureValues{Protocol: fsas.ProtocolHTTPSandHTTP, StartTime: start, ExpiryTime: expiry,
				Permissions: "rwdlc", ResourceTypes: "sco"}.SignWithSharedKey(cred)
			must(t, err)
			return qp.Encode()
		},
	}
	base := map[string]string{"blob": a.BlobURL, "queue": a.QueueURL, "table": a.TableURL, "file": a.FileURL}
	// Requests that no operation accepts, per service.
	bad := []struct {
		svc, method, path, query string
	}{
		{"blob", http.MethodGet, "", "comp=bogus"},
		{"blob", http.MethodPut, "/cont", "restype=container&comp=bogus"},
		{"blob", http.MethodPost, "/cont/blob", ""},
		{"queue", http.MethodGet, "", "comp=bogus"},
		{"queue", http.MethodPatch, "/q1", ""},
		{"table", http.MethodPatch, "/Tables", ""},
		{"file", http.MethodGet, "", "comp=bogus"},
		{"file", http.MethodGet, "/share/dir", "restype=directory&comp=list&sharesnapshot=garbage"},
		{"file", http.MethodPut, "/Bad_Share", "restype=share"},
	}
	forge := func(tok string) string {
		q, err := url.ParseQuery(tok)
		must(t, err)
		sig, _ := base64.StdEncoding.DecodeString(q.Get("sig"))
		sig[0] ^= 1
		q.Set("sig", base64.StdEncoding.EncodeToString(sig))
		return q.Encode()
	}
	do := func(svc, method, path, query, tok string) (int, string) {
		t.Helper()
		u := base[svc] + path + "?" + query
		if query == "" {
			u = base[svc] + path + "?"
		}
		req, err := http.NewRequest(method, u+"&"+tok, nil)
		must(t, err)
		req.Header.Set("x-ms-version", "2025-01-05")
		req.Header.Set("Accept", "application/json;odata=nometadata")
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("x-ms-error-code")
	}
	for _, b := range bad {
		valid := tokens[b.svc](time.Time{}, now.Add(time.Hour))
		status, code := do(b.svc, b.method, b.path, b.query, valid)
		if status != http.StatusBadRequest && status != http.StatusMethodNotAllowed {
			t.Errorf("%s %s %s?%s with a valid SAS: %d %s, want the request's own 400 or 405", b.svc, b.method, b.path, b.query, status, code)
		}
		for name, tok := range map[string]string{
			"forged":        forge(valid),
			"expired":       tokens[b.svc](time.Time{}, now.Add(-time.Minute)),
			"not yet valid": tokens[b.svc](now.Add(time.Hour), now.Add(2*time.Hour)),
		} {
			status, code := do(b.svc, b.method, b.path, b.query, tok)
			if status != http.StatusForbidden || code != "AuthenticationFailed" {
				t.Errorf("%s %s %s?%s with a %s SAS: %d %s, want 403 AuthenticationFailed", b.svc, b.method, b.path, b.query, name, status, code)
			}
		}
	}
}
