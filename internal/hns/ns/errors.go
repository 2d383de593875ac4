package ns

import (
	"errors"
	"fmt"
)

// Error is a namespace error: an Azure Data Lake Storage Gen2 error code and
// the HTTP status the dfs endpoint sends with it. Codes, statuses and
// messages are those of the "Other Status Codes" list of the Data Lake
// Storage Gen2 REST API reference (Path - Create, Path - Delete, Path -
// List, ...), and the codes are the datalakeerror constants of the Go SDK
// (sdk/storage/azdatalake/datalakeerror/error_codes.go).
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// Is matches another *Error with the same code, so errors.Is(err,
// ns.ErrPathNotFound) works on wrapped errors.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func newErr(status int, code, msg string) *Error { return &Error{status, code, msg} }

// The errors the namespace returns.
var (
	ErrFilesystemNotFound     = newErr(404, "FilesystemNotFound", "The specified filesystem does not exist.")
	ErrFilesystemExists       = newErr(409, "FilesystemAlreadyExists", "The specified filesystem already exists.")
	ErrPathNotFound           = newErr(404, "PathNotFound", "The specified path does not exist.")
	ErrPathAlreadyExists      = newErr(409, "PathAlreadyExists", "The specified path already exists.")
	ErrPathConflict           = newErr(409, "PathConflict", "The specified path, or an element of the path, exists and its resource type is invalid for this operation.")
	ErrDirectoryNotEmpty      = newErr(409, "DirectoryNotEmpty", "The recursive query parameter value must be true to delete a non-empty directory.")
	ErrSourcePathNotFound     = newErr(404, "SourcePathNotFound", "The source path for a rename operation does not exist.")
	ErrRenameDestParentAbsent = newErr(404, "RenameDestinationParentPathNotFound", "The parent directory of the destination path does not exist.")
	ErrInvalidDestinationPath = newErr(409, "InvalidDestinationPath", "The specified path, or an element of the path, exists and its resource type is invalid for this operation.")
	ErrInvalidRenameSource    = newErr(409, "InvalidRenameSourcePath", "The source directory cannot be the same as the destination directory, nor can the destination be a subdirectory of the source directory.")
	ErrSourceDestTypeMismatch = newErr(409, "InvalidSourceOrDestinationResourceType", "The source and destination resource type must be identical.")
	ErrConditionNotMet        = newErr(412, "ConditionNotMet", "The condition specified using HTTP conditional header(s) is not met.")
	ErrSourceConditionNotMet  = newErr(412, "SourceConditionNotMet", "The source condition specified using HTTP conditional header(s) is not met.")
	ErrPermissionMismatch     = newErr(403, "AuthorizationPermissionMismatch", "This request is not authorized to perform this operation using this permission.")
	ErrInvalidPath            = newErr(400, "InvalidResourceName", "The specified resource name contains invalid characters.")
	ErrInvalidContinuation    = newErr(400, "InvalidQueryParameterValue", "Value for one of the query parameters specified in the request URI is invalid.")
	// ErrInvalidBeginFrom is a beginFrom Path - List cannot start from
	// (inferred: the reference says only that "an error will appear").
	ErrInvalidBeginFrom = newErr(400, "InvalidQueryParameterValue", "Value for one of the query parameters specified in the request URI is invalid.")
	ErrInvalidInput     = newErr(400, "InvalidInput", "One of the request inputs is not valid.")
	// ErrInvalidACL is Azure's code for a bad x-ms-acl, misspelt as Azure
	// spells it (azerr.InvalidAccessControlList).
	ErrInvalidACL = newErr(400, "InvaldAccessControlList", "The access control list value is invalid.")
)

// withMessage returns a copy of e with another message.
func withMessage(e *Error, format string, args ...any) *Error {
	c := *e
	c.Message = fmt.Sprintf(format, args...)
	return &c
}

// Code returns the Data Lake error code of err, or "" when err is not an
// *Error.
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func errBadKey(k []byte) error { return fmt.Errorf("ns: malformed key %q", k) }
