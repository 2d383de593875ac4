package blobrest

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
)

// FuzzParseExpiry: any x-ms-expiry-option / x-ms-expiry-time pair is
// either a typed Set Blob Expiry input or a 400 naming a header; the
// typed input is consistent with its option.
func FuzzParseExpiry(f *testing.F) {
	for _, c := range [][2]string{{"RelativeToNow", "30000"}, {"relativetocreation", "0"}, {"Absolute", "Mon, 02 Jan 2006 15:04:05 GMT"},
		{"NeverExpire", ""}, {"NeverExpire", "5"}, {"Absolute", "yesterday"}, {"", "1"}, {"Sometime", "1"}, {"RelativeToNow", "-1"}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, opt, val string) {
		h := http.Header{}
		h.Set("x-ms-expiry-option", opt)
		h.Set("x-ms-expiry-time", val)
		in, err := parseExpiry(h)
		if err != nil {
			var e *azerr.Error
			if !errors.As(err, &e) || e.Status != 400 {
				t.Fatalf("%q %q: %v", opt, val, err)
			}
			return
		}
		switch in.Option {
		case blob.ExpiryNever:
			if in.Relative != 0 || !in.At.IsZero() {
				t.Fatalf("NeverExpire with a time: %+v", in)
			}
		case blob.ExpiryAbsolute:
			if in.At.IsZero() || in.Relative != 0 {
				t.Fatalf("Absolute: %+v", in)
			}
		case blob.ExpiryRelativeToNow, blob.ExpiryRelativeToCreation:
			if in.Relative < 0 || in.Relative > 100*365*24*time.Hour || !in.At.IsZero() {
				t.Fatalf("relative: %+v", in)
			}
		default:
			t.Fatalf("option %q accepted as %q", opt, in.Option)
		}
	})
}
