package acl

import "slices"

// ForChild returns the ACL of a new file or directory created in a
// directory whose ACL is parent.
//
// requested is the creation mode (x-ms-permissions, or DefaultFileMode /
// DefaultDirMode when absent) and umask the x-ms-umask (DefaultUmask when
// absent). As the Path Create reference says of x-ms-umask, "When creating
// a file or directory and the parent folder does not have a default ACL,
// the umask restricts the permissions of the file or directory to be
// created. The resulting permission is given by p bitwise and not u".
//
// When the parent has a default ACL, the umask is not used: the child's
// access ACL is a copy of the parent's default ACL with the owning user,
// the mask (the owning group when there is no mask) and other limited to
// the requested mode's bits (POSIX.1e, acl(5) "OBJECT CREATION AND DEFAULT
// ACLs"); a directory also inherits the default ACL itself ("Access
// control lists (ACLs) in Azure Data Lake Storage Gen2": a child directory
// gets a default ACL and an access ACL from the parent's default ACL, a
// child file only an access ACL — files have no default ACL). A new file's
// requested mode 0666 has no x, so inherited entries lose x on files
// through the mask unless the caller asks for it.
func ForChild(parent ACL, dir bool, requested, umask Mode) ACL {
	if !parent.HasDefault() {
		a := FromMode(requested &^ umask &^ StickyBit)
		a.Sticky = requested&StickyBit != 0
		return a
	}
	var out ACL
	for _, e := range parent.Entries {
		if !e.Default {
			continue
		}
		acc := e
		acc.Default = false
		out.Entries = append(out.Entries, acc)
	}
	if dir {
		for _, e := range parent.Entries {
			if e.Default {
				out.Entries = append(out.Entries, e)
			}
		}
	}
	slices.SortFunc(out.Entries, less)
	limit := func(t Tag, bits Perm) {
		if e, ok := out.entry(false, t, ""); ok {
			out.setPerm(false, t, "", e.Perm&bits)
		}
	}
	limit(User, Perm(requested>>6&7))
	if _, ok := out.entry(false, Mask, ""); ok {
		limit(Mask, Perm(requested>>3&7))
	} else {
		limit(Group, Perm(requested>>3&7))
	}
	limit(Other, Perm(requested&7))
	out.Sticky = requested&StickyBit != 0
	return out
}
