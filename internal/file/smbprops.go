package file

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Attribute bits, with their MS-FSCC values so the SMB front end can use
// them unchanged.
const (
	AttrReadOnly          Attributes = 0x1
	AttrHidden            Attributes = 0x2
	AttrSystem            Attributes = 0x4
	AttrDirectory         Attributes = 0x10
	AttrArchive           Attributes = 0x20
	AttrNormal            Attributes = 0x80 // "None": no other attribute
	AttrTemporary         Attributes = 0x100
	AttrOffline           Attributes = 0x1000
	AttrNotContentIndexed Attributes = 0x2000
	AttrNoScrubData       Attributes = 0x20000
)

// FileTime is an x-ms-file-*-time value of a create or set-properties
// request, parsed before the transaction (filerest): "now", "preserve"
// or a time. A malformed value is carried (Bad) and reported by Resolve,
// inside the transaction, where the request's earlier checks (lease,
// handles) have passed.
type FileTime struct {
	// Name and Raw are the header and its value, for the error.
	Name, Raw string
	// Now: the operation's time; Preserve: the item's current time.
	Now, Preserve bool
	// At is the time given, when neither Now nor Preserve.
	At time.Time
	// Bad: Raw is not a time.
	Bad bool
}

// Resolve is the time ft sets at now on an item whose time is old:
// "preserve" of no time (a create) and a malformed value are 400
// InvalidHeaderValue.
func (ft *FileTime) Resolve(now, old time.Time) (time.Time, error) {
	switch {
	case ft.Bad, ft.Preserve && old.IsZero():
		return time.Time{}, azerr.InvalidHeader(ft.Name, ft.Raw)
	case ft.Now:
		return now, nil
	case ft.Preserve:
		return old, nil
	}
	return ft.At, nil
}

// Validate reports a malformed value now (Copy File checks its times
// before the transaction).
func (ft FileTime) Validate() error {
	_, err := ft.Resolve(time.Time{}, time.Unix(0, 0))
	return err
}

// defaultSDDL is the permission of a share's root directory and of items
// created with "inherit" under it: owner and group Administrators,
// full control for Administrators, SYSTEM and Authenticated Users.
const defaultSDDL = "O:BAG:SYD:(A;OICI;FA;;;BA)(A;OICI;FA;;;SY)(A;OICI;0x1301bf;;;AU)"

// ValidSDDL checks the shape of a security descriptor string: printable
// ASCII starting with an owner, group, DACL or SACL component.
func ValidSDDL(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	switch s[:2] {
	case "O:", "G:", "D:", "S:":
		return true
	}
	return false
}

// permissionKey derives a permission's key from its text, so one SDDL is
// stored once per share. The form mimics the service's
// "<decimal>*<decimal>".
func permissionKey(sddl string) string {
	sum := sha256.Sum256([]byte(sddl))
	return strconv.FormatUint(binary.BigEndian.Uint64(sum[:8]), 10) + "*" + strconv.FormatUint(binary.BigEndian.Uint64(sum[8:16]), 10)
}

// storePermission records sddl in the share's permission table and returns
// its key.
func storePermission(tx kv.Tx, acct, sh, sddl string) (string, error) {
	key := permissionKey(sddl)
	if err := tx.Put(permKey(acct, sh, key), []byte(sddl)); err != nil {
		return "", err
	}
	return key, nil
}

// loadPermission returns the SDDL stored under key, or "" if none.
func loadPermission(tx kv.Tx, acct, sh, key string) (string, error) {
	v, err := tx.Get(permKey(acct, sh, key))
	if err == kv.ErrNotFound {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return string(v), nil
}

// SMBRequest holds the SMB properties of a create or set-properties
// request, parsed before the transaction (filerest: parseSMB, smbprops_rest.go):
// the typed SMB properties a domain call takes.
type SMBRequest struct {
	// Created, LastWrite and Changed are x-ms-file-creation-time,
	// x-ms-file-last-write-time and x-ms-file-change-time.
	Created, LastWrite, Changed FileTime
	Attrs                       *Attributes // nil: default (create) or preserve (set)
	Perm                        string      // SDDL from x-ms-file-permission; "" none
	PermKey                     string      // x-ms-file-permission-key
	Inherit                     bool        // x-ms-file-permission: inherit
	// Create selects the defaults of a create: Archive for a file
	// without attributes.
	Create bool
}

// apply sets e's SMB properties from the request inside tx at now.
// parentKey is the permission key of the parent directory ("inherit").
func (sr *SMBRequest) apply(tx kv.Tx, acct, sh string, e *Entry, parentKey string, now time.Time) error {
	var err error
	if e.SMB.Created, err = sr.Created.Resolve(now, e.SMB.Created); err != nil {
		return err
	}
	if e.SMB.LastWrite, err = sr.LastWrite.Resolve(now, e.SMB.LastWrite); err != nil {
		return err
	}
	if e.SMB.Changed, err = sr.Changed.Resolve(now, e.SMB.Changed); err != nil {
		return err
	}
	switch {
	case sr.Attrs != nil:
		e.SMB.Attrs = *sr.Attrs
	case sr.Create && !e.Dir:
		e.SMB.Attrs = AttrArchive
	}
	if e.Dir {
		e.SMB.Attrs |= AttrDirectory
	} else {
		e.SMB.Attrs &^= AttrDirectory
	}
	switch {
	case sr.Perm != "":
		if e.SMB.PermKey, err = storePermission(tx, acct, sh, sr.Perm); err != nil {
			return err
		}
	case sr.PermKey != "":
		sddl, err := loadPermission(tx, acct, sh, sr.PermKey)
		if err != nil {
			return err
		}
		if sddl == "" {
			return azerr.New(azerr.FileInvalidPermissionKey)
		}
		e.SMB.PermKey = sr.PermKey
	case sr.Inherit:
		e.SMB.PermKey = parentKey
	}
	return nil
}
