package filerest

import (
	"strings"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/policy"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// authorizeSAS verifies the request's SAS for the routed operation; the
// stored access policies come from the share's ACL, read now.
func (s *Service) authorizeSAS(r *req) error {
	rule, ok := r.route.Rule()
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
	return server.Policies(func() ([]policy.Stored, error) {
		out, err := s.f.GetShareProperties(r.Context(), file.GetSharePropertiesInput{Ref: file.Ref{Account: r.Account, Share: sh}})
		if err != nil {
			return nil, err
		}
		return out.Share.ACL, nil
	})
}

// getUserDelegationKey answers Get User Delegation Key on the File
// endpoint: a key for Azure Files user delegation SAS (sks "f"; see
// server.UserDelegationKey).
func (s *Service) getUserDelegationKey(r *req) (server.Response, error) {
	return server.UserDelegationKey(r.Request, "f")
}

// SAS rules (Create a service SAS,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas:
// sr=s share, sr=f file; permissions r c w d l; Create an account SAS,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-account-sas:
// share operations are container level, directories and files object
// level; w creates shares as c does; the service properties are read and
// written with r and w at srt=s). Share operations other than listing its
// content take only an account SAS.
var (
	sasShareRead  = server.SASRule{Resource: auth.ContainerLevel, AnyOf: "r", AccountOnly: true}
	sasShareWrite = server.SASRule{Resource: auth.ContainerLevel, AnyOf: "w", AccountOnly: true}
	sasRead       = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "r"}
	sasCreate     = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "cw"}
	sasWrite      = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "w"}
	sasDelete     = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "d"}
	sasList       = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "l"}
)
