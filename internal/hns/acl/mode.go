package acl

import "slices"

// Mode is a set of POSIX permission bits: owner, group and other rwx
// (0o777) and the sticky bit (0o1000).
type Mode uint16

// StickyBit is the sticky bit: on a directory, only the owner of a child
// item, the owner of the directory or the superuser may delete or rename
// the child.
const StickyBit Mode = 0o1000

// Default creation modes and umask of the Path Create reference: "The
// default permission is 0777 for a directory and 0666 for a file. The
// default umask is 0027."
const (
	DefaultDirMode  Mode = 0o777
	DefaultFileMode Mode = 0o666
	DefaultUmask    Mode = 0o027
)

// String is the symbolic form of x-ms-permissions: nine characters, the
// last one t (sticky and other x) or T (sticky without other x) when the
// sticky bit is set.
func (m Mode) String() string {
	s := []byte(Perm(m>>6&7).String() + Perm(m>>3&7).String() + Perm(m&7).String())
	if m&StickyBit != 0 {
		if s[8] == 'x' {
			s[8] = 't'
		} else {
			s[8] = 'T'
		}
	}
	return string(s)
}

// ParseMode parses x-ms-permissions: "Both symbolic (rwxrw-rw-) and 4-digit
// octal notation (e.g. 0766) are supported" (Path Create, Path Update), with
// the sticky bit as t/T in the last position or 1 in the first octal digit.
// A trailing "+" (the extended-ACL marker Azure returns) is accepted on the
// symbolic form, so a value read back can be sent again.
func ParseMode(s string) (Mode, error) {
	if len(s) == 4 && isOctal(s) {
		var m Mode
		for i := 0; i < 4; i++ {
			m = m<<3 | Mode(s[i]-'0')
		}
		if m&^(StickyBit|0o777) != 0 {
			return 0, syntaxErr(s, "only the sticky bit may be set in the first octal digit")
		}
		return m, nil
	}
	sym := s
	if len(sym) == 10 && sym[9] == '+' {
		sym = sym[:9]
	}
	if len(sym) != 9 {
		return 0, syntaxErr(s, "permissions are 9 symbolic characters or 4 octal digits")
	}
	var m Mode
	for i := 0; i < 3; i++ {
		chunk := sym[i*3 : i*3+3]
		if i == 2 && (chunk[2] == 't' || chunk[2] == 'T') {
			m |= StickyBit
			if chunk[2] == 't' {
				chunk = chunk[:2] + "x"
			} else {
				chunk = chunk[:2] + "-"
			}
		}
		p, ok := parsePerm(chunk)
		if !ok {
			return 0, syntaxErr(s, "permissions are 9 symbolic characters or 4 octal digits")
		}
		m |= Mode(p) << (3 * (2 - i))
	}
	return m, nil
}

// ParseUmask parses x-ms-umask: 4-digit octal, the sticky digit 0.
func ParseUmask(s string) (Mode, error) {
	if len(s) != 4 || !isOctal(s) || s[0] != '0' {
		return 0, syntaxErr(s, "the umask is 4 octal digits, the first 0")
	}
	m, _ := ParseMode(s)
	return m, nil
}

func isOctal(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return true
}

// PermissionsString is x-ms-permissions as Azure returns it: the symbolic
// mode, with "+" appended when the ACL is extended.
func (a ACL) PermissionsString() string {
	s := a.Mode().String()
	if a.Extended() {
		s += "+"
	}
	return s
}

// Mode returns the permission bits the ACL implies: owning user, then the
// mask if there is one (POSIX: the group class bits show the mask), else
// the owning group, then other, plus the sticky bit.
func (a ACL) Mode() Mode {
	u, _ := a.entry(false, User, "")
	g, ok := a.entry(false, Mask, "")
	if !ok {
		g, _ = a.entry(false, Group, "")
	}
	o, _ := a.entry(false, Other, "")
	m := Mode(u.Perm)<<6 | Mode(g.Perm)<<3 | Mode(o.Perm)
	if a.Sticky {
		m |= StickyBit
	}
	return m
}

// WithMode returns a with its permission bits set to m, as chmod does on
// an ACL: owning user, mask (or owning group when there is no mask),
// other and the sticky bit. The default ACL is untouched.
func (a ACL) WithMode(m Mode) ACL {
	out := ACL{Entries: slices.Clone(a.Entries), Sticky: m&StickyBit != 0}
	out.setPerm(false, User, "", Perm(m>>6&7))
	if _, ok := out.entry(false, Mask, ""); ok {
		out.setPerm(false, Mask, "", Perm(m>>3&7))
	} else {
		out.setPerm(false, Group, "", Perm(m>>3&7))
	}
	out.setPerm(false, Other, "", Perm(m&7))
	return out
}

// FromMode returns the minimal ACL of mode m: user::, group::, other::.
func FromMode(m Mode) ACL {
	return ACL{Entries: []Entry{
		{Tag: User, Perm: Perm(m >> 6 & 7)},
		{Tag: Group, Perm: Perm(m >> 3 & 7)},
		{Tag: Other, Perm: Perm(m & 7)},
	}, Sticky: m&StickyBit != 0}
}
