package ns

import (
	"errors"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// ACLMode is the mode of Path Update action=setAccessControlRecursive.
type ACLMode int

// The three modes: set replaces each item's ACL, modify merges entries
// into it (acl.Modify), remove deletes entries from it (acl.Remove).
const (
	ACLSet ACLMode = iota
	ACLModify
	ACLRemove
)

// DefaultMaxRecords is setAccessControlRecursive's batch size when
// maxRecords is absent ("If omitted or greater than 2,000, the request
// will process up to 2,000 items", Path - Update).
const DefaultMaxRecords = 2000

// SetACLRecursiveInput describes one call of setAccessControlRecursive.
type SetACLRecursiveInput struct {
	Path string
	Mode ACLMode
	// ACL is the x-ms-acl of mode set (a complete ACL); Entries the
	// entries of mode modify (acl.ParseEntries) or remove
	// (acl.ParseRemoveList).
	ACL     acl.ACL
	Entries []acl.Entry
	// MaxRecords <= 0 or > 2000 is 2000.
	MaxRecords   int
	Continuation string
	// ForceFlag continues past items the caller may not change (counted
	// as failures); without it the call stops at the first one.
	ForceFlag bool
	Caller    Caller
}

// FailedEntry is one item setAccessControlRecursive could not change.
type FailedEntry struct {
	Name    string
	Dir     bool
	Message string
}

// SetACLRecursiveOutput is what one call did. Continuation is "" when the
// whole tree is done, or when it stopped at a failure without ForceFlag.
type SetACLRecursiveOutput struct {
	DirsSuccessful  int
	FilesSuccessful int
	FailureCount    int
	FailedEntries   []FailedEntry
	Continuation    string
}

// SetACLRecursive applies an ACL change to the item at in.Path and then
// to its descendants in List's depth-first order, at most MaxRecords
// items per call, in one transaction. Its continuation names the last
// item handled, as List's does, so a tree changed between calls is
// neither handled twice nor skipped where it did not change.
//
// Files take only access entries: default entries of set and modify are
// dropped for them (files have no default ACL). Each item needs its
// owner or a superuser ("Access control model in Azure Data Lake Storage
// Gen2": Set ACL requires the owning user or the superuser), and traverse
// (x) on the directories leading to it.
func (s *Namespace) SetACLRecursive(tx kv.Tx, fs FS, in SetACLRecursiveInput) (*SetACLRecursiveOutput, error) {
	parts, err := SplitPath(in.Path)
	if err != nil {
		return nil, err
	}
	chain, err := s.walk(tx, fs, parts, in.Caller)
	if err != nil {
		return nil, err
	}
	if len(chain) != len(parts)+1 {
		return nil, ErrPathNotFound
	}
	top := chain[len(parts)]
	base := strings.Join(parts, "/")
	pre := ""
	if base != "" {
		pre = base + "/"
	}
	var after []string
	topDone := false
	if in.Continuation != "" {
		last, err := decodeContinuation(in.Continuation)
		switch {
		case err != nil:
			return nil, ErrInvalidContinuation
		case last == base:
			topDone = true
		case !strings.HasPrefix(last, pre) || last == pre:
			return nil, ErrInvalidContinuation
		default:
			if after, err = SplitPath(last[len(pre):]); err != nil || len(after) == 0 {
				return nil, ErrInvalidContinuation
			}
		}
	}
	max := in.MaxRecords
	if max <= 0 || max > DefaultMaxRecords {
		max = DefaultMaxRecords
	}
	now := s.now()
	out := &SetACLRecursiveOutput{}
	handled := 0
	var last string
	var werr error
	stopped := false // at a failure without ForceFlag
	apply := func(path string, l loc) bool {
		if l.node.Expired(now) {
			return true // gone: neither changed nor counted
		}
		if handled == max {
			return false
		}
		handled++
		last = path
		n := *l.node
		if !isSuper(in.Caller) && (in.Caller.User == "" || in.Caller.User != n.Owner) {
			out.FailureCount++
			out.FailedEntries = append(out.FailedEntries, FailedEntry{Name: path, Dir: n.Dir, Message: ErrPermissionMismatch.Message})
			if !in.ForceFlag {
				stopped = true
				return false
			}
			return true
		}
		var next acl.ACL
		switch in.Mode {
		case ACLSet:
			next = in.ACL
			if !n.Dir {
				next = next.Access()
			}
		case ACLModify:
			next, werr = acl.Modify(n.ACL, in.Entries, n.Dir)
		case ACLRemove:
			next, werr = acl.Remove(n.ACL, in.Entries)
		}
		if errors.Is(werr, acl.ErrTooManyEntries) {
			// A merge that takes the item over Azure's 32 access or
			// 32 default entries.
			werr = ErrInvalidACL
			return false
		}
		if werr != nil {
			werr = withMessage(ErrInvalidInput, "%v", werr)
			return false
		}
		next.Sticky = n.ACL.Sticky
		n.ACL = next // the ETag and time stay, as for setAccessControl (Set with KeepVersion)
		if werr = kv.PutJSON(tx, l.key, &n); werr != nil {
			return false
		}
		if n.Dir {
			out.DirsSuccessful++
		} else {
			out.FilesSuccessful++
		}
		return true
	}
	more := true
	if !topDone && len(after) == 0 {
		more = apply(base, top)
	}
	if more && werr == nil && top.node.Dir {
		// Reaching a subdirectory's children needs traverse on it; the
		// subtree of one the caller cannot traverse is left. That is a
		// failure of the directory, counted here when the caller owns it
		// (when it does not, changing its ACL already failed and was
		// counted, in this call or the one before the continuation).
		enter := func(path string, n *Node) error {
			if allows(in.Caller, n, acl.Execute) {
				return nil
			}
			if in.Caller.User == n.Owner {
				out.FailureCount++
				out.FailedEntries = append(out.FailedEntries, FailedEntry{Name: path, Dir: true, Message: ErrPermissionMismatch.Message})
			}
			if !in.ForceFlag {
				stopped = true
				return errStopWalk
			}
			return errSkipSubtree
		}
		if !allows(in.Caller, top.node, acl.Execute) {
			return nil, ErrPermissionMismatch
		}
		more, err = s.dfs(tx, fs, top.node, pre, after, true, enter, apply)
		if err != nil {
			return nil, err
		}
	}
	if werr != nil {
		return nil, werr
	}
	if !more && !stopped {
		out.Continuation = encodeContinuation(last)
	}
	return out, nil
}
