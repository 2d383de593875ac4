package datalake

import (
	"encoding/base64"
	"maps"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

func TestParseProperties(t *testing.T) {
	b := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	md, err := parseProperties("a=" + b("x y") + ", B_2=" + b("") + " ,c=" + b("é"))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"a": "x y", "B_2": "", "c": "é"}; !maps.Equal(md, want) {
		t.Fatalf("got %v, want %v", md, want)
	}
	if got := formatProperties(md); got != "B_2=,a="+b("x y")+",c="+b("é") {
		t.Fatalf("format %q", got)
	}
	if md, err := parseProperties(""); err != nil || len(md) != 0 {
		t.Fatalf("empty: %v %v", md, err)
	}
	for _, bad := range []string{"a", "=MQ==", "a=MQ", "a=MQ==,a=Mg==", "a=MQ==,A=Mg==", "a b=MQ==", "a=" + b("x\ny"), "a=MQ==,"} {
		if _, err := parseProperties(bad); !azerr.Has(err, azerr.InvalidHeaderValue) {
			t.Errorf("%q: %v, want InvalidHeaderValue", bad, err)
		}
	}
	if _, err := parseProperties("a=" + b(strings.Repeat("x", 9000))); !azerr.Has(err, azerr.MetadataTooLarge) {
		t.Errorf("too large: %v", err)
	}
}

// FuzzParseProperties: any header value either fails with a 400 or
// gives metadata that formats back to a value parsing to the same.
func FuzzParseProperties(f *testing.F) {
	for _, s := range []string{"", "a=MQ==", "a=MQ==, b=Mg==", "a", "a=!!", "x=" + base64.StdEncoding.EncodeToString([]byte{0xff, 0x20})} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		md, err := parseProperties(v)
		if err != nil {
			if e, ok := azerr.As(err); !ok || e.Status != 400 {
				t.Fatalf("%q: %v", v, err)
			}
			return
		}
		again, err := parseProperties(formatProperties(md))
		if err != nil || !maps.Equal(md, again) {
			t.Fatalf("%q: %v round-trips to %v (%v)", v, md, again, err)
		}
	})
}
