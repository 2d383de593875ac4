package file

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/copysrc"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// Copy File, Abort Copy File and Put Range from URL as domain methods.
// The copy source is parsed and authorized by the front end (filerest/copy.go)
// before the call; the domain reads it, as a read of it would, inside
// its own transaction.

// CopyFileInput is the input of CopyFile.
type CopyFileInput struct {
	// Ref names the destination.
	Ref
	// Source is the parsed, authorized x-ms-copy-source.
	Source *CopySource
	// Meta is the destination's metadata; none: the source's.
	Meta map[string]string
	// SMB are the parsed SMB headers of the copy.
	SMB *CopySMB
	// NoReplace, when not nil, is the answer for an existing destination
	// (a SAS that grants create but not write: createOnly).
	NoReplace error
}

// CopyFileOutput is the result of CopyFile.
type CopyFileOutput struct {
	// Entry is the destination as stored.
	Entry *Entry
	// CopyID is the new copy's ID (x-ms-copy-id).
	CopyID string
}

// CopyFile is Copy File from a file of this service (possibly in another
// share or a share snapshot) or a blob: the copy completes inside one
// transaction, the destination sharing the source's data items (see
// domain.copyFile), so it is reported as a finished copy.
func (s *Service) CopyFile(ctx context.Context, in CopyFileInput) (CopyFileOutput, error) {
	c := in.caller()
	ci := &copyIn{src: in.Source, meta: in.Meta, smb: in.SMB, copyID: lease.NewID(), noReplace: in.NoReplace}
	e, err := s.dom().copyFile(ctx, &c, ci)
	if err != nil {
		return CopyFileOutput{}, err
	}
	return CopyFileOutput{Entry: e, CopyID: ci.copyID}, nil
}

// AbortCopyFileInput is the input of AbortCopyFile.
type AbortCopyFileInput struct {
	Ref
	// CopyID is the copy to abort (a GUID, checked by the front end).
	CopyID string
}

// AbortCopyFileOutput is the result of AbortCopyFile; it never succeeds
// (see AbortCopyFile).
type AbortCopyFileOutput struct{}

// AbortCopyFile is Abort Copy File. Copies complete inside their request,
// so no copy is ever pending: after the checks of a write of the
// destination (x-ms-lease-id is "Required if the destination file has an
// active lease") the answer is 409 NoPendingCopyOperation.
func (s *Service) AbortCopyFile(ctx context.Context, in AbortCopyFileInput) (AbortCopyFileOutput, error) {
	c := in.caller()
	return AbortCopyFileOutput{}, s.store.View(ctx, func(tx kv.Tx) error {
		d := s.dom()
		t, err := d.load(tx, c.at, &c, false)
		if err != nil {
			return err
		}
		if err := d.admit(tx, c.at, &c, t.e, &opAbortCopyFile); err != nil {
			return err
		}
		return azerr.New(azerr.NoPendingCopyOperation)
	})
}

// PutRangeFromURLInput is the input of PutRangeFromURL.
type PutRangeFromURLInput struct {
	// Ref names the destination file.
	Ref
	// Offset and Length are the destination range; SourceOffset is where
	// the source range of the same length starts.
	Offset, Length, SourceOffset int64
	// Source is the parsed, authorized x-ms-copy-source.
	Source *CopySource
	// Conditions are the source range's CRC64 conditions.
	Conditions CRCConditions
	// PreserveLastWrite keeps the SMB last-write time.
	PreserveLastWrite bool
}

// PutRangeFromURLOutput is the result of PutRangeFromURL.
type PutRangeFromURLOutput struct {
	// Entry is the destination as stored.
	Entry *Entry
	// CRC64 is the CRC64 of the bytes written (8 bytes, little endian).
	CRC64 []byte
}

// PutRangeFromURL is Put Range from URL: the written range shares the
// source's data items instead of copying bytes. The source range is read
// once for its CRC64, which is checked against the Conditions; the
// destination is written only if the source range is still what was
// read, so the CRC64 returned is always that of the bytes written.
func (s *Service) PutRangeFromURL(ctx context.Context, in PutRangeFromURLInput) (PutRangeFromURLOutput, error) {
	cs, srcOff, n, now := in.Source, in.SourceOffset, in.Length, in.Now
	for attempt := 1; ; attempt++ {
		// Optimistically, the source range is read outside the write
		// transaction, which then checks it is unchanged. The last attempt
		// reads it inside the write transaction, so a source rewritten
		// without pause cannot starve the request.
		final := attempt == putRangeFromURLAttempts
		var want []extent.Part
		var crc []byte
		if !final {
			// The source's data items are pinned inside the read
			// transaction (extent.ReadPins) and read after it.
			rp := s.data.NewReadPins()
			err := s.store.View(ctx, func(tx kv.Tx) (err error) {
				if want, err = readSourceRange(tx, now, cs, srcOff, n); err != nil {
					return err
				}
				return rp.Load(tx, want, srcOff, n)
			})
			if err != nil {
				rp.Release()
				return PutRangeFromURLOutput{}, err
			}
			if crc, err = rangeCRC64(s.data.OpenReader(ctx, rp, nil), n); err != nil {
				return PutRangeFromURLOutput{}, err
			}
			if err := in.Conditions.Check(crc); err != nil {
				return PutRangeFromURLOutput{}, err
			}
		}
		from := func(tx kv.Tx) ([]extent.Part, error) {
			got, err := readSourceRange(tx, now, cs, srcOff, n)
			if err != nil {
				return nil, err
			}
			if final {
				// Read inside the write transaction, which names the
				// items; every inline item is prefetched (the range is at
				// most 4 MiB), so reading opens no other transaction.
				inline, err := extent.Prefetch(tx, got, srcOff, n)
				if err != nil {
					return nil, err
				}
				if crc, err = rangeCRC64(s.data.NewReader(ctx, got, inline, srcOff, n), n); err != nil {
					return nil, err
				}
				if err := in.Conditions.Check(crc); err != nil {
					return nil, err
				}
			} else if !extent.SameParts(got, want) {
				return nil, errSourceChanged
			}
			return got, nil
		}
		c := in.caller()
		e, err := s.dom().writeRange(ctx, &c, &writeIn{op: &opPutRangeFromURL, off: in.Offset, n: n, from: from, shift: in.Offset - srcOff, preserveLastWrite: in.PreserveLastWrite})
		if errors.Is(err, errSourceChanged) {
			continue
		}
		if err != nil {
			return PutRangeFromURLOutput{}, err
		}
		return PutRangeFromURLOutput{Entry: e, CRC64: crc}, nil
	}
}

// loadCopySource resolves the source file of a copy inside tx at the
// request's time now, as a read of it would: 404 ShareNotFound,
// ParentNotFound or ResourceNotFound (azfile
// TestFileStartCopySourceNonExistent expects ResourceNotFound), and the
// source's SMB handles must allow reading it. cs was parsed and
// authorized before the transaction.
func loadCopySource(tx kv.Tx, now time.Time, cs *CopySource) (*Entry, error) {
	if cs.Blob != nil {
		return loadBlobSource(tx, now, cs)
	}
	if _, err := loadShare(tx, cs.Acct, cs.Share, cs.Snap); err != nil {
		return nil, err
	}
	_, e, err := walk(tx, cs.Acct, cs.Share, cs.Snap, cs.Comps)
	if err != nil {
		return nil, err
	}
	if e == nil || e.Dir {
		return nil, azerr.New(azerr.ResourceNotFound)
	}
	if cs.Snap == "" {
		// Handles are those of the source's live share.
		if err := handlesAt(tx, now, cs.Acct, cs.Share, "", e, handle.OpCopyFileSource); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// loadBlobSource reads the blob cs names as the file a copy of it makes:
// its content, HTTP properties and metadata; as SMB properties (which a
// blob lacks, and "source" copy modes take), its creation time, its last
// modification as last write and change time, and the Archive attribute.
func loadBlobSource(tx kv.Tx, now time.Time, cs *CopySource) (*Entry, error) {
	o, err := cs.Blob(tx, now)
	if err != nil {
		return nil, err
	}
	return &Entry{
		Size: o.Size, Parts: o.Parts, ETag: o.ETag, Created: o.Created, Modified: o.Modified, Meta: o.Meta,
		Props: Props(o.Props),
		SMB:   SMBProps{Attrs: AttrArchive, Created: o.Created, LastWrite: o.Modified, Changed: o.Modified},
	}, nil
}

// ReadSourceFile resolves, inside tx at now, the file cs names as Copy
// File reads its source (share, parent and file must exist; the SMB
// handles of the live share must allow reading it) and returns it with
// the check of a range read of it (its SMB byte-range locks). Errors
// are as a read of the source gives them (the REST front end turns them
// into CannotVerifyCopySource). The Blob service's copies from a file
// read it through this.
func ReadSourceFile(tx kv.Tx, now time.Time, cs *CopySource) (e *Entry, readable func(off, n int64) error, err error) {
	if e, err = loadCopySource(tx, now, cs); err != nil {
		return nil, nil, err
	}
	return e, func(off, n int64) error { return checkSourceLocks(tx, now, cs, e, off, n) }, nil
}

// SourceReader is the file cs names (parsed and authorized by the front
// end) as the source of a copy the Blob service makes, read by
// ReadSourceFile inside that copy's transaction; its errors are the
// domain's, for the front end to map (copysrc.Reader.Mapped).
func SourceReader(cs CopySource) copysrc.Reader {
	return func(tx kv.Tx, now time.Time) (*copysrc.Object, error) {
		e, readable, err := ReadSourceFile(tx, now, &cs)
		if err != nil {
			return nil, err
		}
		return &copysrc.Object{
			Size: e.Size, Parts: e.Parts, ETag: e.ETag, Created: e.SMB.Created, Modified: e.Modified, Meta: e.Meta,
			Props: copysrc.Props(e.Props), Readable: readable,
		}, nil
	}
}

// checkSourceLocks refuses reading n bytes from off of a copy source
// src (a file of the live share cs names) that an SMB open has locked
// exclusively: 409 FileLockConflict, as Get File of that range: a copy
// reads its source as Get File does (inferred). It is the domain's
// checkRange for an open-less caller at the source, at now.
func checkSourceLocks(tx kv.Tx, now time.Time, cs *CopySource, src *Entry, off, n int64) error {
	if cs.Snap != "" || cs.Blob != nil {
		return nil
	}
	c := caller{acct: cs.Acct, share: cs.Share}
	return domain{}.checkRange(tx, now, &c, src, off, n, false)
}

// copyIn is a Copy File: its source, parsed and authorized before the
// transaction, and the destination's parsed request.
type copyIn struct {
	src    *CopySource
	meta   map[string]string // x-ms-meta-*; none: the source's
	smb    *CopySMB
	copyID string
	// noReplace, when not nil, is the answer for an existing
	// destination (a SAS that grants create but not write: createOnly).
	noReplace error
}

// copyFile copies in.src to c's path in one transaction and returns the
// destination: the source must be readable (loadCopySource: it exists,
// its opens' share modes allow reading it; then its byte-range locks),
// the share's quota must hold it, an existing destination must be a file
// that passes admit (opCopyFileDest: its lease, the share modes of its
// opens) and is not read-only unless x-ms-file-copy-ignore-readonly; a
// new destination refuses a lease ID (Copy File: "If the client
// specifies a lease ID on a file that doesn't yet exist, Azure Files
// returns status code 412"). The replaced destination keeps its file ID,
// creation time, SMB properties (for the "source"-less modes) and active
// lease.
func (d domain) copyFile(ctx context.Context, c *caller, in *copyIn) (*Entry, error) {
	cs, cp := in.src, in.smb
	var e *Entry
	err := d.s.store.Update(ctx, func(tx kv.Tx) error {
		now := d.now(c)
		t, err := resolvePath(tx, c.acct, c.share, c.snap, c.path)
		if err != nil {
			return err
		}
		src, err := loadCopySource(tx, now, cs)
		if err != nil {
			return err
		}
		if err := checkSourceLocks(tx, now, cs, src, 0, src.Size); err != nil {
			return err
		}
		if overQuota(t.share, src.Size) {
			return refused(ByQuota, fmt.Sprintf("a copy of %d bytes", src.Size))
		}
		old := t.e
		var oldParts []extent.Part
		switch {
		case old != nil && old.Dir:
			// Inferred: As Create File over a directory: the service answers
			// the mirror case (Create Directory over a file) with 409
			// ResourceTypeMismatch (microsoft/vscode-azurestorage#848).
			return azerr.New(azerr.ResourceTypeMismatch)
		case old != nil:
			if in.noReplace != nil {
				return in.noReplace
			}
			if err := d.admit(tx, now, c, old, &opCopyFileDest); err != nil {
				return err
			}
			// Copy File: "a previous file at the destination with the ReadOnly
			// attribute set causes the copy operation to fail";
			// (azfile TestNegativeFileStartCopyDestReadOnly) ReadOnlyAttribute.
			if old.SMB.Attrs&AttrReadOnly != 0 && !cp.IgnoreReadOnly {
				return refused(ByReadOnly, "")
			}
			oldParts = old.Parts
			e = &Entry{Name: old.Name, ID: old.ID, Parent: old.Parent, Created: old.Created, SMB: old.SMB, Lease: lease.OnWrite(old.Lease, now)}
		default:
			// Copy File: "If the client specifies a lease ID on a file that
			// doesn't yet exist, Azure Files returns status code 412".
			if err := lease.CheckWrite(lease.Lease{}, c.leaseID, lease.File, now); err != nil {
				return err
			}
			id, err := freshID(tx, c.acct, c.share)
			if err != nil {
				return err
			}
			e = &Entry{Name: c.path[len(c.path)-1], ID: id, Parent: t.parent.ID, Created: now}
		}
		e.Size, e.Props, e.Meta = src.Size, src.Props, src.Meta
		if len(in.meta) > 0 {
			e.Meta = in.meta
		}
		e.Parts = append([]extent.Part(nil), src.Parts...)
		if err := cp.apply(tx, now, c.acct, c.share, cs.Share, e, src, t.parent.SMB.PermKey); err != nil {
			return err
		}
		e.Copy = &CopyInfo{ID: in.copyID, Source: cs.Raw, Status: "success", Progress: copyProgress(src.Size), Completion: now}
		touch(e, now)
		if err := extent.AdjustRefs(tx, now, oldParts, e.Parts); err != nil {
			return err
		}
		return putEntry(tx, c.acct, c.share, "", e)
	})
	return e, err
}

func copyProgress(n int64) string {
	v := strconv.FormatInt(n, 10)
	return v + "/" + v
}

// apply sets the SMB properties of the copy e of src (in share srcShare)
// inside tx. e.SMB holds the replaced file's properties, or zero for a new
// file. Without a header a property takes its Create File default: times
// "now", attributes Archive, the parent's permission (inferred; azfile's
// TestFileStartCopySourceCreationTime sees the destination's times and
// attributes differ from the source's when not asked for).
func (cp *CopySMB) apply(tx kv.Tx, now time.Time, acct, dstShare, srcShare string, e, src *Entry, parentKey string) error {
	old := e.SMB
	var err error
	times := [3]struct {
		dst      *time.Time
		src, old time.Time
	}{
		{&e.SMB.Created, src.SMB.Created, old.Created},
		{&e.SMB.LastWrite, src.SMB.LastWrite, old.LastWrite},
		{&e.SMB.Changed, src.SMB.Changed, old.Changed},
	}
	for i, t := range times {
		if cp.Times[i].Source {
			*t.dst = t.src
			continue
		}
		if *t.dst, err = cp.Times[i].Time.Resolve(now, t.old); err != nil {
			return err
		}
	}
	switch {
	case cp.AttrsSource:
		e.SMB.Attrs = src.SMB.Attrs
	case cp.Attrs != nil:
		e.SMB.Attrs = *cp.Attrs
	default:
		e.SMB.Attrs = AttrArchive
	}
	if cp.SetArchive {
		// Copy File, x-ms-file-copy-set-archive: "whether the Archive
		// attribute should be set, irrespective
		// of the x-ms-file-attributes header value".
		e.SMB.Attrs |= AttrArchive
	}
	e.SMB.Attrs &^= AttrDirectory
	switch {
	case cp.PermSource:
		e.SMB.PermKey, err = copyPermission(tx, acct, srcShare, dstShare, src.SMB.PermKey, parentKey)
		return err
	case cp.Perm != "":
		e.SMB.PermKey, err = storePermission(tx, acct, dstShare, cp.Perm)
		return err
	case cp.PermKey != "":
		sddl, err := loadPermission(tx, acct, dstShare, cp.PermKey)
		if err != nil {
			return err
		}
		if sddl == "" {
			return azerr.New(azerr.FileInvalidPermissionKey)
		}
		e.SMB.PermKey = cp.PermKey
	default:
		e.SMB.PermKey = parentKey
	}
	return nil
}

// copyPermission returns the key, in share dst, of the permission stored
// under key in share src (permissions are kept per share). A key missing
// from src falls back to def (inferred).
func copyPermission(tx kv.Tx, acct, src, dst, key, def string) (string, error) {
	if src == dst {
		return key, nil
	}
	sddl, err := loadPermission(tx, acct, src, key)
	if err != nil || sddl == "" {
		return def, err
	}
	return storePermission(tx, acct, dst, sddl)
}

// errSourceChanged makes putRangeFromURL read its source again: the source
// range changed between reading its bytes and writing the destination.
var errSourceChanged = errors.New("copy source changed while it was read")

// putRangeFromURLAttempts bounds the optimistic attempts; the last one
// reads the source inside the write transaction. A variable so a test can
// force that path (export_test.go).
var putRangeFromURLAttempts = 5

// readSourceRange resolves the source of Put Range from URL inside tx and
// returns its parts covering [off, off+n).
func readSourceRange(tx kv.Tx, now time.Time, cs *CopySource, off, n int64) ([]extent.Part, error) {
	src, err := loadCopySource(tx, now, cs)
	if err != nil {
		return nil, &SourceError{Err: err}
	}
	if off+n > src.Size {
		return nil, azerr.Newf(azerr.InvalidRange, "The source range is beyond the end of the source file.")
	}
	if err := checkSourceLocks(tx, now, cs, src, off, n); err != nil {
		return nil, &SourceError{Err: err}
	}
	return extent.Within(src.Parts, off, n), nil
}

// Check compares the CRC64 of the source range with the conditions.
func (c CRCConditions) Check(crc []byte) error {
	if c.Content != nil && !bytes.Equal(c.Content, crc) {
		// The detail names are those of Blob's Crc64Mismatch (azure-sdk-for-js
		// recording "stageBlock with invalid CRC64 should fail"): one error
		// code, one body shape.
		return azerr.New(azerr.CRC64Mismatch).
			With("UserSpecifiedCrc", base64.StdEncoding.EncodeToString(c.Content)).
			With("ServerCalculatedCrc", base64.StdEncoding.EncodeToString(crc))
	}
	if c.IfMatch != nil && !bytes.Equal(c.IfMatch, crc) || c.IfNoneMatch != nil && bytes.Equal(c.IfNoneMatch, crc) {
		return azerr.New(azerr.SourceConditionNotMet)
	}
	return nil
}

// rangeCRC64 reads the n bytes of rd, closes it, and returns their
// CRC64 (8 bytes, little endian).
func rangeCRC64(rd io.ReadCloser, n int64) ([]byte, error) {
	defer rd.Close()
	h := extent.NewCRC64()
	if _, err := io.CopyN(h, rd, n); err != nil {
		return nil, err
	}
	return binary.LittleEndian.AppendUint64(nil, h.Sum64()), nil
}
