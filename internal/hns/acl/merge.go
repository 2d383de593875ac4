package acl

import "slices"

// Modify merges entries into a, as setAccessControlRecursive mode=modify
// does: an entry with the same scope, type and id as an existing one
// replaces its permissions, any other is added. The result is normalized
// (see Normalize), so a mask is added when the first named entry arrives.
// Default entries are dropped when the item is a file (files have no
// default ACL), so one modify list can be applied to a whole tree.
func Modify(a ACL, entries []Entry, dir bool) (ACL, error) {
	out := ACL{Entries: slices.Clone(a.Entries), Sticky: a.Sticky}
	idx := index(out.Entries)
	for _, e := range entries {
		if e.Default && !dir {
			continue
		}
		if i, ok := idx[e.key()]; ok {
			out.Entries[i].Perm = e.Perm
		} else {
			idx[e.key()] = len(out.Entries)
			out.Entries = append(out.Entries, e)
		}
	}
	return Normalize(out)
}

// Remove deletes the entries named by keys (ParseRemoveList), as
// setAccessControlRecursive mode=remove does. The owning user, owning
// group and other entries of the access ACL cannot be removed. Removing
// the base entries of the default ACL (default:user::, default:group::,
// default:other::) removes the whole default ACL, as `setfacl -k` does,
// since a default ACL without them is not an ACL. Removing a mask while
// named entries remain recomputes it (setfacl(1) -x). Names that match no
// entry are ignored.
func Remove(a ACL, keys []Entry) (ACL, error) {
	drop := make(map[key]struct{}, len(keys))
	dropDefault := false
	for _, k := range keys {
		if !k.Default && (k.Tag == User || k.Tag == Group || k.Tag == Other) && k.ID == "" {
			return ACL{}, syntaxErr(k.keyString(), "the owning user, owning group and other entries cannot be removed")
		}
		if k.Default && k.ID == "" && k.Tag != Mask {
			dropDefault = true
			continue
		}
		drop[k.key()] = struct{}{}
	}
	out := ACL{Entries: slices.Clone(a.Entries), Sticky: a.Sticky}
	out.Entries = slices.DeleteFunc(out.Entries, func(e Entry) bool {
		_, named := drop[e.key()]
		return named || dropDefault && e.Default
	})
	return Normalize(out)
}
