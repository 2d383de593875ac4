package e2e

import (
	"encoding/base64"
	"io"
	"net"
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

	// Account SAS tokens (all resource types and permissions) from each
	// SDK's own builder, valid from start to expiry.
	perms := map[string]string{"blob": "rwdlacup", "queue": "rwdlacup", "table": "rwdlau", "file": "rwdlc"}
	tokens := map[string]func(start, expiry time.Time) string{}
	for svc, p := range perms {
		tokens[svc] = func(start, expiry time.Time) string {
			return accountSAS(t, svc, accountSASValues{Start: start, Expiry: expiry, Perms: p, ResourceTypes: "sco"})
		}
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

// accountSASValues are the fields of an account SAS the tests vary.
type accountSASValues struct {
	Start, Expiry        time.Time
	Perms, ResourceTypes string
	IP                   net.IP // sip, when set
}

// accountSAS signs an account SAS for service svc ("blob", "queue",
// "table" or "file") with that service's SDK builder, for HTTP and HTTPS,
// and returns its query string.
func accountSAS(t *testing.T, svc string, v accountSASValues) string {
	t.Helper()
	switch svc {
	case "blob":
		cred, err := blobservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
		must(t, err)
		qp, err := bsas.AccountSignatureValues{Protocol: bsas.ProtocolHTTPSandHTTP, StartTime: v.Start, ExpiryTime: v.Expiry,
			Permissions: v.Perms, ResourceTypes: v.ResourceTypes, IPRange: bsas.IPRange{Start: v.IP}}.SignWithSharedKey(cred)
		must(t, err)
		return qp.Encode()
	case "queue":
		cred, err := azqueue.NewSharedKeyCredential(app.DevAccount, app.DevKey)
		must(t, err)
		qp, err := qsas.AccountSignatureValues{Protocol: qsas.ProtocolHTTPSandHTTP, StartTime: v.Start, ExpiryTime: v.Expiry,
			Permissions: v.Perms, ResourceTypes: v.ResourceTypes, IPRange: qsas.IPRange{Start: v.IP}}.SignWithSharedKey(cred)
		must(t, err)
		return qp.Encode()
	case "table":
		cred, err := aztables.NewSharedKeyCredential(app.DevAccount, app.DevKey)
		must(t, err)
		qp, err := aztables.AccountSASSignatureValues{Protocol: aztables.SASProtocolHTTPSandHTTP, StartTime: v.Start, ExpiryTime: v.Expiry,
			Permissions: v.Perms, Services: "t", ResourceTypes: v.ResourceTypes, IPRange: aztables.IPRange{Start: v.IP}}.Sign(cred)
		must(t, err)
		return qp.Encode()
	case "file":
		cred, err := fileservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
		must(t, err)
		qp, err := fsas.AccountSignatureValues{Protocol: fsas.ProtocolHTTPSandHTTP, StartTime: v.Start, ExpiryTime: v.Expiry,
			Permissions: v.Perms, ResourceTypes: v.ResourceTypes, IPRange: fsas.IPRange{Start: v.IP}}.SignWithSharedKey(cred)
		must(t, err)
		return qp.Encode()
	}
	t.Fatalf("no service %q", svc)
	return ""
}
