// The refusal every check of the domain returns: which rule refused
// (Check) and the error it carries, for each door to render in its own
// vocabulary (REST error codes, NTSTATUS values).

package file

import (
	"errors"
	"fmt"
)

// Check names one domain check; a refusal carries it, so each door can
// tell which rule refused and answer in its own vocabulary.
type Check uint8

// Domain checks.
const (
	ByAccess        Check = iota + 1 // the open's kind or granted access
	ByShareMode                      // a live open's share mode
	ByDeletePending                  // the item is delete-pending
	ByLock                           // a byte-range lock
	ByLease                          // a REST file lease
	ByReadOnly                       // the read-only attribute
	ByQuota                          // the share's quota or the largest file size
	ByParent                         // a parent of the target path is missing or a file
	ByExists                         // the target name exists (a rename without replace)
	ByReplaceDir                     // a rename cannot replace a directory
	ByNotEmpty                       // a directory to delete has children
	ByShareRoot                      // the share root cannot be deleted or renamed
	BySubtree                        // a directory cannot move into its own subtree
)

func (c Check) String() string {
	switch c {
	case ByAccess:
		return "access"
	case ByShareMode:
		return "share mode"
	case ByDeletePending:
		return "delete pending"
	case ByLock:
		return "byte-range lock"
	case ByLease:
		return "lease"
	case ByReadOnly:
		return "read-only attribute"
	case ByQuota:
		return "quota"
	case ByParent:
		return "parent path"
	case ByExists:
		return "name exists"
	case ByReplaceDir:
		return "directory target"
	case ByNotEmpty:
		return "directory not empty"
	case ByShareRoot:
		return "share root"
	case BySubtree:
		return "own subtree"
	}
	return fmt.Sprintf("check(%d)", uint8(c))
}

// Refusal is a domain check's refusal. Where the check's rule is the
// same for both doors, the domain leaves Err nil and each door answers
// By in its own vocabulary (filerest: an Azure error code; the SMB view:
// the sentinel of an NTSTATUS), setting Err to that answer. Where the
// doors' rules differ, the domain still sets Err itself (an
// *azerr.Error for REST, a sentinel for SMB).
type Refusal struct {
	By Check
	// Err is the door's answer; nil until a door maps By.
	Err error
	// Detail says what was refused, for messages.
	Detail string
}

func (r *Refusal) Error() string {
	switch {
	case r.Err != nil:
		return r.Err.Error()
	case r.Detail != "":
		return "file: refused by " + r.By.String() + ": " + r.Detail
	}
	return "file: refused by " + r.By.String()
}

func (r *Refusal) Unwrap() error { return r.Err }

// refuse wraps err, a door's answer, as a refusal by check c; nil stays
// nil.
func refuse(c Check, err error) error {
	if err == nil {
		return nil
	}
	return &Refusal{By: c, Err: err}
}

// refused is a refusal by check c that each door answers in its own
// vocabulary.
func refused(c Check, detail string) error {
	return &Refusal{By: c, Detail: detail}
}

// RefusedBy returns the check that refused err, 0 if none did.
func RefusedBy(err error) Check {
	var r *Refusal
	if errors.As(err, &r) {
		return r.By
	}
	return 0
}
