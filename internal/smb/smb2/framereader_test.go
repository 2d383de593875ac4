package smb2

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"testing/iotest"
)

// allocated returns the bytes allocated by f, run runs times, per run.
func allocated(runs int, f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(runs)
}

func frameOf(n int, payload []byte) []byte {
	h := FrameHeader(n)
	return append(h[:], payload...)
}

// TestReadFrameCheckedRefusesWithoutAllocating: a frame announcing 16 MiB
// (the 24-bit maximum) over the limit, and one the check refuses, cost
// no buffer of their announced size.
func TestReadFrameCheckedRefusesWithoutAllocating(t *testing.T) {
	head := Marshal(Header{Command: CommandNegotiate}, nil)
	huge := frameOf(MaxFrameSize, head)
	per := allocated(100, func() {
		if _, err := ReadFrameChecked(bytes.NewReader(huge), 64<<10, nil); !errors.Is(err, ErrFrameTooLarge) {
			t.Fatalf("16 MiB frame: %v", err)
		}
	})
	if per > 1024 {
		t.Errorf("refusing a 16 MiB frame allocated %d bytes", per)
	}
	refused := errors.New("not a NEGOTIATE")
	mid := frameOf(60<<10, head)
	per = allocated(100, func() {
		_, err := ReadFrameChecked(bytes.NewReader(mid), 64<<10, func(h []byte, n int) error {
			if len(h) != FrameHeadSize || n != 60<<10 {
				t.Fatalf("check saw %d bytes of a frame of %d", len(h), n)
			}
			return refused
		})
		if err != refused {
			t.Fatalf("refused frame: %v", err)
		}
	})
	if per > 1024 {
		t.Errorf("a frame refused by its header allocated %d bytes", per)
	}
}

// TestReadFrameIncremental: a peer announcing 8 MiB and sending only the
// header makes the reader hold at most one chunk, not the announced
// size.
func TestReadFrameIncremental(t *testing.T) {
	head := Marshal(Header{Command: CommandWrite}, nil)
	stalled := frameOf(8<<20, head)
	per := allocated(20, func() {
		if _, err := ReadFrame(bytes.NewReader(stalled), MaxFrameSize); err != io.ErrUnexpectedEOF {
			t.Fatalf("cut frame: %v", err)
		}
	})
	if per > 2*frameChunk {
		t.Errorf("a stalled 8 MiB frame allocated %d bytes", per)
	}
}

// TestReadFrameSizes: frames of every size class (below the header,
// around the chunk and its doublings) read back intact, through a reader
// returning one byte at a time and through one returning short reads.
func TestReadFrameSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 3, 63, 64, 65, frameChunk - 1, frameChunk, frameChunk + 1, 3*frameChunk + 7, 1 << 20, MaxFrameSize} {
		payload := make([]byte, n)
		for i := range payload {
			payload[i] = byte(rng.Uint32())
		}
		raw := frameOf(n, payload)
		readers := map[string]io.Reader{"half": iotest.HalfReader(bytes.NewReader(raw))}
		if n < 1<<20 {
			readers["onebyte"] = iotest.OneByteReader(bytes.NewReader(raw))
		}
		for name, r := range readers {
			got, err := ReadFrameChecked(r, MaxFrameSize, func(h []byte, m int) error {
				if m != n || !bytes.Equal(h, payload[:min(n, FrameHeadSize)]) {
					t.Fatalf("%d/%s: check saw %d, %x", n, name, m, h)
				}
				return nil
			})
			if err != nil || !bytes.Equal(got, payload) {
				t.Fatalf("%d/%s: %v, %d bytes back", n, name, err, len(got))
			}
		}
	}
}

// BenchmarkReadFrame8MiB: the cost of growing the buffer for a full-size
// WRITE.
func BenchmarkReadFrame8MiB(b *testing.B) {
	raw := frameOf(8<<20, make([]byte, 8<<20))
	b.SetBytes(8 << 20)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadFrame(bytes.NewReader(raw), MaxFrameSize); err != nil {
			b.Fatal(err)
		}
	}
}
