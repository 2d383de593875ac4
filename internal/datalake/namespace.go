package datalake

import (
	"errors"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
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
