package datalake

import (
	"net/http"
	"strconv"

	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// getPathStatus is Path - Get Properties with action=getStatus or
// action=getAccessControl
// (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/path/get-properties):
// the path's system properties, x-ms-resource-type, x-ms-owner,
// x-ms-group and x-ms-permissions, and with getAccessControl its ACL
// (x-ms-acl, the access entries then the default ones). The URL may name
// the filesystem itself, whose root directory it answers for (Hadoop's
// ABFS driver asks the root's access control to tell a hierarchical
// account). The conditions are read conditions (304 or 412). upn=true
// asks for user principal names in x-ms-owner, x-ms-group and x-ms-acl
// (blob.Service.GetPathStatus).
func (s *Service) getPathStatus(r *req) (server.Response, error) {
	ans := &answer{}
	upn, err := parseBool(r, "upn", false)
	if err != nil {
		return server.Response{}, err
	}
	c, err := cond.Parse(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	if !s.hier(r.Account) {
		return s.getPathStatusFlat(r, c)
	}
	out, err := s.blob.GetPathStatus(r.Context(), blob.GetPathStatusInput{FS: r.fsOf(), Path: r.path, Caller: r.caller(), UPN: upn, Cond: c})
	if err != nil {
		return server.Response{}, nsErr(err)
	}
	n, owner, group, list := out.Node, out.Owner, out.Group, out.ACL
	h := ans
	setETag(h, n.ETag, n.Modified)
	typ := "file"
	if n.Dir {
		typ = "directory"
	}
	h.Set("X-Ms-Resource-Type", typ)
	h.Set("X-Ms-Owner", owner)
	h.Set("X-Ms-Group", group)
	h.Set("X-Ms-Permissions", n.Permissions())
	switch {
	case r.q.Get("action") == "getAccessControl":
		h.Set("X-Ms-Acl", acl.Format(list))
	case n.CPK != "":
		// getStatus takes no key and names the one the path was
		// written with (Hadoop's ITestCustomerProvidedKey
		// .testGetPathStatusFile, run against Azure: getStatus without
		// the key answers x-ms-encryption-key-sha256 and
		// x-ms-server-encrypted: true). It returns "only the system
		// defined properties" (Path - Get Properties): the metadata,
		// written under the key, is not shown without it.
		h.Set("X-Ms-Server-Encrypted", "true")
		h.Set("X-Ms-Encryption-Key-Sha256", n.CPK)
	default:
		h.Set("X-Ms-Server-Encrypted", "true")
		if v := formatProperties(n.Metadata); v != "" {
			h.Set(hProperties, v)
		}
	}
	size := n.Size
	if n.Dir {
		size = 0
	}
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	return ans.done(http.StatusOK)
}
