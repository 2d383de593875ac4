package datalake

import (
	"errors"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// nsErr turns a namespace error into the azerr the endpoint renders, with
// the namespace's status and message.
func nsErr(err error) error {
	var e *ns.Error
	if !errors.As(err, &e) {
		return pathLeaseErr(err)
	}
	return azerr.Newf(e.Code, "%s", e.Message).WithStatus(e.Status)
}

// fsOf is r's filesystem.
func (r *req) fsOf() ns.FS { return ns.FS{Account: r.Account, Filesystem: r.filesystem} }

// caller is who r acts as: nil (a superuser) for Shared Key and SAS, as
// on Azure ("Access control model in Azure Data Lake Storage Gen2":
// Shared Key and SAS callers are not subject to ACLs); a bearer token's
// object id (oid) and the groups the token lists, whose access the ACLs
// decide.
func (r *req) caller() ns.Caller {
	if r.Principal == nil {
		return nil
	}
	return &acl.Principal{User: r.Principal.OID, Groups: r.Principal.Groups}
}

// pathRef is r's path for the Blob domain's content operations.
func (r *req) pathRef() blob.PathRef {
	return blob.PathRef{Account: r.Account, Filesystem: r.filesystem, Path: r.path}
}

// callAs is r's domain call with its caller, whose access the path's
// ACLs decide (nil for Shared Key and SAS).
func (r *req) callAs() blob.Call {
	return blob.Call{Now: r.Now, Caller: r.caller(), CPK: r.cpk, RequestID: r.ID, ClientRequestID: wire.Field(r.Header, "X-Ms-Client-Request-Id")}
}

// pathLeaseErr renames the lease errors of a write (ns and the Blob
// domain check a path's lease as a blob's) to the dfs endpoint's codes
// for a path operation (azdatalake datalakeerror:
// LeaseIdMismatchWithPathOperation; LeaseNotPresent, "There is currently
// no lease on the resource.").
func pathLeaseErr(err error) error {
	e, ok := azerr.As(err)
	if !ok {
		return err
	}
	switch e.Code {
	case azerr.LeaseIDMismatchWithBlobOperation:
		return azerr.New(azerr.LeaseIDMismatchWithPathOperation)
	case azerr.LeaseNotPresentWithBlobOperation:
		return azerr.New(azerr.LeaseNotPresent)
	}
	return err
}
