package blobrest

import (
	"net/http"
	"net/url"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/copysrc"
	"github.com/cerulean-storage/cerulean/internal/policy"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// authorizeSAS verifies the request's SAS for the routed operation; the
// stored access policies come from the container's ACL, read now. (A
// bearer-only operation's refusal of any SAS is the dispatcher's.)
func (s *Service) authorizeSAS(r *req) error {
	rule, ok := r.route.Rule()
	if r.route.Flags&fSASAtLevel != 0 {
		switch {
		case r.name != "":
			rule.Resource = auth.ObjectLevel
		case r.container != "":
			rule.Resource = auth.ContainerLevel
		}
	}
	eff, err := r.AuthorizeSAS(server.SASTarget{Container: r.container, Path: r.name}, s.policies(r, r.container), rule, ok)
	if err != nil {
		return err
	}
	r.sas = eff
	return nil
}

// policies resolves signed identifiers in the ACL of container cont.
func (s *Service) policies(r *req, cont string) auth.PolicyLookup {
	return server.Policies(func() ([]policy.Stored, error) {
		acl, err := s.GetContainerACL(r.Context(), blob.GetContainerACLInput{Ref: blob.ContainerRef{Account: r.Account, Container: cont}})
		return acl.Policies, err
	})
}

// authorizeCopySource authorizes the source of a copy. A SAS on the
// source URL is verified whenever present, under Shared Key too, and
// must grant reading the source: the service reads the source with the
// credentials its URL carries (403 CannotVerifyCopySource otherwise).
// Without one, a Shared Key request reads a source of its own account
// (Copy Blob, "the source blob ... can be authorized via Shared Key"
// within the account); a SAS-authorized destination grants nothing on
// the source, which must then be publicly readable.
func (s *Service) authorizeCopySource(r *req, cont, name string) error {
	u, err := url.Parse(wire.Field(r.Header, "X-Ms-Copy-Source"))
	if err != nil {
		return azerr.Newf(azerr.CannotVerifyCopySource, "The copy source URL is not valid.").WithStatus(http.StatusForbidden)
	}
	if r.sas == nil && !u.Query().Has("sig") {
		return nil
	}
	ok, err := s.sourceReadable(r.Request, cont, name, u.Query())
	if err != nil || ok {
		return err
	}
	return azerr.Newf(azerr.CannotVerifyCopySource, "The copy source is not public and carries no SAS.").WithStatus(http.StatusForbidden)
}

// sourceReadable reports whether the blob cont/name, named by a copy
// source URL whose query is q, may be read without the request's own
// credentials: q carries a SAS granting read (verified as a blob SAS; a
// SAS that fails is 403 CannotVerifyCopySource with its code), or the
// container is public.
func (s *Service) sourceReadable(sr *server.Request, cont, name string, q url.Values) (bool, error) {
	if q.Has("sig") {
		r := &req{Request: sr, q: q, container: cont, name: name}
		if _, err := sr.AuthorizeForeignSourceSAS(auth.Blob, q, server.SASTarget{Container: cont, Path: name}, s.policies(r, cont), sasRead); err != nil {
			code := azerr.AuthenticationFailed
			if ae, ok := azerr.As(err); ok {
				code = ae.Code
			}
			return false, copysrc.Failure(http.StatusForbidden, code, "The copy source SAS does not authorize reading the source blob.")
		}
		return true, nil
	}
	acl, err := s.GetContainerACL(sr.Context(), blob.GetContainerACLInput{Ref: blob.ContainerRef{Account: sr.Account, Container: cont}})
	access := acl.PublicAccess
	if err != nil && !azerr.Has(err, azerr.ContainerNotFound) {
		return false, err
	}
	return access == "blob" || access == "container", nil
}

// SAS rules (Create an account SAS, "Permissions by operation",
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-account-sas;
// Create a service SAS, "Permissions for a directory, container, or blob",
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas).
// An account SAS's w creates as c does (containers, blobs, snapshots,
// copies), and service-level reads and writes (service properties, stats)
// take r and w with srt=s. A service SAS reaches blobs and, for sr=c,
// listing them: the container itself (properties, metadata, lease, delete,
// create) is for an account SAS only; its Create (c) writes a new blob,
// snapshots a blob or copies to a new blob. From version 2017-07-29 Delete
// (d) also breaks a blob's lease, and (account SAS) a container's.
var (
	sasSvcRead  = server.SASRule{Resource: auth.ServiceLevel, AnyOf: "r", AccountOnly: true}
	sasSvcWrite = server.SASRule{Resource: auth.ServiceLevel, AnyOf: "w", AccountOnly: true}
	sasContRead = server.SASRule{Resource: auth.ContainerLevel, AnyOf: "r", AccountOnly: true}
	sasContW    = server.SASRule{Resource: auth.ContainerLevel, AnyOf: "w", AccountOnly: true}
	sasRead     = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "r"}
	sasCreate   = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "cw"}
	sasWrite    = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "w"}
	sasAppend   = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "aw"}
	sasTags     = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "t"}
	// sasImmutability is i, "Set or delete the immutability policy or
	// legal hold on a blob" (Create a service SAS; Create an account SAS).
	sasImmutability = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "i"}
)
