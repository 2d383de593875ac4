package acl

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestLimits checks Azure's ACL limits: 32 entries per access ACL and 32
// per default ACL, the owning user, owning group, mask and other among
// them (so 28 named entries each), and ids of at most 113 characters.
func TestLimits(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		ok   bool
		def  bool // the default ACL is the one over
	}{
		{"28 named access", namedACL(28, false), true, false},
		{"28 named access and default", namedACL(28, true), true, false},
		{"29 named access", namedACL(29, false), false, false},
		// No mask given: the one Normalize adds is the 33rd entry.
		{"29 named, mask computed", strings.Replace(namedACL(29, false), ",mask::rwx", "", 1), false, false},
		{"29 named default", namedACL(28, false) + defaultNamed(29), false, true},
		// A default ACL given without its base entries gets them from the
		// access ACL: 29 named + 4 is over too.
		{"default filled in over", namedACL(0, false) + ",default:mask::rwx" + defaultNamed(29)[len(",default:user::rwx,default:group::r-x,default:mask::rwx,default:other::---"):], false, true},
		{"16,000 entries", namedACL(7996, true), false, false},
	} {
		_, err := Parse(c.in)
		if c.ok {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		var le *LimitError
		if !errors.As(err, &le) || !errors.Is(err, ErrTooManyEntries) || !errors.Is(err, ErrInvalid) || le.Default != c.def {
			t.Errorf("%s: %v, want a LimitError (default %v)", c.name, err, c.def)
		}
	}

	// Modify and remove lists are under the same limits.
	if _, err := ParseEntries(namedACL(29, false)); !errors.Is(err, ErrTooManyEntries) {
		t.Errorf("ParseEntries of 33 access entries: %v", err)
	}
	var rm strings.Builder
	rm.WriteString("mask")
	for i := 0; i < 32; i++ {
		fmt.Fprintf(&rm, ",default:user:u%d", i)
	}
	if _, err := ParseRemoveList(rm.String()); err != nil {
		t.Errorf("ParseRemoveList of a mask and 32 default entries: %v", err)
	}
	if _, err := ParseRemoveList(rm.String() + ",default:group:g"); !errors.Is(err, ErrTooManyEntries) {
		t.Errorf("ParseRemoveList of 33 default entries: %v", err)
	}

	// A modify that brings the ACL over the limit is refused.
	a, err := Parse(namedACL(28, false))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Modify(a, []Entry{{Tag: Group, ID: "another", Perm: Read}}, true); !errors.Is(err, ErrTooManyEntries) {
		t.Errorf("Modify to 33 access entries: %v", err)
	}
	if _, err := Modify(a, []Entry{{Tag: User, ID: "00000000-0000-4000-8000-000000000000", Perm: Write}}, true); err != nil {
		t.Errorf("Modify of an existing entry at 32: %v", err)
	}

	// Ids: an object id, a 113-character user principal name, not 114.
	upn := strings.Repeat("u", 64) + "@" + strings.Repeat("d", 44) + ".com"
	for _, c := range []struct {
		id string
		ok bool
	}{{"3fa85f64-5717-4562-b3fc-2c963f66afa6", true}, {upn, true}, {upn + "x", false}} {
		_, err := Parse("user::rwx,group::r-x,other::---,user:" + c.id + ":r--")
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("id of %d characters: %v, want ok %v", len(c.id), err, c.ok)
		}
	}
}

// defaultNamed is a default ACL with n named users.
func defaultNamed(n int) string {
	var b strings.Builder
	b.WriteString(",default:user::rwx,default:group::r-x,default:mask::rwx,default:other::---")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, ",default:user:d%d:r-x", i)
	}
	return b.String()
}

// TestHugeRefusedEarly checks that an oversized list is refused after
// reading at most the entries the limit allows, not all of it: a list
// whose 33rd access entry is followed by a malformed one is a LimitError,
// not a syntax error found further on.
func TestHugeRefusedEarly(t *testing.T) {
	s := namedACL(29, false) + ",garbage" + strings.Repeat(",user:x:rwx", 100000)
	if _, err := Parse(s); !errors.Is(err, ErrTooManyEntries) {
		t.Fatalf("Parse: %v, want ErrTooManyEntries", err)
	}
}

// TestStoredOverLimitReadable checks that a record written before the
// limits were enforced still reads back: a path's ACL must not become
// unreadable because it is long.
func TestStoredOverLimitReadable(t *testing.T) {
	long := "user::rwx,user:" + strings.Repeat("x", 200) + ":r--," + namedACL(100, true)[len("user::rwx,"):]
	b, err := json.Marshal(aclJSON{ACL: long})
	if err != nil {
		t.Fatal(err)
	}
	var a ACL
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("stored ACL of %d entries: %v", strings.Count(long, ",")+1, err)
	}
	if a.String() != long {
		t.Fatal("stored ACL changed on reading")
	}
	// As the Blob endpoint reads it for x-ms-upn (ParseStored), while a
	// request carrying it is refused.
	if es, err := ParseStored(long); err != nil || Format(ACL{Entries: es}) != long {
		t.Fatalf("ParseStored: %v", err)
	}
	if _, err := ParseEntries(long); !errors.Is(err, ErrInvalid) {
		t.Fatalf("ParseEntries of the stored ACL: %v", err)
	}
	// Duplicates are still found in stored records.
	b, _ = json.Marshal(aclJSON{ACL: long + ",user::r--"})
	if err := json.Unmarshal(b, &a); err == nil {
		t.Fatal("a stored ACL with a duplicate entry read back")
	}
}
