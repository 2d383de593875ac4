package handle

import (
	"errors"
	"fmt"
	"strings"
)

// Access is the data access an open was granted, reduced to the three
// rights that take part in the MS-FSA share-access check and that Azure
// reports in a handle's AccessRightList.
type Access uint8

// Access rights. An open with none of them (Access 0) is an attribute-only
// open: it never conflicts with another open.
const (
	// Read stands for FILE_READ_DATA or FILE_EXECUTE.
	Read Access = 1 << iota
	// Write stands for FILE_WRITE_DATA or FILE_APPEND_DATA.
	Write
	// Delete stands for DELETE.
	Delete

	// AllAccess is Read|Write|Delete.
	AllAccess = Read | Write | Delete
)

// ShareAccess is the sharing an open allows to later opens of the same
// file: the FILE_SHARE_* bits of an SMB2 CREATE, which have the same
// values.
type ShareAccess uint8

// Share modes.
const (
	// ShareNone denies every later open that wants Read, Write or Delete.
	ShareNone ShareAccess = 0
	// ShareRead is FILE_SHARE_READ (0x1).
	ShareRead ShareAccess = 0x1
	// ShareWrite is FILE_SHARE_WRITE (0x2).
	ShareWrite ShareAccess = 0x2
	// ShareDelete is FILE_SHARE_DELETE (0x4).
	ShareDelete ShareAccess = 0x4

	// ShareAll is ShareRead|ShareWrite|ShareDelete.
	ShareAll = ShareRead | ShareWrite | ShareDelete
)

// shared maps each access right to the share bit that admits it.
func (a Access) shared() ShareAccess { return ShareAccess(a & AllAccess) }

// asAccess maps each share bit to the access right it admits.
func (s ShareAccess) asAccess() Access { return Access(s & ShareAll) }

// rightNames are the AccessRightList strings, in the order Azure lists them.
var rightNames = [3]string{"Read", "Write", "Delete"}

// Rights returns the AccessRightList of a handle with access a: a subset
// of "Read", "Write", "Delete" in that order (empty for an attribute-only
// open).
func (a Access) Rights() []string {
	var out []string
	for i, n := range rightNames {
		if a&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// String returns the rights joined by "|", or "None".
func (a Access) String() string {
	if a&AllAccess == 0 {
		return "None"
	}
	return strings.Join(a.Rights(), "|")
}

// String returns the shared rights joined by "|", or "None".
func (s ShareAccess) String() string { return s.asAccess().String() }

// ErrBadRights is returned (wrapped) by ParseAccess and ParseShareAccess.
var ErrBadRights = errors.New("handle: invalid access right list")

// ParseAccess parses a list of access right names, the inverse of String
// and of Rights joined with commas: names "Read", "Write", "Delete" (any
// case) separated by ",", "|" or spaces; "" and "None" mean no access. A
// name may repeat; any other name is an error wrapping ErrBadRights.
func ParseAccess(s string) (Access, error) {
	var a Access
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == '|' || r == ' ' || r == '\t'
	})
	for _, f := range fields {
		switch {
		case strings.EqualFold(f, "Read"):
			a |= Read
		case strings.EqualFold(f, "Write"):
			a |= Write
		case strings.EqualFold(f, "Delete"):
			a |= Delete
		case strings.EqualFold(f, "None"):
			if len(fields) != 1 {
				return 0, fmt.Errorf("%w: %q combines None with other rights", ErrBadRights, s)
			}
		default:
			return 0, fmt.Errorf("%w: unknown right %q", ErrBadRights, f)
		}
	}
	return a, nil
}

// ParseShareAccess parses a share mode written as ParseAccess accepts it
// ("Read|Write" is ShareRead|ShareWrite).
func ParseShareAccess(s string) (ShareAccess, error) {
	a, err := ParseAccess(s)
	return a.shared(), err
}

// NT access mask bits (MS-DTYP 2.4.3, MS-SMB2 2.2.13.1.1).
const (
	ntFileReadData   = 0x00000001
	ntFileWriteData  = 0x00000002
	ntFileAppendData = 0x00000004
	ntFileExecute    = 0x00000020
	ntDelete         = 0x00010000
	ntMaximumAllowed = 0x02000000
	ntGenericAll     = 0x10000000
	ntGenericExecute = 0x20000000
	ntGenericWrite   = 0x40000000
	ntGenericRead    = 0x80000000
)

// AccessFromNT reduces an SMB2 CREATE DesiredAccess (or a granted access
// mask) to Access: FILE_READ_DATA, FILE_EXECUTE, GENERIC_READ and
// GENERIC_EXECUTE give Read; FILE_WRITE_DATA, FILE_APPEND_DATA and
// GENERIC_WRITE give Write; DELETE gives Delete; GENERIC_ALL and
// MAXIMUM_ALLOWED give all three. Other bits (attributes, EAs, security)
// do not take part in sharing.
func AccessFromNT(mask uint32) Access {
	var a Access
	if mask&(ntGenericAll|ntMaximumAllowed) != 0 {
		return AllAccess
	}
	if mask&(ntFileReadData|ntFileExecute|ntGenericRead|ntGenericExecute) != 0 {
		a |= Read
	}
	if mask&(ntFileWriteData|ntFileAppendData|ntGenericWrite) != 0 {
		a |= Write
	}
	if mask&ntDelete != 0 {
		a |= Delete
	}
	return a
}

// ShareFromNT returns the ShareAccess of an SMB2 CREATE ShareAccess field.
func ShareFromNT(mask uint32) ShareAccess { return ShareAccess(mask) & ShareAll }

// Conflicts reports whether an open asking for access na with sharing ns
// is refused because of an existing open holding (ea, es), by the rule of
// MS-FSA 2.1.5.1.2 (the same for both orders of arrival, so the check is
// symmetric):
//
//   - an open with no Read, Write or Delete access (attribute-only) never
//     conflicts, on either side;
//   - the new open asks for a right the existing open does not share
//     (Read without ShareRead, Write without ShareWrite, Delete without
//     ShareDelete), or
//   - the existing open holds a right the new open does not share.
func Conflicts(ea Access, es ShareAccess, na Access, ns ShareAccess) bool {
	ea, na = ea&AllAccess, na&AllAccess
	if ea == 0 || na == 0 {
		return false
	}
	return na&^es.asAccess() != 0 || ea&^ns.asAccess() != 0
}
