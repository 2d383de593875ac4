package datalake

import (
	"net/url"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/policy"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// SAS rules, as the Blob service's for the same resources (Create an
// account SAS, "Permissions by operation"; Create a service SAS,
// "Permissions for a directory, container, or blob"): a filesystem is a
// container, reached by an account SAS only.
var (
	sasFSCreate = server.SASRule{Resource: auth.ContainerLevel, AnyOf: "cw", AccountOnly: true}
	sasFSRead   = server.SASRule{Resource: auth.ContainerLevel, AnyOf: "r", AccountOnly: true}
	sasFSWrite  = server.SASRule{Resource: auth.ContainerLevel, AnyOf: "w", AccountOnly: true}
	sasFSDelete = server.SASRule{Resource: auth.ContainerLevel, AnyOf: "d", AccountOnly: true}
	sasList     = server.SASRule{Resource: auth.ServiceLevel, AnyOf: "l"}
	sasPaths    = server.SASRule{Resource: auth.ContainerLevel, AnyOf: "l"}
	// Paths (Create a service SAS, "Permissions for a directory,
	// container, or blob": m moves, e reads access control, o and p
	// change owner, group, permissions and ACL).
	sasCreate = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "cw"}
	sasMove   = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "mw"}
	sasDelete = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "d"}
	sasStatus = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "r"}
	sasGetACL = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "re"}
	sasSetACL = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "op"}
	// Append and flush write a file's content: Add or Write.
	sasWrite = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "aw"}
	// A lease takes Write, as Lease Blob does.
	sasLease = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "w"}
)

// The SAS checks of the dfs operations that go beyond the route's rule:
// the source of a rename, a second path the request's URL does not name,
// and the letters setAccessControl needs for the headers it was sent.

// authorizeRenameSource authorizes the source of a SAS-authorized rename,
// filesystem fs and path p of the request's account. The request's SAS
// was verified for the destination only (the URL's path); the source is
// authorized by the SAS carried after its path in x-ms-rename-source
// (Path - Create: "x-ms-rename-source ... /{filesystem}/{path}?{sas}",
// the form the SDKs send: azdatalake file.Client.Rename), verified for
// the source's filesystem and path and needing m or w on it, as the
// destination does. Without one the source is not authorized: 403
// AuthorizationPermissionMismatch, as Azure answers a SAS rename whose
// source carries no SAS even when the request's SAS covers the whole
// filesystem (Azure/azure-sdk-for-java#25714, a container SAS of every
// letter; azure-sdk-for-java#10301: "SAS for rename only works if a SAS
// is used on the source and destination"). Shared Key and bearer tokens
// authorize the whole account, the source included.
func (s *Service) authorizeRenameSource(r *req, fs, p string) error {
	if r.SAS == nil {
		return nil
	}
	_, query, _ := strings.Cut(wire.Field(r.Header, "X-Ms-Rename-Source"), "?")
	// A malformed pair is dropped: without it the signature cannot
	// match, and a dropped sig is caught below.
	q, _ := url.ParseQuery(query)
	if !q.Has("sig") && auth.RawQueryHasSig(query) {
		// A signature the query cannot carry (a bad escape): a malformed
		// SAS, not a missing one.
		return auth.MalformedSignature()
	}
	if !q.Has("sig") {
		return azerr.New(azerr.AuthorizationPermissionMismatch)
	}
	_, err := r.AuthorizeSourceSAS(q, server.SASTarget{Container: fs, Path: p}, s.policiesOf(r, fs), sasMove)
	return err
}

// checkACLLetters checks the letters a SAS needs for the access control
// headers of a setAccessControl or setAccessControlRecursive request,
// beyond the o or p the route asks for: changing permissions or the ACL
// (x-ms-permissions, x-ms-acl) takes p, changing the owner or the owning
// group (x-ms-owner, x-ms-group) takes o (Create a service SAS and Create
// a user delegation SAS, "Permissions for a directory, container, or
// blob": "Manage ownership (o) ... set the owner or the owning group",
// "Manage permissions (p) ... set the permissions and POSIX ACLs"). A
// request that sends both needs both; a missing letter is 403
// AuthorizationPermissionMismatch and nothing changes. An account SAS has
// no letter for either: its p is Process, for queue messages (Create an
// account SAS), and the Data Lake account SAS permissions are r, a, c, w,
// d and l (azure-sdk-for-net DataLakeAccountSasPermissions), so it never
// changes access control (the same 403; the code is inferred).
func checkACLLetters(eff *auth.SAS, r *req) error {
	if eff.IsAccount() {
		return azerr.New(azerr.AuthorizationPermissionMismatch)
	}
	has := func(h string) bool { return r.Header.Get(h) != "" }
	need := ""
	if has("x-ms-acl") || has("x-ms-permissions") {
		need += "p"
	}
	if has("x-ms-owner") || has("x-ms-group") {
		need += "o"
	}
	for i := 0; i < len(need); i++ {
		if strings.IndexByte(eff.Permissions, need[i]) < 0 {
			return azerr.New(azerr.AuthorizationPermissionMismatch)
		}
	}
	return nil
}

// policiesOf resolves signed identifiers in the stored access policies of
// filesystem fs of r's account (its container's ACL).
func (s *Service) policiesOf(r *req, fs string) auth.PolicyLookup {
	return server.Policies(func() ([]policy.Stored, error) {
		if fs == "" {
			return nil, nil
		}
		acl, err := s.blob.GetContainerACL(r.Context(), blob.GetContainerACLInput{Call: r.call(), Ref: blob.ContainerRef{Account: r.Account, Container: fs}})
		return acl.Policies, err
	})
}
