// Package acl implements the POSIX access control lists of Azure Data Lake
// Storage Gen2: the x-ms-acl and x-ms-permissions strings, umask and
// default-ACL inheritance on create, the access check, and the merge rules
// of setAccessControlRecursive (mode=modify and mode=remove).
//
// The rules follow Azure's pages "Access control lists (ACLs) in Azure
// Data Lake Storage Gen2" and "Access control model in Azure Data Lake
// Storage Gen2", and the Path Create / Path Update references of the Data
// Lake Storage Gen2 REST API (x-ms-acl, x-ms-permissions, x-ms-umask). Where
// those pages are silent the package does what POSIX.1e ACLs (acl(5),
// setfacl(1)) do, and says so.
package acl

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Perm is a set of r (4), w (2) and x (1) permissions.
type Perm uint8

// The three permissions.
const (
	Read    Perm = 4
	Write   Perm = 2
	Execute Perm = 1
)

// String is the symbolic form, "rwx", "r-x", "---".
func (p Perm) String() string {
	b := []byte("---")
	if p&Read != 0 {
		b[0] = 'r'
	}
	if p&Write != 0 {
		b[1] = 'w'
	}
	if p&Execute != 0 {
		b[2] = 'x'
	}
	return string(b)
}

// Tag is the type of an ACL entry.
type Tag uint8

// Entry types, in the order a canonical ACL lists them.
const (
	User Tag = iota
	Group
	Mask
	Other
)

var tagNames = [...]string{User: "user", Group: "group", Mask: "mask", Other: "other"}

func (t Tag) String() string { return tagNames[t] }

// Entry is one ACL entry: [default:]type:[id]:perms. An empty ID on a user
// or group entry is the owning user or owning group.
type Entry struct {
	Default bool
	Tag     Tag
	ID      string
	Perm    Perm
}

// named reports whether e is a named user or named group entry.
func (e Entry) named() bool { return e.ID != "" }

// key identifies an entry within an ACL: its scope, type and id. Two
// entries with the same key are duplicates.
type key struct {
	def bool
	tag Tag
	id  string
}

func (e Entry) key() key { return key{e.Default, e.Tag, e.ID} }

// index maps the keys of es to their positions, so that finding an entry
// is a map look-up rather than a scan of the list (ACLs read back from
// records written before the limits were enforced can be long).
func index(es []Entry) map[key]int {
	m := make(map[key]int, len(es))
	for i, e := range es {
		m[e.key()] = i
	}
	return m
}

// String formats e as x-ms-acl does.
func (e Entry) String() string {
	s := e.Tag.String() + ":" + e.ID + ":" + e.Perm.String()
	if e.Default {
		return "default:" + s
	}
	return s
}

// keyString formats e without permissions, as the remove list of
// setAccessControlRecursive mode=remove writes it ("user:oid").
func (e Entry) keyString() string {
	s := e.Tag.String()
	if e.ID != "" || e.Tag == User || e.Tag == Group {
		s += ":" + e.ID
	}
	if e.Default {
		return "default:" + s
	}
	return s
}

// less orders entries canonically: access before default, then user,
// group, mask, other; the owning entry before named ones, named ones by id.
func less(a, b Entry) int {
	switch {
	case a.Default != b.Default:
		if !a.Default {
			return -1
		}
		return 1
	case a.Tag != b.Tag:
		return int(a.Tag) - int(b.Tag)
	}
	return strings.Compare(a.ID, b.ID)
}

// ACL is a path's access ACL, its default ACL (directories only) and the
// sticky bit, which x-ms-permissions carries but x-ms-acl does not.
type ACL struct {
	Entries []Entry
	Sticky  bool
}

// SyntaxError is a malformed ACL or permission string. The endpoint renders
// it as Azure's 400 for the header that carried it.
type SyntaxError struct {
	Input  string
	Reason string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("acl: invalid %q: %s", e.Input, e.Reason)
}

func syntaxErr(in, format string, args ...any) error {
	return &SyntaxError{Input: in, Reason: fmt.Sprintf(format, args...)}
}

// ErrInvalid is wrapped by every error this package returns for bad input.
var ErrInvalid = errors.New("acl: invalid")

func (e *SyntaxError) Unwrap() error { return ErrInvalid }

// The limits of "Access control lists (ACLs) in Azure Data Lake Storage"
// ("What are the limits for Azure role assignments and ACL entries?"):
// 32 entries per access ACL and 32 per default ACL, "effectively 28"
// each, since the owning user, owning group, mask and other entries are
// among the 32. Identifiers are Microsoft Entra object ids (36
// characters) or, for users, user principal names, which Microsoft Entra
// limits to 113 characters (64 before the "@", 48 after it).
const (
	MaxEntries = 32
	MaxIDLen   = 113
)

// ErrTooManyEntries is wrapped by the error of an ACL with more than
// MaxEntries access or default entries. It wraps ErrInvalid.
var ErrTooManyEntries = fmt.Errorf("%w: more than %d entries in an access or default ACL", ErrInvalid, MaxEntries)

// LimitError is an ACL over MaxEntries access or default entries.
type LimitError struct {
	Default bool // the default ACL is the one over the limit
}

func (e *LimitError) Error() string {
	scope := "access"
	if e.Default {
		scope = "default"
	}
	return fmt.Sprintf("acl: the %s ACL has more than %d entries", scope, MaxEntries)
}

func (e *LimitError) Unwrap() error { return ErrTooManyEntries }

// checkCounts refuses es when either of its scopes has more than
// MaxEntries entries.
func checkCounts(es []Entry) error {
	var n [2]int
	for _, e := range es {
		if e.Default {
			n[1]++
		} else {
			n[0]++
		}
	}
	if n[0] > MaxEntries {
		return &LimitError{}
	}
	if n[1] > MaxEntries {
		return &LimitError{Default: true}
	}
	return nil
}

func parseTag(s string) (Tag, bool) {
	for t, n := range tagNames {
		if s == n {
			return Tag(t), true
		}
	}
	return 0, false
}

func parsePerm(s string) (Perm, bool) {
	if len(s) != 3 {
		return 0, false
	}
	var p Perm
	for i, want := range [3]byte{'r', 'w', 'x'} {
		switch s[i] {
		case want:
			p |= 4 >> i
		case '-':
		default:
			return 0, false
		}
	}
	return p, true
}

// validID rejects ids that would make the ACL string ambiguous.
func validID(id string) bool {
	return !strings.ContainsAny(id, ":, \t\r\n")
}

// parseEntry parses one entry; withPerm false parses the permission-less
// form of a remove list. With limited, an id over MaxIDLen bytes is an
// error (requests); records stored before the limit was enforced are
// read without it.
func parseEntry(s string, withPerm, limited bool) (Entry, error) {
	var e Entry
	rest := s
	if r, ok := strings.CutPrefix(rest, "default:"); ok {
		e.Default = true
		rest = r
	}
	parts := strings.Split(rest, ":")
	var tagS, id, permS string
	switch {
	case withPerm && len(parts) == 3:
		tagS, id, permS = parts[0], parts[1], parts[2]
	case !withPerm && len(parts) == 2:
		tagS, id = parts[0], parts[1]
	case !withPerm && len(parts) == 1 && (parts[0] == "mask" || parts[0] == "other"):
		tagS = parts[0]
	default:
		return Entry{}, syntaxErr(s, "an entry is [default:]type:[id]:permissions")
	}
	t, ok := parseTag(tagS)
	if !ok {
		return Entry{}, syntaxErr(s, "unknown entry type %q", tagS)
	}
	e.Tag = t
	if !validID(id) {
		return Entry{}, syntaxErr(s, "invalid id %q", id)
	}
	if limited && len(id) > MaxIDLen {
		return Entry{}, syntaxErr(s, "an id is at most %d characters", MaxIDLen)
	}
	if id != "" && (t == Mask || t == Other) {
		return Entry{}, syntaxErr(s, "%s entries take no id", t)
	}
	e.ID = id
	if withPerm {
		p, ok := parsePerm(permS)
		if !ok {
			return Entry{}, syntaxErr(s, "permissions are three characters of [r-][w-][x-]")
		}
		e.Perm = p
	}
	return e, nil
}

// ParseEntries parses a comma-separated list of entries without checking
// that they form a complete ACL: the form of x-ms-acl for
// setAccessControlRecursive mode=modify. Duplicate entries are an error,
// and so are more than MaxEntries access or default entries (a
// LimitError) and ids longer than MaxIDLen.
func ParseEntries(s string) ([]Entry, error) {
	return parseList(s, true, true)
}

// ParseStored parses an ACL string as a path's record holds it (Format of
// a stored ACL): duplicates are an error, the request limits are not
// applied, so a path whose ACL was stored before they were enforced stays
// readable. Its time is linear in the length of s.
func ParseStored(s string) ([]Entry, error) {
	return parseList(s, true, false)
}

// ParseRemoveList parses the x-ms-acl of setAccessControlRecursive
// mode=remove: entries without permissions ("user:oid,default:mask"),
// under the limits of ParseEntries.
func ParseRemoveList(s string) ([]Entry, error) {
	return parseList(s, false, true)
}

// parseList parses s one entry at a time, finding duplicates with a map,
// so its time is linear in the length of s; with limited it stops at the
// first scope over MaxEntries, so an oversized list is refused after at
// most 2*MaxEntries+1 entries whatever its length.
func parseList(s string, withPerm, limited bool) ([]Entry, error) {
	if s == "" {
		return nil, syntaxErr(s, "empty ACL")
	}
	var out []Entry
	if limited {
		out = make([]Entry, 0, min(strings.Count(s, ",")+1, 2*MaxEntries))
	}
	seen := make(map[key]struct{})
	var n [2]int
	for rest, more := s, true; more; {
		var part string
		part, rest, more = strings.Cut(rest, ",")
		e, err := parseEntry(strings.TrimSpace(part), withPerm, limited)
		if err != nil {
			return nil, err
		}
		if limited {
			d := 0
			if e.Default {
				d = 1
			}
			if n[d]++; n[d] > MaxEntries {
				return nil, &LimitError{Default: e.Default}
			}
		}
		if _, dup := seen[e.key()]; dup {
			return nil, syntaxErr(s, "duplicate entry %q", e.keyString())
		}
		seen[e.key()] = struct{}{}
		out = append(out, e)
	}
	return out, nil
}

// Parse parses a complete x-ms-acl (as setAccessControl sends it) and
// normalizes it (see Normalize). The sticky bit is off: x-ms-acl does not
// carry it.
func Parse(s string) (ACL, error) {
	es, err := ParseEntries(s)
	if err != nil {
		return ACL{}, err
	}
	return Normalize(ACL{Entries: es})
}

// Normalize checks that a has the owning user, owning group and other
// entries of an access ACL, fills in what POSIX setfacl(1) fills in, and
// sorts it canonically:
//   - a default ACL that lacks its owning user, owning group or other entry
//     gets a copy of the access ACL's;
//   - an ACL (access or default) with named entries and no mask gets a mask
//     that is the union of its group-class entries (named users, owning
//     group, named groups).
func Normalize(a ACL) (ACL, error) {
	es := slices.Clone(a.Entries)
	idx := index(es)
	find := func(def bool, t Tag, id string) int {
		if i, ok := idx[key{def, t, id}]; ok {
			return i
		}
		return -1
	}
	add := func(e Entry) {
		idx[e.key()] = len(es)
		es = append(es, e)
	}
	for _, t := range []Tag{User, Group, Other} {
		if find(false, t, "") < 0 {
			return ACL{}, syntaxErr(Format(a), "the access ACL needs a %s:: entry", t)
		}
	}
	hasDefault := slices.ContainsFunc(es, func(e Entry) bool { return e.Default })
	if hasDefault {
		for _, t := range []Tag{User, Group, Other} {
			if find(true, t, "") < 0 {
				base := es[find(false, t, "")]
				base.Default = true
				add(base)
			}
		}
	}
	for _, def := range []bool{false, true} {
		if def && !hasDefault {
			break
		}
		if find(def, Mask, "") >= 0 {
			continue
		}
		named := false
		var union Perm
		for _, e := range es {
			if e.Default != def {
				continue
			}
			if e.named() {
				named = true
			}
			if e.named() || e.Tag == Group {
				union |= e.Perm
			}
		}
		if named {
			add(Entry{Default: def, Tag: Mask, Perm: union})
		}
	}
	if err := checkCounts(es); err != nil {
		return ACL{}, err
	}
	slices.SortFunc(es, less)
	return ACL{Entries: es, Sticky: a.Sticky}, nil
}

// Format formats the entries of a as x-ms-acl, in their current order.
func Format(a ACL) string {
	parts := make([]string, len(a.Entries))
	for i, e := range a.Entries {
		parts[i] = e.String()
	}
	return strings.Join(parts, ",")
}

// String is Format(a).
func (a ACL) String() string { return Format(a) }

func (a ACL) entry(def bool, t Tag, id string) (Entry, bool) {
	k := key{def, t, id}
	for _, e := range a.Entries {
		if e.key() == k {
			return e, true
		}
	}
	return Entry{}, false
}

func (a *ACL) setPerm(def bool, t Tag, id string, p Perm) {
	k := key{def, t, id}
	for i := range a.Entries {
		if a.Entries[i].key() == k {
			a.Entries[i].Perm = p
			return
		}
	}
}

// HasDefault reports whether a has a default ACL.
func (a ACL) HasDefault() bool {
	return slices.ContainsFunc(a.Entries, func(e Entry) bool { return e.Default })
}

// Access returns the access entries only (a file's ACL, or what
// getAccessControl shows of a file).
func (a ACL) Access() ACL {
	out := ACL{Sticky: a.Sticky}
	for _, e := range a.Entries {
		if !e.Default {
			out.Entries = append(out.Entries, e)
		}
	}
	return out
}

// Extended reports whether the access ACL has entries beyond the owning
// user, owning group and other (x-ms-permissions then ends with "+").
func (a ACL) Extended() bool {
	return slices.ContainsFunc(a.Entries, func(e Entry) bool { return !e.Default && (e.named() || e.Tag == Mask) })
}

// aclJSON is how an ACL is stored: its x-ms-acl string and sticky bit.
type aclJSON struct {
	ACL    string `json:"a"`
	Sticky bool   `json:"k,omitempty"`
}

// MarshalJSON stores a as its x-ms-acl string and sticky bit.
func (a ACL) MarshalJSON() ([]byte, error) {
	return json.Marshal(aclJSON{ACL: a.String(), Sticky: a.Sticky})
}

// UnmarshalJSON reads what MarshalJSON wrote; an ACL string that does not
// parse is an error, so a damaged record is reported, not read as an ACL
// that grants nothing. The request limits (MaxEntries, MaxIDLen) are not
// applied: a record written before they were enforced stays readable,
// in time linear in its length.
func (a *ACL) UnmarshalJSON(b []byte) error {
	var j aclJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if j.ACL == "" {
		*a = ACL{Sticky: j.Sticky}
		return nil
	}
	es, err := ParseStored(j.ACL)
	if err != nil {
		return err
	}
	*a = ACL{Entries: es, Sticky: j.Sticky}
	return nil
}
