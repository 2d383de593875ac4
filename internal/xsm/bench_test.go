package xsm

import (
	"bytes"
	"io"
	"testing"
)

// BenchmarkDecode decodes an 8 MiB message in 4 MiB segments, as the SDK
// sends by default, read in 256 KiB pieces as staging reads.
func BenchmarkDecode(b *testing.B) {
	content := data(8 << 20)
	msg := Encode(content, 0)
	buf := make([]byte, 256<<10)
	b.SetBytes(int64(len(content)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := NewDecoder(bytes.NewReader(msg), int64(len(msg)), int64(len(content)))
		if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{d}, buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncode frames 8 MiB written in 256 KiB pieces, as Get Blob
// sends.
func BenchmarkEncode(b *testing.B) {
	content := data(8 << 20)
	b.SetBytes(int64(len(content)))
	for i := 0; i < b.N; i++ {
		e := NewEncoder(io.Discard, int64(len(content)), 0)
		for p := content; len(p) > 0; p = p[256<<10:] {
			if _, err := e.Write(p[:256<<10]); err != nil {
				b.Fatal(err)
			}
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
