package ns

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// listBatch is how many children one Scan reads while listing.
const listBatch = 256

// ListInput describes Path List (List Paths) of one directory.
type ListInput struct {
	// Dir is the directory to list ("" : the root).
	Dir       string
	Recursive bool
	// MaxResults <= 0 or > 5000 is 5000.
	MaxResults   int
	Continuation string
	// From is Path - List's beginFrom (the SDKs' StartFrom): a path
	// relative to Dir from which the listing starts, inclusive, in the
	// listing's order; a path that does not exist starts the listing at
	// the first path after it. A recursive listing takes any depth, a
	// one-level listing one name only (more is ErrInvalidBeginFrom).
	From   string
	Caller Caller
}

// PathEntry is one listed path (relative to the filesystem root).
type PathEntry struct {
	Path string
	Node *Node
}

// ListOutput is one page; Continuation is "" on the last one.
type ListOutput struct {
	Paths        []PathEntry
	Continuation string
}

// List lists a directory, one level or recursively, in depth-first order
// (a file lists as itself, see listFile):
// each directory is followed by its subtree, children by name in byte
// order ("a", "a/x", "a-b"), the order in which Azure's List Paths returns
// a hierarchical namespace.
//
// The continuation names the last path returned, not a position in a
// structure: the next page resumes after that name in that order, in the
// tree as it is then. A path that existed throughout is never skipped nor
// returned twice, whatever was created, deleted or renamed in between
// (paths created or renamed into the part already listed are not seen; a
// path renamed from the unlisted part into the listed part is not seen
// either, as it did not exist throughout). Each page is read in the one
// transaction it runs in: a directory renamed or deleted concurrently is
// seen entirely before or entirely after.
func (s *Namespace) List(tx kv.Tx, fs FS, in ListInput) (*ListOutput, error) {
	parts, err := SplitPath(in.Dir)
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
	dir := chain[len(parts)].node
	if !dir.Dir {
		return listFile(strings.Join(parts, "/"), dir, in.Continuation, s.now())
	}
	if !allows(in.Caller, dir, acl.Read|acl.Execute) {
		return nil, ErrPermissionMismatch
	}
	pre := ""
	if len(parts) > 0 {
		pre = strings.Join(parts, "/") + "/"
	}
	// The listing resumes after the continuation's path or starts at
	// From (inclusive), whichever is later: the SDKs send beginFrom with
	// every page's continuation.
	var after []string
	incl := false
	if in.From != "" {
		from, err := SplitPath(in.From)
		if err != nil || len(from) == 0 || (!in.Recursive && len(from) > 1) {
			return nil, withMessage(ErrInvalidBeginFrom, "Value %q of beginFrom is invalid: a one-level listing starts from one name, a recursive one from a relative path.", in.From)
		}
		after, incl = from, true
	}
	if in.Continuation != "" {
		last, err := decodeContinuation(in.Continuation)
		if err != nil || !strings.HasPrefix(last, pre) || last == pre {
			return nil, ErrInvalidContinuation
		}
		c, err := SplitPath(last[len(pre):])
		if err != nil || len(c) == 0 {
			return nil, ErrInvalidContinuation
		}
		// Depth-first order is the order of the component lists (a
		// directory before its subtree, names by bytes).
		if after == nil || slices.Compare(c, after) >= 0 {
			after, incl = c, false
		}
	}
	max := in.MaxResults
	if max <= 0 || max > DefaultMaxResults {
		max = DefaultMaxResults
	}
	out := &ListOutput{}
	full := false
	now := s.now()
	emit := func(p string, l loc) bool {
		n := l.node
		if n.Expired(now) {
			return true
		}
		if len(out.Paths) == max {
			full = true
			return false
		}
		out.Paths = append(out.Paths, PathEntry{Path: p, Node: n})
		return true
	}
	// Listing a subdirectory's content needs what listing the top one
	// does: read and execute on it.
	enter := func(_ string, n *Node) error {
		if !allows(in.Caller, n, acl.Read|acl.Execute) {
			return ErrPermissionMismatch
		}
		return nil
	}
	if _, err := s.dfsFrom(tx, fs, dir, pre, after, incl, in.Recursive, enter, emit); err != nil {
		return nil, err
	}
	if full {
		out.Continuation = encodeContinuation(out.Paths[len(out.Paths)-1].Path)
	}
	return out, nil
}

// listFile is List of a file: the file itself, alone, as Azure's List
// Paths answers when its directory parameter names a file (Hadoop ABFS's
// ITestAzureBlobFileSystemListStatus.testListFileVsListDir and
// testListFileVsListDir2, run against the service: listStatus of a file,
// which is one List Paths call of that path, returns the file). What it
// shows is the file's properties, which Get Properties gives with
// traverse on the parents alone, so nothing more is checked. A file is
// one page, so any continuation is 400.
func listFile(path string, n *Node, continuation string, now time.Time) (*ListOutput, error) {
	if n.Expired(now) {
		return nil, ErrPathNotFound
	}
	if continuation != "" {
		return nil, ErrInvalidContinuation
	}
	return &ListOutput{Paths: []PathEntry{{Path: path, Node: n}}}, nil
}

// errSkipSubtree, returned by a dfs enter function, skips the subtree of
// the directory and goes on with its next sibling; errStopWalk ends the
// walk as emit returning false does.
var (
	errSkipSubtree = errors.New("ns: skip subtree")
	errStopWalk    = errors.New("ns: stop walk")
)

// dfs emits the subtree of dir in depth-first order, skipping everything
// up to and including the path after (components relative to dir). Before
// it reads the children of a subdirectory it calls enter with the
// directory's path; another error than errSkipSubtree or errStopWalk ends
// the walk with that error. It returns false when the walk was stopped.
func (s *Namespace) dfs(tx kv.Tx, fs FS, dir *Node, pre string, after []string, recursive bool, enter func(string, *Node) error, emit func(string, loc) bool) (bool, error) {
	return s.dfsFrom(tx, fs, dir, pre, after, false, recursive, enter, emit)
}

// dfsFrom is dfs starting after the path after or, with incl, at it: the
// path itself is emitted when it exists, with its subtree.
func (s *Namespace) dfsFrom(tx kv.Tx, fs FS, dir *Node, pre string, after []string, incl, recursive bool, enter func(string, *Node) error, emit func(string, loc) bool) (bool, error) {
	from := ""
	if len(after) > 0 {
		from = after[0]
	}
	for {
		kids, err := s.children(tx, fs, dir, from, listBatch)
		if err != nil {
			return false, err
		}
		for _, k := range kids {
			if len(after) > 0 && k.name == after[0] && !(incl && len(after) == 1) {
				// The resume point: the item itself was listed (or is
				// an ancestor of what was); what is left of its subtree
				// comes next.
				if recursive && k.node.Dir {
					if err := enter(pre+k.name, k.node); err == errSkipSubtree {
						continue
					} else if err == errStopWalk {
						return false, nil
					} else if err != nil {
						return false, err
					}
					if ok, err := s.dfsFrom(tx, fs, k.node, pre+k.name+"/", after[1:], incl, true, enter, emit); !ok || err != nil {
						return ok, err
					}
				}
				continue
			}
			if !emit(pre+k.name, k) {
				return false, nil
			}
			if recursive && k.node.Dir {
				if err := enter(pre+k.name, k.node); err == errSkipSubtree {
					continue
				} else if err == errStopWalk {
					return false, nil
				} else if err != nil {
					return false, err
				}
				if ok, err := s.dfs(tx, fs, k.node, pre+k.name+"/", nil, true, enter, emit); !ok || err != nil {
					return ok, err
				}
			}
		}
		if len(kids) < listBatch {
			return true, nil
		}
		from = kids[len(kids)-1].name + "\x00"
	}
}

func encodeContinuation(last string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("p1/" + last))
}

func decodeContinuation(tok string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return "", err
	}
	s, ok := strings.CutPrefix(string(b), "p1/")
	if !ok {
		return "", ErrInvalidContinuation
	}
	return s, nil
}

// ScanBlobs calls fn with every path of fs whose full name starts with
// prefix and sorts after after (byte order; "" : from the start), in byte
// order of full names, until fn returns false. Directories are included
// (the Blob endpoint shows them as the zero-length hdi_isfolder blobs of
// a hierarchical account, or skips them); expired files are left out.
//
// This is List Blobs' order: blob names compared as byte strings, so
// "a-b" (0x2d) comes before "a/x" (0x2f) although "a" comes before both,
// an order a depth-first walk does not give. At each directory the walk
// merges the children's own names with their subtrees, whose names all
// start with child+"/", so each subtree is entered when the sibling names
// that sort before child+"/" have been passed; resuming after a name
// reads only what sorts after it (plus at most one Get per byte below '/'
// in the resumed component).
func (s *Namespace) ScanBlobs(tx kv.Tx, fs FS, prefix, after string, fn func(path string, n *Node) bool) error {
	now, emit := s.now(), fn
	fn = func(p string, n *Node) bool { return n.Expired(now) || emit(p, n) }
	root, err := s.root(tx, fs)
	if err != nil {
		return err
	}
	dirPath, namePrefix := "", prefix
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dirPath, namePrefix = prefix[:i], prefix[i+1:]
	}
	dir := root
	pre := ""
	if dirPath != "" {
		parts, err := SplitPath(dirPath)
		if err != nil || strings.Trim(dirPath, "/") != dirPath {
			return nil // no path has such a prefix
		}
		chain, err := s.walk(tx, fs, parts, nil)
		if err != nil {
			return err
		}
		if len(chain) != len(parts)+1 || !chain[len(parts)].node.Dir {
			return nil
		}
		dir, pre = chain[len(parts)].node, dirPath+"/"
	}
	if after != "" && after < pre && !strings.HasPrefix(pre, after) {
		after = ""
	}
	_, err = s.blobLevel(tx, fs, dir, pre, namePrefix, after, fn)
	return err
}

// blobLevel emits the subtree of dir (whose paths start with pre) in byte
// order, restricted at this level to names starting with namePrefix and to
// paths > after. It returns false when fn asked to stop.
func (s *Namespace) blobLevel(tx kv.Tx, fs FS, dir *Node, pre, namePrefix, after string, fn func(string, *Node) bool) (bool, error) {
	// Bound at this level: c is after's component here, rest what follows.
	bounded := after != "" && after >= pre
	var c string
	if bounded {
		if !strings.HasPrefix(after, pre) {
			return true, nil // every path here sorts before after
		}
		c = after[len(pre):]
		if i := strings.IndexByte(c, '/'); i >= 0 {
			c = c[:i]
		}
	}
	// pending subtrees, kept sorted by their key (name + "/").
	var pending []loc
	flush := func(upTo string, all bool) (bool, error) {
		for len(pending) > 0 && (all || pending[0].name+"/" < upTo) {
			p := pending[0]
			pending = pending[1:]
			sub := pre + p.name + "/"
			var bound string
			if bounded && strings.HasPrefix(after, sub) {
				bound = after
			}
			if ok, err := s.blobLevel(tx, fs, p.node, sub, "", bound, fn); !ok || err != nil {
				return ok, err
			}
		}
		return true, nil
	}
	push := func(l loc) {
		i, _ := slices.BinarySearchFunc(pending, l.name+"/", func(e loc, key string) int { return strings.Compare(e.name+"/", key) })
		pending = slices.Insert(pending, i, l)
	}
	visit := func(l loc) (bool, error) {
		if ok, err := flush(l.name, false); !ok || err != nil {
			return ok, err
		}
		self := pre + l.name
		if !bounded || self > after {
			if !fn(self, l.node) {
				return false, nil
			}
		}
		if l.node.Dir {
			sub := pre + l.name + "/"
			if !bounded || sub > after || strings.HasPrefix(after, sub) {
				push(l)
			}
		}
		return true, nil
	}
	from := namePrefix
	if bounded {
		// Children named by a proper prefix of c followed by a byte below
		// '/' sort before c, and so does their own name, but their
		// subtrees sort after after: fetch them one by one.
		for i := 1; i < len(c); i++ {
			if c[i] >= '/' || !strings.HasPrefix(c[:i], namePrefix) {
				continue
			}
			k := childKey(fs.Account, dir.ID, c[:i])
			var n Node
			ok, err := kv.GetJSON(tx, k, &n)
			if err != nil {
				return false, err
			}
			if ok && n.Dir {
				if ok, err := visit(loc{node: &n, key: k, name: c[:i]}); !ok || err != nil {
					return ok, err
				}
			}
		}
		if c > from {
			from = c
		}
	}
	for {
		kids, err := s.children(tx, fs, dir, from, listBatch)
		if err != nil {
			return false, err
		}
		for _, k := range kids {
			if !strings.HasPrefix(k.name, namePrefix) {
				return flush("", true)
			}
			if ok, err := visit(k); !ok || err != nil {
				return ok, err
			}
		}
		if len(kids) < listBatch {
			return flush("", true)
		}
		from = kids[len(kids)-1].name + "\x00"
	}
}
