package kv_test

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

func TestKeySplitRoundTrip(t *testing.T) {
	cases := [][]string{
		{},
		{""},
		{"", ""},
		{"a"},
		{"blob", "acct", "container", "dir/name.txt"},
		{"\x00"},
		{"\x00\x00"},
		{"\xff"},
		{"\x01"},
		{"a\x00b", "\x00\x01", "\x00\xff", "\xff\x00"},
		{"tail\x00"},
		{"", "x", ""},
	}
	for _, parts := range cases {
		k := kv.Key(parts...)
		got, ok := kv.Split(k)
		if !ok {
			t.Errorf("Split(Key(%q)) not ok (key %x)", parts, k)
			continue
		}
		if !slices.Equal(got, parts) {
			t.Errorf("Split(Key(%q)) = %q", parts, got)
		}
		// AppendComponent composes like Key.
		var b []byte
		for _, p := range parts {
			b = kv.AppendComponent(b, p)
		}
		if !bytes.Equal(b, k) {
			t.Errorf("AppendComponent chain %x != Key %x", b, k)
		}
	}
}

func TestSplitMalformed(t *testing.T) {
	for _, k := range []string{
		"a",          // no terminator
		"a\x00",      // truncated escape
		"a\x00\x02",  // bad escape
		"a\x00\x01b", // trailing partial component
		"\x00",
		"\x00\x00",
	} {
		if parts, ok := kv.Split([]byte(k)); ok {
			t.Errorf("Split(%q) = %q, ok; want malformed", k, parts)
		}
	}
}

// compareTuples orders tuples component by component, a proper prefix first.
func compareTuples(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := strings.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// randTuple draws from an alphabet rich in the bytes the escaping cares about.
func randTuple(r *rand.Rand) []string {
	alphabet := []byte{0x00, 0x01, 0x02, 'a', 'b', 0xFE, 0xFF}
	n := r.IntN(4)
	parts := make([]string, n)
	for i := range parts {
		b := make([]byte, r.IntN(5))
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		parts[i] = string(b)
	}
	return parts
}

func hasTuplePrefix(t, p []string) bool {
	return len(p) <= len(t) && slices.Equal(t[:len(p)], p)
}

// inRange reports prefix <= k < PrefixEnd(prefix), the range a prefix scan uses.
func inRange(k, prefix []byte) bool {
	if bytes.Compare(k, prefix) < 0 {
		return false
	}
	end := kv.PrefixEnd(prefix)
	return end == nil || bytes.Compare(k, end) < 0
}

func TestKeyOrderProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < iterations(); i++ {
		a, b := randTuple(r), randTuple(r)
		ka, kb := kv.Key(a...), kv.Key(b...)
		if got, want := bytes.Compare(ka, kb), sign(compareTuples(a, b)); got != want {
			t.Fatalf("order of %q vs %q: bytes %d, tuples %d (%x vs %x)", a, b, got, want, ka, kb)
		}
		// A prefix scan over the encoding of b matches exactly the tuples
		// that start with b: it never leaks into a sibling component.
		if got, want := inRange(ka, kb), hasTuplePrefix(a, b); got != want {
			t.Fatalf("prefix scan of %q over %q: in range %v, tuple prefix %v", b, a, got, want)
		}
	}
}

func TestAppendPartialProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < iterations(); i++ {
		base := randTuple(r)
		name := randTuple(r)
		if len(name) == 0 {
			continue
		}
		prefixStr := randTuple(r)
		var p string
		if len(prefixStr) > 0 {
			p = prefixStr[0]
		}
		if r.IntN(3) == 0 && len(name[0]) > 0 {
			p = name[0][:r.IntN(len(name[0])+1)] // make real prefixes common
		}
		k := kv.Key(append(slices.Clone(base), name[0])...)
		partial := kv.AppendPartial(kv.Key(base...), p)
		if got, want := inRange(k, partial), strings.HasPrefix(name[0], p); got != want {
			t.Fatalf("base %q name %q partial %q: in range %v, has prefix %v", base, name[0], p, got, want)
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	cases := []struct{ in, want []byte }{
		{[]byte("a"), []byte("b")},
		{[]byte("a\xff"), []byte("b")},
		{[]byte("a\x00\x01"), []byte("a\x00\x02")},
		{[]byte("\xff\xff"), nil},
		{nil, nil},
	}
	for _, c := range cases {
		in := slices.Clone(c.in)
		got := kv.PrefixEnd(c.in)
		if !bytes.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("PrefixEnd(%x) = %x, want %x", c.in, got, c.want)
		}
		if !bytes.Equal(in, c.in) {
			t.Errorf("PrefixEnd modified its input")
		}
	}
}

func FuzzKeyRoundTrip(f *testing.F) {
	f.Add("a", "b", "c", []byte("a\x00\x01"))
	f.Add("", "\x00", "\xff", []byte("\x00\xff\x00\x01"))
	f.Add("x\x00\x01", "x", "x\x00", []byte{0, 2})
	f.Fuzz(func(t *testing.T, a, b, c string, raw []byte) {
		parts := []string{a, b, c}
		k := kv.Key(parts...)
		got, ok := kv.Split(k)
		if !ok || !slices.Equal(got, parts) {
			t.Fatalf("Split(Key(%q)) = %q, %v", parts, got, ok)
		}
		// Order is preserved component-wise.
		if got, want := bytes.Compare(kv.Key(a, b), kv.Key(b, a)), sign(compareTuples([]string{a, b}, []string{b, a})); got != want {
			t.Fatalf("order of (%q,%q) vs (%q,%q): %d want %d", a, b, b, a, got, want)
		}
		if got, want := bytes.Compare(kv.Key(a), kv.Key(c)), sign(strings.Compare(a, c)); got != want {
			t.Fatalf("order of %q vs %q: %d want %d", a, c, got, want)
		}
		// A one-component prefix scan matches exactly the tuples starting with it.
		if got, want := inRange(kv.Key(b, c), kv.Key(a)), a == b; got != want {
			t.Fatalf("prefix %q over (%q,%q): %v want %v", a, b, c, got, want)
		}
		if got, want := inRange(kv.Key(b), kv.AppendPartial(nil, a)), strings.HasPrefix(b, a); got != want {
			t.Fatalf("partial %q over %q: %v want %v", a, b, got, want)
		}
		// The encoding is canonical: any key Split accepts re-encodes to itself.
		if ps, ok := kv.Split(raw); ok {
			if re := kv.Key(ps...); !bytes.Equal(re, raw) {
				t.Fatalf("Split(%x) = %q re-encodes to %x", raw, ps, re)
			}
		}
	})
}

func iterations() int {
	if testing.Short() {
		return 10000
	}
	return 100000
}
