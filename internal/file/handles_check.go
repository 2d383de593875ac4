package file

import (
	"errors"
	"fmt"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// handleOps maps the router's operation names to the rows of the handle
// package's REST access table. Operations given a handle.Op* name
// directly (copy source and destination, lease acquire) pass through.
var handleOps = map[string]string{
	"createFile":              handle.OpCreateFile,
	"getFile":                 handle.OpGetFile,
	"getFileProperties":       handle.OpGetFileProperties,
	"setFileProperties":       handle.OpSetFileProperties,
	"setFileMetadata":         handle.OpSetFileMetadata,
	"deleteFile":              handle.OpDeleteFile,
	"putRange":                handle.OpPutRange,
	"putRangeFromURL":         handle.OpPutRangeFromURL,
	"listRanges":              handle.OpListRanges,
	"copyFile":                handle.OpCopyFileDest,
	"abortCopyFile":           handle.OpAbortCopyFile,
	"renameFile":              handle.OpRenameFile,
	"renameDirectory":         handle.OpRenameDirectory,
	"deleteDirectory":         handle.OpDeleteDirectory,
	"getDirectoryProperties":  handle.OpGetDirectory,
	"setDirectoryProperties":  handle.OpSetDirectory,
	"setDirectoryMetadata":    handle.OpSetDirectory,
	"listFilesAndDirectories": handle.OpListDirsAndFiles,
}

// checkHandles consults the open SMB handles of e before REST operation op
// (an opName of the router, or a handle.Op* name) runs: 409 DeletePending
// when e is delete-pending, 409 SharingViolation when an open's share mode
// denies the access op needs (Managing file locks,
// https://learn.microsoft.com/en-us/rest/api/storageservices/managing-file-locks;
// see package handle for each row's evidence). Every REST operation on an
// existing file or directory calls it inside its transaction. Handles live
// only on the live share, never on snapshots.
//
// The delete-pending code: the "Managing file locks" prose names it
// SMBDeletePending, but the Azure Files error-code table, the service's
// REST specification (StorageErrorCode in every generated SDK, e.g.
// azfile's fileerror.DeletePending) and the SDKs' error enums all name it
// DeletePending, 409. The specification is what the service sends, so
// Cerulean sends DeletePending.
func checkHandles(tx kv.Tx, r *req, e *entry, op string) error {
	if r.snap != "" {
		return nil
	}
	if mapped, ok := handleOps[op]; ok {
		op = mapped
	}
	if _, ok := handle.RESTAccess(op); !ok {
		return fmt.Errorf("file: operation %q has no handle access rule", op)
	}
	return handleErr(handle.CheckRESTOp(tx, r.Now, r.Account, r.share, FormatID(e.ID), op))
}

// checkLocks consults the SMB byte-range locks of e before a REST operation
// reads (write false) or writes n bytes of it from off, inside the
// operation's transaction: 409 FileLockConflict ("A portion of the specified
// file is locked by an SMB client") when the range overlaps an exclusive lock
// (a read) or any lock (a write) of a live SMB open (Azure Files error codes,
// https://learn.microsoft.com/en-us/rest/api/storageservices/file-service-error-codes;
// MS-SMB2 3.3.5.14 for the locks). A REST operation holds no lock: every lock
// is another open's (MS-FSA 2.1.4.10). Get File, Put Range (update and
// clear), Put Range From URL (destination, and a file source) and Copy File
// (a file source) call it.
//
// Resizing (Set File Properties x-ms-content-length) is not checked: a
// truncation is not a write of a range in MS-FSA (2.1.5.14.4
// FileEndOfFileInformation has no byte-range check), smbd does not check
// one either, and smbtorture smb2.lock.truncate expects an overwriting
// open of a locked file to succeed; the SMB view's SetEndOfFile follows
// the same rule.
func checkLocks(tx kv.Tx, r *req, e *entry, off, n int64, write bool) error {
	if r.snap != "" || n <= 0 || off < 0 {
		return nil
	}
	check := handle.CheckRead
	if write {
		check = handle.CheckWrite
	}
	err := check(tx, r.Now, r.Account, r.share, FormatID(e.ID), "", uint64(off), uint64(n))
	if errors.Is(err, handle.ErrLockConflict) {
		return azerr.New(azerr.FileLockConflict)
	}
	return err
}

// handleErr maps the handle package's sentinel errors to Azure errors.
func handleErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, handle.ErrDeletePending):
		return azerr.New(azerr.DeletePending)
	case errors.Is(err, handle.ErrSharingViolation):
		return azerr.New(azerr.SharingViolation)
	}
	return err
}
