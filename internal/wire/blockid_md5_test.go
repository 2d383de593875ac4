package wire

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

func TestDecodeBlockID(t *testing.T) {
	id64 := bytes.Repeat([]byte{0xAB}, 64)
	tests := []struct {
		name string
		in   string
		want []byte
		code string
	}{
		{"sdk 64-byte id", base64.StdEncoding.EncodeToString(id64), id64, ""},
		{"uuid string id", base64.StdEncoding.EncodeToString([]byte("6ba7b810-9dad-11d1-80b4-00c04fd430c8")), []byte("6ba7b810-9dad-11d1-80b4-00c04fd430c8"), ""},
		{"one byte", "Mg==", []byte("2"), ""},
		{"plus and slash", "+/+/", []byte{0xfb, 0xff, 0xbf}, ""},
		{"empty", "", nil, azerr.InvalidBlockID},
		{"65 bytes", base64.StdEncoding.EncodeToString(make([]byte, 65)), nil, azerr.InvalidBlockID},
		{"url-safe alphabet", "-_-_", nil, azerr.InvalidBlockID},
		{"unpadded", "Mg", nil, azerr.InvalidBlockID},
		{"bad padding", "M===", nil, azerr.InvalidBlockID},
		{"non-zero pad bits", "Mh==", nil, azerr.InvalidBlockID},
		{"newline", "Mg==\n", nil, azerr.InvalidBlockID},
		{"embedded CRLF", "YW\r\nJj", nil, azerr.InvalidBlockID},
		{"space", "Mg ==", nil, azerr.InvalidBlockID},
		{"not base64", "block-1", nil, azerr.InvalidBlockID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeBlockID(tc.in)
			checkErr(t, err, tc.code)
			if tc.code == "" && !bytes.Equal(got, tc.want) {
				t.Fatalf("got %x, want %x", got, tc.want)
			}
		})
	}
}

func TestParseContentMD5(t *testing.T) {
	sum := md5.Sum([]byte("hello"))
	good := base64.StdEncoding.EncodeToString(sum[:])
	tests := []struct {
		name string
		in   string
		code string
	}{
		{"valid", good, ""},
		{"empty content md5", "1B2M2Y8AsgTpgAmY7PhCfg==", ""},
		{"empty", "", azerr.InvalidMD5},
		{"hex", "5d41402abc4b2a76b9719d911017c592", azerr.InvalidMD5},
		{"15 bytes", base64.StdEncoding.EncodeToString(make([]byte, 15)), azerr.InvalidMD5},
		{"17 bytes", base64.StdEncoding.EncodeToString(make([]byte, 17)), azerr.InvalidMD5},
		{"sha256", base64.StdEncoding.EncodeToString(make([]byte, 32)), azerr.InvalidMD5},
		{"unpadded", strings.TrimRight(good, "="), azerr.InvalidMD5},
		{"newline", good[:10] + "\n" + good[10:], azerr.InvalidMD5},
		{"garbage", "not-an-md5!", azerr.InvalidMD5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseContentMD5(tc.in)
			checkErr(t, err, tc.code)
			if tc.code == "" && len(got) != 16 {
				t.Fatalf("len %d", len(got))
			}
			if tc.name == "valid" && !bytes.Equal(got, sum[:]) {
				t.Fatalf("got %x want %x", got, sum)
			}
		})
	}
}
