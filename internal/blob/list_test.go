package blob

import "testing"

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
