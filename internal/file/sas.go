package file

import (
	"strings"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// sasRules is what each File operation needs from a SAS (Create a service
// SAS, https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas:
// sr=s share, sr=f file; permissions r c w d l; Create an account SAS,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-account-sas:
// share operations are container level, directories and files object
// level; w creates shares as c does; the service properties are read and
// written with r and w at srt=s). Share operations other than listing its
// content take only an account SAS. Operations not listed (share ACL) are
// Shared Key only.
var sasRules = map[string]server.SASRule{
	"getServiceProperties": {Resource: auth.ServiceLevel, AnyOf: "r", AccountOnly: true},
	"setServiceProperties": {Resource: auth.ServiceLevel, AnyOf: "w", AccountOnly: true},

	"listShares": {Resource: auth.ServiceLevel, AnyOf: "l"},

	"createShare":        {Resource: auth.ContainerLevel, AnyOf: "cw", AccountOnly: true},
	"deleteShare":        {Resource: auth.ContainerLevel, AnyOf: "d", AccountOnly: true},
	"getShareProperties": {Resource: auth.ContainerLevel, AnyOf: "r", AccountOnly: true},
	"setShareProperties": {Resource: auth.ContainerLevel, AnyOf: "w", AccountOnly: true},
	"setShareMetadata":   {Resource: auth.ContainerLevel, AnyOf: "w", AccountOnly: true},
	"snapshotShare":      {Resource: auth.ContainerLevel, AnyOf: "w", AccountOnly: true},
	"getShareStats":      {Resource: auth.ContainerLevel, AnyOf: "r", AccountOnly: true},
	"leaseShare":         {Resource: auth.ContainerLevel, AnyOf: "w", AccountOnly: true},
	"createPermission":   {Resource: auth.ContainerLevel, AnyOf: "cw", AccountOnly: true},
	"getPermission":      {Resource: auth.ContainerLevel, AnyOf: "r", AccountOnly: true},

	"listFilesAndDirectories": {Resource: auth.ContainerLevel, AnyOf: "l"},

	"createDirectory":        {Resource: auth.ObjectLevel, AnyOf: "cw"},
	"getDirectoryProperties": {Resource: auth.ObjectLevel, AnyOf: "r"},
	"setDirectoryProperties": {Resource: auth.ObjectLevel, AnyOf: "w"},
	"setDirectoryMetadata":   {Resource: auth.ObjectLevel, AnyOf: "w"},
	"deleteDirectory":        {Resource: auth.ObjectLevel, AnyOf: "d"},
	"renameDirectory":        {Resource: auth.ObjectLevel, AnyOf: "w"},

	"createFile":        {Resource: auth.ObjectLevel, AnyOf: "cw"},
	"getFile":           {Resource: auth.ObjectLevel, AnyOf: "r"},
	"getFileProperties": {Resource: auth.ObjectLevel, AnyOf: "r"},
	"listRanges":        {Resource: auth.ObjectLevel, AnyOf: "r"},
	"setFileProperties": {Resource: auth.ObjectLevel, AnyOf: "w"},
	"setFileMetadata":   {Resource: auth.ObjectLevel, AnyOf: "w"},
	"putRange":          {Resource: auth.ObjectLevel, AnyOf: "w"},
	"putRangeFromURL":   {Resource: auth.ObjectLevel, AnyOf: "w"},
	"copyFile":          {Resource: auth.ObjectLevel, AnyOf: "cw"},
	"abortCopyFile":     {Resource: auth.ObjectLevel, AnyOf: "w"},
	"leaseFile":         {Resource: auth.ObjectLevel, AnyOf: "w"},
	"deleteFile":        {Resource: auth.ObjectLevel, AnyOf: "d"},
	"renameFile":        {Resource: auth.ObjectLevel, AnyOf: "w"},
	"listHandles":       {Resource: auth.ObjectLevel, AnyOf: "l"},
	"forceCloseHandles": {Resource: auth.ObjectLevel, AnyOf: "w"},
}

// authorizeSAS verifies the request's SAS for the routed operation; the
// stored access policies come from the share's ACL, read now.
func (s *Service) authorizeSAS(r *req) error {
	rule, ok := sasRules[r.opName]
	eff, err := r.AuthorizeSAS(server.SASTarget{Container: r.share, Path: r.path}, s.policies(r, r.share), rule, ok)
	if err != nil {
		return err
	}
	r.sas = eff
	return nil
}

// createOnly refuses (403 AuthorizationPermissionMismatch) replacing an
// existing file under a SAS that grants create (c) but not write (w):
// such a token creates new files only (Create an account SAS, "Create
// (c) ... may not overwrite existing blobs or files"; Create a service
// SAS, "Create (c): Create a new file"). The caller runs it in the
// write's transaction, with the existing file in hand.
func createOnly(r *req) error {
	if r.sas == nil || strings.IndexByte(r.sas.Permissions, 'w') >= 0 {
		return nil
	}
	return azerr.New(azerr.AuthorizationPermissionMismatch)
}

// policies resolves signed identifiers in the ACL of share sh.
func (s *Service) policies(r *req, sh string) auth.PolicyLookup {
	return server.Policies(func() ([]server.StoredPolicy, error) {
		var acl []server.StoredPolicy
		err := s.store.View(r.Context(), func(tx kv.Tx) error {
			rec, err := loadShare(tx, r.Account, sh, "")
			if err == nil {
				acl = rec.ACL
			}
			return err
		})
		return acl, err
	})
}
