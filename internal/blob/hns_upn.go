package blob

import (
	"slices"

	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/hns/upn"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// pathNamer renders the user identities of paths for one response: with
// upn=true ("If true, the user identity values returned in the
// x-ms-owner, x-ms-group, and x-ms-acl response headers will be
// transformed from Azure Active Directory Object IDs to User Principal
// Names", Path - Get Properties and Path - List) each id the directory
// learned from bearer tokens (internal/hns/upn) is its user principal
// name, read in the response's transaction; every other id (a group, an
// application, a user never seen, $superuser) stays as it is, as Azure
// leaves group and application ids. Without upn the ids are returned.
type pathNamer struct{ n *upn.Names }

func pathNames(tx kv.Tx, want bool) pathNamer {
	if !want {
		return pathNamer{}
	}
	return pathNamer{upn.NewNames(tx)}
}

// of is n's owner, owning group and ACL as the response shows them.
func (u pathNamer) of(n *ns.Node) (owner, group string, list acl.ACL, err error) {
	if u.n == nil {
		return n.Owner, n.Group, n.ACL, nil
	}
	if owner, err = u.n.Of(n.Owner); err != nil {
		return
	}
	if group, err = u.n.Of(n.Group); err != nil {
		return
	}
	list = acl.ACL{Entries: slices.Clone(n.ACL.Entries), Sticky: n.ACL.Sticky}
	for i, e := range list.Entries {
		if e.ID != "" {
			if list.Entries[i].ID, err = u.n.Of(e.ID); err != nil {
				return
			}
		}
	}
	return owner, group, list, nil
}
