package extent

import "testing"

// FuzzSplice: splicing keeps parts sorted, non-overlapping and inside the
// written ranges, whatever the sequence of page writes and clears.
func FuzzSplice(f *testing.F) {
	f.Add([]byte{0, 4, 1, 2, 8, 0, 3, 1, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var parts []Part
		for i := 0; i+2 < len(ops); i += 3 {
			off, n := int64(ops[i])*512, int64(ops[i+1]%16+1)*512
			var repl *Part
			if ops[i+2]%2 == 0 {
				repl = &Part{Off: off, Len: n, ID: string(rune('a' + i%26))}
			}
			parts = Splice(parts, off, n, repl)
			for j := range parts {
				if parts[j].Len <= 0 {
					t.Fatalf("empty part %+v", parts[j])
				}
				if j > 0 && parts[j-1].End() > parts[j].Off {
					t.Fatalf("parts overlap or unsorted: %+v", parts)
				}
			}
		}
	})
}
