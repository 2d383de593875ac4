package arrowipc

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// TestRoundTripArrowGo writes every column type with values, nulls and
// empty values and reads the stream back with arrow-go's IPC reader
// (the reader azblob uses): schema, metadata and every cell must match.
func TestRoundTripArrowGo(t *testing.T) {
	for _, rows := range []int{0, 1, 3, 9, 17} {
		s := NewStrings("Name")
		bl := NewBools("Deleted")
		i64 := NewInt64s("Content-Length")
		i32 := NewInt32s("TagCount")
		ts := NewTimestamps("Last-Modified")
		m := NewStringMaps("Metadata")
		base := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
		for r := 0; r < rows; r++ {
			if r%3 == 1 {
				s.AppendNull()
				bl.AppendNull()
				i64.AppendNull()
				i32.AppendNull()
				ts.AppendNull()
				m.AppendNull()
				continue
			}
			s.Append(string(rune('a'+r)) + "é/x")
			bl.Append(r%2 == 0)
			i64.Append(int64(r) << 40)
			i32.Append(int64(-r))
			ts.AppendTime(base.Add(time.Duration(r) * time.Hour))
			if r%3 == 2 {
				m.Append(nil)
			} else {
				m.Append([]KV{{"k1", "v" + string(rune('0'+r))}, {"k2", ""}})
			}
		}
		var buf bytes.Buffer
		md := []KV{{"NextMarker", "b123.x"}, {"NumberOfRecords", "3"}}
		if err := Write(&buf, md, s, bl, i64, i32, ts, m); err != nil {
			t.Fatal(err)
		}
		rd, err := ipc.NewReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("rows %d: reader: %v", rows, err)
		}
		sch := rd.Schema()
		if got := sch.Metadata(); !reflect.DeepEqual(got.Keys(), []string{"NextMarker", "NumberOfRecords"}) || !reflect.DeepEqual(got.Values(), []string{"b123.x", "3"}) {
			t.Fatalf("metadata %v", got)
		}
		wantTypes := []arrow.DataType{arrow.BinaryTypes.String, arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32,
			&arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}, arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.String)}
		for i, f := range sch.Fields() {
			if !arrow.TypeEqual(f.Type, wantTypes[i]) || !f.Nullable {
				t.Fatalf("field %d: %v nullable %v", i, f.Type, f.Nullable)
			}
		}
		got := 0
		for rd.Next() {
			rec := rd.RecordBatch()
			got += int(rec.NumRows())
			cs := rec.Column(0).(*array.String)
			cb := rec.Column(1).(*array.Boolean)
			c64 := rec.Column(2).(*array.Int64)
			c32 := rec.Column(3).(*array.Int32)
			cts := rec.Column(4).(*array.Timestamp)
			cm := rec.Column(5).(*array.Map)
			for r := 0; r < int(rec.NumRows()); r++ {
				null := r%3 == 1
				for c := 0; c < 6; c++ {
					if rec.Column(c).IsNull(r) != null {
						t.Fatalf("rows %d: row %d col %d null %v", rows, r, c, !null)
					}
				}
				if null {
					continue
				}
				if cs.Value(r) != string(rune('a'+r))+"é/x" || cb.Value(r) != (r%2 == 0) || c64.Value(r) != int64(r)<<40 || c32.Value(r) != int32(-r) {
					t.Fatalf("row %d: %q %v %d %d", r, cs.Value(r), cb.Value(r), c64.Value(r), c32.Value(r))
				}
				if tm := cts.Value(r).ToTime(arrow.Second); !tm.Equal(base.Add(time.Duration(r) * time.Hour)) {
					t.Fatalf("row %d: time %v", r, tm)
				}
				keys, vals := cm.Keys().(*array.String), cm.Items().(*array.String)
				start, end := int(cm.Offsets()[r]), int(cm.Offsets()[r+1])
				var pairs []KV
				for i := start; i < end; i++ {
					pairs = append(pairs, KV{keys.Value(i), vals.Value(i)})
				}
				var want []KV
				if r%3 != 2 {
					want = []KV{{"k1", "v" + string(rune('0'+r))}, {"k2", ""}}
				}
				if !reflect.DeepEqual(pairs, want) {
					t.Fatalf("row %d: map %v", r, pairs)
				}
			}
		}
		if err := rd.Err(); err != nil {
			t.Fatal(err)
		}
		if got != rows {
			t.Fatalf("read %d rows of %d", got, rows)
		}
		rd.Release()
	}
}

// TestWriteRejectsRaggedColumns: columns of different lengths are an
// error, not a malformed stream.
func TestWriteRejectsRaggedColumns(t *testing.T) {
	a, b := NewStrings("a"), NewStrings("b")
	a.Append("x")
	if err := Write(&bytes.Buffer{}, nil, a, b); err == nil {
		t.Fatal("ragged columns accepted")
	}
}

// TestAccepts: the media type anywhere in the list, any case, with
// parameters; q=0 refuses it.
func TestAccepts(t *testing.T) {
	for h, want := range map[string]bool{
		"application/vnd.apache.arrow.stream,application/xml":  true,
		"application/xml, Application/Vnd.Apache.Arrow.Stream": true,
		"application/vnd.apache.arrow.stream;q=0.5":            true,
		"application/vnd.apache.arrow.stream; q=0":             false,
		"application/xml":                   false,
		"":                                  false,
		"application/vnd.apache.arrow.file": false,
	} {
		if Accepts(h) != want {
			t.Errorf("Accepts(%q) = %v", h, !want)
		}
	}
}

// FuzzRoundTrip: any values (rows cut from the input at NUL bytes; a row
// starting with 0x01 is null) read back through arrow-go as written.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("a\x00\x01b\x00\x00ccc\x00é"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		rows := bytes.Split(data, []byte{0})
		s, n, m := NewStrings("s"), NewInt64s("n"), NewStringMaps("m")
		bl := NewBools("b")
		for _, r := range rows {
			if len(r) > 0 && r[0] == 1 {
				s.AppendNull()
				n.AppendNull()
				m.AppendNull()
				bl.AppendNull()
				continue
			}
			s.Append(string(r))
			n.Append(int64(len(r)) - 3)
			m.Append([]KV{{string(r), string(r) + "v"}})
			bl.Append(len(r)%2 == 1)
		}
		var buf bytes.Buffer
		if err := Write(&buf, []KV{{"k", string(data)}}, s, n, m, bl); err != nil {
			t.Fatal(err)
		}
		rd, err := ipc.NewReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		defer rd.Release()
		if v := rd.Schema().Metadata().Values(); len(v) != 1 || v[0] != string(data) {
			t.Fatalf("metadata %q", v)
		}
		if !rd.Next() {
			t.Fatalf("no batch: %v", rd.Err())
		}
		rec := rd.RecordBatch()
		if int(rec.NumRows()) != len(rows) {
			t.Fatalf("%d rows of %d", rec.NumRows(), len(rows))
		}
		cs, cn, cm, cb := rec.Column(0).(*array.String), rec.Column(1).(*array.Int64), rec.Column(2).(*array.Map), rec.Column(3).(*array.Boolean)
		keys, vals := cm.Keys().(*array.String), cm.Items().(*array.String)
		for i, r := range rows {
			if len(r) > 0 && r[0] == 1 {
				if !cs.IsNull(i) || !cn.IsNull(i) || !cm.IsNull(i) || !cb.IsNull(i) {
					t.Fatalf("row %d not null", i)
				}
				continue
			}
			o := int(cm.Offsets()[i])
			if cs.Value(i) != string(r) || cn.Value(i) != int64(len(r))-3 || cb.Value(i) != (len(r)%2 == 1) ||
				cm.Offsets()[i+1]-cm.Offsets()[i] != 1 || keys.Value(o) != string(r) || vals.Value(o) != string(r)+"v" {
				t.Fatalf("row %d differs", i)
			}
		}
		if rd.Next() {
			t.Fatal("a second batch")
		}
	})
}
