package wire

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

func TestAppendXMLText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{`{"a":"it's"}`, `{"a":"it's"}`},
		{"a&b<c>d", "a&amp;b&lt;c&gt;d"},
		{"line\nnext\ttab", "line\nnext\ttab"},
		{"cr\r\n", "cr&#xD;\n"},
		{"nul\x00bell\x07", "nul\uFFFDbell\uFFFD"},
		{"bad\xffutf8", "bad\uFFFDutf8"},
		{"\uFFFE\uFFFF", "\uFFFD\uFFFD"},
		{"héllo 日本 😀", "héllo 日本 😀"},
	} {
		if got := string(AppendXMLText([]byte("x"), c.in)); got != "x"+c.want {
			t.Errorf("AppendXMLText(%q) = %q, want %q", c.in, got[1:], c.want)
		}
	}
}

type tidyDoc struct {
	XMLName xml.Name `xml:"Doc"`
	Attr    string   `xml:"Path,attr"`
	Text    string   `xml:"Name"`
}

func TestTidyXML(t *testing.T) {
	v := tidyDoc{Attr: `a"b'c` + "\n\t", Text: `{"k":"it's"}` + "\n\t\r<&>"}
	raw, err := xml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got := string(TidyXML(raw))
	want := `<Doc Path="a&quot;b'c&#xA;&#x9;"><Name>{"k":"it's"}` + "\n\t&#xD;&lt;&amp;&gt;</Name></Doc>"
	if got != want {
		t.Fatalf("TidyXML:\n got %s\nwant %s", got, want)
	}
	if plain := []byte("<a>b</a>"); &TidyXML(plain)[0] != &plain[0] {
		t.Error("TidyXML copied a document without references")
	}
}

// decodeText is the character data of <a>…</a> as encoding/xml reads it.
func decodeText(t *testing.T, doc []byte) string {
	var v struct {
		Text string `xml:",chardata"`
	}
	if err := xml.Unmarshal(doc, &v); err != nil {
		t.Fatalf("decoding %q: %v", doc, err)
	}
	return v.Text
}

// FuzzAppendXMLText holds AppendXMLText to reading back exactly as
// xml.EscapeText's output does, with no numeric reference but &#xD;.
func FuzzAppendXMLText(f *testing.F) {
	for _, s := range []string{"", "a", `"'`, "\r\n\t", "&lt;", "\x00\xff", "]]>", "\uFFFE😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ours := AppendXMLText([]byte("<a>"), s)
		ours = append(ours, "</a>"...)
		if bytes.Contains(bytes.ReplaceAll(ours, []byte("&#xD;"), nil), []byte("&#")) {
			t.Fatalf("numeric reference in %q", ours)
		}
		var ref bytes.Buffer
		ref.WriteString("<a>")
		_ = xml.EscapeText(&ref, []byte(s))
		ref.WriteString("</a>")
		if got, want := decodeText(t, ours), decodeText(t, ref.Bytes()); got != want {
			t.Fatalf("read back %q, encoding/xml's reads back %q", got, want)
		}
	})
}

// FuzzTidyXML holds TidyXML to changing how a document is written, never
// what it says.
func FuzzTidyXML(f *testing.F) {
	f.Add(`a"b`, `it's`+"\n")
	f.Add("\t<>&", "\r\x00")
	f.Fuzz(func(t *testing.T, attr, text string) {
		raw, err := xml.Marshal(tidyDoc{Attr: attr, Text: text})
		if err != nil {
			return
		}
		var before, after tidyDoc
		if err := xml.Unmarshal(raw, &before); err != nil {
			t.Fatalf("encoding/xml output unreadable: %v", err)
		}
		tidy := TidyXML(bytes.Clone(raw))
		if err := xml.Unmarshal(tidy, &after); err != nil {
			t.Fatalf("tidied %q unreadable: %v", tidy, err)
		}
		if before != after {
			t.Fatalf("tidy changed %+v to %+v (%q)", before, after, tidy)
		}
		for _, ref := range []string{"&#34;", "&#39;"} {
			if strings.Contains(string(tidy), ref) {
				t.Fatalf("%s left in %q", ref, tidy)
			}
		}
	})
}
