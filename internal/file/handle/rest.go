package handle

import (
	"fmt"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Need is what a File REST operation needs from the live handles of its
// file. The operation is checked as if it were a short-lived open asking
// for Access while sharing Share (the MS-FSA rule of Conflicts, with
// attribute-only handles exempt), and, when NoHandles is set, fails if
// the file has any live handle at all.
type Need struct {
	// Access the operation uses: every live handle with Read, Write or
	// Delete access must share it.
	Access Access
	// Share the operation allows: a live handle holding a right outside
	// Share conflicts. Ordinary operations allow everything (ShareAll);
	// only Lease File acquire holds the file like a long-lived open.
	Share ShareAccess
	// NoHandles: any live handle, whatever its access, is a violation.
	NoHandles bool
}

// REST operation names for RESTAccess, named after the REST operations.
const (
	OpCreateFile        = "createFile" // on an existing file: replaces it
	OpGetFile           = "getFile"
	OpGetFileProperties = "getFileProperties"
	OpGetFileMetadata   = "getFileMetadata"
	OpSetFileProperties = "setFileProperties" // includes resize (x-ms-content-length)
	OpSetFileMetadata   = "setFileMetadata"
	OpDeleteFile        = "deleteFile"
	OpPutRange          = "putRange" // update and clear
	OpPutRangeFromURL   = "putRangeFromURL"
	OpListRanges        = "listRanges"
	OpLeaseFileAcquire  = "leaseFileAcquire"
	OpLeaseFileOther    = "leaseFileOther" // change, release, break
	OpCopyFileSource    = "copyFileSource"
	OpCopyFileDest      = "copyFileDest"
	OpAbortCopyFile     = "abortCopyFile"
	OpRenameFile        = "renameFile"      // the source of a rename
	OpRenameReplace     = "renameReplace"   // an existing destination replaced by a rename
	OpDeleteDirectory   = "deleteDirectory" // per fileID; the caller walks the tree
	OpGetDirectory      = "getDirectory"    // properties, metadata
	OpSetDirectory      = "setDirectory"    // properties, metadata
	OpRenameDirectory   = "renameDirectory" // the source of a rename
	OpCreateHardLink    = "createHardLink"  // on the target file
	OpListDirsAndFiles  = "listDirectoriesAndFiles"
)

// Common rows: ordinary operations allow every existing access (ShareAll).
var (
	needNothing = Need{Share: ShareAll}
	needRead    = Need{Access: Read, Share: ShareAll}
	needWrite   = Need{Access: Write, Share: ShareAll}
	needDelete  = Need{Access: Delete, Share: ShareAll, NoHandles: true}
)

// restTable maps REST operations to their Need. Evidence: "Managing file
// locks" (learn.microsoft.com/rest/api/storageservices/managing-file-locks,
// ms.date 06/05/2021): "Documented:" quotes it; "Inferred:" marks
// Cerulean's reading where the page says nothing.
var restTable = map[string]Need{
	// Documented: "File access equivalent" table: Create File = "Write,
	// Delete". The share-mode table agrees: Create File fails under every
	// share mode lacking Write or Delete (None, Shared Read, Shared Write,
	// Shared Delete, Read/Write, Read/Delete) and not under Write/Delete.
	OpCreateFile: {Access: Write | Delete, Share: ShareAll},
	// Documented: Get File = "Read"; fails under None, Shared Write, Shared
	// Delete, Shared Write/Delete (each lacks Shared Read).
	OpGetFile: needRead,
	// Documented: Get File Properties and Get File Metadata = "N/A": they
	// "don't require read access to the file (... succeed even if an SMB
	// client has the file open for exclusive read access)".
	OpGetFileProperties: needNothing,
	OpGetFileMetadata:   needNothing,
	// Documented: Set File Properties = "Write", Set File Metadata = "Write";
	// resizing is a Set File Properties.
	OpSetFileProperties: needWrite,
	OpSetFileMetadata:   needWrite,
	// Documented: Delete File = "Delete", and "For a FileREST Delete File
	// operation to succeed, there can be no SMB clients with handles open
	// against that file" (it fails even under Read/Write/Delete sharing,
	// the last row of the share-mode table).
	OpDeleteFile: needDelete,
	// Documented: Put Range = "Write" (the "Put Range sharing violation"
	// example: FileAccess.Write + FileShare.Read blocks it). Inferred: Put
	// Range From URL writes the same way.
	OpPutRange:        needWrite,
	OpPutRangeFromURL: needWrite,
	// Documented: List Ranges = "Read".
	OpListRanges: needRead,
	// Documented: Lease File = "Write, Delete, and Shared Read for the
	// duration of the lease"; the lease table: acquiring fails if any handle
	// has Write or Delete access (None and Read succeed, Write, Delete and
	// every combination with them fail); the share-mode table lists Lease
	// File as failing under every share mode but Shared Read/Write/Delete,
	// including Shared Write/Delete (Deny Read). Both tables hold, for a
	// handle with Read access as in those scenarios, only if acquiring is
	// checked as an open asking Read|Write|Delete that shares Read: so the
	// lease needs all three shared and tolerates only Read access.
	OpLeaseFileAcquire: {Access: Read | Write | Delete, Share: ShareRead},
	// Inferred: Change, release and break grant no new access.
	OpLeaseFileOther: needNothing,
	// Inferred: Copy reads the source's content like Get File.
	OpCopyFileSource: needRead,
	// Inferred: Copy replaces the destination's content and properties like
	// Create File over an existing file.
	OpCopyFileDest: {Access: Write | Delete, Share: ShareAll},
	// Inferred: Abort Copy touches only the copy status.
	OpAbortCopyFile: needNothing,
	// Inferred: A rename is a delete-access operation on the source in SMB
	// (MS-SMB2 3.3.5.21.1: FileRenameInformation needs DELETE access), so
	// the source's handles must share Delete.
	OpRenameFile: {Access: Delete, Share: ShareAll},
	// Inferred: Replacing an existing destination deletes it: as Delete File.
	OpRenameReplace: needDelete,
	// Documented: List Directories and Files = "N/A". Inferred: Directory
	// properties and metadata reads, like Get File Properties. (List Handles
	// and Force Close Handles are not gated at all: they must work on a
	// delete-pending file, so they do not call CheckREST.)
	OpListDirsAndFiles: needNothing,
	OpGetDirectory:     needNothing,
	// Inferred: As Delete File, per directory (and per descendant, walked by
	// the caller).
	OpDeleteDirectory: needDelete,
	// Inferred: As Set File Properties / Set File Metadata.
	OpSetDirectory: needWrite,
	// Inferred: As renameFile.
	OpRenameDirectory: {Access: Delete, Share: ShareAll},
	// Inferred: A hard link adds a name, no content access: like properties.
	OpCreateHardLink: needNothing,
}

// RESTAccess returns what the REST operation op (one of the Op constants)
// needs from the live handles of its file.
func RESTAccess(op string) (Need, bool) {
	n, ok := restTable[op]
	return n, ok
}

// CheckREST decides whether a REST operation needing need may run on the file
// given its live handles: ErrDeletePending if the file is delete-pending
// (Managing file locks: "any FileREST operation on that file will return ...
// SMBDeletePending"), ErrSharingViolation if a live handle conflicts with
// need, else nil. It only reads, so it works in View and Update transactions;
// decide writes in the Update that performs them.
func CheckREST(tx kv.Tx, now time.Time, acct, share, fileID string, need Need) error {
	st, ok, err := getState(tx, acct, share, fileID)
	if err != nil || !ok {
		return err // no state: no handle at all
	}
	if st.DeletePending {
		return ErrDeletePending
	}
	live, _, err := liveHandles(tx, newLiveness(tx, now), acct, share, fileID)
	if err != nil {
		return err
	}
	for _, s := range live {
		if need.NoHandles {
			return fmt.Errorf("%w: handle %s is open", ErrSharingViolation, s.HandleID)
		}
		if Conflicts(s.Access, s.ShareAccess, need.Access, need.Share) {
			return fmt.Errorf("%w: handle %s holds %v sharing %v", ErrSharingViolation, s.HandleID, s.Access, s.ShareAccess)
		}
	}
	return nil
}

// CheckRESTOp is CheckREST for a named operation; an unknown op is an
// error wrapping ErrInvalid (a programming error).
func CheckRESTOp(tx kv.Tx, now time.Time, acct, share, fileID, op string) error {
	need, ok := RESTAccess(op)
	if !ok {
		return fmt.Errorf("%w: unknown REST operation %q", ErrInvalid, op)
	}
	return CheckREST(tx, now, acct, share, fileID, need)
}
