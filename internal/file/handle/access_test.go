package handle

import (
	"errors"
	"slices"
	"testing"
)

// NT bits as MS-FSA states its rule (MS-DTYP 2.4.3, MS-FSCC).
const (
	fileReadData    = 0x1
	fileWriteData   = 0x2
	fileAppendData  = 0x4
	fileExecute     = 0x20
	delete_         = 0x10000
	fileShareRead   = 0x1
	fileShareWrite  = 0x2
	fileShareDelete = 0x4
	readAttributes  = 0x80 // takes no part in sharing
)

// fsaSharingViolation is MS-FSA 2.1.5.1.2's check, written over NT access
// masks and FILE_SHARE_* bits, independently of Conflicts: an open that
// wants no data access, or an existing open holding none, is not
// checked; otherwise either side's access must be shared by the other.
func fsaSharingViolation(existingGranted, existingShare, desired, share uint32) bool {
	const data = fileExecute | fileReadData | fileWriteData | fileAppendData | delete_
	if desired&data == 0 || existingGranted&data == 0 {
		return false
	}
	switch {
	case existingGranted&(fileExecute|fileReadData) != 0 && share&fileShareRead == 0:
		return true
	case existingGranted&(fileWriteData|fileAppendData) != 0 && share&fileShareWrite == 0:
		return true
	case existingGranted&delete_ != 0 && share&fileShareDelete == 0:
		return true
	case desired&(fileExecute|fileReadData) != 0 && existingShare&fileShareRead == 0:
		return true
	case desired&(fileWriteData|fileAppendData) != 0 && existingShare&fileShareWrite == 0:
		return true
	case desired&delete_ != 0 && existingShare&fileShareDelete == 0:
		return true
	}
	return false
}

// ntMask spells a three-bit access set (R=1, W=2, D=4) as an NT mask,
// choosing among the equivalent bits by variant so that FILE_EXECUTE and
// FILE_APPEND_DATA get exercised too.
func ntMask(rwd int, variant int) uint32 {
	m := uint32(readAttributes)
	if rwd&1 != 0 {
		m |= []uint32{fileReadData, fileExecute, fileReadData | fileExecute}[variant%3]
	}
	if rwd&2 != 0 {
		m |= []uint32{fileWriteData, fileAppendData, fileWriteData | fileAppendData}[variant%3]
	}
	if rwd&4 != 0 {
		m |= delete_
	}
	return m
}

func ntShare(rwd int) uint32 {
	var m uint32
	if rwd&1 != 0 {
		m |= fileShareRead
	}
	if rwd&2 != 0 {
		m |= fileShareWrite
	}
	if rwd&4 != 0 {
		m |= fileShareDelete
	}
	return m
}

// TestConflictsMatrix checks Conflicts (through AccessFromNT and
// ShareFromNT) against the MS-FSA statement for every existing
// access×share against every new access×share.
func TestConflictsMatrix(t *testing.T) {
	n := 0
	for ea := range 8 {
		for es := range 8 {
			for na := range 8 {
				for ns := range 8 {
					for v := range 3 {
						eMask, nMask := ntMask(ea, v), ntMask(na, v+1)
						want := fsaSharingViolation(eMask, ntShare(es), nMask, ntShare(ns))
						got := Conflicts(AccessFromNT(eMask), ShareFromNT(ntShare(es)), AccessFromNT(nMask), ShareFromNT(ntShare(ns)))
						if got != want {
							t.Errorf("existing %#x share %#x, new %#x share %#x: Conflicts = %v, MS-FSA says %v", eMask, ntShare(es), nMask, ntShare(ns), got, want)
						}
						n++
					}
				}
			}
		}
	}
	if n != 8*8*8*8*3 {
		t.Fatalf("checked %d combinations", n)
	}
}

// TestConflictsDocumentedExamples: the three SMB open examples of
// "Managing file locks".
func TestConflictsDocumentedExamples(t *testing.T) {
	for _, c := range []struct {
		name   string
		ea     Access
		es     ShareAccess
		na     Access
		ns     ShareAccess
		refuse bool
	}{
		{"no violation: A Read/ShareWrite, B Write/ShareRead", Read, ShareWrite, Write, ShareRead, false},
		{"violation due to access: A Write/ShareRead, B Write/ShareWrite", Write, ShareRead, Write, ShareWrite, true},
		{"violation due to share mode: A Write/ShareWrite, B Write/ShareRead", Write, ShareWrite, Write, ShareRead, true},
		{"attribute-only existing with ShareNone", 0, ShareNone, AllAccess, ShareNone, false},
		{"attribute-only new with ShareNone", AllAccess, ShareNone, 0, ShareNone, false},
	} {
		if got := Conflicts(c.ea, c.es, c.na, c.ns); got != c.refuse {
			t.Errorf("%s: Conflicts = %v", c.name, got)
		}
	}
}

func TestAccessFromNT(t *testing.T) {
	for _, c := range []struct {
		mask uint32
		want Access
	}{
		{0, 0},
		{0x80 | 0x100, 0},                   // attributes only
		{0x120089, Read},                    // FILE_GENERIC_READ
		{0x120116, Write},                   // FILE_GENERIC_WRITE
		{0x1200a0, Read},                    // FILE_GENERIC_EXECUTE
		{0x1f01ff, AllAccess},               // FILE_ALL_ACCESS
		{0x80000000, Read},                  // GENERIC_READ
		{0x40000000, Write},                 // GENERIC_WRITE
		{0x10000000, AllAccess},             // GENERIC_ALL
		{0x02000000, AllAccess},             // MAXIMUM_ALLOWED
		{0x10080, Delete},                   // DELETE | FILE_READ_ATTRIBUTES
		{0x10000 | 0x4, Write | Delete},     // append + delete
		{0x10000 | 0x20 | 0x2, AllAccess},   // execute + write + delete
		{0x20000000, Read},                  // GENERIC_EXECUTE
		{0x00040000 | 0x00080000, 0},        // WRITE_DAC | WRITE_OWNER
		{0x00100000, 0},                     // SYNCHRONIZE
		{0x00000008 | 0x00000010 | 0x40, 0}, // EA read/write, delete child
	} {
		if got := AccessFromNT(c.mask); got != c.want {
			t.Errorf("AccessFromNT(%#x) = %v, want %v", c.mask, got, c.want)
		}
	}
	if got := ShareFromNT(0xff); got != ShareAll {
		t.Errorf("ShareFromNT(0xff) = %v", got)
	}
}

func TestRightsAndParse(t *testing.T) {
	for _, c := range []struct {
		a      Access
		rights []string
		str    string
	}{
		{0, nil, "None"},
		{Read, []string{"Read"}, "Read"},
		{Write | Delete, []string{"Write", "Delete"}, "Write|Delete"},
		{AllAccess, []string{"Read", "Write", "Delete"}, "Read|Write|Delete"},
	} {
		if got := c.a.Rights(); !slices.Equal(got, c.rights) {
			t.Errorf("%d.Rights() = %q, want %q", c.a, got, c.rights)
		}
		if got := c.a.String(); got != c.str {
			t.Errorf("%d.String() = %q, want %q", c.a, got, c.str)
		}
	}
	for _, c := range []struct {
		in   string
		want Access
		ok   bool
	}{
		{"", 0, true},
		{"None", 0, true},
		{"read", Read, true},
		{"Read,Write", Read | Write, true},
		{" Delete | read ", Read | Delete, true},
		{"Write,Write", Write, true},
		{"Read,None", 0, false},
		{"Execute", 0, false},
		{"Readx", 0, false},
	} {
		got, err := ParseAccess(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseAccess(%q) = %v, %v; want %v ok=%v", c.in, got, err, c.want, c.ok)
		}
		if err != nil && !errors.Is(err, ErrBadRights) {
			t.Errorf("ParseAccess(%q) error %v does not wrap ErrBadRights", c.in, err)
		}
	}
	if s, err := ParseShareAccess("Read|Delete"); err != nil || s != ShareRead|ShareDelete {
		t.Errorf("ParseShareAccess = %v, %v", s, err)
	}
	if ShareAll.String() != "Read|Write|Delete" || ShareNone.String() != "None" {
		t.Errorf("ShareAccess.String: %q %q", ShareAll, ShareNone)
	}
}

func TestParseHandleID(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"1", true}, {"18446744073709551615", true}, {"18446744073709551616", false},
		{"0", false}, {"", false}, {"01", false}, {"+1", false}, {"-1", false}, {"1a", false}, {"*", false},
	} {
		if _, ok := ParseHandleID(c.in); ok != c.ok {
			t.Errorf("ParseHandleID(%q) ok = %v", c.in, ok)
		}
	}
	for range 100 {
		if _, ok := ParseHandleID(newHandleID()); !ok {
			t.Fatal("newHandleID made an invalid id")
		}
	}
}

func FuzzParseAccess(f *testing.F) {
	for _, s := range []string{"", "None", "Read", "Read,Write,Delete", "read|DELETE", " Write ", "Read,None", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAccess(s)
		if err != nil {
			if !errors.Is(err, ErrBadRights) {
				t.Fatalf("error %v does not wrap ErrBadRights", err)
			}
			return
		}
		if a&^AllAccess != 0 {
			t.Fatalf("ParseAccess(%q) = %#x out of range", s, uint8(a))
		}
		b, err := ParseAccess(a.String())
		if err != nil || b != a {
			t.Fatalf("round trip of %q: %v → %q → %v, %v", s, a, a.String(), b, err)
		}
		c, err := ParseShareAccess(s)
		if err != nil || c.asAccess() != a {
			t.Fatalf("ParseShareAccess(%q) = %v, %v; ParseAccess gave %v", s, c, err, a)
		}
	})
}

func FuzzDecodeMarker(f *testing.F) {
	f.Add("")
	f.Add(EncodeMarker(Position{"file1", "123"}))
	f.Add(EncodeMarker(Position{"a\x00b", ""}))
	f.Add("!!!")
	f.Add("AAE")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := DecodeMarker(s)
		if err != nil {
			if !errors.Is(err, ErrBadMarker) {
				t.Fatalf("error %v does not wrap ErrBadMarker", err)
			}
			return
		}
		if s == "" {
			return
		}
		q, err := DecodeMarker(EncodeMarker(p))
		if err != nil || q != p {
			t.Fatalf("round trip of %q: %+v → %+v, %v", s, p, q, err)
		}
	})
}
