package wire

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// mustAzErr fails unless err is a catalog *azerr.Error.
func mustAzErr(t *testing.T, err error) *azerr.Error {
	t.Helper()
	e, ok := azerr.As(err)
	if !ok {
		t.Fatalf("non-azerr error %T %v", err, err)
	}
	if e.Status != azerr.Status(e.Code) {
		t.Fatalf("status %d does not match catalog for %s", e.Status, e.Code)
	}
	return e
}

func FuzzParseRange(f *testing.F) {
	for _, s := range []struct {
		xms, rng string
		size     int64
	}{
		{"bytes=0-4194303", "", 10 << 20},      // azblob DownloadBuffer chunk
		{"bytes=0-", "", 0},                    // open range on empty blob
		{"", "bytes=0-511", 1024},              // Put Page
		{"bytes=512-1023", "bytes=0-0", 512},   // x-ms-range wins
		{"bytes=0--1", "", 0},                  // Java SDK on empty blob
		{"", "bytes=-500", 1000},               // suffix (unsupported)
		{"", "bytes=0-1,5-6", 10},              // multi (unsupported)
		{"bytes=9223372036854775807-", "", 1},  // max start
		{"bytes=0-9223372036854775807", "", 1}, // max end
		{"BYTES=1-2", "", 3},
	} {
		f.Add(s.xms, s.rng, s.size)
	}
	f.Fuzz(func(t *testing.T, xms, rng string, size int64) {
		h := http.Header{}
		if xms != "" {
			h.Set("x-ms-range", xms)
		}
		if rng != "" {
			h.Set("Range", rng)
		}
		r, err := ParseRange(h)
		if err != nil {
			e := mustAzErr(t, err)
			if e.Code != azerr.InvalidHeaderValue || r != nil {
				t.Fatalf("code %s range %v", e.Code, r)
			}
			return
		}
		if r == nil {
			if xms != "" || rng != "" {
				t.Fatalf("nil range for %q/%q", xms, rng)
			}
			return
		}
		if r.Start < 0 || (r.End != OpenEnd && r.End < r.Start) {
			t.Fatalf("bad range %+v", *r)
		}
		// The formatted range parses back to itself.
		back, err := ParseRange(http.Header{"Range": {r.String()}})
		if err != nil || *back != *r {
			t.Fatalf("round trip %+v -> %v, %v", *r, back, err)
		}
		off, n, err := r.Resolve(size)
		if err != nil {
			e := mustAzErr(t, err)
			if e.Code != azerr.InvalidRange || (size > 0 && r.Start < size) {
				t.Fatalf("Resolve(%d) of %+v: %v", size, *r, err)
			}
			return
		}
		if off != r.Start || n < 1 || off+n > size || (r.End != OpenEnd && off+n-1 > r.End) {
			t.Fatalf("Resolve(%d) of %+v = (%d,%d)", size, *r, off, n)
		}
		_ = ContentRange(off, n, size)
		if po, pn, err := PageRange(h); err == nil {
			if po%PageSize != 0 || pn%PageSize != 0 || pn <= 0 {
				t.Fatalf("PageRange = (%d,%d)", po, pn)
			}
		} else {
			mustAzErr(t, err)
		}
	})
}

func FuzzParseBlockList(f *testing.F) {
	id := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 64))
	for _, s := range []string{
		xmlDecl + `<BlockList><Latest>` + id + `</Latest><Latest>Mg==</Latest></BlockList>`,
		xmlDecl + "\n<BlockList>\n  <Committed>Zmlyc3Q=</Committed>\n  <Uncommitted>c2Vjb25k</Uncommitted>\n  <Latest>dGhpcmQ=</Latest>\n</BlockList>",
		`<BlockList/>`,
		"\xEF\xBB\xBF<BlockList><Committed>MQ==</Committed></BlockList>",
		`<BlockList><Latest><![CDATA[MQ==]]></Latest><!-- x --></BlockList>`,
		`<BlockList><Block>MQ==</Block></BlockList>`,
		`<BlockList><Latest>MQ==</Latest>`,
		`{"Latest":["MQ=="]}`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		refs, err := ParseBlockList(body)
		if err != nil {
			e := mustAzErr(t, err)
			if e.Code != azerr.InvalidXMLDocument && e.Code != azerr.BlockListTooLong {
				t.Fatalf("code %s", e.Code)
			}
			if refs != nil {
				t.Fatal("refs on error")
			}
			return
		}
		if refs == nil || len(refs) > MaxBlockListEntries {
			t.Fatalf("len %d", len(refs))
		}
		// Re-serialise and parse again: same entries, same order.
		var b bytes.Buffer
		b.WriteString("<BlockList>")
		for _, r := range refs {
			if r.Kind < Committed || r.Kind > Latest {
				t.Fatalf("kind %d", r.Kind)
			}
			if strings.Trim(r.ID, xmlSpace) != r.ID {
				t.Fatalf("untrimmed id %q", r.ID)
			}
			b.WriteString("<" + r.Kind.String() + ">")
			escapeXML(&b, r.ID)
			b.WriteString("</" + r.Kind.String() + ">")
		}
		b.WriteString("</BlockList>")
		again, err := ParseBlockList(b.Bytes())
		if err != nil {
			// IDs holding characters XML 1.0 cannot carry (escaped to
			// U+FFFD by EscapeText) still parse; anything else is a bug.
			t.Fatalf("re-parse of %q: %v", b.String(), err)
		}
		if len(again) != len(refs) {
			t.Fatalf("re-parse len %d vs %d", len(again), len(refs))
		}
		for i := range refs {
			if again[i].Kind != refs[i].Kind {
				t.Fatalf("kind mismatch at %d", i)
			}
		}
		// Writer output is always well-formed and parseable by the SDK shape.
		infos := make([]BlockInfo, len(refs))
		for i, r := range refs {
			infos[i] = BlockInfo{Name: r.ID, Size: int64(i)}
		}
		out := BlockListXML(BlockListAll, infos, infos)
		if !bytes.HasPrefix(out, []byte(xmlDecl)) {
			t.Fatal("missing declaration")
		}
	})
}

func FuzzParseMetadata(f *testing.F) {
	f.Add("Owner", "alice", "build_id", "1234", "x-ms-version", "2026-12-06")
	f.Add("category", "images", "Category", "dup", "", "")
	f.Add("", "v", "1bad", "v", "ok", strings.Repeat("x", 9000))
	f.Add("_", "", "A1", "a, b", "my-key", "v")
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2, n3, v3 string) {
		h := http.Header{}
		for _, kv := range [][2]string{{n1, v1}, {n2, v2}, {n3, v3}} {
			// Raw keys, as the Go SDK sets them.
			h[MetaPrefix+kv[0]] = append(h[MetaPrefix+kv[0]], kv[1])
		}
		h["Content-Type"] = []string{"text/plain"}
		md, err := ParseMetadata(h)
		if err != nil {
			e := mustAzErr(t, err)
			switch e.Code {
			case azerr.EmptyMetadataKey, azerr.InvalidMetadata, azerr.MetadataTooLarge:
			default:
				t.Fatalf("code %s", e.Code)
			}
			if md != nil {
				t.Fatal("map on error")
			}
			return
		}
		total := 0
		for k, v := range md {
			if k != strings.ToLower(k) || !validIdentifier(k) {
				t.Fatalf("bad key %q", k)
			}
			total += len(k) + len(v)
		}
		if total > MaxMetadataSize {
			t.Fatalf("total %d", total)
		}
		// Every input pair survives under its lower-cased name.
		for _, kv := range [][2]string{{n1, v1}, {n2, v2}, {n3, v3}} {
			if got, ok := md[strings.ToLower(kv[0])]; !ok || got != kv[1] {
				t.Fatalf("pair %q=%q missing (%v)", kv[0], kv[1], md)
			}
		}
		// Parsing is deterministic.
		again, err := ParseMetadata(h)
		if err != nil || len(again) != len(md) {
			t.Fatalf("second parse: %v %v", again, err)
		}
	})
}

func FuzzDecodeBlockID(f *testing.F) {
	f.Add(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xAB}, 64))) // azblob uploadstream
	f.Add(base64.StdEncoding.EncodeToString([]byte("6ba7b810-9dad-11d1-80b4-00c04fd430c8")))
	f.Add("Mg==")
	f.Add("MDAwMDA=")
	f.Add("Mh==")
	f.Add("-_-_")
	f.Add("YW\r\nJj")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		b, err := DecodeBlockID(s)
		if err != nil {
			if e := mustAzErr(t, err); e.Code != azerr.InvalidBlockID || b != nil {
				t.Fatalf("code %s", e.Code)
			}
			return
		}
		if len(b) < 1 || len(b) > MaxBlockIDLen {
			t.Fatalf("len %d", len(b))
		}
		// Canonical: exactly one accepted spelling per byte string.
		if enc := base64.StdEncoding.EncodeToString(b); enc != s {
			t.Fatalf("non-canonical %q accepted (canonical %q)", s, enc)
		}
		if !slices.Equal(b, mustDecode(t, base64.StdEncoding.EncodeToString(b))) {
			t.Fatal("round trip")
		}
	})
}

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := DecodeBlockID(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
