package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/changelog"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Files of a hierarchical account (Data Lake Storage Gen2).
//
// A file is a node of the namespace (internal/hns/ns) and content here.
// Each fact has one owner:
//
//   - the node owns the name and place in the tree, the ETag and times,
//     the size, the content headers, the metadata, owner, group, ACL,
//     expiry and the lease (hns_lease.go): every write of the file goes
//     through the node's record, so conditions, leases, renames and
//     deletes see one ETag and one lease;
//   - the Blob layer owns the bytes: the committed parts of the file
//     (the content record under the node's content reference) and the
//     data appended but not yet flushed (pending records by position).
//
// The content reference is ("dlc", account, node id): node ids are never
// reused and a rename moves the node, not its content, so neither the
// record nor its key ever moves. The collector of the namespace hands the
// reference back (Reclaim) in the transaction that removes the node, and
// that releases the content record, the pending records and their
// extent references.

// SetNamespace makes the accounts hier reports hierarchical (their
// Layout, layoutOf): their names resolve through n, their containers are
// n's filesystems, and their files' content is kept here. internal/app
// calls it before the service answers requests.
func (s *Service) SetNamespace(n *ns.Namespace, hier func(account string) bool) {
	s.hns = n
	s.setLayouts(n, hier)
}

// contentRef is the content reference of the file whose node id is id.
func contentRef(acct string, id []byte) []byte { return kv.Key("dlc", acct, string(id)) }

// pendingPrefix is the range of the data appended to the file id and not
// yet flushed, one record per append keyed by its position.
func pendingPrefix(acct string, id []byte) []byte { return kv.Key("dlp", acct, string(id)) }

// pendingKey orders positions numerically: fixed-width hex.
func pendingKey(acct string, id []byte, pos int64) []byte {
	return kv.Key("dlp", acct, string(id), fmt.Sprintf("%016x", pos))
}

// fileContent is the committed content of a file: its parts, offsets
// from the start of the file. The size is the node's.
type fileContent struct {
	Parts []extent.Part `json:"x,omitempty"`
}

// pendingAppend is data appended at Pos and not yet flushed.
type pendingAppend struct {
	Pos   int64         `json:"p"`
	Size  int64         `json:"s"`
	Parts []extent.Part `json:"x"`
}

// splitRef reads the account and node id of a content reference.
func splitRef(ref []byte) (acct string, id []byte, err error) {
	parts, ok := kv.Split(ref)
	if !ok || len(parts) != 3 || parts[0] != "dlc" {
		return "", nil, fmt.Errorf("blob: malformed content reference %q", ref)
	}
	return parts[1], []byte(parts[2]), nil
}

// Reclaim implements ns.Reclaim: the file whose content reference is ref
// is gone, so its content record, pending appends and snapshots
// (hns_snapshot.go, keyed by the same node id) are deleted and their
// extent references released, in the collector's transaction.
func (s *Service) Reclaim(tx kv.Tx, ref []byte) error {
	acct, id, err := splitRef(ref)
	if err != nil {
		return err
	}
	var parts []extent.Part
	var fc fileContent
	found, err := kv.GetJSON(tx, ref, &fc)
	if err != nil {
		return err
	}
	if found {
		parts = append(parts, fc.Parts...)
		if err := tx.Delete(ref); err != nil {
			return err
		}
	}
	pend, err := scanPending(tx, acct, id)
	if err != nil {
		return err
	}
	for _, p := range pend {
		parts = append(parts, p.Parts...)
		if err := tx.Delete(pendingKey(acct, id, p.Pos)); err != nil {
			return err
		}
	}
	if err := extent.AdjustRefs(tx, s.clock.Now(), parts, nil); err != nil {
		return err
	}
	return dropPathSnapshots(tx, acct, id, s.clock.Now())
}

// scanPending reads the pending appends of file id in position order.
func scanPending(tx kv.Tx, acct string, id []byte) ([]pendingAppend, error) {
	p := pendingPrefix(acct, id)
	var out []pendingAppend
	var derr error
	err := tx.Scan(p, kv.PrefixEnd(p), 0, false, func(k, v []byte) bool {
		var a pendingAppend
		if derr = kv.DecodeJSON(k, v, &a); derr != nil {
			return false
		}
		out = append(out, a)
		return true
	})
	if err == nil {
		err = derr
	}
	return out, err
}

// collectNamespace runs the namespace's collector with Reclaim.
func (s *Service) collectNamespace(ctx context.Context) (int, error) {
	if s.hns == nil {
		return 0, nil
	}
	return s.hns.Collect(ctx, s.store, 0, s.Reclaim)
}

// errFlushPosition is 400 InvalidFlushPosition (Path - Update: "To
// flush, the previously uploaded data must be contiguous, the position
// parameter must be specified and equal to the length of the file after
// all data has been written").
func errFlushPosition() error { return azerr.New(azerr.InvalidFlushPosition) }

// loadPath reads the item at ref of a hierarchical account as the Blob
// API shows it: a file is a block blob of its committed content (an
// append blob when the Blob API made it one: ns.Node.Append); a
// directory a zero-length block blob with metadata hdi_isfolder=true, as
// the Blob endpoint shows directories of a hierarchical account
// ("Blob Storage features available in Azure Data Lake Storage Gen2",
// and the hdi_isfolder marker that azcopy and Hadoop's ABFS driver test
// for). A file whose expiry has passed is gone (404). A snapshot
// (ref.Snapshot) is read from its record once the live file is found
// (hns_snapshot.go): 404 when the file has no such snapshot.
//
// c is the caller: traverse is checked on every parent, and want (read
// for Get Blob, nothing for Get Blob Properties) on the item
// ("Access control model in Azure Data Lake Storage Gen2"); 403
// AuthorizationPermissionMismatch otherwise.
func loadPath(tx kv.Tx, n *ns.Namespace, ref BlobRef, now time.Time, c ns.Caller, want acl.Perm) (*blobRec, *PathProperties, error) {
	node, err := n.LookupFor(tx, ns.FS{Account: ref.Account, Filesystem: ref.Container}, ref.Blob, c, want)
	if err != nil {
		return nil, nil, lookupErr(err)
	}
	if ref.Blob == "" || node.Expired(now) {
		return nil, nil, azerr.New(azerr.BlobNotFound)
	}
	if ref.Snapshot != "" {
		return loadPathSnapshot(tx, ref.Account, node, ref.Snapshot)
	}
	b, pp := pathRec(node)
	if !node.Dir && len(node.Ref) > 0 && node.Size > 0 {
		var fc fileContent
		if _, err := kv.GetJSON(tx, node.Ref, &fc); err != nil {
			return nil, nil, err
		}
		b.Parts = fc.Parts
	}
	return b, pp, nil
}

// lookupErr is the Blob API's answer to a failed lookup of a path.
func lookupErr(err error) error {
	switch {
	case errors.Is(err, ns.ErrFilesystemNotFound):
		return azerr.New(azerr.ContainerNotFound)
	case errors.Is(err, ns.ErrPathNotFound), errors.Is(err, ns.ErrInvalidPath):
		return azerr.New(azerr.BlobNotFound)
	}
	return blobErr(err)
}

// open runs fn on the file p for a content write (append, flush) by
// c, who needs write permission on it ("Access control model in
// Azure Data Lake Storage Gen2": append to a file needs w on it), and
// stores the node in place (ns.Modify: no new ETag). A file that has no
// content reference yet (Path Create makes files empty, without one)
// gets its own, contentRef of its id, recorded before any content is
// staged under it, so the collector hands it back whenever the file
// goes. A directory is 409 PathConflict; a file past its expiry is gone;
// an archived file is offline (409 BlobArchived, as a flat archived blob).
// key is the request's customer-provided key, which must be the one the
// file was created with (cpk.go: 409 BlobUsesCustomerSpecifiedEncryption,
// BlobCustomerSpecifiedEncryptionMismatch or
// BlobDoesNotUseCustomerSpecifiedEncryption), so data appended or
// flushed is always under the file's one key.
func (s *Service) open(tx kv.Tx, p PathRef, c ns.Caller, key *CPK, now time.Time, fn func(n *ns.Node) error) (*ns.Node, error) {
	return s.hns.Modify(tx, p.fs(), p.Path, c, acl.Write, func(n *ns.Node, _ time.Time) error {
		if n.Expired(now) {
			return ns.ErrPathNotFound
		}
		if n.Dir {
			return ns.ErrPathConflict
		}
		if err := onlineTier(n.Tier); err != nil {
			return err
		}
		if err := cpkMismatch(n.CPK, shaOf(key)); err != nil {
			return err
		}
		// Container-level WORM (hns_worm.go): appends to an append blob
		// file as Append Block, to any other file only under
		// allowProtectedAppendWritesAll.
		op := wormAppendAll
		if n.Append != nil {
			op = wormAppend
		}
		if err := pathWORMRefuse(tx, p.fs(), n, op, now); err != nil {
			return err
		}
		if len(n.Ref) == 0 {
			n.Ref = contentRef(p.Account, n.ID)
		}
		return fn(n)
	})
}

// maxAppend is the largest append (Path - Update: up to 4000 MiB per
// append from version 2019-12-12, as Put Block).
const maxAppend = maxPutBlock

// AppendDataInput is Path - Update action=append: Length bytes of Body
// to be written at Position when a flush commits them.
type AppendDataInput struct {
	Call
	PathRef
	Position  int64
	Body      io.Reader
	Length    int64
	Checksums Checksums
	Lease     PathLeaseAction
	// Flush commits the file up to the end of this append in the same
	// transaction (flush=true on the append); the lease's release then
	// comes after the flush, as on a flush ("Only applicable if Flush is
	// set to true": DataLakeFileAppendOptions.LeaseAction).
	Flush bool
	// CheckFirst is PutBlobInput.CheckFirst: the file (its existence,
	// type, tier and write access) and the lease are checked before the
	// body is read.
	CheckFirst bool
}

// AppendDataOutput is the digest of the data appended: the MD5 when the
// caller sent one, else the CRC64; with Flush, the file as flushed.
type AppendDataOutput struct {
	ContentMD5   []byte
	ContentCRC64 []byte
	Flushed      *FlushDataOutput
}

// AppendData is Path - Update action=append
// (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/path/update):
// the body is stored, then one transaction records it as pending at
// Position, invisible to reads until a flush commits it. Appends may
// come in any order (the SDKs upload chunks in parallel, each at its
// offset), but each byte position takes one append: an append below the
// committed length, or overlapping a pending append, is 400
// InvalidFlushPosition, so of two writers appending at one position
// exactly one wins (the transactions that read the same pending range
// are serialised by the store). An append blob file takes the data at
// once instead, at its length only (commitAppend).
func (s *Service) AppendData(ctx context.Context, in AppendDataInput) (out AppendDataOutput, err error) {
	now := s.now(in.Call)
	if in.Position < 0 {
		return out, azerr.InvalidQuery("position", fmt.Sprint(in.Position))
	}
	if in.Length == 0 {
		// Azure's answer, with its standard message
		// (azure-sdk-for-net's recorded
		// FileClientTests.AppendDataAsync_EmptyStream).
		return out, azerr.InvalidHeader("Content-Length", "0")
	}
	body, err := extent.LimitBody(content(in.Body), in.Length, maxAppend)
	if err != nil {
		return out, err
	}
	if in.CheckFirst {
		p, la, c := in.PathRef, in.Lease, in.Caller
		err := s.store.View(ctx, func(tx kv.Tx) error {
			_, err := s.open(tx, p, c, in.CPK, now, func(n *ns.Node) error {
				if _, err := la.before(n, now); err != nil {
					return err
				}
				return errChecked
			})
			return err
		})
		if !errors.Is(err, errChecked) {
			return out, err
		}
	}
	// With a customer-provided key the data is staged encrypted under
	// it (open checks that it is the file's key before it is recorded).
	st, err := s.data.StageSealed(ctx, body, in.Length, in.Checksums.MD5 != nil, in.Checksums.MD5 == nil, cipherOf(in.CPK))
	if err != nil {
		return out, err
	}
	// Freed at once if the append is refused (extent.Staged.Finish).
	recorded := false
	defer func() { st.Finish(ctx, recorded) }()
	if st.Size == 0 {
		return out, azerr.InvalidHeader("Content-Length", "0")
	}
	if err := st.CheckDigests(in.Checksums); err != nil {
		return out, err
	}
	p, pos, la, c, flush := in.PathRef, in.Position, in.Lease, in.Caller, in.Flush
	var flushed *FlushDataOutput
	err = s.store.Update(ctx, extent.Recording(&recorded, func(tx kv.Tx) error {
		flushed = nil
		var id string
		appendFile := false
		_, err := s.open(tx, p, c, in.CPK, now, func(n *ns.Node) (err error) {
			if id, err = la.before(n, now); err != nil {
				return err
			}
			if n.Append != nil {
				// An append blob: committed at once (hns_append.go).
				appendFile = true
				return s.commitAppend(tx, p.Account, n, pos, st, now)
			}
			if err := s.stagePending(tx, p.Account, n, pos, st, now); err != nil {
				return err
			}
			switch {
			case flush:
				return nil // the flush releases
			case la.Action == PathLeaseRelease:
				return nil // applies to a flush only
			}
			return la.after(n, id, now)
		})
		if err == nil && appendFile {
			err = s.afterCommitAppend(tx, p, c, la, id, flush, now)
		}
		if err != nil || !flush {
			return err
		}
		fl := PathLeaseAction{LeaseID: id}
		if la.Action == PathLeaseRelease || la.Action == PathLeaseAcquireRelease {
			fl.Action = PathLeaseRelease
		}
		out, err := s.flushTx(tx, FlushDataInput{Call: in.Call, PathRef: p, Position: pos + st.Size, Lease: fl}, now)
		flushed = &out
		return err
	}))
	if err != nil {
		return out, err
	}
	return AppendDataOutput{ContentMD5: st.MD5, ContentCRC64: st.CRC64, Flushed: flushed}, nil
}

// stagePending records st as pending at pos of file n: 400
// InvalidFlushPosition below the committed length or overlapping a
// pending append.
func (s *Service) stagePending(tx kv.Tx, acct string, n *ns.Node, pos int64, st *extent.Staged, now time.Time) error {
	if pos < n.Size {
		return errFlushPosition()
	}
	// The pending append starting last before the end of this one is
	// the only one that can overlap it.
	end := pos + st.Size
	var prev *pendingAppend
	var derr error
	if err := tx.Scan(pendingPrefix(acct, n.ID), pendingKey(acct, n.ID, end), 1, true, func(k, v []byte) bool {
		prev = new(pendingAppend)
		derr = kv.DecodeJSON(k, v, prev)
		return false
	}); err != nil {
		return err
	}
	if derr != nil {
		return derr
	}
	if prev != nil && prev.Pos+prev.Size > pos {
		return errFlushPosition()
	}
	if err := st.Write(tx); err != nil {
		return err
	}
	// The pending record holds one reference per part.
	if err := extent.AdjustRefs(tx, now, nil, st.Parts); err != nil {
		return err
	}
	return kv.PutJSON(tx, pendingKey(acct, n.ID, pos), &pendingAppend{Pos: pos, Size: st.Size, Parts: st.Parts})
}

// FlushDataInput is Path - Update action=flush: the data appended from
// the file's length up to Position becomes its content.
type FlushDataInput struct {
	Call
	PathRef
	Position int64
	// RetainUncommitted keeps the data appended beyond Position
	// (retainUncommittedData=true); else it is discarded.
	RetainUncommitted bool
	Cond              cond.Conditions
	// Props replaces the content headers; nil keeps them but the MD5,
	// which described the old content.
	Props *ns.ContentProps
	Lease PathLeaseAction
	// Close is close=true: the end of the file's stream of changes,
	// which raises a BlobCreated event (FlushWithClose).
	Close bool
}

// FlushDataOutput is the file after the flush.
type FlushDataOutput struct {
	ETag         string
	LastModified time.Time
	Size         int64
}

// FlushData is Path - Update action=flush
// (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/path/update):
// in one transaction the pending appends from the file's length must
// cover exactly up to Position, contiguous (else 400
// InvalidFlushPosition); their data joins the file's content, the
// node takes the new size, headers, ETag and time (conditions checked on
// it: 412 ConditionNotMet), and the appends beyond Position are
// discarded unless retained.
func (s *Service) FlushData(ctx context.Context, in FlushDataInput) (FlushDataOutput, error) {
	now := s.now(in.Call)
	if in.Position < 0 {
		return FlushDataOutput{}, azerr.InvalidQuery("position", fmt.Sprint(in.Position))
	}
	var out FlushDataOutput
	err := s.store.Update(ctx, func(tx kv.Tx) (err error) {
		out, err = s.flushTx(tx, in, now)
		return err
	})
	return out, err
}

// flushTx is FlushData's transaction.
func (s *Service) flushTx(tx kv.Tx, in FlushDataInput, now time.Time) (FlushDataOutput, error) {
	var out FlushDataOutput
	err := func() error {
		var id string
		n, err := s.open(tx, in.PathRef, in.Caller, in.CPK, now, func(n *ns.Node) (err error) {
			id, err = in.Lease.before(n, now)
			return err
		})
		if err != nil {
			return err
		}
		if in.Position < n.Size {
			return errFlushPosition()
		}
		pend, err := scanPending(tx, in.Account, n.ID)
		if err != nil {
			return err
		}
		var fc fileContent
		if _, err := kv.GetJSON(tx, n.Ref, &fc); err != nil {
			return err
		}
		cur := n.Size
		var discard []extent.Part
		for _, a := range pend {
			switch {
			case a.Pos >= in.Position:
				if in.RetainUncommitted {
					continue
				}
				discard = append(discard, a.Parts...)
			case a.Pos != cur || a.Pos+a.Size > in.Position:
				return errFlushPosition()
			default:
				for _, part := range a.Parts {
					part.Off = cur + (part.Off - a.Parts[0].Off)
					fc.Parts = append(fc.Parts, part)
				}
				cur += a.Size
			}
			if err := tx.Delete(pendingKey(in.Account, n.ID, a.Pos)); err != nil {
				return err
			}
		}
		if cur != in.Position {
			return errFlushPosition()
		}
		// The committed parts take over the references the pending
		// records held; only the discarded ones are released.
		if err := extent.AdjustRefs(tx, now, discard, nil); err != nil {
			return err
		}
		if err := kv.PutJSON(tx, n.Ref, &fc); err != nil {
			return err
		}
		props := in.Props
		if props == nil {
			kept := n.Props
			kept.MD5 = nil
			props = &kept
		}
		node, err := s.hns.Set(tx, in.fs(), ns.SetInput{Path: in.Path, Cond: in.Cond, Props: props,
			Content: &ns.Content{Size: in.Position, Ref: n.Ref}, LeaseID: id, Caller: in.Call.Caller})
		if err != nil {
			return err
		}
		out = FlushDataOutput{ETag: node.ETag, LastModified: node.Modified, Size: node.Size}
		if in.Close {
			if err := s.dfsFlushed(tx, in.Call, in.PathRef, node, n.Size); err != nil {
				return err
			}
		}
		if in.Lease.Action == PathLeaseRelease || in.Lease.Action == PathLeaseAcquireRelease {
			_, err = s.hns.Modify(tx, in.fs(), in.Path, in.Call.Caller, 0, func(n *ns.Node, _ time.Time) error {
				return in.Lease.after(n, id, now)
			})
		}
		return err
	}()
	return out, err
}

// commitAppend is the dfs append of st at pos to the append blob file n
// (in Modify, whose fn it runs in): pos must be n's length (400
// InvalidQueryParameterValue), then the flat account's append rules
// (appendParts: sealed, block count) apply, the data joins the content
// record and n takes the size and block count. afterCommitAppend gives n
// its new ETag.
func (s *Service) commitAppend(tx kv.Tx, acct string, n *ns.Node, pos int64, st *extent.Staged, now time.Time) error {
	if pos != n.Size {
		return azerr.InvalidQuery("position", strconv.FormatInt(pos, 10))
	}
	b := &blobRec{Type: AppendBlob, Size: n.Size, Appends: n.Append.Blocks, Sealed: n.Append.Sealed}
	if n.Size > 0 {
		var fc fileContent
		if _, err := kv.GetJSON(tx, n.Ref, &fc); err != nil {
			return err
		}
		b.Parts = fc.Parts
	}
	if err := st.Write(tx); err != nil {
		return err
	}
	if _, err := appendParts(tx, now, b, -1, -1, st.Size, st.Parts); err != nil {
		return err
	}
	if err := kv.PutJSON(tx, n.Ref, &fileContent{Parts: b.Parts}); err != nil {
		return err
	}
	n.Size, n.Append = b.Size, &ns.AppendState{Blocks: b.Appends, Sealed: b.Sealed}
	return nil
}

// afterCommitAppend finishes a dfs append to an append blob file: the
// file's new ETag and time (ns.Set, under the lease id the append
// holds), then the lease action's end unless a flush follows (which
// releases) or the action is a release without one ("Only applicable if
// Flush is set to true").
func (s *Service) afterCommitAppend(tx kv.Tx, p PathRef, c ns.Caller, la PathLeaseAction, id string, flush bool, now time.Time) error {
	n, err := s.hns.Lookup(tx, p.fs(), p.Path, c)
	if err != nil {
		return err
	}
	if _, err := s.hns.Set(tx, p.fs(), ns.SetInput{Path: p.Path, LeaseID: id, Caller: c, Append: n.Append}); err != nil {
		return err
	}
	if flush || la.Action == PathLeaseRelease {
		return nil
	}
	_, err = s.hns.Modify(tx, p.fs(), p.Path, c, 0, func(n *ns.Node, _ time.Time) error {
		return la.after(n, id, now)
	})
	return err
}

// The data.api names of the Data Lake operations.
const (
	apiCreateFile      = "CreateFile"
	apiFlushWithClose  = "FlushWithClose"
	apiRenameFile      = "RenameFile"
	apiRenameDirectory = "RenameDirectory"
	apiCreateDirectory = "CreateDirectory"
	apiDeleteFile      = "DeleteFile"
	apiDeleteDirectory = "DeleteDirectory"
)

// dfsFlushed records a flush with close=true that committed the file's
// content from offset from.
func (s *Service) dfsFlushed(tx kv.Tx, c Call, p PathRef, n *ns.Node, from int64) error {
	return s.dfsChanged(tx, c, p.fs(), p.Path, n, changelog.BlobCreated, apiFlushWithClose, func(r *changelog.Record) {
		// data.contentOffset: where the data this flush committed
		// begins (inferred: the schema describes it only as the offset
		// of the write that raised the event).
		r.Data.ContentOffset = from
	})
}

// pathSnapPrefix is the range of the snapshots of file id.
func pathSnapPrefix(acct string, id []byte) []byte { return kv.Key("dls", acct, string(id)) }

// scanPathSnapshots reads the snapshots of file id, oldest first; at most
// limit (0: all).
func scanPathSnapshots(tx kv.Tx, acct string, id []byte, limit int) ([]namedSnap, error) {
	p := pathSnapPrefix(acct, id)
	var out []namedSnap
	var derr error
	err := tx.Scan(p, kv.PrefixEnd(p), limit, false, func(k, v []byte) bool {
		parts, ok := kv.Split(k)
		if !ok || len(parts) != 4 {
			derr = errors.New("blob: malformed path snapshot key")
			return false
		}
		var r pathSnapshot
		if derr = kv.DecodeJSON(k, v, &r); derr != nil {
			return false
		}
		out = append(out, namedSnap{snap: parts[3], rec: r})
		return true
	})
	if err == nil {
		err = derr
	}
	return out, err
}

// pathSnapKey is snapshot snap of file id. Snapshot times are ISO 8601
// with seven fractional digits, so key order is time order.
func pathSnapKey(acct string, id []byte, snap string) []byte {
	return kv.Key("dls", acct, string(id), snap)
}

// dropPathSnapshots deletes every snapshot of file id and releases their
// extent references (x-ms-delete-snapshots: only, and Reclaim).
func dropPathSnapshots(tx kv.Tx, acct string, id []byte, now time.Time) error {
	snaps, err := scanPathSnapshots(tx, acct, id, 0)
	if err != nil {
		return err
	}
	var release []extent.Part
	for _, sn := range snaps {
		if err := tx.Delete(pathSnapKey(acct, id, sn.snap)); err != nil {
			return err
		}
		release = append(release, sn.rec.Rec.Parts...)
	}
	return extent.AdjustRefs(tx, now, release, nil)
}

func (p *pathSnapshot) pathProps() *PathProperties {
	return &PathProperties{Owner: p.Owner, Group: p.Group, Permissions: p.Perms, ACL: p.ACL}
}

// loadPathSnapshot is snapshot snap of the file node as loadPath reads
// it: 404 BlobNotFound when the file has no such snapshot.
func loadPathSnapshot(tx kv.Tx, acct string, node *ns.Node, snap string) (*blobRec, *PathProperties, error) {
	if node.Dir || len(node.Ref) == 0 {
		return nil, nil, azerr.New(azerr.BlobNotFound)
	}
	var r pathSnapshot
	found, err := kv.GetJSON(tx, pathSnapKey(acct, node.ID, snap), &r)
	if err != nil {
		return nil, nil, err
	}
	if !found {
		return nil, nil, azerr.New(azerr.BlobNotFound)
	}
	return &r.Rec, r.pathProps(), nil
}

// pathWORMRefuse is refusePath of the settings of fs's container.
func pathWORMRefuse(tx kv.Tx, fs ns.FS, n *ns.Node, op wormOp, now time.Time) error {
	if n == nil || n.Dir {
		return nil
	}
	w, err := pathWORM(tx, fs)
	if err != nil {
		return err
	}
	return w.refusePath(n, op, now)
}

// namedSnap is a snapshot and its time.
type namedSnap struct {
	snap string
	rec  pathSnapshot
}
