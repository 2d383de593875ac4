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
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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
	goodMD5 := base64.StdEncoding.EncodeToString(sum[:])
	goodCRC := base64.StdEncoding.EncodeToString(binary.LittleEndian.AppendUint64(nil, crc64.Checksum(body, CRC64Table)))
	other := base64.StdEncoding.EncodeToString(make([]byte, 16))
	tests := []struct {
		name     string
		hdr      map[string]string
		storeMD5 bool
		wantErr  string
		echo     map[string]string // headers echoed by EchoDigests; "" = absent
	}{
		{name: "none", echo: map[string]string{"Content-MD5": "", "x-ms-content-crc64": ""}},
		{name: "stored md5", storeMD5: true, echo: map[string]string{"Content-MD5": goodMD5, "x-ms-content-crc64": ""}},
		{name: "good md5", hdr: map[string]string{"Content-MD5": goodMD5}, echo: map[string]string{"Content-MD5": goodMD5}},
		{name: "bad md5", hdr: map[string]string{"Content-MD5": other}, wantErr: "Md5Mismatch"},
		{name: "malformed md5", hdr: map[string]string{"Content-MD5": "nope"}, wantErr: "InvalidMd5"},
		{name: "good crc64", hdr: map[string]string{"x-ms-content-crc64": goodCRC}, echo: map[string]string{"Content-MD5": "", "x-ms-content-crc64": goodCRC}},
		{name: "bad crc64", hdr: map[string]string{"x-ms-content-crc64": "AAAAAAAAAAA="}, wantErr: "Crc64Mismatch"},
		{name: "malformed crc64", hdr: map[string]string{"x-ms-content-crc64": "AAAA"}, wantErr: "InvalidCrc64"},
		{name: "crc64 not base64", hdr: map[string]string{"x-ms-content-crc64": "not-base64!"}, wantErr: "InvalidCrc64"},
		{name: "both", hdr: map[string]string{"Content-MD5": goodMD5, "x-ms-content-crc64": goodCRC}, echo: map[string]string{"Content-MD5": goodMD5, "x-ms-content-crc64": goodCRC}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.hdr {
				h.Set(k, v)
			}
			st, err := s.Stage(ctx, bytes.NewReader(body), int64(len(body)), h, tc.storeMD5)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Release()
			if got := errCode(st.CheckDigests(h)); got != tc.wantErr {
				t.Fatalf("CheckDigests %q, want %q", got, tc.wantErr)
			}
			w := httptest.NewRecorder()
			st.EchoDigests(w)
			for k, v := range tc.echo {
				if got := w.Header().Get(k); got != v {
					t.Fatalf("echoed %s = %q, want %q", k, got, v)
				}
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
		st, err := s.Stage(ctx, bytes.NewReader(b), int64(len(b)), http.Header{}, false)
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
	st, err := s.Stage(ctx, bytes.NewReader(body), int64(len(body)), http.Header{}, false)
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
