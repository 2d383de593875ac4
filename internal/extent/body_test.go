package extent

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc64"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

func TestLimitBody(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		n, max  int64
		want    string
		wantErr string // from LimitBody
		readErr string // from reading, mapped by BodyErr
	}{
		{name: "declared within max", body: "abcd", n: 4, max: 4, want: "abcd"},
		{name: "declared over max", body: "abcde", n: 5, max: 4, wantErr: "RequestBodyTooLarge"},
		{name: "chunked within max", body: "abcd", n: -1, max: 4, want: "abcd"},
		{name: "chunked empty", body: "", n: -1, max: 4, want: ""},
		{name: "chunked over max", body: "abcde", n: -1, max: 4, readErr: "RequestBodyTooLarge"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := LimitBody(strings.NewReader(tc.body), tc.n, tc.max)
			if got := errCode(err); got != tc.wantErr {
				t.Fatalf("LimitBody error %q, want %q", got, tc.wantErr)
			}
			if err != nil {
				return
			}
			got, err := io.ReadAll(r)
			if err != nil {
				if code := errCode(BodyErr(err)); code != tc.readErr {
					t.Fatalf("read error %q, want %q", code, tc.readErr)
				}
				return
			}
			if tc.readErr != "" || string(got) != tc.want {
				t.Fatalf("read %q, want %q (error %q)", got, tc.want, tc.readErr)
			}
		})
	}
}

func TestBodyErr(t *testing.T) {
	if got := errCode(BodyErr(io.ErrUnexpectedEOF)); got != "InvalidInput" {
		t.Fatalf("short body: %q", got)
	}
	if got := errCode(BodyErr(&maxBytesError{limit: 4})); got != "RequestBodyTooLarge" {
		t.Fatalf("over the cap: %q", got)
	}
	boom := errors.New("boom")
	if err := BodyErr(boom); !errors.Is(err, boom) || errCode(err) == "" {
		t.Fatalf("other error: %v", err)
	}
}

func TestDigests(t *testing.T) {
	s, _ := dtService(t)
	ctx := context.Background()
	body := []byte("the quick brown fox")
	sum := md5.Sum(body)
	goodMD5 := sum[:]
	goodCRC := binary.LittleEndian.AppendUint64(nil, crc64.Checksum(body, CRC64Table))
	other := make([]byte, 16)
	tests := []struct {
		name     string
		sent     Digests
		storeMD5 bool
		wantErr  string
		detail   string // the first detail's value of a mismatch
		want     Digests
	}{
		{name: "none"},
		{name: "stored md5", storeMD5: true, want: Digests{MD5: goodMD5}},
		{name: "good md5", sent: Digests{MD5: goodMD5}, want: Digests{MD5: goodMD5}},
		{name: "bad md5", sent: Digests{MD5: other}, wantErr: "Md5Mismatch", detail: base64.StdEncoding.EncodeToString(other)},
		{name: "bad md5 as spelled", sent: Digests{MD5: other, MD5Text: "AAAAAAAAAAAAAAAAAAAAAB=="}, wantErr: "Md5Mismatch", detail: "AAAAAAAAAAAAAAAAAAAAAB=="},
		{name: "good crc64", sent: Digests{CRC64: goodCRC}, want: Digests{CRC64: goodCRC}},
		{name: "bad crc64", sent: Digests{CRC64: make([]byte, 8)}, wantErr: "Crc64Mismatch", detail: "AAAAAAAAAAA="},
		{name: "both", sent: Digests{MD5: goodMD5, CRC64: goodCRC}, want: Digests{MD5: goodMD5, CRC64: goodCRC}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := s.Stage(ctx, bytes.NewReader(body), int64(len(body)), tc.sent, tc.storeMD5)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Release()
			err = st.CheckDigests(tc.sent)
			if got := errCode(err); got != tc.wantErr {
				t.Fatalf("CheckDigests %q, want %q", got, tc.wantErr)
			}
			if err != nil {
				if ae, _ := azerr.As(err); len(ae.Details) != 2 || ae.Details[0].Value != tc.detail {
					t.Fatalf("details %v, want the sent value %q first", ae.Details, tc.detail)
				}
				return
			}
			if got := st.Digests(); !bytes.Equal(got.MD5, tc.want.MD5) || !bytes.Equal(got.CRC64, tc.want.CRC64) {
				t.Fatalf("Digests() = %x/%x, want %x/%x", got.MD5, got.CRC64, tc.want.MD5, tc.want.CRC64)
			}
		})
	}
}

// TestReaderSparse reads ranges of content with holes, an embedded part,
// an inline item (prefetched or not) and a chunk item.
func TestReaderSparse(t *testing.T) {
	s, _ := dtService(t)
	ctx := context.Background()
	inl := bytes.Repeat([]byte("i"), 100)
	big := bytes.Repeat([]byte("c"), InlineMax+1)
	var parts []Part
	for _, b := range [][]byte{inl, big} {
		st, err := s.Stage(ctx, bytes.NewReader(b), int64(len(b)), Digests{}, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.store.Update(ctx, func(tx kv.Tx) error { return st.Write(tx) }); err != nil {
			t.Fatal(err)
		}
		st.Release()
		parts = append(parts, st.Parts...)
	}
	// [0,10) embedded, [10,20) hole, [20,120) inline, [120,200) hole,
	// [200, 200+len(big)) chunk, then a hole to the end.
	parts[0].Off = 20
	parts[1].Off = 200
	parts = append([]Part{{Off: 0, Len: 10, Data: []byte("0123456789")}}, parts...)
	size := int64(200 + len(big) + 50)
	want := make([]byte, size)
	copy(want, "0123456789")
	copy(want[20:], inl)
	copy(want[200:], big)

	var pre map[string][]byte
	err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		pre, err = Prefetch(tx, parts, 0, size)
		return err
	})
	if err != nil || len(pre) != 1 || !bytes.Equal(pre[parts[1].ID], inl) {
		t.Fatalf("prefetch %d items, %v", len(pre), err)
	}
	for _, rng := range [][2]int64{{0, size}, {5, 10}, {15, 100}, {119, 90}, {size - 60, 60}, {300, 0}} {
		for _, inline := range []map[string][]byte{nil, pre} {
			r := s.NewReader(ctx, parts, inline, rng[0], rng[1])
			got, err := io.ReadAll(r)
			r.Close()
			if err != nil || !bytes.Equal(got, want[rng[0]:rng[0]+rng[1]]) {
				t.Fatalf("range %v (prefetched %v): %d bytes, %v", rng, inline != nil, len(got), err)
			}
		}
	}
	// A missing inline item is an error, not zeros.
	r := s.NewReader(ctx, []Part{{Off: 0, Len: 5, ID: "imissing"}}, nil, 0, 5)
	if _, err := io.ReadAll(r); err == nil {
		t.Fatal("read of a missing data item succeeded")
	}
	r.Close()
}

func TestSweepOrphans(t *testing.T) {
	s, _ := dtService(t)
	ctx := context.Background()
	body := bytes.Repeat([]byte("z"), InlineMax+1)
	st, err := s.Stage(ctx, bytes.NewReader(body), int64(len(body)), Digests{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.store.Update(ctx, func(tx kv.Tx) error { return st.Write(tx) }); err != nil {
		t.Fatal(err)
	}
	st.Release()
	w, err := s.chunks.Create(ctx) // written, never recorded
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("orphan")); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if n, err := s.SweepOrphans(ctx, time.Now()); err != nil || n != 0 {
		t.Fatalf("within the grace period: removed %d, %v", n, err)
	}
	if n, err := s.SweepOrphans(ctx, time.Now().Add(OrphanGrace+time.Minute)); err != nil || n != 1 {
		t.Fatalf("after the grace period: removed %d, %v; want 1", n, err)
	}
	if _, err := s.chunks.Open(ctx, w.ID()); !errors.Is(err, chunk.ErrNotFound) {
		t.Fatalf("orphan after sweep: %v", err)
	}
	r, err := s.chunks.Open(ctx, st.Parts[0].ID[1:])
	if err != nil {
		t.Fatalf("recorded chunk swept: %v", err)
	}
	r.Close()
}
