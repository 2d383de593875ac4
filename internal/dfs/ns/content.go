package ns

import (
	"github.com/cerulean-storage/cerulean/internal/dfs/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// OpenContent returns the file at path for a write of its content (Path
// Update append and flush) by c, who needs write permission on it
// ("Access control model in Azure Data Lake Storage Gen2": append to a
// file needs w on it). A file that has no content reference yet (Path
// Create makes files empty, with none) gets ref(id) as its reference,
// written in place: its ETag and last-modified time stay, since data
// appended is not part of the file until a flush. Because the reference
// is recorded before any content is staged under it, the collector
// hands it to the Blob layer whenever the file goes, whatever was
// appended. A directory is 409 PathConflict (append and flush are file
// operations).
func (s *Namespace) OpenContent(tx kv.Tx, fs FS, path string, c Caller, ref func(id []byte) []byte) (*Node, error) {
	parts, err := SplitPath(path)
	if err != nil {
		return nil, err
	}
	chain, err := s.walk(tx, fs, parts, c)
	if err != nil {
		return nil, err
	}
	if len(chain) != len(parts)+1 || len(parts) == 0 {
		if len(parts) == 0 {
			return nil, ErrPathConflict
		}
		return nil, ErrPathNotFound
	}
	at := chain[len(chain)-1]
	n := at.node
	if n.Dir {
		return nil, ErrPathConflict
	}
	if !allows(c, n, acl.Write) {
		return nil, ErrPermissionMismatch
	}
	if len(n.Ref) == 0 {
		n.Ref = ref(n.ID)
		if err := kv.PutJSON(tx, at.key, n); err != nil {
			return nil, err
		}
	}
	return n, nil
}
