package blob

import (
	"encoding/xml"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// FuzzListMarker: any marker string either decodes or is rejected; a
// decoded marker re-encodes to itself.
func FuzzListMarker(f *testing.F) {
	f.Add(encodeMarker("b", "dir/a b.txt", ""))
	f.Add(encodeMarker("p", "dir/", ""))
	f.Add(encodeMarker("b", "x", "2026-11-22T00:00:00.0000000Z"))
	f.Add("b.")
	f.Add("zzz")
	f.Fuzz(func(t *testing.T, m string) {
		kind, name, snap, ok := decodeMarker(m)
		if !ok {
			return
		}
		if back := encodeMarker(kind, name, snap); back != m {
			if k2, n2, s2, ok2 := decodeMarker(back); !ok2 || k2 != kind || n2 != name || s2 != snap {
				t.Fatalf("marker %q decoded to (%q,%q,%q) which does not round-trip", m, kind, name, snap)
			}
		}
	})
}

// FuzzServiceProperties: arbitrary bodies never panic the decoder, and a
// decoded document re-encodes and decodes to the same value.
func FuzzServiceProperties(f *testing.F) {
	f.Add([]byte(`<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders>*</AllowedHeaders><ExposedHeaders>*</ExposedHeaders><MaxAgeInSeconds>5</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`))
	f.Add([]byte(`<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var p svcprops.Properties
		if xml.Unmarshal(body, &p) == nil {
			out, err := xml.Marshal(p)
			if err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			var q svcprops.Properties
			if err := xml.Unmarshal(out, &q); err != nil {
				t.Fatalf("decode of our own output %q: %v", out, err)
			}
		}
		var acl signedIdentifiers
		_ = xml.Unmarshal(body, &acl)
	})
}
