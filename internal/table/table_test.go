package table

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/table/odata"
)

func TestEntityCodecRoundTrip(t *testing.T) {
	e := &Entity{pk: "p", rk: "r", ts: odata.Ticks(time.Date(2024, 5, 1, 10, 0, 0, 123456700, time.UTC)), props: []Property{
		{"S", odata.StringValue("héllo")},
		{"Empty", odata.StringValue("")},
		{"B", odata.BinaryValue([]byte{0, 1, 2})},
		{"G", odata.Value{Type: odata.Guid, Bytes: bytes.Repeat([]byte{0xab}, 16)}},
		{"T", odata.BoolValue(true)},
		{"F", odata.BoolValue(false)},
		{"I", odata.Int32Value(math.MinInt32)},
		{"L", odata.Int64Value(math.MaxInt64)},
		{"D", odata.DoubleValue(math.Inf(-1))},
		{"N", odata.DoubleValue(math.NaN())},
		{"W", odata.DateTimeValue(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC))},
	}}
	raw := encodeEntity(e)
	got, err := decodeEntity("p", "r", raw)
	if err != nil {
		t.Fatal(err)
	}
	if got.ts != e.ts || len(got.props) != len(e.props) {
		t.Fatalf("decoded %+v", got)
	}
	for i, p := range e.props {
		g := got.props[i]
		if g.name != p.name || g.val.Type != p.val.Type || !bytes.Equal(g.val.Bytes, p.val.Bytes) || g.val.Int != p.val.Int ||
			(g.val.Float != p.val.Float && !(math.IsNaN(g.val.Float) && math.IsNaN(p.val.Float))) {
			t.Fatalf("property %d: %+v, want %+v", i, g, p)
		}
	}
	view := &entityView{pk: []byte("p"), rk: []byte("r"), raw: raw}
	for _, name := range []string{"S", "L", "W", "PartitionKey", "Timestamp"} {
		a, ok1 := view.Property(name)
		b, ok2 := got.Property(name)
		if !ok1 || !ok2 || a.Type != b.Type || a.Int != b.Int || !bytes.Equal(a.Bytes, b.Bytes) {
			t.Fatalf("view and entity disagree on %s: %+v %+v", name, a, b)
		}
	}
	if _, ok := view.Property("Nope"); ok {
		t.Fatal("view found a missing property")
	}
	// Truncated records never decode (nor panic).
	for i := 0; i < len(raw); i++ {
		if _, err := decodeEntity("p", "r", raw[:i]); err == nil {
			t.Fatalf("truncated record of %d bytes decoded", i)
		}
	}
}

func TestSplitEntityKey(t *testing.T) {
	prefix := entityPrefix("acct", "Tbl")
	for _, k := range [][2]string{{"p", "r"}, {"", ""}, {"a b", "ü"}, {"x\x00y", "z"}} {
		key := entityKey("acct", "tbl", k[0], k[1])
		if !bytes.HasPrefix(key, prefix) {
			t.Fatalf("key %q lacks the table prefix", key)
		}
		pk, rk, ok := splitEntityKey(key[len(prefix):])
		if !ok || string(pk) != k[0] || string(rk) != k[1] {
			t.Fatalf("%q: %q %q %v", k, pk, rk, ok)
		}
	}
	for _, bad := range []string{"", "p", "p\x00\x01", "p\x00\x01r\x00\x01x"} {
		if _, _, ok := splitEntityKey([]byte(bad)); ok {
			t.Fatalf("split %q", bad)
		}
	}
}

func TestEntitySizeFormula(t *testing.T) {
	e := &Entity{pk: "ab", rk: "c", props: []Property{{"N", odata.StringValue("xyz")}, {"I", odata.Int32Value(1)}, {"B", odata.BinaryValue([]byte{1, 2})}}}
	// 4 + 2*2 + 2*1 + 8 (Timestamp) + (8+2+4+6) + (8+2+4) + (8+2+4+2)
	if got := entitySize(e); got != 4+4+2+8+20+14+16 {
		t.Fatalf("size %d", got)
	}
}
