package xsm

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

func smRequest(msg []byte, hdr map[string]string) *http.Request {
	hr := httptest.NewRequest(http.MethodPut, "/a/c/b", bytes.NewReader(msg))
	for k, v := range hdr {
		hr.Header.Set(k, v)
	}
	return hr
}

func TestDecodeRequestHeaders(t *testing.T) {
	msg := Encode([]byte("hello"), 0)
	// No structured body: nothing changes.
	hr := smRequest(msg, nil)
	if d, err := DecodeRequest(hr); d != nil || err != nil || hr.ContentLength != int64(len(msg)) {
		t.Fatalf("plain body: %v %v, length %d", d, err, hr.ContentLength)
	}
	for _, c := range []struct {
		hdr  map[string]string
		code string
	}{
		{map[string]string{hBody: "XSM/1.0"}, azerr.InvalidHeaderValue},
		{map[string]string{hBody: "XSM/1.1; properties=crc64", hContentLength: "5"}, azerr.InvalidHeaderValue},
		{map[string]string{hBody: HeaderValue}, azerr.MissingRequiredHeader},
		{map[string]string{hBody: HeaderValue, hContentLength: "-1"}, azerr.InvalidHeaderValue},
		{map[string]string{hBody: HeaderValue, hContentLength: "five"}, azerr.InvalidHeaderValue},
		{map[string]string{hBody: HeaderValue, hContentLength: "6"}, azerr.InvalidInput},
	} {
		_, err := DecodeRequest(smRequest(msg, c.hdr))
		if e, ok := azerr.As(err); !ok || e.Code != c.code {
			t.Fatalf("%v: %v, want %s", c.hdr, err, c.code)
		}
	}
	// Spelled differently but meaning the same.
	hr = smRequest(msg, map[string]string{hBody: "xsm/1.0;properties=CRC64", hContentLength: "5"})
	d, err := DecodeRequest(hr)
	if err != nil || hr.ContentLength != 5 {
		t.Fatalf("good: %v, length %d", err, hr.ContentLength)
	}
	got, err := io.ReadAll(hr.Body)
	if err != nil || string(got) != "hello" || !d.Done() {
		t.Fatalf("body %q, %v", got, err)
	}
}

func TestAcknowledge(t *testing.T) {
	msg := Encode([]byte("hello"), 0)
	hr := smRequest(msg, map[string]string{hBody: HeaderValue, hContentLength: "5"})
	d, err := DecodeRequest(hr)
	if err != nil {
		t.Fatal(err)
	}
	// Not yet read: a 201 carries no acknowledgement.
	rec := httptest.NewRecorder()
	Acknowledge(rec, d).WriteHeader(http.StatusCreated)
	if rec.Header().Get(hBody) != "" {
		t.Fatal("acknowledged a message not read")
	}
	_, _ = io.ReadAll(hr.Body)
	rec = httptest.NewRecorder()
	Acknowledge(rec, d).WriteHeader(http.StatusCreated)
	if rec.Header().Get(hBody) != HeaderValue || rec.Header().Get("x-ms-content-crc64") != d.CRC64() {
		t.Fatalf("201 headers %v", rec.Header())
	}
	rec = httptest.NewRecorder()
	Acknowledge(rec, d).WriteHeader(http.StatusConflict)
	if rec.Header().Get(hBody) != "" {
		t.Fatal("acknowledged a failed write")
	}
	if w := Acknowledge(rec, nil); w != http.ResponseWriter(rec) {
		t.Fatal("a plain write's writer was wrapped")
	}
}

func TestWantedAndServe(t *testing.T) {
	h := http.Header{}
	if ok, err := Wanted(h); ok || err != nil {
		t.Fatal("wanted without the header")
	}
	h.Set(hBody, HeaderValue)
	if ok, err := Wanted(h); !ok || err != nil {
		t.Fatalf("Wanted = %v, %v", ok, err)
	}
	h.Set("x-ms-range-get-content-md5", "true")
	if _, err := Wanted(h); !azerr.Has(err, azerr.InvalidHeaderValue) {
		t.Fatalf("with a range MD5: %v", err)
	}
	for _, n := range []int{0, 1, 10 << 20} {
		content := data(n)
		rec := httptest.NewRecorder()
		rec.Header().Set("Content-Length", strconv.Itoa(n)) // as the plain read set it
		hr := httptest.NewRequest(http.MethodGet, "/a/c/b", nil)
		Serve(rec, hr, http.StatusPartialContent, int64(n), func(w http.ResponseWriter) { _, _ = w.Write(content) })
		if rec.Code != http.StatusPartialContent || rec.Header().Get(hContentLength) != strconv.Itoa(n) ||
			rec.Header().Get("Content-Length") != strconv.Itoa(rec.Body.Len()) {
			t.Fatalf("n=%d: %d, headers %v, body %d bytes", n, rec.Code, rec.Header(), rec.Body.Len())
		}
		got, err := Decode(rec.Body.Bytes(), int64(n))
		if err != nil || !bytes.Equal(got, content) {
			t.Fatalf("n=%d: %v", n, err)
		}
	}
}
