package extent

import (
	"bytes"
	"fmt"
	"hash/crc64"
	"math/rand/v2"
	"testing"
)

// The Storage CRC-64 eight bytes a step gives hash/crc64's sums for
// every length and every split of the writes.
func TestCRC64MatchesHashCRC64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 5000)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	for n := 0; n <= len(b); n += 1 + n/7 {
		p := b[:n]
		want := crc64.Checksum(p, CRC64Table)
		if got := UpdateCRC64(0, p); got != want {
			t.Fatalf("UpdateCRC64 of %d bytes = %#x, want %#x", n, got, want)
		}
		h, ref := NewCRC64(), crc64.New(CRC64Table)
		for rest := p; len(rest) > 0; {
			k := min(len(rest), 1+r.IntN(300))
			h.Write(rest[:k])
			ref.Write(rest[:k])
			rest = rest[k:]
		}
		if h.Sum64() != want || !bytes.Equal(h.Sum([]byte("x")), ref.Sum([]byte("x"))) || h.Size() != ref.Size() || h.BlockSize() != ref.BlockSize() {
			t.Fatalf("NewCRC64 of %d bytes in pieces = %#x (%x), want %#x (%x)", n, h.Sum64(), h.Sum(nil), want, ref.Sum(nil))
		}
		h.Reset()
		if h.Sum64() != 0 {
			t.Fatal("Reset left a sum")
		}
	}
}

func FuzzCRC64(f *testing.F) {
	f.Add([]byte("hello, world"), uint(3))
	f.Add(make([]byte, 2048), uint(1000))
	f.Fuzz(func(t *testing.T, p []byte, cut uint) {
		k := int(cut % uint(len(p)+1))
		if got, want := UpdateCRC64(UpdateCRC64(0, p[:k]), p[k:]), crc64.Checksum(p, CRC64Table); got != want {
			t.Fatalf("CRC64 of %d bytes cut at %d = %#x, want %#x", len(p), k, got, want)
		}
	})
}

func BenchmarkCRC64(b *testing.B) {
	for _, n := range []int{1 << 10, 64 << 10} {
		p := make([]byte, n)
		b.Run(fmt.Sprintf("ours/%dKiB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(n))
			h := NewCRC64()
			for b.Loop() {
				h.Write(p)
			}
		})
		b.Run(fmt.Sprintf("hash-crc64/%dKiB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(n))
			h := crc64.New(CRC64Table)
			for b.Loop() {
				h.Write(p)
			}
		})
	}
}
