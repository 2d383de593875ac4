// Finding a connection's opens, and the small conversions the CREATE,
// QUERY_INFO, lock and notify handlers share (paths, volume ids, credit
// charges, the network-open information).

package smb

import (
	"hash/fnv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// splitPath splits a CREATE or rename name into components: "" is the
// share root; a leading `\` is STATUS_INVALID_PARAMETER (MS-SMB2
// 3.3.5.9: the name must not begin with a separator; smbd agrees) unless
// allowed; an empty component is STATUS_OBJECT_NAME_INVALID
// and ".." STATUS_OBJECT_PATH_SYNTAX_BAD.
func splitPath(name string, leadingSlashOK bool) ([]string, error) {
	if strings.HasPrefix(name, `\`) {
		if !leadingSlashOK {
			return nil, smb2.StatusInvalidParameter
		}
		name = strings.TrimLeft(name, `\`)
	}
	if name == "" {
		return nil, nil
	}
	comps := strings.Split(name, `\`)
	for _, c := range comps {
		switch c {
		case "":
			return nil, smb2.StatusObjectNameInvalid
		case "..":
			// No walking out of a directory (smbd; smb2.mkdir).
			return nil, smb2.StatusObjectPathSyntaxBad
		}
	}
	return comps, nil
}

// volumeID is a stable id of a share (QFid, FileFsVolumeInformation's
// serial number).
func volumeID(t *tree) uint64 {
	h := fnv.New64a()
	h.Write([]byte(t.sess.account + "/" + t.share))
	return h.Sum64()
}

// lookupOpen finds the open a request names. In a related compound the
// all-ones FileId is the previous operation's file (MS-SMB2 3.3.5.2.7.2);
// if that operation was a failed CREATE, its status is the result. An
// unknown FileId, or one of another session or tree, is
// STATUS_FILE_CLOSED.
func (c *conn) lookupOpen(r *request, fid smb2.FileID) (*open, error) {
	if fid.IsAllOnes() && r.related {
		switch {
		case r.chain.fileID != nil:
			fid = *r.chain.fileID
		case r.chain.createErr != nil:
			return nil, r.chain.createErr
		default:
			// No FileId to inherit: as an unknown one (smbd; the
			// smb2.compound.invalid3 and related5 tests).
			return nil, smb2.StatusFileClosed
		}
	}
	o := c.opens[fid.Volatile]
	if o == nil || o.id.Persistent != fid.Persistent || o.sess != r.sess || o.tree != r.tree {
		return nil, smb2.StatusFileClosed
	}
	r.chain.fileID = &o.id
	return o, nil
}

// opensOf returns the opens matching keep.
func (c *conn) opensOf(keep func(*open) bool) []*open {
	var out []*open
	for _, o := range c.opens {
		if keep(o) {
			out = append(out, o)
		}
	}
	return out
}

// checkCharge checks that a request's CreditCharge covers its size
// (MS-SMB2 3.3.5.2.5) when multi-credit requests are in use.
func (c *conn) checkCharge(r *request, need uint64) error {
	if c.dialect == smb2.Dialect202 {
		return nil
	}
	if r.charge < need {
		return smb2.StatusInvalidParameter
	}
	return nil
}

// netOpen is a file's times, sizes and attributes in the form CREATE,
// CLOSE and FileNetworkOpenInformation share.
func netOpen(in file.Info) smb2.FileNetworkOpenInformation {
	return smb2.FileNetworkOpenInformation{
		CreationTime:   smb2.FiletimeOf(in.Created),
		LastAccessTime: smb2.FiletimeOf(in.LastAccess),
		LastWriteTime:  smb2.FiletimeOf(in.LastWrite),
		ChangeTime:     smb2.FiletimeOf(in.Changed),
		AllocationSize: in.Allocation,
		EndOfFile:      in.Size,
		FileAttributes: smb2.FileAttributes(in.Attributes),
	}
}
