package datalake

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// setAccessControl is Path - Update with action=setAccessControl
// (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/path/update):
// x-ms-owner, x-ms-group, and x-ms-permissions or x-ms-acl (not both:
// 400) of the path, or of the filesystem's root when the URL names the
// filesystem. Owner changes take a superuser, group changes the owner
// (into a group of its own) and ACL changes the owner, else 403
// AuthorizationPermissionMismatch. The path keeps its ETag and
// Last-Modified, which the 200 answers with x-ms-namespace-enabled: true,
// as Azure does (azure-sdk-for-python's recorded test_directory.py
// test_set_access_control, azure-sdk-for-net's recorded
// DirectoryClientTests.SetPermissionsAsync).
func (s *Service) setAccessControl(r *req) (server.Response, error) {
	ans := &answer{}
	perm, _, a, err := parseACLHeaders(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	if perm != nil && a != nil {
		return server.Response{}, azerr.Newf(azerr.InvalidInput, "x-ms-permissions and x-ms-acl are mutually exclusive.")
	}
	c, err := cond.Parse(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	in := ns.SetInput{Path: r.path, Cond: c, ACL: a, Permissions: perm, Caller: r.caller(), KeepVersion: true}
	if v := wire.Field(r.Header, "X-Ms-Owner"); v != "" {
		in.Owner = &v
	}
	if v := wire.Field(r.Header, "X-Ms-Group"); v != "" {
		in.Group = &v
	}
	out, err := s.blob.SetAccessControl(r.Context(), blob.SetAccessControlInput{FS: r.fsOf(), Set: in})
	if err != nil {
		return server.Response{}, nsErr(err)
	}
	setETag(ans, out.Node.ETag, out.Node.Modified)
	ans.Set("X-Ms-Namespace-Enabled", "true")
	ans.Set("Content-Length", "0")
	return ans.done(http.StatusOK)
}

type failedEntryJSON struct {
	ErrorMessage string `json:"errorMessage"`
	Name         string `json:"name"`
	Type         string `json:"type"`
}

// setAccessControlRecursive is Path - Update with
// action=setAccessControlRecursive: mode=set|modify|remove (required)
// applies x-ms-acl (required) to the path and its subtree, at most
// maxRecords items (2,000 when absent or larger) per call and
// transaction, continuing from continuation; the answer counts the
// directories and files changed and the failures, lists the failed
// entries, and carries the next call's token in x-ms-continuation.
// Without forceFlag the call stops at the first item the caller may not
// change; with it, it counts the failure and goes on.
func (s *Service) setAccessControlRecursive(r *req) (server.Response, error) {
	ans := &answer{}
	in := ns.SetACLRecursiveInput{Path: r.path, Continuation: r.q.Get("continuation"), Caller: r.caller()}
	switch m := r.q.Get("mode"); {
	case m == "":
		return server.Response{}, azerr.New(azerr.MissingRequiredQueryParameter).With("QueryParameterName", "mode")
	case strings.EqualFold(m, "set"):
		in.Mode = ns.ACLSet
	case strings.EqualFold(m, "modify"):
		in.Mode = ns.ACLModify
	case strings.EqualFold(m, "remove"):
		in.Mode = ns.ACLRemove
	default:
		return server.Response{}, azerr.InvalidQuery("mode", m)
	}
	v := wire.Field(r.Header, "X-Ms-Acl")
	if v == "" {
		return server.Response{}, azerr.MissingHeader("x-ms-acl")
	}
	var err error
	switch in.Mode {
	case ns.ACLSet:
		in.ACL, err = acl.Parse(v)
	case ns.ACLModify:
		in.Entries, err = acl.ParseEntries(v)
	case ns.ACLRemove:
		in.Entries, err = acl.ParseRemoveList(v)
	}
	if err != nil {
		return server.Response{}, badACL(v)
	}
	if mr := r.q.Get("maxRecords"); mr != "" {
		n, err := strconv.Atoi(mr)
		if err != nil || n < 1 {
			return server.Response{}, azerr.InvalidQuery("maxRecords", mr)
		}
		in.MaxRecords = n
	}
	if in.ForceFlag, err = parseBool(r, "forceFlag", false); err != nil {
		return server.Response{}, err
	}
	// A continuation this server did not issue changes nothing and is
	// answered with zero counts (blob.Service.SetAccessControlRecursive).
	res, err := s.blob.SetAccessControlRecursive(r.Context(), blob.SetAccessControlRecursiveInput{FS: r.fsOf(), Change: in})
	if err != nil {
		return server.Response{}, nsErr(err)
	}
	out := &res.Result
	body := struct {
		DirectoriesSuccessful int               `json:"directoriesSuccessful"`
		FilesSuccessful       int               `json:"filesSuccessful"`
		FailureCount          int               `json:"failureCount"`
		FailedEntries         []failedEntryJSON `json:"failedEntries"`
	}{out.DirsSuccessful, out.FilesSuccessful, out.FailureCount, make([]failedEntryJSON, 0, len(out.FailedEntries))}
	for _, f := range out.FailedEntries {
		typ := "FILE"
		if f.Dir {
			typ = "DIRECTORY"
		}
		body.FailedEntries = append(body.FailedEntries, failedEntryJSON{ErrorMessage: f.Message, Name: f.Name, Type: typ})
	}
	if out.Continuation != "" {
		ans.Set("X-Ms-Continuation", out.Continuation)
	}
	return ans.json(http.StatusOK, body)
}
