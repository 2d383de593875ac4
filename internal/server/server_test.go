package server

import (
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/google/uuid"
)

// testAccounts knows the dev account only.
func testAccounts(name string) (auth.Account, bool) {
	key, _ := base64.StdEncoding.DecodeString("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==")
	return auth.Account{Name: "devstoreaccount1", Keys: [][]byte{key}}, name == "devstoreaccount1"
}

type handlerFunc func(w http.ResponseWriter, r *Request) error

func (f handlerFunc) ServeAzure(w http.ResponseWriter, r *Request) error { return f(w, r) }

func testServer(t *testing.T, json bool, h handlerFunc) http.Handler {
	t.Helper()
	s := New(Config{
		Clock:    clock.NewFake(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)),
		Accounts: testAccounts,
	})
	return s.Wrap(Service{Name: "blob", Kind: auth.Blob, Handler: h, JSONErrors: json, ServerHeader: "test"})
}

func do(h http.Handler, method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestCommonHeadersAndVersion(t *testing.T) {
	var seen *Request
	h := testServer(t, false, func(w http.ResponseWriter, r *Request) error {
		seen = r
		w.WriteHeader(http.StatusOK)
		return nil
	})
	for _, tc := range []struct {
		version, want string
		status        int
	}{
		{"2026-12-06", "2026-12-06", 200},
		{"2099-01-01", "2099-01-01", 200}, // newer than any SDK: accepted
		{"", "2009-09-19", 200},
		{"abc", "abc", 400},
		{"2008-01-01", "2008-01-01", 400},
		{"2026-1-6", "2026-1-6", 400},
	} {
		w := do(h, http.MethodGet, "/devstoreaccount1/c/b", map[string]string{"x-ms-version": tc.version, "x-ms-client-request-id": "cid"})
		if w.Code != tc.status {
			t.Fatalf("version %q: status %d, want %d", tc.version, w.Code, tc.status)
		}
		if got := w.Header().Get("x-ms-version"); got != tc.want {
			t.Fatalf("version %q: response version %q", tc.version, got)
		}
		if id := w.Header().Get("x-ms-request-id"); len(id) != 36 {
			t.Fatalf("request id %q", id)
		}
		if w.Header().Get("Date") != "Sun, 22 Nov 2026 10:00:00 GMT" || w.Header().Get("x-ms-client-request-id") != "cid" || w.Header().Get("Server") != "test" {
			t.Fatalf("common headers: %v", w.Header())
		}
		if tc.status == 400 && w.Header().Get("x-ms-error-code") != "InvalidHeaderValue" {
			t.Fatalf("bad version: code %q", w.Header().Get("x-ms-error-code"))
		}
	}
	if seen == nil || seen.Account != "devstoreaccount1" || seen.Authenticated || !seen.Now.Equal(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("request context: %+v", seen)
	}
}

func TestErrorRendering(t *testing.T) {
	fail := func(err error) handlerFunc {
		return func(w http.ResponseWriter, r *Request) error { return err }
	}
	// XML with details, x-ms-error-code, no leak of internal errors.
	h := testServer(t, false, fail(azerr.InvalidHeader("x-ms-range", "bytes=x")))
	w := do(h, http.MethodGet, "/devstoreaccount1/c/b", nil)
	var body struct {
		Code, Message, HeaderName, HeaderValue string
	}
	if err := xml.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("xml body %q: %v", w.Body.String(), err)
	}
	if w.Code != 400 || body.Code != "InvalidHeaderValue" || body.HeaderName != "x-ms-range" || body.HeaderValue != "bytes=x" ||
		!strings.Contains(body.Message, "RequestId:"+w.Header().Get("x-ms-request-id")) || w.Header().Get("Content-Type") != "application/xml" {
		t.Fatalf("xml error: %d %+v %v", w.Code, body, w.Header())
	}
	// HEAD: status and code, no body.
	w = do(h, http.MethodHead, "/devstoreaccount1/c/b", nil)
	if w.Code != 400 || w.Header().Get("x-ms-error-code") != "InvalidHeaderValue" || w.Body.Len() != 0 {
		t.Fatalf("HEAD error: %d %q %q", w.Code, w.Header().Get("x-ms-error-code"), w.Body.String())
	}
	// 304 carries the code but no body.
	nm := azerr.New(azerr.ConditionNotMet).WithStatus(304)
	w = do(testServer(t, false, fail(nm)), http.MethodGet, "/devstoreaccount1/c/b", nil)
	if w.Code != 304 || w.Header().Get("x-ms-error-code") != "ConditionNotMet" || w.Body.Len() != 0 {
		t.Fatalf("304: %d %q", w.Code, w.Body.String())
	}
	// Unexpected errors are 500 InternalError without the cause.
	w = do(testServer(t, false, fail(errors.New("secret detail"))), http.MethodGet, "/devstoreaccount1/c/b", nil)
	if w.Code != 500 || w.Header().Get("x-ms-error-code") != "InternalError" || strings.Contains(w.Body.String(), "secret") {
		t.Fatalf("internal error: %d %q", w.Code, w.Body.String())
	}
	// Table: OData JSON.
	w = do(testServer(t, true, fail(azerr.New(azerr.ResourceNotFound))), http.MethodGet, "/devstoreaccount1/t", nil)
	var js map[string]struct {
		Code    string `json:"code"`
		Message struct{ Lang, Value string }
	}
	raw, _ := io.ReadAll(w.Body)
	if err := json.Unmarshal(raw, &js); err != nil || w.Code != 404 || js["odata.error"].Code != "ResourceNotFound" || js["odata.error"].Message.Lang != "en-US" {
		t.Fatalf("json error: %d %s %v", w.Code, raw, err)
	}
}

func TestAuthAndAccounts(t *testing.T) {
	h := testServer(t, false, func(w http.ResponseWriter, r *Request) error {
		w.WriteHeader(http.StatusOK)
		return nil
	})
	// An unknown account is 404 ResourceNotFound before any handler runs.
	w := do(h, http.MethodGet, "/nosuchaccount/c", nil)
	if w.Code != 404 || w.Header().Get("x-ms-error-code") != "ResourceNotFound" {
		t.Fatalf("unknown account: %d %q", w.Code, w.Header().Get("x-ms-error-code"))
	}
	// A bad signature is 403 AuthenticationFailed with a detail element.
	w = do(h, http.MethodGet, "/devstoreaccount1/c", map[string]string{
		"x-ms-date":     "Sun, 22 Nov 2026 10:00:00 GMT",
		"x-ms-version":  "2026-12-06",
		"Authorization": "SharedKey devstoreaccount1:" + base64.StdEncoding.EncodeToString(make([]byte, 32)),
	})
	if w.Code != 403 || w.Header().Get("x-ms-error-code") != "AuthenticationFailed" || !strings.Contains(w.Body.String(), "<AuthenticationErrorDetail>") {
		t.Fatalf("bad signature: %d %s", w.Code, w.Body.String())
	}
}

// wellFormedVersion accepts exactly what ^\d{4}-\d{2}-\d{2}$ matches.
func TestWellFormedVersion(t *testing.T) {
	for _, v := range []string{"2026-12-06", "2009-09-19", "", "2026-1-06", "2026-12-6", "20261-2-06", "2026/12/06", "2026-12-0a", "２026-12-06", "2026-12-06 ", " 2026-12-06", "0000-00-00"} {
		checkVersionForm(t, v)
	}
}

func FuzzWellFormedVersion(f *testing.F) {
	f.Add("2026-12-06")
	f.Fuzz(checkVersionForm)
}

var versionRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

func checkVersionForm(t *testing.T, v string) {
	if got, want := wellFormedVersion(v), versionRE.MatchString(v); got != want {
		t.Errorf("wellFormedVersion(%q) = %v, want %v", v, got, want)
	}
}

// TestRequestIDIsRandomUUID: every response carries a distinct
// x-ms-request-id in the service's form, a lower-case version 4 UUID.
func TestRequestIDIsRandomUUID(t *testing.T) {
	h := testServer(t, false, func(w http.ResponseWriter, r *Request) error {
		w.WriteHeader(http.StatusOK)
		return nil
	})
	seen := map[string]bool{}
	for range 100 {
		id := do(h, http.MethodGet, "/devstoreaccount1/c/b", nil).Header().Get("x-ms-request-id")
		u, err := uuid.Parse(id)
		if err != nil || u.String() != id || u.Version() != 4 || u.Variant() != uuid.RFC4122 {
			t.Fatalf("request id %q: %v", id, err)
		}
		if seen[id] {
			t.Fatalf("request id %q repeated", id)
		}
		seen[id] = true
	}
}
