package acl

import "slices"

// Superuser is the owner Azure reports for items created by callers
// authorized with Shared Key or SAS, and for the root directory.
const Superuser = "$superuser"

// Principal is the identity of a caller. Shared Key and SAS callers are
// superusers ("Access control model in Azure Data Lake Storage Gen2": they
// are not subject to ACL checks); bearer-token callers are identified by
// the token's object id and the groups it lists.
type Principal struct {
	Super  bool
	User   string
	Groups []string
}

// InGroup reports whether p belongs to group g.
func (p Principal) InGroup(g string) bool { return slices.Contains(p.Groups, g) }

// Allows reports whether p holds every permission of want on an item with
// the given owning user, owning group and ACL. It is the algorithm of
// "Access control lists (ACLs) in Azure Data Lake Storage Gen2" ("How are
// permissions evaluated?"): superusers pass; the owning user gets the
// owner entry without the mask; a named user gets its entry under the
// mask; otherwise the owning group and named groups the caller belongs
// to, each under the mask, and any one of them granting all of want
// suffices; otherwise other, under the mask as that page's pseudocode
// applies it.
func (a ACL) Allows(owner, group string, p Principal, want Perm) bool {
	if p.Super {
		return true
	}
	mask := Perm(7)
	if m, ok := a.entry(false, Mask, ""); ok {
		mask = m.Perm
	}
	if p.User != "" && p.User == owner {
		e, _ := a.entry(false, User, "")
		return e.Perm&want == want
	}
	if p.User != "" {
		if e, ok := a.entry(false, User, p.User); ok {
			return e.Perm&mask&want == want
		}
	}
	for _, e := range a.Entries {
		if e.Default || e.Tag != Group {
			continue
		}
		id := e.ID
		if id == "" {
			id = group
		}
		if p.InGroup(id) && e.Perm&mask&want == want {
			return true
		}
	}
	o, _ := a.entry(false, Other, "")
	return o.Perm&mask&want == want
}

// StickyAllows applies the sticky bit of a directory to the deletion or
// rename of one of its children: "When the sticky bit is set on a
// directory, a child item can only be deleted or renamed by the child
// item's owning user, the directory's owner, or the Superuser" ("Access
// control lists (ACLs) in Azure Data Lake Storage Gen2", "The sticky
// bit").
func StickyAllows(dir ACL, dirOwner, childOwner string, p Principal) bool {
	if !dir.Sticky || p.Super {
		return true
	}
	return p.User != "" && (p.User == dirOwner || p.User == childOwner)
}
