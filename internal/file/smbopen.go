package file

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// The SMB open as the domain decides on it: what an SMB2 CREATE asks for
// (OpenRequest: dispositions, create options, access masks), the open it
// grants (Open: its identities, granted access, frozen times), the
// entry's information the SMB calls return (Info, BasicInfo), and the
// sentinel errors that name the NTSTATUS an SMB caller is refused with.
// The domain's checks (domain*.go) take and return these; the
// open-based API (Opens, opens*.go) that the SMB view (internal/smb/
// smbfs) adapts is built on them, and nothing here or in the domain uses
// it (TestFileDomainDoesNotCallUpIntoVFS in internal/archtest). Access
// masks, dispositions and the NTSTATUS sentinels are SMB's vocabulary; they still live here, as
// the domain's open rules (domain_open.go) and the refusals whose rule
// differs between the doors speak it.

// Errors returned by Opens calls (through the SMB view).
var (
	// ErrNotFound: the last path component does not exist:
	// STATUS_OBJECT_NAME_NOT_FOUND (0xC0000034).
	ErrNotFound = errors.New("file: no such file or directory")
	// ErrPathNotFound: an intermediate component is missing or is a file:
	// STATUS_OBJECT_PATH_NOT_FOUND (0xC000003A).
	ErrPathNotFound = errors.New("file: path not found")
	// ErrExists: the name is taken (FILE_CREATE, rename without
	// ReplaceIfExists): STATUS_OBJECT_NAME_COLLISION (0xC0000035).
	ErrExists = errors.New("file: name exists")
	// ErrIsDirectory: FILE_NON_DIRECTORY_FILE on a directory, or a data
	// operation on a directory open: STATUS_FILE_IS_A_DIRECTORY
	// (0xC00000BA). (The server answers READ/WRITE on a directory with
	// STATUS_INVALID_DEVICE_REQUEST per MS-SMB2; it knows the open's kind.)
	ErrIsDirectory = errors.New("file: is a directory")
	// ErrNotDirectory: FILE_DIRECTORY_FILE on a file, or a directory
	// operation on a file open: STATUS_NOT_A_DIRECTORY (0xC0000103).
	ErrNotDirectory = errors.New("file: not a directory")
	// ErrSharingViolation: a live open's share mode (or a REST file lease)
	// denies the access: STATUS_SHARING_VIOLATION (0xC0000043).
	ErrSharingViolation = errors.New("file: sharing violation")
	// ErrDeletePending: the file (or the directory a create goes into) is
	// delete-pending: STATUS_DELETE_PENDING (0xC0000056).
	ErrDeletePending = errors.New("file: delete pending")
	// ErrAccessDenied: the open lacks the access the call needs, or the
	// read-only attribute forbids it: STATUS_ACCESS_DENIED (0xC0000022).
	ErrAccessDenied = errors.New("file: access denied")
	// ErrCannotDelete: delete-on-close or a delete disposition on a
	// read-only file: STATUS_CANNOT_DELETE (0xC0000121).
	ErrCannotDelete = errors.New("file: cannot delete a read-only file")
	// ErrDirectoryNotEmpty: a delete disposition on a directory with
	// entries, or the last close of a delete-on-close directory that has
	// gained entries: STATUS_DIRECTORY_NOT_EMPTY (0xC0000101).
	ErrDirectoryNotEmpty = errors.New("file: directory not empty")
	// ErrInvalidName: a path component Azure Files does not allow (":",
	// "*", "..", control characters, too long ...):
	// STATUS_OBJECT_NAME_INVALID (0xC0000033).
	ErrInvalidName = errors.New("file: invalid name")
	// ErrInvalidParameter: a malformed request (option or disposition
	// combinations, delete-on-close without DELETE access, a directory
	// moved into itself ...): STATUS_INVALID_PARAMETER (0xC000000D).
	ErrInvalidParameter = errors.New("file: invalid parameter")
	// ErrDiskFull: the file would exceed the share's quota or the largest
	// file size: STATUS_DISK_FULL (0xC000007F).
	ErrDiskFull = errors.New("file: disk full")
	// ErrFileClosed: the handle is no longer open (closed, force-closed
	// over REST, its owner expired, its share deleted): STATUS_FILE_CLOSED
	// (0xC0000128).
	ErrFileClosed = errors.New("file: handle closed")
	// ErrShareNotFound: no such (SMB) share: STATUS_BAD_NETWORK_NAME
	// (0xC00000CC) at tree connect; STATUS_NETWORK_NAME_DELETED
	// (0xC00000C9) for a share deleted while connected.
	ErrShareNotFound = errors.New("file: share not found")
	// ErrOwnerNotLive: the Opens' owner has no live heartbeat (call
	// Heartbeat first, and regularly): a server fault,
	// STATUS_INSUFFICIENT_RESOURCES (0xC000009A) at the server's choice.
	ErrOwnerNotLive = handle.ErrOwnerNotLive
)

// smbShare loads the live share record for SMB: ErrShareNotFound when it
// is missing (or being deleted) or an NFS share.
func smbShare(tx kv.Tx, acct, sh string) (*Share, error) {
	if acct == "" || sh == "" {
		return nil, ErrShareNotFound
	}
	rec, err := loadShare(tx, acct, sh, "")
	if azerr.Has(err, azerr.ShareNotFound) || err == nil && rec.Protocols == ProtoNFS {
		return nil, fmt.Errorf("%w: %s", ErrShareNotFound, sh)
	}
	return rec, err
}

// Disposition is an SMB2 CREATE CreateDisposition (MS-SMB2 2.2.13).
type Disposition uint32

// Dispositions.
const (
	DispSupersede   Disposition = 0 // exists: replace; missing: create
	DispOpen        Disposition = 1 // exists: open; missing: ErrNotFound
	DispCreate      Disposition = 2 // exists: ErrExists; missing: create
	DispOpenIf      Disposition = 3 // exists: open; missing: create
	DispOverwrite   Disposition = 4 // exists: truncate; missing: ErrNotFound
	DispOverwriteIf Disposition = 5 // exists: truncate; missing: create
)

// CreateOptions bits Opens interprets (MS-SMB2 2.2.13); other bits are
// the server's business and are ignored here.
const (
	OptDirectoryFile    uint32 = 0x00000001
	OptNonDirectoryFile uint32 = 0x00000040
	OptDeleteOnClose    uint32 = 0x00001000
)

// CreateAction is what an Open did (SMB2 CREATE response CreateAction).
type CreateAction uint32

// Create actions.
const (
	ActionSuperseded  CreateAction = 0
	ActionOpened      CreateAction = 1
	ActionCreated     CreateAction = 2
	ActionOverwritten CreateAction = 3
)

// NT access mask bits (MS-DTYP 2.4.3, MS-SMB2 2.2.13.1).
const (
	AccessReadData        uint32 = 0x00000001 // FILE_READ_DATA / FILE_LIST_DIRECTORY
	AccessWriteData       uint32 = 0x00000002 // FILE_WRITE_DATA / FILE_ADD_FILE
	AccessAppendData      uint32 = 0x00000004 // FILE_APPEND_DATA / FILE_ADD_SUBDIRECTORY
	AccessReadEA          uint32 = 0x00000008
	AccessWriteEA         uint32 = 0x00000010
	AccessExecute         uint32 = 0x00000020 // FILE_EXECUTE / FILE_TRAVERSE
	AccessDeleteChild     uint32 = 0x00000040
	AccessReadAttributes  uint32 = 0x00000080
	AccessWriteAttributes uint32 = 0x00000100
	AccessDelete          uint32 = 0x00010000
	AccessReadControl     uint32 = 0x00020000
	AccessWriteDAC        uint32 = 0x00040000
	AccessWriteOwner      uint32 = 0x00080000
	AccessSynchronize     uint32 = 0x00100000
	AccessSystemSecurity  uint32 = 0x01000000
	AccessMaximumAllowed  uint32 = 0x02000000
	AccessGenericAll      uint32 = 0x10000000
	AccessGenericExecute  uint32 = 0x20000000
	AccessGenericWrite    uint32 = 0x40000000
	AccessGenericRead     uint32 = 0x80000000

	// FileAllAccess is FILE_ALL_ACCESS, what GENERIC_ALL and
	// MAXIMUM_ALLOWED grant (there are no ACLs to check).
	FileAllAccess uint32 = 0x001F01FF

	// accessReserved are bits an open must not ask for (MS-FSA
	// 2.1.5.1, phase 1: STATUS_ACCESS_DENIED).
	accessReserved uint32 = 0x0CE0FE00
	accessGeneric         = AccessGenericAll | AccessGenericExecute | AccessGenericWrite | AccessGenericRead
	accessWrite           = AccessWriteData | AccessAppendData
	accessRead            = AccessReadData | AccessExecute
)

// MapAccess applies the generic mapping of files (MS-SMB2 3.3.5.9; the values
// are Windows' FILE_GENERIC_* masks, which smbd uses too: GENERIC_READ
// 0x120089, GENERIC_WRITE 0x120116, GENERIC_EXECUTE 0x1200A0, GENERIC_ALL
// 0x1F01FF) and MAXIMUM_ALLOWED (FILE_ALL_ACCESS; on a read-only file without
// FILE_WRITE_DATA, FILE_APPEND_DATA and FILE_DELETE_CHILD, MS-FSA
// 2.1.5.1.2.1) to a DesiredAccess; readOnlyFile is whether the target is an
// existing file with the read-only attribute. The result has no generic bits.
func MapAccess(desired uint32, readOnlyFile bool) uint32 {
	g := desired &^ (accessGeneric | AccessMaximumAllowed)
	if desired&AccessGenericRead != 0 {
		g |= 0x00120089
	}
	if desired&AccessGenericWrite != 0 {
		g |= 0x00120116
	}
	if desired&AccessGenericExecute != 0 {
		g |= 0x001200A0
	}
	if desired&AccessGenericAll != 0 {
		g |= FileAllAccess
	}
	if desired&AccessMaximumAllowed != 0 {
		max := FileAllAccess
		if readOnlyFile {
			max &^= accessWrite | AccessDeleteChild
		}
		g |= max
	}
	return g
}

// storableAttrs are the attributes an entry keeps (what Azure Files
// stores); others an SMB client sends (sparse, compressed, reparse ...)
// are dropped (inferred).
const storableAttrs = AttrReadOnly | AttrHidden | AttrSystem | AttrArchive | AttrTemporary |
	AttrOffline | AttrNotContentIndexed | AttrNoScrubData

// OpenRequest is an SMB2 CREATE as Opens needs it.
type OpenRequest struct {
	Account, Share string
	// Path is the share-relative path, already split into components
	// (the SMB name split on "\"); empty for the share's root directory.
	Path []string
	// DesiredAccess is the NT access mask asked for, with GENERIC_* and
	// MAXIMUM_ALLOWED (mapped by MapAccess).
	DesiredAccess uint32
	// ShareAccess is FILE_SHARE_READ|WRITE|DELETE (0x1|0x2|0x4).
	ShareAccess uint32
	Disposition Disposition
	// Options are the CreateOptions (see OptDirectoryFile ...).
	Options uint32
	// Attributes are the FileAttributes of a created or overwritten file.
	Attributes Attributes
	// SessionID and ClientAddr ("ip:port") are recorded on the handle for
	// List Handles and for CloseSession.
	SessionID  string
	ClientAddr string
}

// Info describes a file or directory as SMB reports it.
type Info struct {
	FileID   uint64
	ParentID uint64
	// Name is the entry's name as created ("" for the root).
	Name string
	Dir  bool
	// Attributes always has AttrDirectory for a directory and is never 0
	// (AttrNormal when a file has no attribute).
	Attributes Attributes
	Created    time.Time
	// LastAccess is the time an SMB client last set, or LastWrite when
	// none did (the service does not stamp access times on reads (inferred)).
	LastAccess time.Time
	LastWrite  time.Time
	Changed    time.Time
	// Size is the end of file; Allocation is Size rounded up to 4 KiB (0
	// for a directory).
	Size       int64
	Allocation int64
	// DeletePending reports the file's delete-pending state.
	DeletePending bool
	// ETag and LastModified are the REST view's.
	ETag         string
	LastModified time.Time
}

// allocUnit is the allocation granularity reported to SMB clients.
const allocUnit = 4096

func infoOf(e *Entry, pending bool) Info {
	in := Info{
		FileID: e.ID, ParentID: e.Parent, Name: e.Name, Dir: e.Dir,
		Attributes: e.SMB.Attrs,
		Created:    e.SMB.Created, LastAccess: e.SMB.Accessed(), LastWrite: e.SMB.LastWrite, Changed: e.SMB.Changed,
		DeletePending: pending, ETag: e.ETag, LastModified: e.Modified,
	}
	if e.Dir {
		in.Attributes = in.Attributes&^AttrNormal | AttrDirectory
	} else {
		in.Size = e.Size
		in.Allocation = (e.Size + allocUnit - 1) / allocUnit * allocUnit
		in.Attributes &^= AttrDirectory
		if in.Attributes&^AttrNormal == 0 {
			in.Attributes = AttrNormal
		} else {
			in.Attributes &^= AttrNormal
		}
	}
	return in
}

// Open is an open handle. Its fields are what was decided at open; the
// file's current state comes from Info. An Open may be used
// concurrently; its exported fields never change (only the times frozen
// through it do, see Frozen).
type Open struct {
	Account, Share string
	FileID         uint64
	// HandleID is the handle's id in the open table (decimal, as List
	// Handles shows it); HandleNum is the same number.
	HandleID  string
	HandleNum uint64
	Dir       bool
	// GrantedAccess is the mapped access mask (FileAccessInformation).
	GrantedAccess uint32
	ShareAccess   uint32
	DeleteOnClose bool
	// Action is what the open did; Info is the file after it.
	Action CreateAction
	Info   Info

	// frozen holds the Times set or frozen through this open.
	frozen atomic.Uint32
}

func (o *Open) fileID() string { return FormatID(o.FileID) }

// Frozen returns the times that operations through o must leave alone:
// those its client set, or froze, with SetBasic and has not thawed since
// (MS-FSA 2.1.5.15.2, Open.UserSetCreationTime … UserSetChangeTime). A
// write through o, for one, stamps the last write and change times only
// when they are not frozen.
func (o *Open) Frozen() Times { return Times(o.frozen.Load()) }

// freeze adds the times in add to o's frozen times and removes those in
// remove.
func (o *Open) freeze(add, remove Times) {
	for {
		old := o.frozen.Load()
		if o.frozen.CompareAndSwap(old, (old|uint32(add))&^uint32(remove)) {
			return
		}
	}
}

// stamp sets the times of e in which (among TimeLastAccess,
// TimeLastWrite and TimeChanged) to now, except those frozen on o.
func (o *Open) stamp(e *Entry, now time.Time, which Times) {
	which &^= o.Frozen()
	if which&TimeLastAccess != 0 {
		e.SMB.LastAccess = now
	}
	if which&TimeLastWrite != 0 {
		e.SMB.LastWrite = now
	}
	if which&TimeChanged != 0 {
		e.SMB.Changed = now
	}
}

func (o *Open) has(mask uint32) bool { return o.GrantedAccess&mask != 0 }

// WriteToEOF as a Write offset appends at the end of file (SMB2 WRITE
// Offset 0xFFFFFFFFFFFFFFFF, MS-FSA 2.1.5.4 FILE_WRITE_TO_END_OF_FILE).
const WriteToEOF int64 = -1

// Lock errors.
var (
	// ErrLockNotGranted: a lock conflicts with a lock of a live open:
	// STATUS_LOCK_NOT_GRANTED (0xC0000055).
	ErrLockNotGranted = errors.New("file: lock not granted")
	// ErrFileLockConflict: a read or write overlaps a lock that forbids
	// it: STATUS_FILE_LOCK_CONFLICT (0xC0000054).
	ErrFileLockConflict = errors.New("file: range locked")
	// ErrRangeNotLocked: an unlock names no lock of the open:
	// STATUS_RANGE_NOT_LOCKED (0xC000007E).
	ErrRangeNotLocked = errors.New("file: range not locked")
	// ErrInvalidLockRange: a lock's last byte overflows 64 bits:
	// STATUS_INVALID_LOCK_RANGE (0xC00001A1).
	ErrInvalidLockRange = errors.New("file: invalid lock range")
)

// lockErr maps errors of package handle's lock functions to the sentinels.
func lockErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, handle.ErrLockNotGranted):
		return fmt.Errorf("%w (%v)", ErrLockNotGranted, err)
	case errors.Is(err, handle.ErrLockConflict):
		return fmt.Errorf("%w (%v)", ErrFileLockConflict, err)
	case errors.Is(err, handle.ErrRangeNotLocked):
		return fmt.Errorf("%w (%v)", ErrRangeNotLocked, err)
	case errors.Is(err, handle.ErrInvalidLockRange):
		return fmt.Errorf("%w (%v)", ErrInvalidLockRange, err)
	case errors.Is(err, handle.ErrNoHandle):
		return ErrFileClosed
	}
	return err
}

// Times is a set of the SMB timestamps of a file or directory.
type Times uint8

// Timestamps.
const (
	TimeCreated Times = 1 << iota
	TimeLastAccess
	TimeLastWrite
	TimeChanged
)

// BasicInfo is FileBasicInformation as Opens takes it. The SMB server
// converts FILETIMEs: 0 ("do not change") becomes the zero time.Time,
// which leaves the time as it is; -1 and -2 ("do not change, and stop /
// resume automatic updates through this handle", MS-FSCC 2.4.7) become
// Freeze and Thaw.
type BasicInfo struct {
	Created time.Time
	// LastAccess is kept for SMB only (REST neither shows nor changes it).
	LastAccess time.Time
	LastWrite  time.Time
	Changed    time.Time
	// Attributes replace the file's (AttrNormal: none); 0 leaves them.
	Attributes Attributes
	// Freeze and Thaw are the times whose automatic updates by later
	// operations through the same open stop (FILETIME -1) or resume
	// (FILETIME -2). A time given is frozen too (see Open.Frozen).
	Freeze, Thaw Times
}

// given returns the times b sets.
func (b *BasicInfo) given() Times {
	given := Times(0)
	for _, t := range []struct {
		at   time.Time
		time Times
	}{{b.Created, TimeCreated}, {b.LastAccess, TimeLastAccess}, {b.LastWrite, TimeLastWrite}, {b.Changed, TimeChanged}} {
		if !t.at.IsZero() {
			given |= t.time
		}
	}
	return given
}

// applyBasic applies b to e at now (see SetBasic); frozen are the times
// frozen on the open after b. It reports whether anything changed.
func applyBasic(e *Entry, b *BasicInfo, frozen Times, now time.Time) bool {
	for _, t := range []struct {
		dst *time.Time
		src time.Time
	}{{&e.SMB.Created, b.Created}, {&e.SMB.LastAccess, b.LastAccess}, {&e.SMB.LastWrite, b.LastWrite}, {&e.SMB.Changed, b.Changed}} {
		if !t.src.IsZero() {
			*t.dst = t.src.UTC()
		}
	}
	changed := b.given() != 0
	if b.Attributes != 0 {
		a := b.Attributes & storableAttrs
		if e.Dir {
			a |= AttrDirectory
		}
		if e.ID == RootID {
			const fixed = AttrHidden | AttrSystem
			a = a&^fixed | e.SMB.Attrs&fixed
		}
		e.SMB.Attrs = a
		changed = true
	}
	if !changed {
		return false
	}
	if frozen&TimeChanged == 0 {
		e.SMB.Changed = now
	}
	return true
}

// renameTargetDirNeed is what a rename needs from the open handles of
// the directory it moves the item into (the source's own directory for
// an in-place rename). Windows performs a rename by opening that
// directory as the target of the rename (IO_OPEN_TARGET_DIRECTORY) for
// FILE_ADD_FILE, or FILE_ADD_SUBDIRECTORY for a directory, sharing read
// and write but not delete, so the MS-FSA sharing check (2.1.5.1.2.2)
// of that transient open against the directory's opens decides:
// an open of the directory holding DELETE access, or one that does not
// share write while holding data access, makes the rename fail with
// STATUS_SHARING_VIOLATION (smb2.rename share_delete_and_delete_access,
// no_share_delete_but_delete_access, no_share_delete_no_delete_access;
// an open sharing everything without DELETE does not:
// share_delete_no_delete_access). smbd checks only the first case
// (any open of the target directory with DELETE access).
// A delete-pending target directory fails the rename with
// ErrDeletePending, as the open would.
var renameTargetDirNeed = handle.Need{Access: handle.Write, Share: handle.ShareRead | handle.ShareWrite}

// checkRenameOpens applies the open-table rule of a rename of the
// directory src through o: no item below it may be open. (The other rule,
// every other open of the item shares delete (MS-FSA 2.1.5.15.11), holds
// by construction: o has DELETE access, so the sharing check admitted
// only opens that share delete, besides attribute-only opens, which
// MS-FSA exempts.)
func checkRenameOpens(tx kv.Tx, now time.Time, o *Open, src *Entry) error {
	if !src.Dir {
		return nil
	}
	var conflict error
	// smb2.rename.rename_dir_openfile: a directory with an open item
	// below it cannot be renamed. The check walks up from every live
	// handle of the share, with a cache, so it costs the share's handles
	// times the depth at most.
	below := map[uint64]bool{RootID: false, src.ID: true}
	var isBelow func(id uint64) (bool, error)
	isBelow = func(id uint64) (bool, error) {
		if b, ok := below[id]; ok {
			return b, nil
		}
		e, err := loadByID(tx, o.Account, o.Share, "", id)
		if err != nil || e == nil {
			return false, err
		}
		b, err := isBelow(e.Parent)
		below[id] = b
		return b, err
	}
	err := handle.List(tx, now, o.Account, o.Share, handle.Position{}, func(h handle.Handle) bool {
		id, err := handleFileID(h)
		if err != nil {
			conflict = err
			return false
		}
		if id == src.ID {
			return true
		}
		b, err := isBelow(id)
		if err != nil {
			conflict = err
			return false
		}
		if b {
			conflict = fmt.Errorf("%w: %s has an open item below it", ErrAccessDenied, src.Name)
			return false
		}
		return true
	})
	return firstErr(err, conflict)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// walkSMB resolves comps like walk, with SMB errors.
func walkSMB(tx kv.Tx, acct, sh string, comps []string) (parent, e *Entry, err error) {
	parent, e, err = walk(tx, acct, sh, "", comps)
	if azerr.Has(err, azerr.ParentNotFound) {
		return nil, nil, fmt.Errorf("%w: %s", ErrPathNotFound, strings.Join(comps, `\`))
	}
	return parent, e, err
}

// liveOpen is Opens.live.
func liveOpen(tx kv.Tx, now time.Time, o *Open) (*Share, *Entry, error) {
	sh, err := smbShare(tx, o.Account, o.Share)
	if err != nil {
		return nil, nil, err
	}
	if _, err := handle.Load(tx, now, o.Account, o.Share, o.fileID(), o.HandleID); err != nil {
		return nil, nil, vfsHandleErr(err)
	}
	e, err := loadByID(tx, o.Account, o.Share, "", o.FileID)
	if err != nil {
		return nil, nil, err
	}
	if e == nil {
		return nil, nil, fmt.Errorf("%w: file %d no longer exists", ErrFileClosed, o.FileID)
	}
	return sh, e, nil
}

// vfsHandleErr is handleErr for an SMB caller: the same refusals of
// package handle's open table (a share mode, ByShareMode; delete-pending,
// ByDeletePending) as the NTSTATUS sentinels, and a closed handle
// as ErrFileClosed.
func vfsHandleErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, handle.ErrSharingViolation):
		return refuse(ByShareMode, fmt.Errorf("%w (%v)", ErrSharingViolation, err))
	case errors.Is(err, handle.ErrDeletePending):
		return refuse(ByDeletePending, ErrDeletePending)
	case errors.Is(err, handle.ErrNoHandle):
		return ErrFileClosed
	case errors.Is(err, handle.ErrAccessDenied):
		return fmt.Errorf("%w (%v)", ErrAccessDenied, err)
	}
	return err
}

// handleFileID returns the file ID of an open handle. The file service
// stores handles with FormatID, so one that does not parse is a corrupt
// record: an error, never a handle to skip (which would, for instance, let
// a directory move with an item below it still open).
func handleFileID(h handle.Handle) (uint64, error) {
	id, err := strconv.ParseUint(h.FileID, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("file: handle %s of share %s has a malformed file id %q", h.HandleID, h.Share, h.FileID)
	}
	return id, nil
}
