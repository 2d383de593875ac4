package file

import (
	"errors"
	"fmt"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// The File service's domain: one API under both front doors.
//
// File REST (filerest: file.go, dir.go, rename.go, copy.go) and SMB2
// (internal/smb, through the SMB view smbfs over Opens, opens*.go) read
// and change the same entry records. The
// operations both perform — reading and writing ranges, resizing, setting
// properties and basic information, deleting, renaming, creating, and
// replacing a file's content (replaceContent) — are the methods of domain
// (domain_io.go, domain_meta.go, domain_rename.go), as are an SMB open
// (domain_open.go), Copy File (domain_copy.go) and the lease actions
// (domain_lease.go).
// Each takes a caller and a typed input (offsets, sizes, staged data,
// parsed properties; never an *http.Request, a header name or a
// ResponseWriter), runs in one kv transaction with the time of the
// injected clock, and returns the stored entry (ETag, Last-Modified, SMB
// times, size, attributes, properties) for the front door to render.
//
// The checks a second write path would forget are decided here, once:
//
//   - share modes and delete-pending of live SMB opens (handle.CheckRESTOp,
//     package handle's REST access table; Managing file locks,
//     https://learn.microsoft.com/en-us/rest/api/storageservices/managing-file-locks),
//   - byte-range locks (checkRange; MS-SMB2 3.3.5.14, MS-FSA 2.1.4.10),
//   - REST file leases (Lease File,
//     https://learn.microsoft.com/en-us/rest/api/storageservices/lease-file),
//   - the read-only attribute (fileOp.readOnly; MS-FSA 2.1.5.1.2.1),
//   - the share's quota and the largest file size (checkSize).
//
// A refused operation returns a *refusal naming the check (its by field),
// wrapping the error its caller's protocol answers with: an *azerr.Error
// for a REST caller (409 SharingViolation, FileLockConflict, ...), a VFS
// sentinel for an SMB caller (ErrSharingViolation, ErrFileLockConflict,
// ...; the SMB front end maps them to NTSTATUS, internal/smb/ntstatus.go).

// caller is who asks for a domain operation: a REST request, which holds
// no open (every open is another's: MS-FSA 2.1.4.10), or an SMB open.
type caller struct {
	// open is the SMB open the operation goes through; nil for REST.
	open *Open
	// acct, share, snap and path name a REST caller's item: the share
	// snapshot ("" for the live share) and the share-relative path
	// components. An SMB caller's item is its open's file ID.
	acct, share, snap string
	path              []string
	// leaseID is the lease ID a REST caller presented ("" none).
	leaseID string
	// at is a REST request's time (taken from the injected clock when
	// the request arrived); an SMB operation takes the clock's time
	// inside its transaction.
	at time.Time
}

// smbCaller is the caller of an operation through the SMB open o.
func smbCaller(o *Open) caller { return caller{open: o, acct: o.Account, share: o.Share} }

// domain is the File service's domain API (see above).
type domain struct{ s *Service }

func (s *Service) dom() domain { return domain{s} }

// now is the time of an operation of c.
func (d domain) now(c *caller) time.Time {
	if c.open == nil {
		return c.at
	}
	return d.s.clock.Now()
}

// fileOp states what a domain operation on an existing item needs, for
// the checks of precheck and admit: it is the operation's only
// description of those rules, for both doors.
type fileOp struct {
	// handle is the operation's row of package handle's REST access table
	// (a handle.Op* name): the share modes and delete-pending state of
	// live SMB opens a REST caller must pass.
	handle string
	// readOnly: the read-only attribute of a file refuses the operation
	// from a REST caller (409 ReadOnlyAttribute; see readOnlyREST for
	// each rule's evidence). Only writes are checked.
	readOnly bool
	// write: a write or delete (while leased, the lease ID is required);
	// otherwise a read (a lease ID, when sent, must match).
	write bool
	// data: an SMB open of a directory is refused (ErrIsDirectory).
	data bool
	// access are the access bits an SMB open needs one of (0: none).
	access uint32
	// what names the operation in SMB error messages.
	what string
}

// The domain's operations on existing items. A REST Create File over an
// existing file replaces its content, as a supersede, which NTFS refuses
// on a read-only file (inferred); Set File Properties without a resize is
// how REST clears the attribute (Azure/azure-sdk-for-net#26520,
// "SetHttpHeaders ... worked for modifying file attributes to remove
// read-only"), and its resize is checked apart (resize); metadata is not
// content: NTFS lets FILE_WRITE_EA and FILE_WRITE_ATTRIBUTES through on
// read-only files (inferred); Copy File onto a read-only destination
// checks the attribute itself (x-ms-file-copy-ignore-readonly), as Rename
// File replacing one does (x-ms-file-rename-ignore-readonly); Abort Copy
// File changes no content (inferred).
var (
	opGetFile                 = fileOp{handle: handle.OpGetFile, data: true, access: accessRead, what: "read"}
	opGetFileProperties       = fileOp{handle: handle.OpGetFileProperties}
	opListRanges              = fileOp{handle: handle.OpListRanges}
	opCreateFile              = fileOp{handle: handle.OpCreateFile, readOnly: true, write: true} // over an existing file
	opCopyFileDest            = fileOp{handle: handle.OpCopyFileDest, write: true}               // an existing destination
	opAbortCopyFile           = fileOp{handle: handle.OpAbortCopyFile, write: true}
	opGetDirectoryProperties  = fileOp{handle: handle.OpGetDirectory}
	opListFilesAndDirectories = fileOp{handle: handle.OpListDirsAndFiles}
	// Content writes (Azure/azure-storage-azcopy#3230 for Put Range).
	opPutRange        = fileOp{handle: handle.OpPutRange, readOnly: true, write: true, data: true, access: accessWrite, what: "write"}
	opPutRangeFromURL = fileOp{handle: handle.OpPutRangeFromURL, readOnly: true, write: true, data: true, access: accessWrite, what: "write"}
	opSetProperties   = fileOp{handle: handle.OpSetFileProperties, write: true}
	opSetFileMetadata = fileOp{handle: handle.OpSetFileMetadata, write: true}
	// SMB's set-information classes, checked at the open.
	opSetBasic               = fileOp{handle: handle.OpSetFileProperties, write: true, access: AccessWriteAttributes, what: "setting basic information"}
	opSetDirectoryProperties = fileOp{handle: handle.OpSetDirectory, write: true}
	opSetDirectoryMetadata   = fileOp{handle: handle.OpSetDirectory, write: true}
	opSetEndOfFile           = fileOp{handle: handle.OpSetFileProperties, write: true, data: true, access: AccessWriteData, what: "set end of file"}
	opSetAllocation          = fileOp{handle: handle.OpSetFileProperties, write: true, data: true, access: AccessWriteData, what: "set allocation"}
	// Read-only files cannot be deleted over REST until the attribute is
	// cleared (Azure/azure-sdk-for-net#26520).
	opDeleteFile      = fileOp{handle: handle.OpDeleteFile, readOnly: true, write: true, access: AccessDelete, what: "a delete disposition"}
	opDeleteDirectory = fileOp{handle: handle.OpDeleteDirectory, write: true, access: AccessDelete, what: "a delete disposition"}
)

// precheck applies what an operation needs from an SMB open before any
// data is staged or any transaction runs: a file open for a data
// operation (ErrIsDirectory) and the granted access (ErrAccessDenied).
// REST callers have nothing to check here.
func (op *fileOp) precheck(c *caller) error {
	o := c.open
	if o == nil {
		return nil
	}
	if op.data && o.Dir {
		return fmt.Errorf("%w: %s on a directory", ErrIsDirectory, op.what)
	}
	if op.access != 0 && !o.has(op.access) {
		return refuse(ByAccess, fmt.Errorf("%w: %s needs access %#x, the open has %#x", ErrAccessDenied, op.what, op.access, o.GrantedAccess))
	}
	return nil
}

// load resolves c's item inside tx. A REST caller's path must name an
// existing file (dir false) or directory (dir true): 404
// ResourceNotFound otherwise (the share and parent errors of resolve
// first). An SMB caller's open must be live and its item still exist
// (ErrShareNotFound, ErrFileClosed); parent is then not loaded.
func (d domain) load(tx kv.Tx, now time.Time, c *caller, dir bool) (target, error) {
	if c.open != nil {
		sh, e, err := liveOpen(tx, now, c.open)
		if err != nil {
			return target{}, err
		}
		return target{share: sh, e: e}, nil
	}
	t, err := resolvePath(tx, c.acct, c.share, c.snap, c.path)
	if err != nil {
		return target{}, err
	}
	if t.e == nil || t.e.Dir != dir {
		return target{}, azerr.New(azerr.ResourceNotFound)
	}
	return t, nil
}

// admit applies, inside the operation's transaction and before anything
// changes, the checks op must pass on the existing item e.
//
// A REST caller holds no open, so each operation is checked in full, in
// this order: its lease ID against e's lease (412 LeaseIdMissing,
// LeaseIdMismatchWithFileOperation, LeaseNotPresentWithFileOperation),
// the read-only attribute for a write of a file (409 ReadOnlyAttribute,
// op.readOnly), and the share modes and delete-pending state of the
// live SMB opens (409 SharingViolation, DeletePending).
//
// An SMB caller was checked when it opened (MS-FSA 2.1.5.1.2: the share
// modes of the other opens, its access against the read-only attribute,
// a REST lease acting as an open; the domain's open marks those
// refusals with the same checks), and an operation through a granted open is not checked
// again (precheck has its access); delete dispositions are refused for a
// read-only file (see readOnly).
func (d domain) admit(tx kv.Tx, now time.Time, c *caller, e *Entry, op *fileOp) error {
	if c.open != nil {
		return d.readOnly(c, e, op)
	}
	if !e.Dir {
		check := lease.CheckRead
		if op.write {
			check = lease.CheckWrite
		}
		if err := check(e.Lease, c.leaseID, lease.File, now); err != nil {
			return refuse(ByLease, err)
		}
	}
	if op.write {
		if err := d.readOnly(c, e, op); err != nil {
			return err
		}
	}
	return handlesAt(tx, now, c.acct, c.share, c.snap, e, op.handle)
}

// readOnly applies the read-only attribute of file e to op. A REST
// caller's writes are refused as op.readOnly says: 409
// ReadOnlyAttribute. An SMB open's access was checked against the
// attribute when it opened (MS-FSA 2.1.5.1.2.1); later, only a delete
// disposition is refused: ErrCannotDelete (STATUS_CANNOT_DELETE, MS-FSA
// 2.1.5.15.3). Directories are never refused.
func (d domain) readOnly(c *caller, e *Entry, op *fileOp) error {
	if e.Dir {
		return nil
	}
	if c.open != nil {
		if op == &opDeleteFile && e.SMB.Attrs&AttrReadOnly != 0 {
			return refuse(ByReadOnly, fmt.Errorf("%w: the file is read-only", ErrCannotDelete))
		}
		return nil
	}
	return d.readOnlyREST(e, op.readOnly)
}

// readOnlyAtOpen applies the read-only attribute of e to an SMB open
// asking for the explicit access bits (MAXIMUM_ALLOWED left out), with
// delete-on-close doc, replacing e's content when truncate (MS-FSA
// 2.1.5.1.2.1): write access is ErrAccessDenied, delete-on-close
// ErrCannotDelete, an overwrite or supersede ErrAccessDenied, in that
// order, all refused by ByReadOnly. A REST Create File over a read-only
// file is refused by the same check (opCreateFile's readOnly), as
// are its content writes and deletes (readOnly). Directories are never
// refused.
func (d domain) readOnlyAtOpen(e *Entry, explicit uint32, doc, truncate bool) error {
	if e.Dir || e.SMB.Attrs&AttrReadOnly == 0 {
		return nil
	}
	switch {
	case explicit&accessWrite != 0:
		return refused(ByReadOnly, "the file is read-only")
	case doc:
		return refuse(ByReadOnly, fmt.Errorf("%w: the file is read-only", ErrCannotDelete))
	case truncate:
		return refused(ByReadOnly, "overwriting a read-only file")
	}
	return nil
}

// leaseAtOpen applies a REST lease on file e to an SMB open at now that
// replaces e's content when truncate, and reports whether e is leased
// (the sharing check then counts the lease as an open). A REST lease acts
// as an open with Write and Delete access sharing only Read (Managing
// file locks,
// https://learn.microsoft.com/en-us/rest/api/storageservices/managing-file-locks,
// "Lease File" row): it denies truncation (inferred), ErrSharingViolation
// refused by ByLease, as Create File over a leased file without its lease
// ID is refused by ByLease in admit.
func (d domain) leaseAtOpen(e *Entry, now time.Time, truncate bool) (leased bool, err error) {
	leased = !e.Dir && e.Lease.Active(now)
	if truncate && leased {
		return leased, refuse(ByLease, fmt.Errorf("%w: the file is leased", ErrSharingViolation))
	}
	return leased, nil
}

// checkRange applies the byte-range locks of e's other opens to a read
// (write false) or write of n bytes from off by c, inside the operation's
// transaction: a range overlapping an exclusive lock (a read) or any lock
// (a write) of another live open — or, for an SMB write, a shared lock of
// c's own open (MS-FSA 2.1.4.10) — is refused: 409 FileLockConflict for
// REST ("A portion of the specified file is locked by an SMB client",
// Azure Files error codes,
// https://learn.microsoft.com/en-us/rest/api/storageservices/file-service-error-codes),
// ErrFileLockConflict (STATUS_FILE_LOCK_CONFLICT) for SMB: a refusal by
// ByLock, which each door answers so. Share snapshots hold no locks.
//
// Resizing is not checked: a truncation is not a write of a range in
// MS-FSA (2.1.5.14.4 FileEndOfFileInformation has no byte-range check),
// smbd does not check one either, and smbtorture smb2.lock.truncate
// expects an overwriting open of a locked file to succeed.
func (d domain) checkRange(tx kv.Tx, now time.Time, c *caller, e *Entry, off, n int64, write bool) error {
	if c.snap != "" || n <= 0 || off < 0 {
		return nil
	}
	check := handle.CheckRead
	if write {
		check = handle.CheckWrite
	}
	handleID := ""
	if c.open != nil {
		handleID = c.open.HandleID
	}
	err := check(tx, now, c.acct, c.share, FormatID(e.ID), handleID, uint64(off), uint64(n))
	switch {
	case errors.Is(err, handle.ErrLockConflict):
		return refused(ByLock, err.Error())
	case errors.Is(err, handle.ErrNoHandle):
		// Only an SMB caller names a handle: its open was closed.
		return ErrFileClosed
	}
	return err
}

// checkSize refuses a file of size bytes in share sh, larger than the
// share's quota or than 4 TiB: a refusal by ByQuota, which REST answers
// 403 ShareSizeLimitReached and SMB ErrDiskFull (STATUS_DISK_FULL).
// (REST refuses sizes over 4 TiB when it parses them, 400
// OutOfRangeInput, so only the quota refuses a REST caller here.)
func (d domain) checkSize(sh *Share, size int64) error {
	if size > MaxFileSize || overQuota(sh, size) {
		return refused(ByQuota, fmt.Sprintf("a file of %d bytes", size))
	}
	return nil
}

// The read-only attribute seen from REST. An SMB client (or a REST Set
// File Properties) that marks a file ReadOnly makes it refuse content
// changes and deletion over REST until the attribute is cleared, as NTFS
// refuses FILE_WRITE_DATA opens and delete dispositions on it (MS-FSA
// 2.1.5.1.2.1). Over SMB the attribute is checked when a file is opened
// (readOnlyAtOpen) and by a delete disposition (domain.readOnly).
//
// Status: the "Managing file locks" page
// (https://learn.microsoft.com/en-us/rest/api/storageservices/managing-file-locks)
// gives 412, the Azure Files error-code table
// (https://learn.microsoft.com/en-us/rest/api/storageservices/file-service-error-codes)
// 409; azcopy reports the service answering a Put Range into a read-only file
// with 409 (Azure/azure-storage-azcopy#3230). Cerulean sends what the service
// sends, 409 (the azerr catalog's entry for ReadOnlyAttribute), not the 412
// of the locks page.
//
// readOnlyREST refuses a REST operation on e that the read-only
// attribute refuses (applies: the operation's fileOp.readOnly, or a
// resize) when e is a file with the attribute: a refusal by ByReadOnly,
// which REST answers 409 ReadOnlyAttribute. Directories are never refused. Call it inside the
// operation's transaction on the stored entry, before the change is
// applied (a request that clears the attribute and resizes at once is
// refused (inferred)).
func (d domain) readOnlyREST(e *Entry, applies bool) error {
	if applies && !e.Dir && e.SMB.Attrs&AttrReadOnly != 0 {
		return refused(ByReadOnly, "")
	}
	return nil
}

// Ref names what a File REST operation acts on, and who asks.
type Ref struct {
	// Account and Share name the share.
	Account, Share string
	// Snapshot is the share snapshot (wire.FormatISO7), "" for the live
	// share.
	Snapshot string
	// Path is the share-relative path, one element per component; nil
	// for the share itself (or its root directory).
	Path []string
	// LeaseID is the lease ID the caller presented ("" for none).
	LeaseID string
	// Now is the request's time, taken from the injected clock when it
	// arrived.
	Now time.Time
}

// caller is the domain caller of the REST request ref describes.
func (ref Ref) caller() caller {
	return caller{acct: ref.Account, share: ref.Share, snap: ref.Snapshot, path: ref.Path, leaseID: ref.LeaseID, at: ref.Now}
}
