// Package smbfs is the SMB view of the File service: the FileSystem
// internal/smb defines, over the File domain's open-based API
// (file.Opens). The domain reports which check refused; where it leaves
// the answer to the door (a *file.Refusal whose Err is nil) this view
// answers with the sentinel whose NTSTATUS the SMB server sends
// (internal/smb, ntstatus.go), as filerest answers with an Azure error
// code.
package smbfs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cerulean-storage/cerulean/internal/file"
)

// VFS is the SMB view of the File service for one front end (its owner
// id is the liveness identity of every handle it opens: see Heartbeat).
// It is safe for concurrent use.
type VFS struct {
	o *file.Opens
}

// New returns the SMB view of s for the front end named owner (a
// non-empty id unique among live front ends, e.g. smb.DefaultOwner()).
// Opens need a live heartbeat of owner: call Heartbeat first.
func New(s *file.Service, owner string) *VFS { return &VFS{o: s.Opens(owner)} }

// Owner is the owner id (file.Opens.Owner).
func (v *VFS) Owner() string {
	return v.o.Owner()
}

// Now is the service clock's time, the time every decision on an open
// uses (file.Opens.Now).
func (v *VFS) Now() time.Time {
	return v.o.Now()
}

// Heartbeat is file.Opens.Heartbeat, its refusals answered with their sentinels.
func (v *VFS) Heartbeat(ctx context.Context, until time.Time) error {
	return answer(v.o.Heartbeat(ctx, until))
}

// Retire is file.Opens.Retire, its refusals answered with their sentinels.
func (v *VFS) Retire(ctx context.Context) error {
	return answer(v.o.Retire(ctx))
}

// ShareExists is file.Opens.ShareExists, its refusals answered with their sentinels.
func (v *VFS) ShareExists(ctx context.Context, acct, sh string) (bool, error) {
	r0, err := v.o.ShareExists(ctx, acct, sh)
	return r0, answer(err)
}

// Shares is file.Opens.Shares, its refusals answered with their sentinels.
func (v *VFS) Shares(ctx context.Context, acct string) ([]string, error) {
	r0, err := v.o.Shares(ctx, acct)
	return r0, answer(err)
}

// FSInfo is file.Opens.FSInfo, its refusals answered with their sentinels.
func (v *VFS) FSInfo(ctx context.Context, acct, sh string) (file.FSInfo, error) {
	r0, err := v.o.FSInfo(ctx, acct, sh)
	return r0, answer(err)
}

// Read is file.Opens.Read, its refusals answered with their sentinels.
func (v *VFS) Read(ctx context.Context, o *file.Open, off int64, n int) ([]byte, error) {
	r0, err := v.o.Read(ctx, o, off, n)
	return r0, answer(err)
}

// Write is file.Opens.Write, its refusals answered with their sentinels.
func (v *VFS) Write(ctx context.Context, o *file.Open, off int64, data []byte) error {
	return answer(v.o.Write(ctx, o, off, data))
}

// SetEndOfFile is file.Opens.SetEndOfFile, its refusals answered with their sentinels.
func (v *VFS) SetEndOfFile(ctx context.Context, o *file.Open, size int64) error {
	return answer(v.o.SetEndOfFile(ctx, o, size))
}

// SetAllocation is file.Opens.SetAllocation, its refusals answered with their sentinels.
func (v *VFS) SetAllocation(ctx context.Context, o *file.Open, size int64) error {
	return answer(v.o.SetAllocation(ctx, o, size))
}

// Lock is file.Opens.Lock, its refusals answered with their sentinels.
func (v *VFS) Lock(ctx context.Context, o *file.Open, ranges []file.LockRange) error {
	return answer(v.o.Lock(ctx, o, ranges))
}

// Unlock is file.Opens.Unlock, its refusals answered with their sentinels.
func (v *VFS) Unlock(ctx context.Context, o *file.Open, ranges []file.LockRange) error {
	return answer(v.o.Unlock(ctx, o, ranges))
}

// Locks is file.Opens.Locks, its refusals answered with their sentinels.
func (v *VFS) Locks(ctx context.Context, o *file.Open) ([]file.LockRange, error) {
	r0, err := v.o.Locks(ctx, o)
	return r0, answer(err)
}

// SetBasic is file.Opens.SetBasic, its refusals answered with their sentinels.
func (v *VFS) SetBasic(ctx context.Context, o *file.Open, b file.BasicInfo) (file.Info, error) {
	r0, err := v.o.SetBasic(ctx, o, b)
	return r0, answer(err)
}

// SetDisposition is file.Opens.SetDisposition, its refusals answered with their sentinels.
func (v *VFS) SetDisposition(ctx context.Context, o *file.Open, deletePending bool) error {
	return answer(v.o.SetDisposition(ctx, o, deletePending))
}

// Rename is file.Opens.Rename, its refusals answered with their sentinels.
func (v *VFS) Rename(ctx context.Context, o *file.Open, newPath []string, replaceIfExists bool) error {
	return answer(v.o.Rename(ctx, o, newPath, replaceIfExists))
}

// ReadDir is file.Opens.ReadDir, its refusals answered with their sentinels.
func (v *VFS) ReadDir(ctx context.Context, o *file.Open, after string, limit int) ([]file.Info, error) {
	r0, err := v.o.ReadDir(ctx, o, after, limit)
	return r0, answer(err)
}

// Lookup is file.Opens.Lookup, its refusals answered with their sentinels.
func (v *VFS) Lookup(ctx context.Context, o *file.Open, name string) (file.Info, error) {
	r0, err := v.o.Lookup(ctx, o, name)
	return r0, answer(err)
}

// ParentInfo is file.Opens.ParentInfo, its refusals answered with their sentinels.
func (v *VFS) ParentInfo(ctx context.Context, o *file.Open) (file.Info, error) {
	r0, err := v.o.ParentInfo(ctx, o)
	return r0, answer(err)
}

// Open is file.Opens.Open, its refusals answered with their sentinels.
func (v *VFS) Open(ctx context.Context, r file.OpenRequest) (*file.Open, error) {
	r0, err := v.o.Open(ctx, r)
	return r0, answer(err)
}

// Info is file.Opens.Info, its refusals answered with their sentinels.
func (v *VFS) Info(ctx context.Context, o *file.Open) (file.Info, error) {
	r0, err := v.o.Info(ctx, o)
	return r0, answer(err)
}

// Path is file.Opens.Path, its refusals answered with their sentinels.
func (v *VFS) Path(ctx context.Context, o *file.Open) ([]string, error) {
	r0, err := v.o.Path(ctx, o)
	return r0, answer(err)
}

// Close is file.Opens.Close, its refusals answered with their sentinels.
func (v *VFS) Close(ctx context.Context, o *file.Open) (file.Info, error) {
	r0, err := v.o.Close(ctx, o)
	return r0, answer(err)
}

// CloseSession is file.Opens.CloseSession, its refusals answered with their sentinels.
func (v *VFS) CloseSession(ctx context.Context, sessionID string) (int, error) {
	r0, err := v.o.CloseSession(ctx, sessionID)
	return r0, answer(err)
}

// answer answers with its sentinel a domain refusal that leaves the
// vocabulary to the door (file.Refusal.Err nil): a byte-range lock is
// ErrFileLockConflict (STATUS_FILE_LOCK_CONFLICT, MS-FSA 2.1.4.10); the
// quota or the largest file size ErrDiskFull (STATUS_DISK_FULL); the
// read-only attribute ErrAccessDenied (MS-FSA 2.1.5.1.2.1: write access
// to, or an overwrite of, a read-only file; the delete cases answer
// ErrCannotDelete themselves); a missing parent of a rename's target
// ErrPathNotFound; an existing rename target ErrExists, a directory one
// ErrAccessDenied; a directory with children ErrDirectoryNotEmpty; the
// share root ErrAccessDenied; a directory moved into its own subtree
// ErrInvalidParameter. The refusal keeps its check. Other errors pass
// unchanged.
func answer(err error) error {
	var r *file.Refusal
	if !errors.As(err, &r) || r.Err != nil {
		return err
	}
	var sentinel error
	switch r.By {
	case file.ByLock:
		sentinel = file.ErrFileLockConflict
	case file.ByQuota:
		sentinel = file.ErrDiskFull
	case file.ByReadOnly:
		sentinel = file.ErrAccessDenied
	case file.ByParent:
		sentinel = file.ErrPathNotFound
	case file.ByExists:
		sentinel = file.ErrExists
	case file.ByReplaceDir:
		sentinel = file.ErrAccessDenied
	case file.ByNotEmpty:
		sentinel = file.ErrDirectoryNotEmpty
	case file.ByShareRoot:
		sentinel = file.ErrAccessDenied
	case file.BySubtree:
		sentinel = file.ErrInvalidParameter
	default:
		return err
	}
	return &file.Refusal{By: r.By, Err: fmt.Errorf("%w: %s", sentinel, r.Detail), Detail: r.Detail}
}
