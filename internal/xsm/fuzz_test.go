package xsm

import (
	"bytes"
	"hash/crc64"
	"io"
	"testing"
	"testing/iotest"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
)

// FuzzDecode feeds arbitrary messages to the decoder: it never panics,
// every failure is an Azure 400, and whatever it accepts is exactly
// contentLen bytes whose re-encoding in the same segment size decodes to
// the same bytes, the same whether read whole or a byte at a time.
func FuzzDecode(f *testing.F) {
	f.Add(Encode([]byte("hello, world"), 0), int64(12))
	f.Add(Encode(data(100), 7), int64(100))
	f.Add(Encode(nil, 0), int64(0))
	f.Add([]byte{1, 0, 0}, int64(0))
	f.Fuzz(func(t *testing.T, msg []byte, contentLen int64) {
		if contentLen < 0 || contentLen > 1<<20 {
			return
		}
		out, err := Decode(msg, contentLen)
		d := NewDecoder(iotest.OneByteReader(bytes.NewReader(msg)), -1, contentLen)
		out2, err2 := io.ReadAll(d)
		if err != nil {
			if e, ok := azerr.As(err); !ok || e.Status != 400 {
				t.Fatalf("error %v is not an Azure 400", err)
			}
			return
		}
		if err2 != nil || !bytes.Equal(out, out2) {
			t.Fatalf("streamed decode differs: %v", err2)
		}
		if int64(len(out)) != contentLen {
			t.Fatalf("decoded %d bytes, want %d", len(out), contentLen)
		}
		if d.CRC64() != crcText(crc64.Checksum(out, extent.CRC64Table)) {
			t.Fatal("CRC64 of the accepted content is wrong")
		}
	})
}

// FuzzRoundTrip: any content in any segment size decodes to itself.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("abc"), int64(1))
	f.Add(data(1000), int64(0))
	f.Fuzz(func(t *testing.T, content []byte, seg int64) {
		msg := Encode(content, seg)
		out, err := Decode(msg, int64(len(content)))
		if err != nil || !bytes.Equal(out, content) {
			t.Fatalf("round trip (seg %d): %v", seg, err)
		}
	})
}
