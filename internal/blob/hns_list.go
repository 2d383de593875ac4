package blob

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// listPath is List Blobs on a hierarchical account: the namespace's
// paths in byte order of their full names (ns.ScanBlobs), directories
// as the zero-length hdi_isfolder blobs, names containing the delimiter
// after the prefix folded into one BlobPrefix each, files past their
// expiry left out. With include=snapshots each file's snapshots come
// before it, oldest first, as on a flat account. With include=deleted
// the soft-deleted paths still retained are listed among them, as a
// flat account lists its soft-deleted blobs (deletedPaths: each
// deletion of a name after the live path of that name, if any, oldest
// first). The marker names the last entry returned (a blob, a snapshot
// of one, a deleted path with its deletion id, or a prefix) and the next
// page starts after it, in the tree as it is then. There are no
// uncommitted-only blobs to include.
func (s *Service) listPath(ctx context.Context, hns *ns.Namespace, in ListBlobsInput) (ListBlobsOutput, error) {
	keep, deletedOnly, err := pathFilter(in)
	if err != nil {
		return ListBlobsOutput{}, err
	}
	if deletedOnly {
		return s.listDeletedPaths(ctx, hns, in)
	}
	m, err := parsePathMarker(in.Marker)
	if err != nil {
		return ListBlobsOutput{}, err
	}
	now := s.now(in.Call)
	var l *pathLister
	err = s.store.View(ctx, func(tx kv.Tx) error {
		// The store may run this more than once: start afresh.
		l = &pathLister{s: s, hns: hns, tx: tx, in: in, now: now, keep: keep, m: m, after: m.after,
			fs: ns.FS{Account: in.Ref.Account, Filesystem: in.Ref.Container}, listable: map[string]bool{}}
		return l.run()
	})
	if err != nil {
		return ListBlobsOutput{}, err
	}
	if l.more {
		l.out.NextMarker = pathNextMarker(l.out.Items[len(l.out.Items)-1])
	}
	return l.out, nil
}

// pathFilter reads showonly: keep is the nodes listed (nil: all), and
// deletedOnly asks for the soft-deleted paths alone (listDeletedPaths).
func pathFilter(in ListBlobsInput) (keep func(*ns.Node) bool, deletedOnly bool, err error) {
	switch in.ShowOnly {
	case "":
	case "directories":
		keep = func(n *ns.Node) bool { return n.Dir }
	case "files":
		keep = func(n *ns.Node) bool { return !n.Dir }
	case "deleted":
		if in.Include.Snapshots {
			// Azure refuses the pair, 400 "Value for one of the query
			// parameters specified in the request URI is invalid."
			// (microsoft/AzureStorageExplorer#5165: "The request fails if
			// include=snapshots and showOnly=deleted are used
			// simultaneously").
			return nil, false, azerr.InvalidQuery("include", "snapshots")
		}
		return nil, true, nil
	default:
		return nil, false, azerr.InvalidQuery("showonly", in.ShowOnly)
	}
	return keep, false, nil
}

// pathMarker is where a page of listPath starts: after the name after
// (after its snapshot afterSnap, when set), and for the soft-deleted
// paths from delFrom, after the deletion id delAfter.
type pathMarker struct {
	after, afterSnap, delFrom, delAfter string
}

// parsePathMarker reads a marker of pathNextMarker ("": the start).
func parsePathMarker(marker string) (pathMarker, error) {
	var m pathMarker
	if marker == "" {
		return m, nil
	}
	kind, name, at, ok := decodeMarker(marker)
	if !ok {
		return m, azerr.Newf(azerr.InvalidQueryParameterValue, "The marker is not valid.").With("QueryParameterName", "marker").With("QueryParameterValue", marker)
	}
	// The last entry was the file name, one of its snapshots (at), or
	// one of its soft-deleted paths ("~" and the deletion id).
	m.after, m.delFrom = name, name
	if id, deleted := strings.CutPrefix(at, "~"); deleted {
		m.delAfter = id
	} else {
		m.afterSnap = at
	}
	if kind == "p" {
		// Past every name under the prefix: 0xff never occurs in UTF-8,
		// which blob names are.
		m = pathMarker{after: name + "\xff", delFrom: name + "\xff"}
	}
	return m, nil
}

// pathNextMarker names last, the last entry of a full page.
func pathNextMarker(last ListedBlob) string {
	kind := "b"
	if last.IsPrefix {
		kind = "p"
	}
	at := last.Snapshot
	if last.Deleted {
		at = "~" + last.DeletionID
	}
	return encodeMarker(kind, last.Name, at)
}

// pathLister lists one page of listPath in one read transaction.
type pathLister struct {
	s    *Service
	hns  *ns.Namespace
	tx   kv.Tx
	fs   ns.FS
	in   ListBlobsInput
	now  time.Time
	keep func(*ns.Node) bool
	m    pathMarker

	out  ListBlobsOutput
	more bool // the page filled up before the listing ended
	// after is the name the scan resumes after.
	after string
	// listable caches mayList's answer per directory; denied is set
	// when it refused one.
	listable map[string]bool
	denied   error
	// serr is an error reading a file's snapshots.
	serr error
	// del are the soft-deleted paths to merge in (include=deleted).
	del *deletedPaths
	// folded is the prefix the last scan folded into a BlobPrefix.
	folded string
}

// run fills the page: the rest of a file whose snapshots the last page
// ended in, then the tree's names after the marker, merged with the
// soft-deleted paths when they are included.
func (l *pathLister) run() error {
	if _, err := loadContainer(l.tx, l.in.Ref.Account, l.in.Ref.Container); err != nil {
		return err
	}
	if l.in.Include.Deleted {
		if err := l.s.mayListDeleted(l.tx, l.hns, l.fs, l.in.Caller); err != nil {
			return err
		}
		l.del = &deletedPaths{hns: l.hns, tx: l.tx, fs: l.fs, prefix: l.in.Prefix, from: l.m.delFrom, after: l.m.delAfter}
	}
	if l.m.afterSnap != "" {
		if done, err := l.resumeSnapshots(); done || err != nil {
			return err
		}
	}
	return l.scan()
}

// mayList reports whether the caller may list the directory name is in:
// a bearer caller lists a directory's entries only with read and execute
// on it (and traverse to it), as List Paths requires ("Access control
// model in Azure Data Lake Storage Gen2", list a directory: r-x); else
// denied is set (403).
func (l *pathLister) mayList(name string) bool {
	caller := l.in.Caller
	if caller == nil || caller.Super {
		return true
	}
	dir := ""
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		dir = name[:i]
	}
	ok, seen := l.listable[dir]
	if !seen {
		d, err := l.hns.Lookup(l.tx, l.fs, dir, caller)
		ok = err == nil && d.Dir && d.Access().Allows(d.Owner, d.Group, *caller, acl.Read|acl.Execute)
		l.listable[dir] = ok
	}
	if !ok {
		l.denied = blobErr(ns.ErrPermissionMismatch)
	}
	return ok
}

// full reports whether the page is full, noting that there is more.
func (l *pathLister) full() bool {
	if len(l.out.Items) == l.in.MaxResults {
		l.more = true
		return true
	}
	return false
}

// item is the entry of the node n named name.
func (l *pathLister) item(name string, n *ns.Node) ListedBlob {
	b, pp := pathRec(n)
	it := ListedBlob{Name: name, Properties: b.properties(BlobRef{Account: l.in.Ref.Account, Container: l.in.Ref.Container, Blob: name}, l.now), Tags: b.Tags}
	it.Properties.Path = pp
	return it
}

// file lists the file n named name: with include=snapshots its
// snapshots later than afterSnap, then the file itself (listed after all
// of its snapshots); false when the page filled up first (or reading the
// snapshots failed: serr).
func (l *pathLister) file(name string, n *ns.Node, afterSnap string) bool {
	if l.in.Include.Snapshots && !n.Dir && len(n.Ref) > 0 {
		snaps, err := scanPathSnapshots(l.tx, l.in.Ref.Account, n.ID, 0)
		if err != nil {
			l.serr = err
			return false
		}
		for _, sn := range snaps {
			if sn.snap <= afterSnap {
				continue
			}
			if l.full() {
				return false
			}
			sref := BlobRef{Account: l.in.Ref.Account, Container: l.in.Ref.Container, Blob: name, Snapshot: sn.snap}
			it := ListedBlob{Name: name, Snapshot: sn.snap, Properties: sn.rec.Rec.properties(sref, l.now)}
			it.Properties.Path = sn.rec.pathProps()
			l.out.Items = append(l.out.Items, it)
		}
	}
	if l.full() {
		return false
	}
	l.out.Items = append(l.out.Items, l.item(name, n))
	return true
}

// emit adds the entry of name (n, and d for a soft-deleted path) and
// reports whether the listing goes on; a folded name is kept in folded.
func (l *pathLister) emit(name string, n *ns.Node, d *ns.DeletedPath) bool {
	if l.keep != nil && !l.keep(n) {
		return true
	}
	if name < l.in.StartFrom {
		// Before startFrom (inclusive): not listed.
		return true
	}
	prefix, delim := l.in.Prefix, l.in.Delimiter
	fold := ""
	if delim != "" {
		if i := strings.Index(name[len(prefix):], delim); i >= 0 {
			fold = name[:len(prefix)+i+len(delim)]
		}
	}
	// A folded entry shows the directory the listing is in, not the one
	// below it. A soft-deleted path's directory may be gone:
	// mayListDeleted decided those.
	if subject := strings.TrimSuffix(fold, delim); d == nil && !l.mayList(cmp.Or(subject, name)) {
		return false
	}
	if l.full() {
		return false
	}
	if fold != "" {
		l.folded = fold
		l.out.Items = append(l.out.Items, ListedBlob{Name: fold, IsPrefix: true})
		return false
	}
	if d == nil {
		return l.file(name, n, "")
	}
	it := l.item(name, n)
	it.Deleted, it.DeletedTime, it.RemainingRetentionDays, it.DeletionID = true, d.At, d.RemainingDays(l.now), d.DeletionID
	l.out.Items = append(l.out.Items, it)
	return true
}

// drain emits the soft-deleted paths before name (all with "\xff").
func (l *pathLister) drain(name string) (bool, error) {
	for l.del != nil {
		d, err := l.del.peek()
		if err != nil || d == nil || d.Path >= name {
			return true, err
		}
		l.del.next()
		if !l.emit(d.Path, d.Node, d) {
			return false, nil
		}
	}
	return true, nil
}

// resumeSnapshots lists first what is left of the file the last page
// ended in the snapshots of: the rest of them, and the file; done when
// the page filled up there.
func (l *pathLister) resumeSnapshots() (done bool, err error) {
	after, prefix := l.after, l.in.Prefix
	n, err := l.hns.Lookup(l.tx, l.fs, after, l.in.Caller)
	switch {
	case errors.Is(err, ns.ErrPathNotFound) || errors.Is(err, ns.ErrInvalidPath):
	case err != nil:
		return true, blobErr(err)
	case strings.HasPrefix(after, prefix) && after >= l.in.StartFrom && !n.Expired(l.now) && !n.Dir && (l.keep == nil || l.keep(n)) && l.mayList(after):
		if !l.file(after, n, l.m.afterSnap) {
			return true, l.serr
		}
	}
	return l.denied != nil, l.denied
}

// scan lists the tree's names after l.after (and the soft-deleted paths
// among and after them), skipping past each folded prefix, until the
// page is full or the names end.
func (l *pathLister) scan() error {
	for {
		l.folded = ""
		var derr error
		err := l.hns.ScanBlobs(l.tx, l.fs, l.in.Prefix, l.after, func(name string, n *ns.Node) bool {
			if n.Expired(l.now) {
				return true
			}
			ok, err := l.drain(name)
			if err != nil || !ok {
				derr = err
				return false
			}
			return l.emit(name, n, nil)
		})
		if err == nil {
			err = cmp.Or(derr, l.serr)
		}
		if err == nil && l.folded == "" && !l.more && l.denied == nil {
			// The live paths are done: the deleted ones after them.
			_, err = l.drain("\xff")
		}
		if err != nil {
			return blobErr(err)
		}
		if l.denied != nil {
			return l.denied
		}
		if l.folded == "" {
			return nil
		}
		// Skip the folded names and go on after them.
		l.after = l.folded + "\xff"
		if l.del != nil {
			l.del.skip(l.after)
		}
	}
}
