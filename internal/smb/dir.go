package smb

import (
	"strings"
	"unicode/utf8"

	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// readDirBatch is how many entries one VFS.ReadDir call fetches.
const readDirBatch = 512

func newDirCursor(pattern string) *dirCursor {
	if pattern == "" {
		pattern = "*"
	}
	return &dirCursor{
		pattern: pattern,
		upper:   []rune(strings.ToUpper(pattern)),
		wild:    strings.ContainsAny(pattern, `*?<>"`),
	}
}

// candidate is an entry a query may return, with what returning it
// advances in the cursor.
type candidate struct {
	entry smb2.DirEntry
	dot   bool // "." or ".."
}

// queryDirectory answers QUERY_DIRECTORY (MS-SMB2 3.3.5.18).
func (c *conn) queryDirectory(r *request) ([]byte, error) {
	req, err := smb2.DecodeQueryDirectoryRequest(r.msg)
	if err != nil {
		return nil, err
	}
	if err := c.checkCharge(r, chargeNeeded(0, uint64(req.OutputBufferLength))); err != nil {
		return nil, err
	}
	o, err := c.lookupOpen(r, req.FileID)
	if err != nil {
		return nil, err
	}
	if !o.f.Dir {
		return nil, smb2.StatusInvalidParameter
	}
	fixed, ok := smb2.DirEntryFixedSize(req.FileInformationClass)
	if !ok {
		return nil, smb2.StatusInvalidInfoClass
	}
	if int(req.OutputBufferLength) > c.maxIO {
		return nil, smb2.StatusInvalidParameter
	}
	if int(req.OutputBufferLength) < fixed {
		return nil, smb2.StatusInfoLengthMismatch
	}
	if o.f.GrantedAccess&file.AccessReadData == 0 {
		return nil, smb2.StatusAccessDenied
	}
	if o.dir == nil || req.Flags&(smb2.QueryDirRestartScans|smb2.QueryDirReopen) != 0 {
		o.dir = newDirCursor(req.Pattern)
	}
	cur := o.dir
	maxLen := int(req.OutputBufferLength)
	want := maxLen // bytes of candidates to gather
	if req.Flags&smb2.QueryDirReturnSingleEntry != 0 {
		want = 1
	}
	cands, err := c.gatherDir(o, cur, fixed, want)
	if err != nil {
		return nil, err
	}
	if req.Flags&smb2.QueryDirReturnSingleEntry != 0 && len(cands) > 1 {
		cands = cands[:1]
	}
	if len(cands) == 0 {
		cur.done = true
		if cur.returned {
			return nil, smb2.StatusNoMoreFiles
		}
		return nil, smb2.StatusNoSuchFile
	}
	entries := make([]smb2.DirEntry, len(cands))
	for i, cd := range cands {
		entries[i] = cd.entry
	}
	buf, n, err := smb2.EncodeDirEntries(req.FileInformationClass, entries, maxLen)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, smb2.StatusBufferOverflow
	}
	for _, cd := range cands[:n] {
		if cd.dot {
			cur.dots++
		} else {
			cur.after = cd.entry.Name
		}
	}
	if !cur.wild && n == len(cands) {
		cur.done = true
	}
	cur.returned = true
	return smb2.QueryDirectoryResponse{Output: buf}.Encode(), nil
}

// estimate is a lower bound of the encoded size of an entry.
func estimate(e smb2.DirEntry, fixed int) int {
	return (fixed + 2*utf8.RuneCountInString(e.Name) + 7) &^ 7
}

// gatherDir returns the next entries matching cur's pattern, from the
// cursor's position, until their estimated size exceeds want bytes or
// the directory ends: "." and ".." (if not yet returned), then an exact
// lookup (a pattern without wildcards) or batches of the directory.
func (c *conn) gatherDir(o *open, cur *dirCursor, fixed, want int) ([]candidate, error) {
	var out []candidate
	size := 0
	add := func(cd candidate) {
		out = append(out, cd)
		size += estimate(cd.entry, fixed)
	}
	if cur.done {
		return nil, nil
	}
	for i := cur.dots; i < 2; i++ {
		name := [2]string{".", ".."}[i]
		if !cur.matches(name) {
			// Skipped for good: count it as dealt with.
			if i == cur.dots {
				cur.dots++
			}
			continue
		}
		var in file.Info
		var err error
		if name == "." {
			in, err = c.srv.vfs.Info(c.ctx, o.f)
		} else {
			in, err = c.srv.vfs.ParentInfo(c.ctx, o.f)
		}
		if err != nil {
			return nil, err
		}
		add(candidate{entry: dirEntry(in, name), dot: true})
	}
	if !cur.wild {
		if cur.pattern == "." || cur.pattern == ".." || cur.after != "" {
			return out, nil
		}
		in, err := c.srv.vfs.Lookup(c.ctx, o.f, cur.pattern)
		if err != nil {
			if st, ok := fileStatus(err); ok && st == smb2.StatusObjectNameNotFound {
				return out, nil
			}
			return nil, err
		}
		add(candidate{entry: dirEntry(in, in.Name)})
		return out, nil
	}
	after := cur.after
	for size < want {
		batch := readDirBatch
		if want == 1 {
			batch = 16
		}
		infos, err := c.srv.vfs.ReadDir(c.ctx, o.f, after, batch)
		if err != nil {
			return nil, err
		}
		for _, in := range infos {
			after = in.Name
			if cur.matches(in.Name) {
				add(candidate{entry: dirEntry(in, in.Name)})
			}
		}
		if len(infos) < batch {
			break
		}
	}
	return out, nil
}

func (cur *dirCursor) matches(name string) bool {
	if !cur.wild {
		return strings.EqualFold(name, cur.pattern)
	}
	return wildcardMatch(cur.upper, []rune(strings.ToUpper(name)))
}

func dirEntry(in file.Info, name string) smb2.DirEntry {
	return smb2.DirEntry{
		CreationTime:   smb2.FiletimeOf(in.Created),
		LastAccessTime: smb2.FiletimeOf(in.LastAccess),
		LastWriteTime:  smb2.FiletimeOf(in.LastWrite),
		ChangeTime:     smb2.FiletimeOf(in.Changed),
		EndOfFile:      in.Size,
		AllocationSize: in.Allocation,
		FileAttributes: smb2.FileAttributes(in.Attributes),
		FileID:         in.FileID,
		Name:           name,
	}
}

// wildcardMatch matches name against a search pattern (MS-FSA 2.1.4.4,
// FsRtlIsNameInExpression), both already upper-cased: `*` any run of
// characters, `?` any one character, and the DOS wildcards `<` (any run
// not reaching past the name's last dot), `>` (any one character, or
// nothing before a dot or at the end) and `"` (a dot, or nothing at the
// end).
func wildcardMatch(pattern, name []rune) bool {
	lastDot := -1
	for i, r := range name {
		if r == '.' {
			lastDot = i
		}
	}
	// memo[p][n]: 0 unknown, 1 false, 2 true.
	memo := make([][]uint8, len(pattern)+1)
	for i := range memo {
		memo[i] = make([]uint8, len(name)+1)
	}
	var m func(p, n int) bool
	m = func(p, n int) bool {
		if memo[p][n] != 0 {
			return memo[p][n] == 2
		}
		var ok bool
		switch {
		case p == len(pattern):
			ok = n == len(name)
		default:
			switch pattern[p] {
			case '*':
				ok = m(p+1, n) || n < len(name) && m(p, n+1)
			case '?':
				ok = n < len(name) && m(p+1, n+1)
			case '<':
				ok = m(p+1, n) || n < len(name) && (lastDot < 0 || n < lastDot) && m(p, n+1)
			case '>':
				ok = n < len(name) && name[n] != '.' && m(p+1, n+1) || (n == len(name) || name[n] == '.') && m(p+1, n)
			case '"':
				ok = n < len(name) && name[n] == '.' && m(p+1, n+1) || n == len(name) && m(p+1, n)
			default:
				ok = n < len(name) && name[n] == pattern[p] && m(p+1, n+1)
			}
		}
		if ok {
			memo[p][n] = 2
		} else {
			memo[p][n] = 1
		}
		return ok
	}
	return m(0, 0)
}
