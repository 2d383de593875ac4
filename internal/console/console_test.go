package console

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/server"
)

var testKey = []byte("console-test-key")

func testHandler(t *testing.T, upstream http.Handler) (http.Handler, *Activity) {
	t.Helper()
	up := httptest.NewServer(upstream)
	t.Cleanup(up.Close)
	act := NewActivity(3)
	h := Handler(Config{
		Services: map[string]string{"blob": up.URL},
		Accounts: func(n string) (auth.Account, bool) {
			return auth.Account{Name: n, Keys: [][]byte{testKey}}, n == "acct"
		},
		AccountNames: []string{"acct"},
		DevAccount:   "acct", DevKey: base64.StdEncoding.EncodeToString(testKey),
		Activity: act,
	})
	return h, act
}

// sign signs r with Shared Key as the page does: over r's path with
// prefix taken off.
func sign(t *testing.T, r *http.Request, prefix string) {
	t.Helper()
	r.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	r.Header.Set("x-ms-version", "2021-12-02")
	signed := r.Clone(r.Context())
	signed.URL.Path = strings.TrimPrefix(r.URL.Path, prefix)
	signed.RequestURI = signed.URL.RequestURI()
	sts := auth.StringToSign(signed, auth.Blob, auth.SharedKey, "acct", auth.CultureOrder)
	r.Header.Set("Authorization", "SharedKey acct:"+auth.ComputeSignature(testKey, sts))
}

// TestProxy: a request under /api/blob/ reaches the service with the
// prefix taken off its path (escapes kept), its query and Authorization
// unchanged, and without the browser's Origin, Referer and Cookie.
func TestProxy(t *testing.T) {
	var got *http.Request
	h, _ := testHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		w.Header().Set("x-ms-request-id", "up")
		w.WriteHeader(http.StatusCreated)
	}))
	r := httptest.NewRequest(http.MethodPut, "/api/blob/acct/c/a%20b%2Fc?comp=lease&x=1", strings.NewReader("body"))
	r.Header.Set("Authorization", "SharedKey acct:sig")
	r.Header.Set("Origin", "http://127.0.0.1:1")
	r.Header.Set("Referer", "http://127.0.0.1:1/")
	r.Header.Set("Cookie", "a=b")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusCreated || w.Header().Get("x-ms-request-id") != "up" {
		t.Fatalf("answer %d %v", w.Code, w.Header())
	}
	if got.URL.EscapedPath() != "/acct/c/a%20b%2Fc" || got.URL.RawQuery != "comp=lease&x=1" || got.Header.Get("Authorization") != "SharedKey acct:sig" {
		t.Errorf("upstream saw %s %q %q", got.URL.EscapedPath(), got.URL.RawQuery, got.Header.Get("Authorization"))
	}
	for _, hd := range []string{"Origin", "Referer", "Cookie", "X-Forwarded-For"} {
		if v := got.Header.Get(hd); v != "" {
			t.Errorf("upstream got %s: %q", hd, v)
		}
	}
	if got.ContentLength != 4 {
		t.Errorf("upstream content length %d", got.ContentLength)
	}
}

// TestInspectAuthorization: the console's own endpoints answer only a
// request signed with the account's key, over the path without /x; the
// activity list holds that account's requests only, newest first.
func TestInspectAuthorization(t *testing.T) {
	h, act := testHandler(t, http.NotFoundHandler())
	for i, acct := range []string{"acct", "other", "acct", "acct", "acct"} {
		act.Add(server.Exchange{Account: acct, Op: "op" + string(rune('0'+i)), Status: 200, RequestID: "r"})
	}
	r := httptest.NewRequest(http.MethodGet, "/x/acct/activity", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden {
		t.Fatalf("unsigned: %d %s", w.Code, w.Body)
	}
	r = httptest.NewRequest(http.MethodGet, "/x/acct/activity", nil)
	sign(t, r, "")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden {
		t.Fatalf("signed over the path with /x: %d", w.Code)
	}
	r = httptest.NewRequest(http.MethodGet, "/x/acct/activity", nil)
	sign(t, r, "/x")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("signed: %d %s", w.Code, w.Body)
	}
	var out struct{ Requests []activityEntry }
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	// The ring holds 3: the last three, all acct's, newest first.
	if len(out.Requests) != 3 || out.Requests[0].Operation != "op4" || out.Requests[2].Operation != "op2" {
		t.Errorf("activity %+v", out.Requests)
	}
	r = httptest.NewRequest(http.MethodGet, "/x/other/activity", nil)
	sign(t, r, "/x") // signed as acct for other's URL
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden {
		t.Errorf("another account's activity: %d", w.Code)
	}
}

// TestConfigDevKeyOnLoopback: the dev key reaches a browser on loopback
// only; the static files are served and only to GET and HEAD, with a
// policy that forbids loading anything from elsewhere.
func TestConfigDevKeyOnLoopback(t *testing.T) {
	h, _ := testHandler(t, http.NotFoundHandler())
	for _, tc := range []struct {
		remote string
		dev    bool
	}{{"127.0.0.1:5000", true}, {"[::1]:5000", true}, {"192.0.2.7:5000", false}} {
		r := httptest.NewRequest(http.MethodGet, "/config.json", nil)
		r.RemoteAddr = tc.remote
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var cfg map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &cfg)
		if _, ok := cfg["dev"]; ok != tc.dev {
			t.Errorf("from %s: dev key given %v", tc.remote, ok)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	body, _ := io.ReadAll(w.Body)
	if w.Code != 200 || !strings.Contains(string(body), "<script src=\"app.js\">") || !strings.Contains(w.Header().Get("Content-Security-Policy"), "default-src 'self'") {
		t.Errorf("index: %d %v", w.Code, w.Header())
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/app.js", nil))
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /app.js: %d", w.Code)
	}
}
