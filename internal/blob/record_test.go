package blob

import (
	"bytes"
	"context"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/blobtags"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// randomRecord fills every field of a blob record, each one present or
// absent at random, so that the two forms are compared on all of them.
func randomRecord(r *rand.Rand) blobRec {
	str := func() string {
		if r.IntN(3) == 0 {
			return ""
		}
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(bytes.ToValidUTF8(b, []byte("?"))) // JSON keeps valid UTF-8 only
	}
	tm := func() time.Time {
		if r.IntN(4) == 0 {
			return time.Time{}
		}
		return time.Unix(r.Int64N(1<<34)-1<<33, r.Int64N(1e9)).UTC()
	}
	smap := func() map[string]string {
		n := r.IntN(4)
		if n == 0 {
			return nil
		}
		m := map[string]string{}
		for range n {
			m[str()+"k"] = str()
		}
		return m
	}
	b := blobRec{
		Type: str(), Created: tm(), Modified: tm(), ETag: str(), Size: r.Int64N(1 << 40),
		Props: HTTPHeaders{ContentType: str(), ContentEncoding: str(), ContentLanguage: str(),
			ContentDisposition: str(), CacheControl: str()},
		Meta:   smap(),
		Lease:  lease.Lease{ID: str(), State: str(), Duration: r.IntN(70) - 1, Expires: tm(), BreakAt: tm()},
		SeqNum: r.Int64N(1 << 50), Appends: r.IntN(50000), Sealed: r.IntN(2) == 0,
		HasBlockList: r.IntN(2) == 0, Tier: str(), CPK: str(), VersionID: str(), Hold: r.IntN(2) == 0,
	}
	if r.IntN(2) == 0 {
		b.Props.ContentMD5 = []byte(str() + "md5")
	}
	for range r.IntN(4) {
		p := extent.Part{Off: r.Int64N(1 << 40), Len: r.Int64N(1 << 30), ID: str(), DOff: r.Int64N(1 << 20)}
		if r.IntN(2) == 0 {
			p.Data = []byte(str() + "d")
		}
		b.Parts = append(b.Parts, p)
	}
	for range r.IntN(4) {
		b.Blocks = append(b.Blocks, block{Name: str(), Size: r.Int64N(1 << 30), NParts: r.IntN(9)})
	}
	if r.IntN(2) == 0 {
		b.Copy = &CopyInfo{ID: str(), Source: str(), Status: str(), Progress: str(), Completion: tm()}
	}
	if r.IntN(2) == 0 {
		t := tm()
		b.TierChanged = &t
	}
	if m := smap(); m != nil {
		b.Tags = blobtags.Tags(m)
	}
	if r.IntN(2) == 0 {
		b.Del = &deletion{At: tm(), Expires: tm()}
	}
	if r.IntN(2) == 0 {
		b.Imm = &immPolicy{Until: tm(), Mode: str()}
	}
	return b
}

// TestBlobRecordForms: a record written in the binary form reads back as
// the same record its JSON form reads back as, field for field, and the
// JSON records written before the binary form still read.
func TestBlobRecordForms(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		b := randomRecord(r)
		raw, err := b.EncodeRecord()
		if err != nil {
			t.Fatal(err)
		}
		if raw[0] == '{' {
			t.Fatal("the binary form begins as JSON does")
		}
		var fromBin, fromJSON blobRec
		if err := kv.DecodeJSON([]byte("k"), raw, &fromBin); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		js, err := json.Marshal(&b)
		if err != nil {
			t.Fatal(err)
		}
		// A JSON record read through the same call (old data).
		if err := kv.DecodeJSON([]byte("k"), js, &fromJSON); err != nil {
			t.Fatalf("record %d (JSON): %v", i, err)
		}
		if !reflect.DeepEqual(fromBin, fromJSON) {
			t.Fatalf("record %d: the binary form reads back as\n%+v\nthe JSON form as\n%+v", i, fromBin, fromJSON)
		}
		again, _ := fromBin.EncodeRecord()
		if !bytes.Equal(again, raw) {
			t.Fatalf("record %d: encoding what was decoded changes the bytes", i)
		}
		// changeView's reading skips the content and nothing else.
		var cv contentless
		if err := kv.DecodeJSON([]byte("k"), raw, &cv); err != nil {
			t.Fatal(err)
		}
		want := fromBin
		want.Parts, want.Blocks = nil, nil
		if !reflect.DeepEqual(cv.blobRec, want) {
			t.Fatalf("record %d: read without content as\n%+v\nwant\n%+v", i, cv.blobRec, want)
		}
		// The reclaim's view of either form.
		for _, form := range [][]byte{raw, js} {
			var p refsOf
			if err := p.read([]byte("k"), form); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.Parts, fromBin.Parts) || !reflect.DeepEqual(p.Del, fromBin.Del) {
				t.Fatalf("record %d: refs read as %+v %+v", i, p.Parts, p.Del)
			}
		}
		// Every cut of the record is refused, never read as a shorter one.
		for n := 0; n < len(raw); n++ {
			var c blobRec
			if err := c.DecodeRecord(raw[:n]); err == nil {
				t.Fatalf("record %d: its first %d of %d bytes decode", i, n, len(raw))
			}
		}
		var c blobRec
		if err := c.DecodeRecord(append(raw, 0)); err == nil {
			t.Fatalf("record %d: a trailing byte is accepted", i)
		}
	}
}

// TestBlobRecordStored: Put Blob stores the binary form, and a blob whose
// record is still JSON (written before it) reads as it was written and
// is overwritten in the binary form.
func TestBlobRecordStored(t *testing.T) {
	s, _, c := domainEnv(t)
	ctx := context.Background()
	put := func(name, body string) {
		t.Helper()
		if _, err := s.PutBlob(ctx, PutBlobInput{Ref: blobAt(c, name), Type: BlockBlob, Body: strings.NewReader(body), Length: int64(len(body)),
			NewBlob: NewBlob{HTTPHeaders: HTTPHeaders{ContentType: "text/plain"}, Metadata: map[string]string{"k": "v"}}}); err != nil {
			t.Fatal(err)
		}
	}
	put("bin", "abc")
	put("old", strings.Repeat("y", 100))
	ref := blobAt(c, "old")
	key := BlobKey(ref.Account, ref.Container, "old", "")
	var want *blobRec
	if err := s.store.Update(ctx, func(tx kv.Tx) error {
		raw, err := tx.Get(BlobKey(ref.Account, ref.Container, "bin", ""))
		if err != nil {
			return err
		}
		if !isBinaryRecord(raw) {
			t.Fatalf("Put Blob stored %q", raw)
		}
		if want, err = findBlob(tx, ref.Account, ref.Container, "old", ""); err != nil {
			return err
		}
		js, err := json.Marshal(want)
		if err != nil {
			return err
		}
		return tx.Put(key, js) // as a build before the binary form stored it
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.store.View(ctx, func(tx kv.Tx) error {
		got, err := findBlob(tx, ref.Account, ref.Container, "old", "")
		if err != nil {
			return err
		}
		got.raw, want.raw = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("the JSON record reads as %+v, want %+v", got, want)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	put("old", "new")
	if err := s.store.View(ctx, func(tx kv.Tx) error {
		raw, err := tx.Get(key)
		if err != nil {
			return err
		}
		if !isBinaryRecord(raw) {
			t.Fatalf("the overwrite stored %q", raw)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func isBinaryRecord(raw []byte) bool {
	return len(raw) > 1 && raw[0] == recordMagic && raw[1] == recordVersion
}

// FuzzBlobRecord: no input makes the decoder panic or allocate beyond
// what the input can hold; a refused input leaves the record empty, and
// what decodes encodes to bytes that decode to the same record.
func FuzzBlobRecord(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		b := randomRecord(r)
		raw, _ := b.EncodeRecord()
		f.Add(raw)
	}
	f.Add([]byte{recordMagic, recordVersion})
	f.Add([]byte{recordMagic, 2})
	f.Fuzz(func(t *testing.T, raw []byte) {
		var b blobRec
		if err := b.DecodeRecord(raw); err != nil {
			if !reflect.DeepEqual(b, blobRec{}) {
				t.Fatal("a refused record leaves fields set")
			}
			return
		}
		again, err := b.EncodeRecord()
		if err != nil {
			t.Fatal(err)
		}
		var b2 blobRec
		if err := b2.DecodeRecord(again); err != nil {
			t.Fatalf("re-encoded record refused: %v", err)
		}
		if !reflect.DeepEqual(b, b2) {
			t.Fatalf("decode(encode(b)) = %+v, b = %+v", b2, b)
		}
	})
}

// BenchmarkBlobRecord compares the two stored forms of a 1 KiB block
// blob's record (the bench's Put and Get Blob: data inline, content
// headers, MD5, no metadata), encoding and decoding.
func BenchmarkBlobRecord(b *testing.B) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 123456700, time.UTC)
	rec := blobRec{Type: "BlockBlob", Created: now, Modified: now, ETag: `"0x8DE0123456789AB01234567"`, Size: 1024,
		Props: HTTPHeaders{ContentType: "application/octet-stream", ContentMD5: make([]byte, 16)},
		Parts: []extent.Part{{Off: 0, Len: 1024, ID: "i0123456789abcdef", Data: make([]byte, 1024)}}}
	js, _ := json.Marshal(&rec)
	bin, _ := rec.EncodeRecord()
	b.Run("encode/json", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(&rec)
		}
	})
	b.Run("encode/binary", func(b *testing.B) {
		for b.Loop() {
			_, _ = rec.EncodeRecord()
		}
	})
	b.Run("decode/json", func(b *testing.B) {
		for b.Loop() {
			var r blobRec
			_ = kv.DecodeJSON(nil, js, &r)
		}
	})
	b.Run("decode/binary", func(b *testing.B) {
		for b.Loop() {
			var r blobRec
			_ = kv.DecodeJSON(nil, bin, &r)
		}
	})
}
