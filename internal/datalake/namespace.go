package datalake

import (
	"errors"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// ContainerCreated implements blob.ContainerHook: a container of a
// hierarchical account is a filesystem, whose root directory is created
// in the container's transaction (owned by $superuser, 0750, as Azure
// creates a filesystem's root). A root left from a time the account was
// flat is detached first.
func (s *Service) ContainerCreated(tx kv.Tx, account, container string) error {
	if !s.hier(account) {
		return nil
	}
	fs := ns.FS{Account: account, Filesystem: container}
	if err := s.ns.DeleteFilesystem(tx, fs); err != nil && !errors.Is(err, ns.ErrFilesystemNotFound) {
		return err
	}
	_, err := s.ns.CreateFilesystem(tx, fs, ns.FilesystemInput{})
	return err
}

// ContainerDeleted implements blob.ContainerHook: the filesystem's tree
// is detached in the container's transaction (one write; the collector
// reclaims it).
func (s *Service) ContainerDeleted(tx kv.Tx, account, container string) error {
	err := s.ns.DeleteFilesystem(tx, ns.FS{Account: account, Filesystem: container})
	if errors.Is(err, ns.ErrFilesystemNotFound) {
		return nil
	}
	return err
}

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
