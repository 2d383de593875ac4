package e2e

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/xsm"
)

func smHeaders(n int) map[string]string {
	return map[string]string{"x-ms-structured-body": xsm.HeaderValue, "x-ms-structured-content-length": strconv.Itoa(n)}
}

// smRawFile sends a Shared Key request to the File service at url.
func smRawFile(t *testing.T, method, url string, hdr map[string]string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	must(t, err)
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("x-ms-version", "2026-12-06")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if len(body) > 0 {
		req.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	key, _ := base64.StdEncoding.DecodeString(app.DevKey)
	sts := auth.StringToSign(req, auth.File, auth.SharedKey, app.DevAccount, auth.CultureOrder)
	req.Header.Set("Authorization", "SharedKey "+app.DevAccount+":"+auth.ComputeSignature(key, sts))
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	got, err := io.ReadAll(resp.Body)
	must(t, err)
	resp.Body.Close()
	return resp, got
}

func smWith(m map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// TestStructuredFileRange: Put Range takes a structured message (stored
// as its content, acknowledged with x-ms-structured-body and the
// content's CRC64), refuses a corrupt or truncated one leaving the range
// as it was, and Get File answers a structured response for a range.
// Before the change the File service stored the framing as content.
func TestStructuredFileRange(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := e.mkfile(s, "f", 1<<20)
	url := f.URL()
	data := smData(200 << 10)
	off := int64(4096)
	rangeHdr := fmt.Sprintf("bytes=%d-%d", off, off+int64(len(data))-1)
	put := smWith(smHeaders(len(data)), "x-ms-write", "update", "x-ms-range", rangeHdr)
	for _, seg := range []int64{1 << 10, 64 << 10, 0} {
		resp, _ := smRawFile(t, http.MethodPut, url+"?comp=range", put, xsm.Encode(data, seg))
		if resp.StatusCode != 201 || resp.Header.Get("x-ms-structured-body") != xsm.HeaderValue ||
			resp.Header.Get("x-ms-content-crc64") != base64.StdEncoding.EncodeToString(smCRC(data)) {
			t.Fatalf("seg %d: %d %s, x-ms-structured-body %q", seg, resp.StatusCode, resp.Header.Get("x-ms-error-code"), resp.Header.Get("x-ms-structured-body"))
		}
		if got := e.read(f, off, int64(len(data))); !bytes.Equal(got, data) {
			t.Fatalf("seg %d: range read back differs", seg)
		}
	}
	// Corrupt and truncated messages over that range change nothing.
	other := smData(len(data) + 1)[1:]
	bad := xsm.Encode(other, 0)
	bad[13+10+100] ^= 1
	for name, msg := range map[string][]byte{"corrupt": bad, "truncated": xsm.Encode(other, 0)[:1000]} {
		resp, _ := smRawFile(t, http.MethodPut, url+"?comp=range", put, msg)
		want := map[string]string{"corrupt": "Crc64Mismatch", "truncated": "InvalidInput"}[name]
		if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != want {
			t.Fatalf("%s: %d %s, want 400 %s", name, resp.StatusCode, resp.Header.Get("x-ms-error-code"), want)
		}
		if got := e.read(f, off, int64(len(data))); !bytes.Equal(got, data) {
			t.Fatalf("%s: the range changed", name)
		}
	}
	// Get File, structured, a range and the whole file.
	whole := make([]byte, 1<<20)
	copy(whole[off:], data)
	for _, rg := range [][2]int64{{off, int64(len(data))}, {0, 1 << 20}, {100, 1}} {
		hdr := smWith(map[string]string{"x-ms-structured-body": xsm.HeaderValue}, "x-ms-range", fmt.Sprintf("bytes=%d-%d", rg[0], rg[0]+rg[1]-1))
		resp, body := smRawFile(t, http.MethodGet, url, hdr, nil)
		if resp.StatusCode != 206 || resp.Header.Get("x-ms-structured-body") != xsm.HeaderValue || resp.Header.Get("x-ms-structured-content-length") != strconv.FormatInt(rg[1], 10) {
			t.Fatalf("Get File %v: %d, headers %v", rg, resp.StatusCode, resp.Header)
		}
		got, err := xsm.Decode(body, rg[1])
		if err != nil || !bytes.Equal(got, whole[rg[0]:rg[0]+rg[1]]) {
			t.Fatalf("Get File %v: %v", rg, err)
		}
	}
	// Another operation refuses the header.
	resp, _ := smRawFile(t, http.MethodPut, url+"?comp=metadata", map[string]string{"x-ms-structured-body": xsm.HeaderValue}, nil)
	if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != "UnsupportedHeader" {
		t.Fatalf("Set File Metadata with x-ms-structured-body: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
}

// TestStructuredDataLakeAppend: Data Lake Append Data takes a structured
// message; a corrupt one appends nothing (the next append at the same
// position succeeds); Read answers a structured response. Before the
// change the append was 400 UnsupportedHeader.
func TestStructuredDataLakeAppend(t *testing.T) {
	e := startDL(t, true)
	e.mkfs("smfs")
	resp, _ := e.raw(http.MethodPut, "/smfs/f?resource=file", nil, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	data := smData(150 << 10)
	bad := xsm.Encode(data, 32<<10)
	bad[len(bad)-1] ^= 1
	resp, _ = e.raw(http.MethodPatch, "/smfs/f?action=append&position=0", smHeaders(len(data)), bad)
	if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != "Crc64Mismatch" {
		t.Fatalf("corrupt append: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	resp, _ = e.raw(http.MethodPatch, "/smfs/f?action=append&position=0", smHeaders(len(data)), xsm.Encode(data, 32<<10))
	if resp.StatusCode != 202 || resp.Header.Get("x-ms-structured-body") != xsm.HeaderValue {
		t.Fatalf("append: %d %s, x-ms-structured-body %q", resp.StatusCode, resp.Header.Get("x-ms-error-code"), resp.Header.Get("x-ms-structured-body"))
	}
	resp, _ = e.raw(http.MethodPatch, fmt.Sprintf("/smfs/f?action=flush&position=%d", len(data)), nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("flush: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	resp, body := e.raw(http.MethodGet, "/smfs/f", map[string]string{"x-ms-structured-body": xsm.HeaderValue}, nil)
	if resp.StatusCode != 200 || resp.Header.Get("x-ms-structured-content-length") != strconv.Itoa(len(data)) {
		t.Fatalf("read: %d %v", resp.StatusCode, resp.Header)
	}
	got, err := xsm.Decode(body, int64(len(data)))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read: %v", err)
	}
}
