package wire

import (
	"encoding/xml"
	"net/url"
	"regexp"
	"testing"
)

func TestEncodedName(t *testing.T) {
	re := regexp.MustCompile(`^<Name( Encoded="true")?>(.*)</Name>$`)
	for _, c := range []struct {
		in      string
		encoded bool
	}{
		{"plain name.txt", false},
		{"a&b<c>", false},
		{"日本語/ü", false},
		{"dir\uFFFE", true},
		{"\uFFFFx", true},
		{"ctl\x01", true},
		{"% +/?", false},
	} {
		b, err := xml.Marshal(struct {
			XMLName xml.Name    `xml:"X"`
			N       EncodedName `xml:"Name"`
		}{N: EncodedName(c.in)})
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		inner := string(b[len("<X>") : len(b)-len("</X>")])
		m := re.FindStringSubmatch(inner)
		if m == nil {
			t.Fatalf("%q: %s", c.in, inner)
		}
		if (m[1] != "") != c.encoded {
			t.Fatalf("%q: encoded=%v in %s", c.in, m[1] != "", inner)
		}
		var back struct {
			Name struct {
				Encoded bool   `xml:"Encoded,attr"`
				Text    string `xml:",chardata"`
			} `xml:"Name"`
		}
		if err := xml.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		got := back.Name.Text
		if back.Name.Encoded {
			if got, err = url.QueryUnescape(got); err != nil {
				t.Fatalf("%q: %v", c.in, err)
			}
		}
		if got != c.in {
			t.Fatalf("%q came back as %q", c.in, got)
		}
	}
}
