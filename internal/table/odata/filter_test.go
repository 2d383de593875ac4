package odata

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// record is a test entity: typed properties by name.
type record map[string]Value

func (r record) Property(name string) (Value, bool) {
	v, ok := r[name]
	return v, ok
}

func (r record) id() string { return r["PartitionKey"].Str() + "/" + r["RowKey"].Str() }

// loadRecords reads testdata/entities.json: entities in the Table JSON
// wire format, with @odata.type annotations for the types JSON cannot
// express.
func loadRecords(t testing.TB) []record {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "entities.json"))
	if err != nil {
		t.Fatal(err)
	}
	var docs []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &docs); err != nil {
		t.Fatal(err)
	}
	var out []record
	for _, d := range docs {
		r := record{}
		for name, val := range d {
			if strings.Contains(name, "@") {
				continue
			}
			var typ string
			if a, ok := d[name+"@odata.type"]; ok {
				if err := json.Unmarshal(a, &typ); err != nil {
					t.Fatal(err)
				}
			}
			v, err := jsonValue(val, typ)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			r[name] = v
		}
		out = append(out, r)
	}
	return out
}

func jsonValue(raw json.RawMessage, typ string) (Value, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return Value{}, err
	}
	s, _ := x.(string)
	switch typ {
	case "":
		switch v := x.(type) {
		case string:
			return StringValue(v), nil
		case bool:
			return BoolValue(v), nil
		case json.Number:
			if i, err := strconv.ParseInt(string(v), 10, 32); err == nil {
				return Int32Value(int32(i)), nil
			}
			f, err := strconv.ParseFloat(string(v), 64)
			return DoubleValue(f), err
		}
	case "Edm.Double":
		switch s {
		case "NaN":
			return DoubleValue(math.NaN()), nil
		case "Infinity":
			return DoubleValue(math.Inf(1)), nil
		case "-Infinity":
			return DoubleValue(math.Inf(-1)), nil
		}
		f, err := strconv.ParseFloat(string(x.(json.Number)), 64)
		return DoubleValue(f), err
	case "Edm.Int64":
		i, err := strconv.ParseInt(s, 10, 64)
		return Int64Value(i), err
	case "Edm.DateTime":
		tm, err := ParseDateTime(s)
		return DateTimeValue(tm), err
	case "Edm.Guid":
		g, err := ParseGuid(s)
		return Value{Type: Guid, Bytes: g}, err
	case "Edm.Binary":
		b, err := base64.StdEncoding.DecodeString(s)
		return BinaryValue(b), err
	}
	return Value{}, fmt.Errorf("unsupported type %q for %s", typ, raw)
}

// describe evaluates one filter against the records: the canonical form,
// the key ranges and the matching ids, or the error.
func describe(src string, recs []record) string {
	f, err := Parse(src)
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	b.WriteString("parsed: " + f.String() + "\n")
	for _, key := range []string{"PartitionKey", "RowKey"} {
		if r := f.KeyRange(key); r != (Range{}) {
			fmt.Fprintf(&b, "range %s: %s\n", key, r)
		}
	}
	var ids []string
	for _, r := range recs {
		if f.Match(r) {
			ids = append(ids, r.id())
		}
	}
	b.WriteString("match: " + strings.Join(ids, " "))
	return b.String()
}

func (r Range) String() string {
	if r.Empty {
		return "empty"
	}
	lo, hi := "(-inf", "+inf)"
	if r.HasLo {
		lo = "(" + strconv.Quote(r.Lo)
		if r.LoIncl {
			lo = "[" + strconv.Quote(r.Lo)
		}
	}
	if r.HasHi {
		hi = strconv.Quote(r.Hi) + ")"
		if r.HiIncl {
			hi = strconv.Quote(r.Hi) + "]"
		}
	}
	return lo + ", " + hi
}

// TestFilterGolden runs every filter of testdata/filters.golden against
// testdata/entities.json. Each case is a "filter:" line followed by the
// expected output; cases are separated by blank lines. Run with -update
// to rewrite the expected output (and review the diff).
func TestFilterGolden(t *testing.T) {
	recs := loadRecords(t)
	path := filepath.Join("testdata", "filters.golden")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cases := 0
	for _, block := range strings.Split(strings.TrimSpace(string(raw)), "\n\n") {
		lines := strings.Split(block, "\n")
		var comments []string
		for len(lines) > 0 && strings.HasPrefix(lines[0], "#") {
			comments = append(comments, lines[0])
			lines = lines[1:]
		}
		if len(lines) == 0 || !strings.HasPrefix(lines[0], "filter: ") {
			t.Fatalf("block without a filter line:\n%s", block)
		}
		src := strings.TrimPrefix(lines[0], "filter: ")
		got := describe(src, recs)
		want := strings.Join(lines[1:], "\n")
		if !*update && got != want {
			t.Errorf("filter: %s\n got:\n%s\nwant:\n%s", src, got, want)
		}
		cases++
		if out.Len() > 0 {
			out.WriteString("\n\n")
		}
		for _, c := range comments {
			out.WriteString(c + "\n")
		}
		out.WriteString(lines[0] + "\n" + got)
	}
	if *update {
		if err := os.WriteFile(path, []byte(out.String()+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if cases < 100 {
		t.Fatalf("only %d golden cases", cases)
	}
}

func TestComparisonLimit(t *testing.T) {
	// Exactly MaxComparisons is accepted, in any shape.
	for _, src := range []string{
		strings.Repeat("A eq 1 and ", MaxComparisons-1) + "A eq 1",
		"not (" + strings.Repeat("(A lt 'x' or B ge 2L) and ", (MaxComparisons-1)/2) + "C ne 1.5)",
	} {
		if _, err := Parse(src); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}

func TestSyntaxErrorPositions(t *testing.T) {
	for _, tc := range []struct {
		src string
		pos int
	}{
		{"", 0},
		{"A eq", 4},
		{"A eq 'x", 5},
		{"A eq 1 and", 10},
		{"(A eq 1", 0},
		{"A eq 1)", 6},
		{"A eq B", 0},
		{"A eq 1 eq 2", 7},
		{"A ~ 1", 2},
		{"A eq 2147483648", 5},
		{"A eq guid'xyz'", 5},
		{"A eq datetime'2020-13-01T00:00:00Z'", 5},
		{"A eq X'0'", 5},
		{"A eq 1.", 5},
		{"A eq 1e", 5},
		{"A eq 1.5m", 5},
		{"A eq null", 5},
		{"A eq 12abc", 5},
		{"5", 0},
		{"(A eq 1) eq true", 9},
		{"not", 3},
		{strings.Repeat("(", MaxDepth+5) + "A" + strings.Repeat(")", MaxDepth+5), MaxDepth + 1},
		{strings.Repeat("not ", MaxDepth+5) + "A", 4 * (MaxDepth + 1)},
		// The 16th comparison is refused at its operator ("A eq 1" clauses
		// start every 11 bytes).
		{strings.Repeat("A eq 1 and ", MaxComparisons) + "A eq 1", 11*MaxComparisons + 2},
		{strings.Repeat("(1 eq 1) or ", MaxComparisons+1) + "B", 12*MaxComparisons + 3},
	} {
		_, err := Parse(tc.src)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("%q: want a syntax error, got %v", tc.src, err)
		}
		if se.Pos != tc.pos {
			t.Errorf("%q: error at %d, want %d: %v", tc.src, se.Pos, tc.pos, err)
		}
	}
}

func TestLiteralRoundTrip(t *testing.T) {
	for _, v := range []Value{
		StringValue("it's"), StringValue(""), Int32Value(-7), Int64Value(math.MinInt64), DoubleValue(1.5), DoubleValue(math.Copysign(0, -1)),
		DoubleValue(1e300), DoubleValue(math.Inf(1)), DoubleValue(math.Inf(-1)), BoolValue(true), BinaryValue([]byte{0, 0xff}),
		BinaryValue([]byte{}), {Type: Guid, Bytes: make([]byte, 16)},
	} {
		f, err := Parse("P eq " + Literal(v))
		if err != nil {
			t.Fatalf("%s: %v", Literal(v), err)
		}
		got := f.root.(*cmpExpr).lit
		if c, ok := Compare(got, v); !ok || c != 0 {
			t.Fatalf("%s read back as %#v", Literal(v), got)
		}
	}
}

func TestKeyRangeNarrowing(t *testing.T) {
	f, err := Parse("RowKey gt 'b' and PartitionKey eq 'p' and RowKey le 'x' and RowKey ge 'c' and RowKey lt 'z'")
	if err != nil {
		t.Fatal(err)
	}
	if pk, ok := f.KeyRange("PartitionKey").Exact(); !ok || pk != "p" {
		t.Fatalf("PartitionKey range %v", f.KeyRange("PartitionKey"))
	}
	if r := f.KeyRange("RowKey"); r.String() != `["c", "x"]` {
		t.Fatalf("RowKey range %v", r)
	}
	// Disjunctions do not narrow; contradictions are empty.
	f, _ = Parse("PartitionKey eq 'a' or PartitionKey eq 'b'")
	if r := f.KeyRange("PartitionKey"); r != (Range{}) {
		t.Fatalf("or narrowed to %v", r)
	}
	f, _ = Parse("PartitionKey eq 'a' and PartitionKey eq 'b'")
	if !f.KeyRange("PartitionKey").Empty {
		t.Fatal("contradiction not empty")
	}
	f, _ = Parse("PartitionKey eq 5")
	if !f.KeyRange("PartitionKey").Empty {
		t.Fatal("a non-string key comparison is not empty")
	}
}

// TestPrintable: the character an "unexpected character" error names is
// the first rune of the rest of the input, escaped when not printable.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"":       "",
		"ab":     "a",
		"é!":     "é",
		"\x01x":  `\u0001`,
		"\x7f":   `\u007f`,
		"\xffab": `\ufffd`,
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}
