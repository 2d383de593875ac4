package file

import (
	"fmt"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// The read-only attribute seen from REST. An SMB client (or a REST Set
// File Properties) that marks a file ReadOnly makes it refuse content
// changes and deletion over REST until the attribute is cleared, as NTFS
// refuses FILE_WRITE_DATA opens and delete dispositions on it (MS-FSA
// 2.1.5.1.2.1).
//
// Status: the "Managing file locks" page
// (https://learn.microsoft.com/en-us/rest/api/storageservices/managing-file-locks)
// gives 412, the Azure Files error-code table
// (https://learn.microsoft.com/en-us/rest/api/storageservices/file-service-error-codes)
// 409; azcopy reports the service answering a Put Range into a read-only file
// with 409 (Azure/azure-storage-azcopy#3230). Cerulean sends what the service
// sends, 409 (the azerr catalog's entry for ReadOnlyAttribute), not the 412
// of the locks page.

// readOnlyAttrOps says, for each REST operation name that may run on an
// existing file, whether the read-only attribute refuses it.
var readOnlyAttrOps = map[string]bool{
	// Content writes (Azure/azure-storage-azcopy#3230 for Put Range).
	"putRange":        true, // update and clear
	"putRangeFromURL": true,
	// Create File over an existing file replaces its content, as a
	// supersede, which NTFS refuses on a read-only file (inferred).
	"createFile": true,
	// (Azure/azure-sdk-for-net#26520: read-only files cannot be
	// deleted over REST until the attribute is cleared.)
	"deleteFile": true,
	// resizeFile is Set File Properties with x-ms-content-length: a
	// content change (truncation or extension) (inferred).
	"resizeFile": true,
	// Set File Properties without a resize is how REST clears the
	// attribute (Azure/azure-sdk-for-net#26520, "SetHttpHeaders ... worked
	// for modifying file attributes to remove read-only").
	"setFileProperties": false,
	// Inferred: Metadata is not content: NTFS lets FILE_WRITE_EA and
	// FILE_WRITE_ATTRIBUTES through on read-only files.
	"setFileMetadata": false,
	// Copy File onto a read-only destination and Rename File replacing
	// one check the attribute themselves (they honour
	// x-ms-file-copy-ignore-readonly / x-ms-file-rename-ignore-readonly).
	"copyFile":   false,
	"renameFile": false,
}

// checkReadOnly refuses REST operation op (a router operation name, or
// "resizeFile" for a Set File Properties that changes the size) on e
// when e is a file with the read-only attribute: ReadOnlyAttribute.
// Directories are never refused. Call it inside the operation's
// transaction on the stored entry, before the change is applied (a
// request that clears the attribute and resizes at once is refused (inferred)).
// An op it does not know is an error (a programming error).
func checkReadOnly(e *entry, op string) error {
	refuse, ok := readOnlyAttrOps[op]
	if !ok {
		return fmt.Errorf("file: operation %q has no read-only rule", op)
	}
	if refuse && !e.Dir && e.SMB.Attrs&AttrReadOnly != 0 {
		return azerr.New(azerr.ReadOnlyAttribute)
	}
	return nil
}
