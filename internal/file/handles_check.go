package file

import (
	"errors"
	"fmt"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// handlesAt consults the open SMB handles of item e of share sh (snapshot
// snap) of account acct before REST operation op (a handle.Op* name: a
// fileOp's handle, or the operation's row named directly) of an
// open-less caller runs at now: 409
// DeletePending when e is delete-pending, 409 SharingViolation when an
// open's share mode denies the access op needs (Managing file locks,
// https://learn.microsoft.com/en-us/rest/api/storageservices/managing-file-locks;
// see package handle for each row's evidence). Its refusals are the
// domain's ByShareMode and ByDeletePending. Every REST operation on an
// existing file or directory calls it inside its transaction (the
// domain's operations from admit). Handles live only on the live share,
// never on snapshots.
//
// The delete-pending code: the "Managing file locks" prose names it
// SMBDeletePending, but the Azure Files error-code table, the service's
// REST specification (StorageErrorCode in every generated SDK, e.g.
// azfile's fileerror.DeletePending) and the SDKs' error enums all name it
// DeletePending, 409. The specification is what the service sends, so
// Cerulean sends DeletePending.
func handlesAt(tx kv.Tx, now time.Time, acct, sh, snap string, e *Entry, op string) error {
	if snap != "" {
		return nil
	}
	if _, ok := handle.RESTAccess(op); !ok {
		return fmt.Errorf("file: operation %q has no handle access rule", op)
	}
	return handleErr(handle.CheckRESTOp(tx, now, acct, sh, FormatID(e.ID), op))
}

// handleErr maps the handle package's sentinel errors to Azure errors
// for a REST caller; vfsHandleErr is the same mapping for SMB. Share
// modes and delete-pending are decided for both doors by package handle
// (handle.Open for an SMB open, handle.CheckRESTOp for a REST operation,
// one open table), and refused by the same domain checks.
func handleErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, handle.ErrDeletePending):
		return refuse(ByDeletePending, azerr.New(azerr.DeletePending))
	case errors.Is(err, handle.ErrSharingViolation):
		return refuse(ByShareMode, azerr.New(azerr.SharingViolation))
	}
	return err
}
