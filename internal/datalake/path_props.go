package datalake

import (
	"net/http"
	"strconv"

	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/dfs/acl"
	"github.com/cerulean-storage/cerulean/internal/dfs/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
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
// asks for user principal names; owners and groups are the ids either
// way here.
func (s *Service) getPathStatus(w http.ResponseWriter, r *req) error {
	if _, err := parseBool(r, "upn", false); err != nil {
		return err
	}
	c, err := cond.Parse(r.Header)
	if err != nil {
		return err
	}
	if !s.hier(r.Account) {
		return s.getPathStatusFlat(w, r, c)
	}
	var n *ns.Node
	err = s.store.View(r.Context(), func(tx kv.Tx) (err error) {
		n, err = s.ns.Lookup(tx, r.fsOf(), r.path, r.caller())
		return err
	})
	if err != nil {
		return nsErr(err)
	}
	if err := c.CheckRead(n.ETag, n.Modified); err != nil {
		return err
	}
	h := w.Header()
	setETag(h, n.ETag, n.Modified)
	typ := "file"
	if n.Dir {
		typ = "directory"
	}
	h.Set("x-ms-resource-type", typ)
	h.Set("x-ms-owner", n.Owner)
	h.Set("x-ms-group", n.Group)
	h.Set("x-ms-permissions", n.Permissions())
	if r.q.Get("action") == "getAccessControl" {
		h.Set("x-ms-acl", acl.Format(n.ACL))
	} else {
		if v := formatProperties(n.Metadata); v != "" {
			h.Set(hProperties, v)
		}
	}
	size := n.Size
	if n.Dir {
		size = 0
	}
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(http.StatusOK)
	return nil
}
