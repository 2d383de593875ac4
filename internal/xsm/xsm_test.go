package xsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc64"
	"io"
	"math/rand"
	"testing"
	"testing/iotest"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
)

func data(n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(int64(n))).Read(b)
	return b
}

// TestKnownLayout builds the message for "abc" by hand from the format
// ("Structured Body Format") and checks Encode produces it byte for byte.
func TestKnownLayout(t *testing.T) {
	content := []byte("abc")
	crc := crc64.Checksum(content, extent.CRC64Table)
	var want []byte
	want = append(want, 1)
	want = binary.LittleEndian.AppendUint64(want, 13+10+3+8+8)
	want = binary.LittleEndian.AppendUint16(want, 1)
	want = binary.LittleEndian.AppendUint16(want, 1)
	want = binary.LittleEndian.AppendUint16(want, 1)
	want = binary.LittleEndian.AppendUint64(want, 3)
	want = append(want, content...)
	want = binary.LittleEndian.AppendUint64(want, crc)
	want = binary.LittleEndian.AppendUint64(want, crc)
	if got := Encode(content, 0); !bytes.Equal(got, want) {
		t.Fatalf("Encode(abc)\n got %x\nwant %x", got, want)
	}
	out, err := Decode(want, 3)
	if err != nil || !bytes.Equal(out, content) {
		t.Fatalf("Decode = %q, %v", out, err)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 511, 512, 513, 4096, 100_003} {
		for _, seg := range []int64{1, 7, 512, 4096, 0} {
			if n > 5000 && seg < 512 {
				continue
			}
			content := data(n)
			msg := Encode(content, seg)
			_, count := Layout(int64(n), seg)
			if int64(len(msg)) != EncodedLen(int64(n), count) {
				t.Fatalf("n=%d seg=%d: message is %d bytes, EncodedLen says %d", n, seg, len(msg), EncodedLen(int64(n), count))
			}
			out, err := Decode(msg, int64(n))
			if err != nil || !bytes.Equal(out, content) {
				t.Fatalf("n=%d seg=%d: round trip failed: %v", n, seg, err)
			}
			// Streamed a byte at a time, and with a chunked body
			// (length unknown).
			d := NewDecoder(iotest.OneByteReader(bytes.NewReader(msg)), -1, int64(n))
			out, err = io.ReadAll(d)
			if err != nil || !bytes.Equal(out, content) || !d.Done() {
				t.Fatalf("n=%d seg=%d: one-byte reads: %v", n, seg, err)
			}
			if d.CRC64() != crcText(crc64.Checksum(content, extent.CRC64Table)) {
				t.Fatalf("n=%d seg=%d: CRC64 %s", n, seg, d.CRC64())
			}
		}
	}
}

// TestEncoderSmallWrites writes the content a few bytes at a time.
func TestEncoderSmallWrites(t *testing.T) {
	content := data(10_000)
	var b bytes.Buffer
	e := NewEncoder(&b, int64(len(content)), 1000)
	for p := content; len(p) > 0; {
		k := min(len(p), 333)
		if _, err := e.Write(p[:k]); err != nil {
			t.Fatal(err)
		}
		p = p[k:]
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), Encode(content, 1000)) {
		t.Fatal("small writes frame differently from one write")
	}
	if _, err := NewEncoder(io.Discard, 3, 0).Write([]byte("abcd")); err == nil {
		t.Fatal("writing past the declared length succeeded")
	}
	short := NewEncoder(io.Discard, 3, 0)
	_, _ = short.Write([]byte("ab"))
	if short.Close() == nil {
		t.Fatal("closing short of the declared length succeeded")
	}
}

func TestLayoutCapsSegments(t *testing.T) {
	size, count := Layout(1<<40, 1)
	if count > 65535 || size*int64(count) < 1<<40 {
		t.Fatalf("Layout(1 TiB, 1) = %d x %d", size, count)
	}
}

func wantCode(t *testing.T, name string, err error, code string) {
	t.Helper()
	e, ok := azerr.As(err)
	if !ok || e.Code != code || e.Status != 400 {
		t.Fatalf("%s: error %v, want 400 %s", name, err, code)
	}
}

func TestCorrupt(t *testing.T) {
	content := data(3000)
	msg := Encode(content, 1024) // 3 segments
	segStart := func(i int) int { return headerLen + i*(segHeaderLen+1024+crcLen) }
	cases := []struct {
		name string
		at   int
		code string
	}{
		{"data byte", segStart(1) + segHeaderLen + 5, azerr.CRC64Mismatch},
		{"segment footer", segStart(0) + segHeaderLen + 1024, azerr.CRC64Mismatch},
		{"message trailer", len(msg) - 1, azerr.CRC64Mismatch},
		{"version", 0, azerr.InvalidInput},
		{"message length", 1, azerr.InvalidInput},
		{"flags", 9, azerr.InvalidInput},
		{"segment count", 11, azerr.InvalidInput},
		{"segment number", segStart(1), azerr.InvalidInput},
		{"segment length", segStart(2) + 2, azerr.InvalidInput},
	}
	for _, c := range cases {
		bad := bytes.Clone(msg)
		bad[c.at] ^= 0x01
		_, err := Decode(bad, 3000)
		wantCode(t, c.name, err, c.code)
		// The same with the length unknown (chunked).
		_, err = io.ReadAll(NewDecoder(bytes.NewReader(bad), -1, 3000))
		if err == nil {
			t.Fatalf("%s (chunked): decoded", c.name)
		}
	}
}

// TestCorruptSegmentCRCFixed corrupts a data byte and fixes up the
// segment's footer to match: the message trailer still catches it.
func TestCorruptSegmentCRCFixed(t *testing.T) {
	content := data(100)
	msg := Encode(content, 0)
	bad := bytes.Clone(msg)
	bad[headerLen+segHeaderLen] ^= 0xff
	c := crc64.Checksum(bad[headerLen+segHeaderLen:headerLen+segHeaderLen+100], extent.CRC64Table)
	binary.LittleEndian.PutUint64(bad[headerLen+segHeaderLen+100:], c)
	_, err := Decode(bad, 100)
	wantCode(t, "data with fixed footer", err, azerr.CRC64Mismatch)
}

func TestTruncated(t *testing.T) {
	content := data(700)
	msg := Encode(content, 256)
	for cut := 0; cut < len(msg); cut++ {
		// The Content-Length says what arrived (a client framing a short
		// message) ...
		_, err := Decode(msg[:cut], 700)
		wantCode(t, "truncated", err, azerr.InvalidInput)
		// ... or the full length and the body ends early.
		_, err = io.ReadAll(NewDecoder(bytes.NewReader(msg[:cut]), int64(len(msg)), 700))
		wantCode(t, "cut short", err, azerr.InvalidInput)
	}
}

func TestWrongLengths(t *testing.T) {
	msg := Encode(data(1000), 300)
	for _, cl := range []int64{0, 999, 1001, 5000} {
		_, err := Decode(msg, cl)
		wantCode(t, "content length", err, azerr.InvalidInput)
	}
	// Trailing bytes after the trailer.
	_, err := io.ReadAll(NewDecoder(bytes.NewReader(append(bytes.Clone(msg), 0)), -1, 1000))
	wantCode(t, "trailing byte", err, azerr.InvalidInput)
	// A segment that claims more than the content left, with the
	// message length adjusted to match.
	bad := Encode(data(10), 5)
	binary.LittleEndian.PutUint64(bad[headerLen+2:], 11)
	_, err = Decode(bad, 10)
	wantCode(t, "segment too long", err, azerr.InvalidInput)
}

// TestLastReadCarriesError: a consumer that reads exactly the content
// length (io.ReadFull, as staging does) gets the error of a bad trailer on
// that read, with no bytes.
func TestLastReadCarriesError(t *testing.T) {
	content := data(64)
	msg := Encode(content, 0)
	msg[len(msg)-3] ^= 1
	d := NewDecoder(bytes.NewReader(msg), int64(len(msg)), 64)
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := io.ReadFull(d, buf)
	wantCode(t, "ReadFull", err, azerr.CRC64Mismatch)
	if n == 64 {
		t.Fatal("the last bytes were handed out with a bad trailer")
	}
	// The error sticks.
	if _, err := d.Read(buf); err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("second read: %v", err)
	}
}

// TestStartEmpty: Start checks the whole message of an empty content.
func TestStartEmpty(t *testing.T) {
	msg := Encode(nil, 0)
	d := NewDecoder(bytes.NewReader(msg), int64(len(msg)), 0)
	if err := d.Start(); err != nil || !d.Done() {
		t.Fatalf("Start = %v, done %v", err, d.Done())
	}
	msg[len(msg)-1] ^= 1
	d = NewDecoder(bytes.NewReader(msg), int64(len(msg)), 0)
	wantCode(t, "empty with bad trailer", d.Start(), azerr.CRC64Mismatch)
}

func TestSourceErrorPassesThrough(t *testing.T) {
	boom := errors.New("boom")
	msg := Encode(data(100), 0)
	r := io.MultiReader(bytes.NewReader(msg[:50]), iotest.ErrReader(boom))
	_, err := io.ReadAll(NewDecoder(r, int64(len(msg)), 100))
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the source's", err)
	}
}

// TestUpdateMatchesCRC64: the slicing-by-8 update is hash/crc64's, over
// every length around the 8-byte steps and in pieces.
func TestUpdateMatchesCRC64(t *testing.T) {
	b := data(5000)
	for n := 0; n < 300; n++ {
		if got, want := update(0, b[:n]), crc64.Checksum(b[:n], extent.CRC64Table); got != want {
			t.Fatalf("n=%d: %x, want %x", n, got, want)
		}
	}
	c := update(update(update(0, b[:3]), b[3:1000]), b[1000:])
	if c != crc64.Checksum(b, extent.CRC64Table) {
		t.Fatal("piecewise update differs")
	}
}
