package acl

import (
	"errors"
	"testing"
)

// FuzzParse checks that every accepted x-ms-acl is within Azure's limits
// and formats to a canonical string that parses back to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"user::rwx,group::r-x,other::---",
		"user::rwx,user:oid:r--,group::r-x,mask::r-x,other::---",
		"user::rwx,group::r-x,other::---,default:user::rwx,default:group:g:rwx,default:other::---",
		"other::r--,group::r-x,user::rwx,user:a:rw-",
		"user:::rwx", "default:mask::rwx",
		namedACL(28, true), namedACL(29, false),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q: error %v does not wrap ErrInvalid", s, err)
			}
			return
		}
		if err := checkCounts(a.Entries); err != nil {
			t.Fatalf("%q accepted over the limits: %v", s, err)
		}
		for _, e := range a.Entries {
			if len(e.ID) > MaxIDLen {
				t.Fatalf("%q accepted with an id of %d characters", s, len(e.ID))
			}
		}
		canon := a.String()
		b, err := Parse(canon)
		if err != nil {
			t.Fatalf("canonical %q of %q does not parse: %v", canon, s, err)
		}
		if b.String() != canon {
			t.Fatalf("not canonical: %q -> %q", canon, b.String())
		}
		// The mode round-trips through its symbolic form.
		m := a.Mode()
		if pm, err := ParseMode(m.String()); err != nil || pm != m {
			t.Fatalf("mode %o: %q -> %o %v", m, m.String(), pm, err)
		}
	})
}

// FuzzParseMode checks that every accepted x-ms-permissions round-trips.
func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"rwxr-x---", "1750", "rwxrwxrwt", "0000", "rw-r--r--+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMode(s)
		if err != nil {
			return
		}
		if m&^(StickyBit|0o777) != 0 {
			t.Fatalf("%q: stray bits %o", s, m)
		}
		if back, err := ParseMode(m.String()); err != nil || back != m {
			t.Fatalf("%q: %o -> %q -> %o %v", s, m, m.String(), back, err)
		}
	})
}
