package file

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// The SMB view of the File service (VFS).
//
// An SMB2 front end serves the same shares, directories and files as the
// REST operations: the same entry records, the same extent parts and the
// same ETag/Last-Modified history, so a file written over SMB reads back
// byte-exact over REST and the other way round. Every VFS call is one kv
// transaction (or, for reads and writes, one transaction plus the data
// streamed or staged outside it) and re-reads what it needs, so REST
// changes made between two SMB calls are seen by the second. What a file
// operation does — READ, WRITE, the size setters, basic information, a
// delete disposition, a rename — is the File domain's (domain.go), the
// same call the REST handlers make with an open-less caller; the VFS adds
// the SMB parameter checks and opens, closes and locks.
//
// Opens are the handle records of package handle (the global open table
// shared with REST, List Handles and Force Close Handles): share modes by
// MS-FSA 2.1.5.1.2, delete-on-close and delete-pending, and the liveness
// of the front end that holds them (its owner id). An *Open keeps only
// identities (account, share, file ID, handle ID) and what was granted at
// open; each call checks that the handle is still live (a Force Close
// Handles or an expired owner closes it: ErrFileClosed) and loads the
// entry by its file ID, so renames by either protocol are followed.
//
// Errors are the sentinels below (test with errors.Is; they may be
// wrapped with details). Each names the NTSTATUS the SMB server answers
// with; the SMB front end maps them (internal/smb, ntstatus.go). Anything
// else is a storage fault (STATUS_UNSUCCESSFUL or a dropped connection,
// at the server's choice).

// Errors returned by VFS calls.
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
	// ErrOwnerNotLive: the VFS's owner has no live heartbeat (call
	// Heartbeat first, and regularly): a server fault,
	// STATUS_INSUFFICIENT_RESOURCES (0xC000009A) at the server's choice.
	ErrOwnerNotLive = handle.ErrOwnerNotLive
)

// Reads at or past the end of file return io.EOF:
// STATUS_END_OF_FILE (0xC0000011).

// MaxIOSize is the largest Read or Write a VFS accepts: the SMB server
// offers it as MaxReadSize and MaxWriteSize. It equals the chunk size of
// the byte layer, so a large sequential SMB write becomes one extent part
// per request.
const MaxIOSize = extent.ChunkMax

// VFS is the SMB view of the File service for one front end: its owner
// id is the liveness identity of every handle it opens (see Heartbeat).
// A VFS holds no state besides its owner; it is safe for concurrent use.
type VFS struct {
	s     *Service
	owner string
}

// VFS returns the SMB view of the service for the front end named owner
// (a non-empty id unique among live front ends, e.g. "smb@host:pid").
// Opens need a live heartbeat of owner: call Heartbeat first.
func (s *Service) VFS(owner string) *VFS { return &VFS{s: s, owner: owner} }

// Owner returns the VFS's owner id.
func (v *VFS) Owner() string { return v.owner }

// Now returns the service clock's time (the time every VFS decision uses).
func (v *VFS) Now() time.Time { return v.s.clock.Now() }

// Heartbeat records that the owner is alive until until (by the service
// clock). The front end calls it well before the previous expiry, e.g.
// every 10 s with until = now + 30 s. If the previous heartbeat had
// expired, the owner's earlier handles stay dead: a front end that lost
// its liveness must treat all its opens as closed.
func (v *VFS) Heartbeat(ctx context.Context, until time.Time) error {
	if v.owner == "" {
		return fmt.Errorf("%w: empty owner", ErrInvalidParameter)
	}
	return v.s.store.Update(ctx, func(tx kv.Tx) error {
		return handle.Heartbeat(tx, v.s.clock.Now(), v.owner, until)
	})
}

// Retire ends the owner at once (a clean shutdown): its handles are dead
// from now on (they no longer block anyone), and the service's background
// reaper deletes them, applying their delete-on-close.
func (v *VFS) Retire(ctx context.Context) error {
	return v.s.store.Update(ctx, func(tx kv.Tx) error {
		return handle.Retire(tx, v.owner)
	})
}

// ShareExists reports whether the live share exists and is an SMB share
// (NFS shares are not reachable over SMB (inferred)). Share names are lower
// case (Azure's rule): the caller lower-cases a tree-connect name.
func (v *VFS) ShareExists(ctx context.Context, acct, sh string) (bool, error) {
	err := v.s.store.View(ctx, func(tx kv.Tx) error {
		_, err := smbShare(tx, acct, sh)
		return err
	})
	if errors.Is(err, ErrShareNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Shares lists the account's live SMB shares in name order (for the
// server's share enumeration).
func (v *VFS) Shares(ctx context.Context, acct string) ([]string, error) {
	var out []string
	err := v.s.store.View(ctx, func(tx kv.Tx) error {
		out = out[:0]
		pre := sharesPrefix(acct)
		var derr error
		err := tx.Scan(pre, kv.PrefixEnd(pre), 0, false, func(k, val []byte) bool {
			parts, ok := kv.Split(k)
			if !ok || len(parts) != 4 || parts[3] != "" {
				return true // a snapshot
			}
			var rec struct {
				Protocols string `json:"p"`
			}
			if derr = json.Unmarshal(val, &rec); derr != nil {
				return false
			}
			if rec.Protocols != ProtoNFS {
				out = append(out, parts[2])
			}
			return true
		})
		if err == nil {
			err = derr
		}
		return err
	})
	return out, err
}

// FSInfo is a share's size and volume information.
type FSInfo struct {
	// QuotaBytes is the share's quota (its size as SMB reports it).
	QuotaBytes int64
	// UsedBytes is the sum of the file sizes (Get Share Stats).
	UsedBytes int64
	// Created is the share's creation time (the volume creation time).
	Created time.Time
}

// FSInfo returns the share's quota, usage and creation time (FS size and
// volume information). Its cost grows with the number of entries of the
// share.
func (v *VFS) FSInfo(ctx context.Context, acct, sh string) (FSInfo, error) {
	var fi FSInfo
	err := v.s.store.View(ctx, func(tx kv.Tx) error {
		rec, err := smbShare(tx, acct, sh)
		if err != nil {
			return err
		}
		used, err := shareUsage(tx, acct, sh)
		if err != nil {
			return err
		}
		fi = FSInfo{QuotaBytes: int64(rec.Quota) << 30, UsedBytes: used, Created: rec.Created}
		return nil
	})
	return fi, err
}

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

// CreateOptions bits the VFS interprets (MS-SMB2 2.2.13); other bits are
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

// OpenRequest is an SMB2 CREATE as the VFS needs it.
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
