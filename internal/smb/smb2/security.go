package smb2

import (
	"encoding/binary"
	"strconv"
	"strings"
)

// SID is a security identifier (MS-DTYP 2.4.2.2).
type SID struct {
	Authority      uint64 // IdentifierAuthority, 48 bits
	SubAuthorities []uint32
}

// Well-known SIDs.
var (
	SIDEveryone       = SID{Authority: 1, SubAuthorities: []uint32{0}}       // S-1-1-0
	SIDAdministrators = SID{Authority: 5, SubAuthorities: []uint32{32, 544}} // S-1-5-32-544
	SIDUsers          = SID{Authority: 5, SubAuthorities: []uint32{32, 545}} // S-1-5-32-545
	SIDSystem         = SID{Authority: 5, SubAuthorities: []uint32{18}}      // S-1-5-18
)

// ParseSID parses the string form "S-1-<authority>-<sub>-…" (MS-DTYP
// 2.4.2.1), with a decimal authority below 2^48 and at most 15
// subauthorities.
func ParseSID(s string) (SID, error) {
	bad := malformedStruct("SID", "not S-1-authority[-subauthority]…")
	parts := strings.Split(s, "-")
	if len(parts) < 3 || len(parts) > 18 || parts[0] != "S" || parts[1] != "1" {
		return SID{}, bad
	}
	auth, err := strconv.ParseUint(parts[2], 10, 48)
	if err != nil {
		return SID{}, bad
	}
	sid := SID{Authority: auth}
	for _, p := range parts[3:] {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return SID{}, bad
		}
		sid.SubAuthorities = append(sid.SubAuthorities, uint32(v))
	}
	return sid, nil
}

func (s SID) String() string {
	var b strings.Builder
	b.WriteString("S-1-")
	b.WriteString(strconv.FormatUint(s.Authority, 10))
	for _, v := range s.SubAuthorities {
		b.WriteByte('-')
		b.WriteString(strconv.FormatUint(uint64(v), 10))
	}
	return b.String()
}

func (s SID) size() int { return 8 + 4*len(s.SubAuthorities) }

func (s SID) append(e *enc) {
	e.u8(1)
	e.u8(uint8(len(s.SubAuthorities)))
	var a [8]byte
	binary.BigEndian.PutUint64(a[:], s.Authority)
	e.bytes(a[2:])
	for _, v := range s.SubAuthorities {
		e.u32(v)
	}
}

func decodeSID(b []byte) (SID, int, error) {
	if len(b) < 8 || b[0] != 1 {
		return SID{}, 0, malformedStruct("SID", "bad revision or length")
	}
	n := int(b[1])
	if n > 15 || 8+4*n > len(b) {
		return SID{}, 0, malformedStruct("SID", "subauthorities outside the buffer")
	}
	var a [8]byte
	copy(a[2:], b[2:8])
	s := SID{Authority: binary.BigEndian.Uint64(a[:])}
	if n > 0 {
		s.SubAuthorities = make([]uint32, n)
		for i := range s.SubAuthorities {
			s.SubAuthorities[i] = le.Uint32(b[8+4*i:])
		}
	}
	return s, 8 + 4*n, nil
}

// ACE types with a mask and a SID (MS-DTYP 2.4.4.2-2.4.4.5).
const (
	AccessAllowedACEType uint8 = 0x00
	AccessDeniedACEType  uint8 = 0x01
	SystemAuditACEType   uint8 = 0x02
	SystemAlarmACEType   uint8 = 0x03
)

// ACE is an access control entry. Types 0-3 are decoded into Mask and
// SID; other types keep their body (everything after the 4-byte ACE
// header) in Raw.
type ACE struct {
	Type  uint8
	Flags uint8
	Mask  AccessMask
	SID   SID
	Raw   []byte
}

func (a ACE) simple() bool { return a.Type <= SystemAlarmACEType }

func (a ACE) size() int {
	if a.simple() {
		return 8 + a.SID.size()
	}
	return 4 + len(a.Raw)
}

// ACL is an access control list (MS-DTYP 2.4.5).
type ACL struct {
	Revision uint8 // ACL_REVISION is 2
	ACEs     []ACE
}

func (l ACL) size() int {
	n := 8
	for _, a := range l.ACEs {
		n += a.size()
	}
	return n
}

func (l ACL) append(e *enc) {
	e.u8(l.Revision)
	e.u8(0)
	e.u16(uint16(l.size()))
	e.u16(uint16(len(l.ACEs)))
	e.u16(0)
	for _, a := range l.ACEs {
		e.u8(a.Type)
		e.u8(a.Flags)
		e.u16(uint16(a.size()))
		if a.simple() {
			e.u32(uint32(a.Mask))
			a.SID.append(e)
		} else {
			e.bytes(a.Raw)
		}
	}
}

func decodeACL(b []byte) (*ACL, error) {
	const what = "ACL"
	if len(b) < 8 {
		return nil, malformedStruct(what, "shorter than 8 bytes")
	}
	size, count := int(le.Uint16(b[2:])), int(le.Uint16(b[4:]))
	if size < 8 || size > len(b) {
		return nil, malformedStruct(what, "AclSize outside the buffer")
	}
	l := &ACL{Revision: b[0]}
	pos := 8
	for range count {
		if pos+4 > size {
			return nil, malformedStruct(what, "ACE outside the ACL")
		}
		a := ACE{Type: b[pos], Flags: b[pos+1]}
		n := int(le.Uint16(b[pos+2:]))
		if n < 4 || pos+n > size {
			return nil, malformedStruct(what, "AceSize outside the ACL")
		}
		body := b[pos+4 : pos+n]
		if a.simple() {
			if len(body) < 4 {
				return nil, malformedStruct(what, "ACE too short")
			}
			a.Mask = AccessMask(le.Uint32(body))
			sid, used, err := decodeSID(body[4:])
			if err != nil {
				return nil, err
			}
			if 4+used != len(body) {
				return nil, malformedStruct(what, "AceSize does not match its SID")
			}
			a.SID = sid
		} else {
			a.Raw = append([]byte(nil), body...)
		}
		l.ACEs = append(l.ACEs, a)
		pos += n
	}
	return l, nil
}

// Security descriptor control bits (MS-DTYP 2.4.6).
const (
	SEDACLPresent  uint16 = 0x0004
	SESACLPresent  uint16 = 0x0010
	SESelfRelative uint16 = 0x8000
)

// SecurityDescriptor is a self-relative security descriptor (MS-DTYP
// 2.4.6). Nil fields are absent; a nil DACL is "no DACL", while a DACL
// with no ACEs denies everyone.
type SecurityDescriptor struct {
	// Control holds control bits other than SE_SELF_RELATIVE and the
	// *_PRESENT bits, which Encode derives.
	Control uint16
	Owner   *SID
	Group   *SID
	DACL    *ACL
	SACL    *ACL
}

// Select returns the parts of sd that a security QUERY_INFO asked for
// with its AdditionalInformation (OwnerSecurityInformation, …).
func (sd SecurityDescriptor) Select(info uint32) SecurityDescriptor {
	out := SecurityDescriptor{Control: sd.Control}
	if info&OwnerSecurityInformation != 0 {
		out.Owner = sd.Owner
	}
	if info&GroupSecurityInformation != 0 {
		out.Group = sd.Group
	}
	if info&DACLSecurityInformation != 0 {
		out.DACL = sd.DACL
	}
	if info&SACLSecurityInformation != 0 {
		out.SACL = sd.SACL
	}
	return out
}

// Encode returns the self-relative encoding: the 20-byte header, then the
// owner, group, SACL and DACL that are present.
func (sd SecurityDescriptor) Encode() []byte {
	e := enc{}
	control := sd.Control&^(SEDACLPresent|SESACLPresent) | SESelfRelative
	if sd.DACL != nil {
		control |= SEDACLPresent
	}
	if sd.SACL != nil {
		control |= SESACLPresent
	}
	e.u8(1)
	e.u8(0)
	e.u16(control)
	e.zero(16) // four offsets, patched below
	if sd.Owner != nil {
		e.put32(4, uint32(len(e.b)))
		sd.Owner.append(&e)
	}
	if sd.Group != nil {
		e.put32(8, uint32(len(e.b)))
		sd.Group.append(&e)
	}
	if sd.SACL != nil {
		e.put32(12, uint32(len(e.b)))
		sd.SACL.append(&e)
	}
	if sd.DACL != nil {
		e.put32(16, uint32(len(e.b)))
		sd.DACL.append(&e)
	}
	return e.b
}

// DecodeSecurityDescriptor decodes a self-relative security descriptor.
// Every part must lie inside b; a part whose offset is 0 is absent, and
// so is an ACL whose *_PRESENT control bit is clear.
func DecodeSecurityDescriptor(b []byte) (SecurityDescriptor, error) {
	const what = "security descriptor"
	if len(b) < 20 || b[0] != 1 {
		return SecurityDescriptor{}, malformedStruct(what, "bad revision or length")
	}
	control := le.Uint16(b[2:])
	if control&SESelfRelative == 0 {
		return SecurityDescriptor{}, malformedStruct(what, "not self-relative")
	}
	sd := SecurityDescriptor{Control: control &^ (SEDACLPresent | SESACLPresent | SESelfRelative)}
	part := func(field int) ([]byte, bool, error) {
		off := le.Uint32(b[field:])
		if off == 0 {
			return nil, false, nil
		}
		if off < 20 || uint64(off) >= uint64(len(b)) {
			return nil, false, malformedStruct(what, "offset outside the buffer")
		}
		return b[off:], true, nil
	}
	for _, f := range []struct {
		field int
		dst   **SID
	}{{4, &sd.Owner}, {8, &sd.Group}} {
		p, ok, err := part(f.field)
		if err != nil {
			return SecurityDescriptor{}, err
		}
		if ok {
			sid, _, err := decodeSID(p)
			if err != nil {
				return SecurityDescriptor{}, err
			}
			*f.dst = &sid
		}
	}
	for _, f := range []struct {
		field int
		bit   uint16
		dst   **ACL
	}{{12, SESACLPresent, &sd.SACL}, {16, SEDACLPresent, &sd.DACL}} {
		p, ok, err := part(f.field)
		if err != nil {
			return SecurityDescriptor{}, err
		}
		if ok && control&f.bit != 0 {
			if *f.dst, err = decodeACL(p); err != nil {
				return SecurityDescriptor{}, err
			}
		}
	}
	return sd, nil
}
