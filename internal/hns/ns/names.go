package ns

import (
	"unicode/utf16"
	"unicode/utf8"
)

// The name rules of a new path ("Naming and Referencing Containers,
// Blobs, and Metadata", which holds for the paths of a hierarchical
// account as for blob names: "A blob name must be at least one character
// long and cannot be more than 1,024 characters long"; directory names
// likewise; "The number of path segments comprising the blob name cannot
// exceed 254").
const (
	// MaxPathLen is the longest path, in UTF-16 code units as the Blob
	// service counts a blob name (wire.MaxBlobNameLen).
	MaxPathLen = 1024
	// MaxSegments is the most path segments a path may have.
	MaxSegments = 254
)

var (
	// ErrPathTooLong is a path over MaxPathLen: 400 OutOfRangeInput, the
	// Blob service's answer to a blob name over 1,024 characters.
	ErrPathTooLong = newErr(400, "OutOfRangeInput", "The specified resource name length is not within the permissible limits.")
	// ErrPathTooDeep is a path of more than MaxSegments segments: the
	// code and message Azure's dfs endpoint answers a path too deep
	// (409 PathIsTooDeep, "This operation is not permitted as the path
	// is too deep.", as recorded in the Microsoft Q&A question "Data lake
	// storage Gen2 - This operation is not permitted as the path is too
	// deep").
	ErrPathTooDeep = newErr(409, "PathIsTooDeep", "This operation is not permitted as the path is too deep.")
)

// CheckNewPath applies the name rules to a path an operation is about to
// create or move (Path Create, the source and destination of a rename,
// the Blob API's writes to a hierarchical account), parts being
// SplitPath(p): a path that is not UTF-8 is 400 InvalidResourceName, as
// the Blob service answers such a name (and the store would otherwise
// keep bytes no JSON record or listing can carry), one over MaxPathLen
// ErrPathTooLong, one of more than MaxSegments segments ErrPathTooDeep.
// Paths that exist are read, changed and deleted whatever their name
// (the Blob endpoint included), so one stored before these rules can
// still be removed.
func CheckNewPath(parts []string) error {
	n := len(parts) - 1 // the separators
	for _, c := range parts {
		if !utf8.ValidString(c) {
			return withMessage(ErrInvalidPath, "The specified path is not valid UTF-8.")
		}
		if n > MaxPathLen {
			continue
		}
		for _, r := range c {
			n += utf16.RuneLen(r)
		}
	}
	if n > MaxPathLen {
		return ErrPathTooLong
	}
	if len(parts) > MaxSegments {
		return ErrPathTooDeep
	}
	return nil
}
