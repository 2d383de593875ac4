package svcpropsrest

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// owner and req stand for a service's front end and parsed request, as
// the route tables instantiate the handlers with them.
type owner struct{ p *svcprops.Service }

func (o owner) ServiceProperties() *svcprops.Service { return o.p }

type req struct{ *server.Request }

var now = time.Date(2026, 3, 1, 12, 4, 5, 0, time.UTC)

func newReq(method, body string, secondary bool) *req {
	hr := httptest.NewRequest(method, "/acct/?restype=service&comp=properties", strings.NewReader(body))
	return &req{&server.Request{Request: hr, Account: "acct", Now: now, Secondary: secondary}}
}

func newOwner(t *testing.T, k svcprops.Kind) owner {
	store := mem.New()
	t.Cleanup(func() { store.Close() })
	return owner{svcprops.New(k, store, func(a string) []byte { return kv.Key("sp", a) })}
}

func wantCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	e, ok := azerr.As(err)
	if !ok || e.Status != status || e.Code != code {
		t.Fatalf("want %d %s, got %v", status, code, err)
	}
}

// TestSetThenGet: Set answers 202 with no body and keeps the kind's
// elements only; Get answers 200 with the XML document.
func TestSetThenGet(t *testing.T) {
	for _, k := range []svcprops.Kind{svcprops.Blob, svcprops.File} {
		o := newOwner(t, k)
		w := httptest.NewRecorder()
		doc := `<StorageServiceProperties><DefaultServiceVersion>2020-10-02</DefaultServiceVersion><ShareDeleteRetentionPolicy><Enabled>true</Enabled><Days>5</Days></ShareDeleteRetentionPolicy></StorageServiceProperties>`
		if err := server.Typed(SetProperties[owner, *req])(o, w, newReq(http.MethodPut, doc, false)); err != nil {
			t.Fatal(err)
		}
		if w.Code != http.StatusAccepted || w.Body.Len() != 0 {
			t.Fatalf("%v: set answered %d %q", k, w.Code, w.Body)
		}
		w = httptest.NewRecorder()
		if err := server.Typed(GetProperties[owner, *req])(o, w, newReq(http.MethodGet, "", false)); err != nil {
			t.Fatal(err)
		}
		body := w.Body.String()
		if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/xml" || !strings.HasPrefix(body, server.XMLDeclaration+"<StorageServiceProperties>") {
			t.Fatalf("%v: get answered %d %q %q", k, w.Code, w.Header().Get("Content-Type"), body)
		}
		blobOnly := strings.Contains(body, "<DefaultServiceVersion>2020-10-02</DefaultServiceVersion>")
		fileOnly := strings.Contains(body, "<ShareDeleteRetentionPolicy><Enabled>true</Enabled><Days>5</Days>")
		if blobOnly != (k == svcprops.Blob) || fileOnly != (k == svcprops.File) {
			t.Fatalf("%v: kept %q", k, body)
		}
	}
}

// failReader fails the test's Set if the handler reads the body.
type failReader struct{ read *bool }

func (f failReader) Read([]byte) (int, error) { *f.read = true; return 0, errors.New("read") }

// TestSetRefusesDeclaredLengthUnread: a declared length over 64 KiB is
// 413 before any of the body is read; a malformed body is 400
// InvalidXmlDocument and nothing is written.
func TestSetRefusesDeclaredLengthUnread(t *testing.T) {
	o := newOwner(t, svcprops.Queue)
	r := newReq(http.MethodPut, "", false)
	var read bool
	r.Body, r.ContentLength = io.NopCloser(failReader{&read}), 64<<10+1
	w := httptest.NewRecorder()
	wantCode(t, server.Typed(SetProperties[owner, *req])(o, w, r), 413, azerr.RequestBodyTooLarge)
	if read {
		t.Fatal("the body was read")
	}
	wantCode(t, server.Typed(SetProperties[owner, *req])(o, w, newReq(http.MethodPut, "<StorageServiceProperties><Cors>", false)), 400, azerr.InvalidXMLDocument)
	if w.Code != http.StatusOK || w.Body.Len() != 0 {
		t.Fatalf("an error wrote %d %q", w.Code, w.Body)
	}
}

// TestStatsOnSecondaryOnly: Get Service Stats is 400 naming comp=stats on
// the primary, 200 with the request's time as LastSyncTime on the
// secondary.
func TestStatsOnSecondaryOnly(t *testing.T) {
	o := newOwner(t, svcprops.Table)
	w := httptest.NewRecorder()
	err := server.Typed(GetStats[owner, *req])(o, w, newReq(http.MethodGet, "", false))
	wantCode(t, err, 400, azerr.InvalidQueryParameterValue)
	if e, _ := azerr.As(err); len(e.Details) != 2 || e.Details[0].Value != "comp" || e.Details[1].Value != "stats" {
		t.Fatalf("details %+v", e.Details)
	}
	if err := server.Typed(GetStats[owner, *req])(o, w, newReq(http.MethodGet, "", true)); err != nil {
		t.Fatal(err)
	}
	want := server.XMLDeclaration + `<StorageServiceStats><GeoReplication><Status>live</Status><LastSyncTime>Sun, 01 Mar 2026 12:04:05 GMT</LastSyncTime></GeoReplication></StorageServiceStats>`
	if w.Code != http.StatusOK || w.Body.String() != want {
		t.Fatalf("secondary answered %d %q", w.Code, w.Body)
	}
}
