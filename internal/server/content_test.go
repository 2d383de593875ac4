package server

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// TestParseDigests: the transactional Content-MD5 and x-ms-content-crc64
// of a request, parsed for the byte layer, keep the client's spelling;
// malformed values are 400 InvalidMd5 and InvalidCrc64.
func TestParseDigests(t *testing.T) {
	md5v := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 16))
	crcv := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 8))
	for _, tc := range []struct {
		name     string
		hdr      map[string]string
		wantErr  string
		md5, crc bool
	}{
		{name: "none"},
		{name: "md5", hdr: map[string]string{"Content-MD5": md5v}, md5: true},
		{name: "crc64", hdr: map[string]string{"x-ms-content-crc64": crcv}, crc: true},
		{name: "both", hdr: map[string]string{"Content-MD5": md5v, "x-ms-content-crc64": crcv}, md5: true, crc: true},
		{name: "malformed md5", hdr: map[string]string{"Content-MD5": "nope"}, wantErr: azerr.InvalidMD5},
		{name: "malformed crc64", hdr: map[string]string{"x-ms-content-crc64": "AAAA"}, wantErr: azerr.InvalidCRC64},
		{name: "crc64 not base64", hdr: map[string]string{"x-ms-content-crc64": "not-base64!"}, wantErr: azerr.InvalidCRC64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.hdr {
				h.Set(k, v)
			}
			d, err := ParseDigests(h)
			code := ""
			if ae, ok := azerr.As(err); ok {
				code = ae.Code
			} else if err != nil {
				t.Fatalf("not an Azure error: %v", err)
			}
			if code != tc.wantErr {
				t.Fatalf("error %q, want %q", code, tc.wantErr)
			}
			if err != nil {
				return
			}
			if (d.MD5 != nil) != tc.md5 || (d.CRC64 != nil) != tc.crc {
				t.Fatalf("digests %+v", d)
			}
			if tc.md5 && d.MD5Text != md5v || tc.crc && d.CRC64Text != crcv {
				t.Fatalf("spellings %q %q", d.MD5Text, d.CRC64Text)
			}
			// A write answers with what it stored, in the same headers.
			out := http.Header{}
			SetDigests(out, d)
			for _, k := range []string{"Content-MD5", "x-ms-content-crc64"} {
				if out.Get(k) != h.Get(k) {
					t.Fatalf("echoed %s = %q, want %q", k, out.Get(k), h.Get(k))
				}
			}
		})
	}
}
