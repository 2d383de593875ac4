package acl

import (
	"errors"
	"testing"
)

func TestParseFormat(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"user::rwx,group::r-x,other::---", "user::rwx,group::r-x,other::---"},
		// Canonical order; a mask is computed for named entries.
		{"other::r--,group::r-x,user::rwx,user:oid1:rw-", "user::rwx,user:oid1:rw-,group::r-x,mask::rwx,other::r--"},
		{"user::rwx,group::r--,group:g1:-w-,other::---", "user::rwx,group::r--,group:g1:-w-,mask::rw-,other::---"},
		{"user::rwx,group::r-x,mask::r--,other::---,user:b:rwx,user:a:r--", "user::rwx,user:a:r--,user:b:rwx,group::r-x,mask::r--,other::---"},
		// A default ACL missing base entries gets the access ones.
		{"user::rwx,group::r-x,other::---,default:user:x:r-x", "user::rwx,group::r-x,other::---,default:user::rwx,default:user:x:r-x,default:group::r-x,default:mask::r-x,default:other::---"},
	} {
		a, err := Parse(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got := a.String(); got != c.want {
			t.Errorf("Parse(%q) = %q, want %q", c.in, got, c.want)
		}
		again, err := Parse(a.String())
		if err != nil || again.String() != c.want {
			t.Errorf("round trip of %q: %q %v", c.want, again.String(), err)
		}
	}
	for _, bad := range []string{
		"", "user::rwx", "user::rwx,group::r-x", "user::rwz,group::r-x,other::---",
		"user::rwx,group::r-x,other::---,user::r--", "user::rwx,group::r-x,other:x:---",
		"user::rwx,group::r-x,other::---,mask:m:rwx", "person::rwx,group::r-x,other::---",
		"user::rwx,group::r-x,other::---,user:a b:rwx", "user::rwx,group::r-x,other::rw",
		"default:user::rwx", "user::rwx,,group::r-x,other::---", "user:rwx,group::r-x,other::---",
	} {
		if _, err := Parse(bad); err == nil || !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) = %v, want an ErrInvalid", bad, err)
		}
	}
}

func TestMode(t *testing.T) {
	for _, c := range []struct {
		in   string
		mode Mode
		sym  string
	}{
		{"rwxr-x---", 0o750, "rwxr-x---"},
		{"0750", 0o750, "rwxr-x---"},
		{"1750", 0o1750, "rwxr-x--T"},
		{"rwxr-x--T", 0o1750, "rwxr-x--T"},
		{"rwxrwxrwt", 0o1777, "rwxrwxrwt"},
		{"1777", 0o1777, "rwxrwxrwt"},
		{"rw-r-----+", 0o640, "rw-r-----"},
		{"0000", 0, "---------"},
	} {
		m, err := ParseMode(c.in)
		if err != nil || m != c.mode || m.String() != c.sym {
			t.Errorf("ParseMode(%q) = %o %q %v, want %o %q", c.in, m, m.String(), err, c.mode, c.sym)
		}
	}
	for _, bad := range []string{"", "750", "07500", "2750", "rwxr-x--", "rwxr-x--x-", "rwxr-t---", "0758", "rwxr-x--+-"} {
		if _, err := ParseMode(bad); err == nil {
			t.Errorf("ParseMode(%q) accepted", bad)
		}
	}
	if u, err := ParseUmask("0027"); err != nil || u != 0o027 {
		t.Errorf("umask %o %v", u, err)
	}
	for _, bad := range []string{"1027", "027", "rwx------"} {
		if _, err := ParseUmask(bad); err == nil {
			t.Errorf("ParseUmask(%q) accepted", bad)
		}
	}
	// The mode of an ACL shows the mask in the group bits.
	a, _ := Parse("user::rwx,user:u:rwx,group::rwx,mask::r--,other::--x")
	if a.Mode() != 0o741 || a.PermissionsString() != "rwxr----x+" {
		t.Errorf("mode %o %s", a.Mode(), a.PermissionsString())
	}
	// chmod sets the mask, not the owning group, of an extended ACL.
	b := a.WithMode(0o1750)
	if b.String() != "user::rwx,user:u:rwx,group::rwx,mask::r-x,other::---" || !b.Sticky || b.PermissionsString() != "rwxr-x--T+" {
		t.Errorf("WithMode: %s %v %s", b, b.Sticky, b.PermissionsString())
	}
	c := FromMode(0o640).WithMode(0o755)
	if c.String() != "user::rwx,group::r-x,other::r-x" || c.PermissionsString() != "rwxr-xr-x" {
		t.Errorf("WithMode minimal: %s", c)
	}
}

func TestForChild(t *testing.T) {
	plain := FromMode(0o755)
	// No default ACL: mode &^ umask.
	if got := ForChild(plain, false, DefaultFileMode, DefaultUmask); got.String() != "user::rw-,group::r--,other::---" {
		t.Errorf("file: %s", got)
	}
	if got := ForChild(plain, true, DefaultDirMode, DefaultUmask); got.String() != "user::rwx,group::r-x,other::---" || got.HasDefault() {
		t.Errorf("dir: %s", got)
	}
	if got := ForChild(plain, true, 0o1777, 0); got.Mode() != 0o1777 {
		t.Errorf("sticky dir: %o", got.Mode())
	}
	// Default ACL: copied, limited by the requested mode, umask unused.
	parent, err := Parse("user::rwx,group::r-x,other::---,default:user::rwx,default:group::rwx,default:other::r-x")
	if err != nil {
		t.Fatal(err)
	}
	if got := ForChild(parent, false, DefaultFileMode, 0o077); got.String() != "user::rw-,group::rw-,other::r--" {
		t.Errorf("inherited file: %s", got)
	}
	got := ForChild(parent, true, DefaultDirMode, 0o077)
	if got.String() != "user::rwx,group::rwx,other::r-x,default:user::rwx,default:group::rwx,default:other::r-x" {
		t.Errorf("inherited dir: %s", got)
	}
	// With a mask, the requested group bits limit the mask.
	parent, _ = Parse("user::rwx,group::r-x,other::---,default:user::rwx,default:user:u:rwx,default:group::r-x,default:mask::rwx,default:other::---")
	if got := ForChild(parent, false, 0o640, DefaultUmask); got.String() != "user::rw-,user:u:rwx,group::r-x,mask::r--,other::---" {
		t.Errorf("masked file: %s", got)
	}
}

func TestAllows(t *testing.T) {
	a, _ := Parse("user::rw-,user:nu:rwx,group::r--,group:ng:-wx,mask::rw-,other::--x")
	const owner, group = "own", "grp"
	cases := []struct {
		name string
		p    Principal
		want Perm
		ok   bool
	}{
		{"superuser", Principal{Super: true}, Read | Write | Execute, true},
		{"owner, no mask", Principal{User: owner}, Read | Write, true},
		{"owner lacks x", Principal{User: owner}, Execute, false},
		{"named user under mask", Principal{User: "nu"}, Read | Write, true},
		{"named user x masked", Principal{User: "nu"}, Execute, false},
		{"owning group", Principal{User: "m", Groups: []string{group}}, Read, true},
		{"owning group no w", Principal{User: "m", Groups: []string{group}}, Write, false},
		{"named group under mask", Principal{User: "m", Groups: []string{"ng"}}, Write, true},
		{"named group x masked", Principal{User: "m", Groups: []string{"ng"}}, Execute, false},
		{"two groups, neither alone grants rw", Principal{User: "m", Groups: []string{group, "ng"}}, Read | Write, false},
		{"other under mask", Principal{User: "stranger"}, Execute, false},
		{"named user does not fall back to groups", Principal{User: "nu", Groups: []string{"ng"}}, Execute, false},
	}
	for _, c := range cases {
		if got := a.Allows(owner, group, c.p, c.want); got != c.ok {
			t.Errorf("%s: Allows = %v", c.name, got)
		}
	}
	noMask := FromMode(0o751)
	if !noMask.Allows(owner, group, Principal{User: "x"}, Execute) || noMask.Allows(owner, group, Principal{User: "x"}, Read) {
		t.Error("other without mask")
	}
	if !noMask.Allows(owner, group, Principal{User: "x", Groups: []string{group}}, Read|Execute) {
		t.Error("owning group without mask")
	}
	sticky := FromMode(0o1777)
	if StickyAllows(sticky, "dirowner", "childowner", Principal{User: "x"}) ||
		!StickyAllows(sticky, "dirowner", "childowner", Principal{User: "childowner"}) ||
		!StickyAllows(sticky, "dirowner", "childowner", Principal{User: "dirowner"}) ||
		!StickyAllows(sticky, "dirowner", "childowner", Principal{Super: true}) ||
		!StickyAllows(FromMode(0o777), "d", "c", Principal{User: "x"}) {
		t.Error("sticky")
	}
}

func TestModifyRemove(t *testing.T) {
	base, _ := Parse("user::rwx,group::r-x,other::---,default:user::rwx,default:group::r-x,default:other::---")
	mod, err := ParseEntries("user:u1:r-x,group::rwx,default:user:u2:rwx")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Modify(base, mod, true)
	if err != nil {
		t.Fatal(err)
	}
	want := "user::rwx,user:u1:r-x,group::rwx,mask::rwx,other::---,default:user::rwx,default:user:u2:rwx,default:group::r-x,default:mask::rwx,default:other::---"
	if got.String() != want {
		t.Errorf("modify dir: %s", got)
	}
	// On a file the default entries are skipped.
	file, _ := Modify(base.Access(), mod, false)
	if file.String() != "user::rwx,user:u1:r-x,group::rwx,mask::rwx,other::---" {
		t.Errorf("modify file: %s", file)
	}
	// Modifying an existing entry replaces its permissions.
	again, _ := Modify(got, []Entry{{Tag: User, ID: "u1", Perm: Read}}, true)
	if e, _ := again.entry(false, User, "u1"); e.Perm != Read {
		t.Errorf("modify existing: %s", again)
	}
	rm, err := ParseRemoveList("user:u1,default:user:u2,mask")
	if err != nil {
		t.Fatal(err)
	}
	after, err := Remove(got, rm)
	if err != nil {
		t.Fatal(err)
	}
	if after.String() != "user::rwx,group::rwx,other::---,default:user::rwx,default:group::r-x,default:mask::rwx,default:other::---" {
		t.Errorf("remove: %s", after)
	}
	// Removing default base entries removes the default ACL.
	rm, _ = ParseRemoveList("default:user:")
	if after, _ := Remove(got, rm); after.HasDefault() {
		t.Errorf("remove default: %s", after)
	}
	// The base access entries cannot be removed.
	for _, s := range []string{"user:", "group:", "other"} {
		rm, err := ParseRemoveList(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if _, err := Remove(got, rm); err == nil {
			t.Errorf("removing %s accepted", s)
		}
	}
	// Removing the mask while named entries remain recomputes it.
	rm, _ = ParseRemoveList("mask")
	m, _ := Remove(again, rm)
	if e, ok := m.entry(false, Mask, ""); !ok || e.Perm != Read|Write|Execute {
		t.Errorf("recomputed mask: %s", m)
	}
	for _, bad := range []string{"user:u1:rwx", "user", "", "default:other:x"} {
		if _, err := ParseRemoveList(bad); err == nil {
			t.Errorf("ParseRemoveList(%q) accepted", bad)
		}
	}
}
