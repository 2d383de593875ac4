package smb2

import (
	"errors"
	"fmt"
)

// Status is an NTSTATUS code (MS-ERREF 2.3), the Status field of a response
// header. Status implements error so that handlers can return a code
// directly; wrap it (fmt.Errorf("...: %w", StatusAccessDenied)) to add
// context and recover it with errors.As or AsStatus.
type Status uint32

// NTSTATUS codes used by the server (MS-ERREF 2.3). Names follow Samba's
// libcli/util/ntstatus_err_table.txt.
const (
	StatusSuccess                Status = 0x00000000
	StatusPending                Status = 0x00000103
	StatusNotifyCleanup          Status = 0x0000010B
	StatusNotifyEnumDir          Status = 0x0000010C
	StatusBufferOverflow         Status = 0x80000005
	StatusNoMoreFiles            Status = 0x80000006
	StatusUnsuccessful           Status = 0xC0000001
	StatusNotImplemented         Status = 0xC0000002
	StatusInvalidInfoClass       Status = 0xC0000003
	StatusInfoLengthMismatch     Status = 0xC0000004
	StatusInvalidHandle          Status = 0xC0000008
	StatusInvalidParameter       Status = 0xC000000D
	StatusNoSuchFile             Status = 0xC000000F
	StatusInvalidDeviceRequest   Status = 0xC0000010
	StatusEndOfFile              Status = 0xC0000011
	StatusMoreProcessingRequired Status = 0xC0000016
	StatusAccessDenied           Status = 0xC0000022
	StatusBufferTooSmall         Status = 0xC0000023
	StatusObjectNameInvalid      Status = 0xC0000033
	StatusObjectNameNotFound     Status = 0xC0000034
	StatusObjectNameCollision    Status = 0xC0000035
	StatusObjectPathInvalid      Status = 0xC0000039
	StatusObjectPathNotFound     Status = 0xC000003A
	StatusObjectPathSyntaxBad    Status = 0xC000003B
	StatusSharingViolation       Status = 0xC0000043
	StatusEASNotSupported        Status = 0xC000004F
	StatusNoEASOnFile            Status = 0xC0000052
	StatusFileLockConflict       Status = 0xC0000054
	StatusLockNotGranted         Status = 0xC0000055
	StatusDeletePending          Status = 0xC0000056
	StatusPrivilegeNotHeld       Status = 0xC0000061
	StatusLogonFailure           Status = 0xC000006D
	StatusRangeNotLocked         Status = 0xC000007E
	StatusDiskFull               Status = 0xC000007F
	StatusInsufficientResources  Status = 0xC000009A
	StatusBadImpersonationLevel  Status = 0xC00000A5
	StatusFileIsADirectory       Status = 0xC00000BA
	StatusNotSupported           Status = 0xC00000BB
	StatusNetworkNameDeleted     Status = 0xC00000C9
	StatusNetworkAccessDenied    Status = 0xC00000CA
	StatusBadNetworkName         Status = 0xC00000CC
	StatusRequestNotAccepted     Status = 0xC00000D0
	StatusNotSameDevice          Status = 0xC00000D4
	StatusInvalidOplockProtocol  Status = 0xC00000E3
	StatusInternalError          Status = 0xC00000E5
	StatusDirectoryNotEmpty      Status = 0xC0000101
	StatusNotADirectory          Status = 0xC0000103
	StatusCancelled              Status = 0xC0000120
	StatusCannotDelete           Status = 0xC0000121
	StatusFileClosed             Status = 0xC0000128
	StatusFSDriverRequired       Status = 0xC000019C
	StatusInvalidLockRange       Status = 0xC00001A1
	StatusUserSessionDeleted     Status = 0xC0000203
	StatusNotFound               Status = 0xC0000225
	StatusNotAReparsePoint       Status = 0xC0000275
	StatusNetworkSessionExpired  Status = 0xC000035C
)

var statusNames = map[Status]string{
	StatusSuccess:                "STATUS_SUCCESS",
	StatusPending:                "STATUS_PENDING",
	StatusNotifyCleanup:          "STATUS_NOTIFY_CLEANUP",
	StatusNotifyEnumDir:          "STATUS_NOTIFY_ENUM_DIR",
	StatusBufferOverflow:         "STATUS_BUFFER_OVERFLOW",
	StatusNoMoreFiles:            "STATUS_NO_MORE_FILES",
	StatusUnsuccessful:           "STATUS_UNSUCCESSFUL",
	StatusNotImplemented:         "STATUS_NOT_IMPLEMENTED",
	StatusInvalidInfoClass:       "STATUS_INVALID_INFO_CLASS",
	StatusInfoLengthMismatch:     "STATUS_INFO_LENGTH_MISMATCH",
	StatusInvalidHandle:          "STATUS_INVALID_HANDLE",
	StatusInvalidParameter:       "STATUS_INVALID_PARAMETER",
	StatusNoSuchFile:             "STATUS_NO_SUCH_FILE",
	StatusInvalidDeviceRequest:   "STATUS_INVALID_DEVICE_REQUEST",
	StatusEndOfFile:              "STATUS_END_OF_FILE",
	StatusMoreProcessingRequired: "STATUS_MORE_PROCESSING_REQUIRED",
	StatusAccessDenied:           "STATUS_ACCESS_DENIED",
	StatusBufferTooSmall:         "STATUS_BUFFER_TOO_SMALL",
	StatusObjectNameInvalid:      "STATUS_OBJECT_NAME_INVALID",
	StatusObjectNameNotFound:     "STATUS_OBJECT_NAME_NOT_FOUND",
	StatusObjectNameCollision:    "STATUS_OBJECT_NAME_COLLISION",
	StatusObjectPathInvalid:      "STATUS_OBJECT_PATH_INVALID",
	StatusObjectPathNotFound:     "STATUS_OBJECT_PATH_NOT_FOUND",
	StatusObjectPathSyntaxBad:    "STATUS_OBJECT_PATH_SYNTAX_BAD",
	StatusSharingViolation:       "STATUS_SHARING_VIOLATION",
	StatusEASNotSupported:        "STATUS_EAS_NOT_SUPPORTED",
	StatusNoEASOnFile:            "STATUS_NO_EAS_ON_FILE",
	StatusFileLockConflict:       "STATUS_FILE_LOCK_CONFLICT",
	StatusLockNotGranted:         "STATUS_LOCK_NOT_GRANTED",
	StatusDeletePending:          "STATUS_DELETE_PENDING",
	StatusPrivilegeNotHeld:       "STATUS_PRIVILEGE_NOT_HELD",
	StatusLogonFailure:           "STATUS_LOGON_FAILURE",
	StatusRangeNotLocked:         "STATUS_RANGE_NOT_LOCKED",
	StatusDiskFull:               "STATUS_DISK_FULL",
	StatusInsufficientResources:  "STATUS_INSUFFICIENT_RESOURCES",
	StatusBadImpersonationLevel:  "STATUS_BAD_IMPERSONATION_LEVEL",
	StatusFileIsADirectory:       "STATUS_FILE_IS_A_DIRECTORY",
	StatusNotSupported:           "STATUS_NOT_SUPPORTED",
	StatusNetworkNameDeleted:     "STATUS_NETWORK_NAME_DELETED",
	StatusNetworkAccessDenied:    "STATUS_NETWORK_ACCESS_DENIED",
	StatusBadNetworkName:         "STATUS_BAD_NETWORK_NAME",
	StatusRequestNotAccepted:     "STATUS_REQUEST_NOT_ACCEPTED",
	StatusNotSameDevice:          "STATUS_NOT_SAME_DEVICE",
	StatusInvalidOplockProtocol:  "STATUS_INVALID_OPLOCK_PROTOCOL",
	StatusInternalError:          "STATUS_INTERNAL_ERROR",
	StatusDirectoryNotEmpty:      "STATUS_DIRECTORY_NOT_EMPTY",
	StatusNotADirectory:          "STATUS_NOT_A_DIRECTORY",
	StatusCancelled:              "STATUS_CANCELLED",
	StatusCannotDelete:           "STATUS_CANNOT_DELETE",
	StatusFileClosed:             "STATUS_FILE_CLOSED",
	StatusFSDriverRequired:       "STATUS_FS_DRIVER_REQUIRED",
	StatusInvalidLockRange:       "STATUS_INVALID_LOCK_RANGE",
	StatusUserSessionDeleted:     "STATUS_USER_SESSION_DELETED",
	StatusNotFound:               "STATUS_NOT_FOUND",
	StatusNotAReparsePoint:       "STATUS_NOT_A_REPARSE_POINT",
	StatusNetworkSessionExpired:  "STATUS_NETWORK_SESSION_EXPIRED",
}

// String returns the NTSTATUS name, or the hex code for an unnamed value.
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("NTSTATUS(0x%08X)", uint32(s))
}

// Error makes Status an error. It is the same as String.
func (s Status) Error() string { return s.String() }

// IsError reports whether s has severity ERROR (0xC.......). Warnings such
// as STATUS_BUFFER_OVERFLOW and STATUS_NO_MORE_FILES are not errors:
// MS-SMB2 3.3.4.4 sends them with a regular response body when there is
// data to return.
func (s Status) IsError() bool { return uint32(s)>>30 == 3 }

// AsStatus returns the Status in err's chain, if any.
func AsStatus(err error) (Status, bool) {
	var s Status
	if errors.As(err, &s) {
		return s, true
	}
	return 0, false
}

// MalformedError reports a PDU or structure that violates the wire
// format: a wrong StructureSize, a buffer that lies outside the message, a
// bad length. Its Status is STATUS_INVALID_PARAMETER, which is what MS-SMB2
// 3.3.5.2.x prescribes for a request that fails validation;
// errors.Is(err, StatusInvalidParameter) and AsStatus both see it.
type MalformedError struct {
	What   string // e.g. "CREATE request", "FileRenameInformation"
	Reason string
}

func (e *MalformedError) Error() string {
	return "smb2: malformed " + e.What + ": " + e.Reason
}

// Unwrap returns StatusInvalidParameter.
func (e *MalformedError) Unwrap() error { return StatusInvalidParameter }

// malformedStruct reports a bad structure that is not tied to a command.
func malformedStruct(what, reason string) error {
	return &MalformedError{What: what, Reason: reason}
}
