package wire

import (
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

func TestParseMetadata(t *testing.T) {
	big := strings.Repeat("v", MaxMetadataSize-len("k"))
	tests := []struct {
		name string
		h    http.Header
		want map[string]string
		code string
	}{
		{"none", hdr("Content-Type", "text/plain"), map[string]string{}, ""},
		{"one", hdr("x-ms-meta-foo", "bar"), map[string]string{"foo": "bar"}, ""},
		{"lower-cased", hdr("x-ms-meta-MyKey", "v"), map[string]string{"mykey": "v"}, ""},
		{"names as sent (restored by the server)", http.Header{"x-ms-meta-Owner": {"me"}, "x-ms-meta-_x1": {"1"}}, map[string]string{"Owner": "me", "_x1": "1"}, ""},
		{"canonical keys lose the case", http.Header{"X-Ms-Meta-Owner": {"me"}, "X-Ms-Meta-Mykey": {"1"}}, map[string]string{"owner": "me", "mykey": "1"}, ""},
		{"underscore and digits", hdr("x-ms-meta-_a_1", "v"), map[string]string{"_a_1": "v"}, ""},
		{"empty value", hdr("x-ms-meta-k", ""), map[string]string{"k": ""}, ""},
		{"value with spaces and commas", hdr("x-ms-meta-k", "a, b"), map[string]string{"k": "a, b"}, ""},
		{"exactly 8 KiB", hdr("x-ms-meta-k", big), map[string]string{"k": big}, ""},
		{"other x-ms ignored", hdr("x-ms-metadata", "x", "x-ms-meta", "y"), map[string]string{}, ""},
		{"empty key", hdr("x-ms-meta-", "v"), nil, azerr.EmptyMetadataKey},
		{"starts with digit", hdr("x-ms-meta-1abc", "v"), nil, azerr.InvalidMetadata},
		{"dash", hdr("x-ms-meta-my-key", "v"), nil, azerr.InvalidMetadata},
		{"dot", hdr("x-ms-meta-a.b", "v"), nil, azerr.InvalidMetadata},
		{"non-ascii", http.Header{"X-Ms-Meta-Caf\u00e9": {"v"}}, nil, azerr.InvalidMetadata},
		{"repeated header", hdr("x-ms-meta-a", "1", "x-ms-meta-a", "2"), nil, azerr.InvalidMetadata},
		{"same name different case", http.Header{"X-Ms-Meta-Abc": {"1"}, "x-ms-meta-ABC": {"2"}}, nil, azerr.InvalidMetadata},
		{"too large", hdr("x-ms-meta-k", big+"v"), nil, azerr.MetadataTooLarge},
		{"too large across pairs", hdr("x-ms-meta-a", strings.Repeat("x", 4096), "x-ms-meta-b", strings.Repeat("x", 4095)), nil, azerr.MetadataTooLarge},
		{"empty slice ignored", http.Header{"X-Ms-Meta-A": {}}, map[string]string{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMetadata(tc.h)
			checkErr(t, err, tc.code)
			if tc.code == "" && !maps.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			if tc.code == "" && got == nil {
				t.Fatal("nil map on success")
			}
		})
	}
}

func TestParseMetadataDeterministicError(t *testing.T) {
	// Two different violations: the reported one must not depend on map
	// iteration order.
	h := http.Header{"X-Ms-Meta-": {"v"}, "X-Ms-Meta-1bad": {"v"}}
	for range 50 {
		_, err := ParseMetadata(h)
		checkErr(t, err, azerr.EmptyMetadataKey)
	}
}
