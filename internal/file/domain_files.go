package file

import (
	"bytes"
	"context"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// The File REST file operations as domain methods: each takes a Ref
// naming the file and the parsed request values (sizes, ranges, staged
// data, properties), runs in one kv transaction (through the shared
// domain calls of domain_io.go and domain_meta.go) and returns the stored
// entry for the front end (filerest/file.go) to render. A method given staged data
// finishes it (extent.Staged.Finish): its chunks are kept when the write
// was recorded and freed at once when it was refused.

// CreateFileInput is the input of CreateFile.
type CreateFileInput struct {
	Ref
	// Size is the new file's length.
	Size int64
	// Props are the file's HTTP properties.
	Props Props
	// Data, when not nil, are the first bytes of the file, written at
	// offset 0 (at most Size bytes). CreateFile finishes it.
	Data *extent.Staged
	Meta map[string]string
	// SMB are the SMB properties to set (parseSMB with create).
	SMB *SMBRequest
	// NoReplace, when not nil, is the answer for an existing file, which
	// CreateFile otherwise replaces (a SAS that grants create but not
	// write: 403 AuthorizationPermissionMismatch).
	NoReplace error
}

// CreateFile is Create File: it checks the share's quota, then creates
// the file or replaces an existing one (see domain.create).
func (s *Service) CreateFile(ctx context.Context, in CreateFileInput) (EntryOutput, error) {
	c := in.caller()
	ci := &createIn{size: in.Size, props: in.Props, data: in.Data, meta: in.Meta, smb: in.SMB, noReplace: in.NoReplace}
	defer func() { in.Data.Finish(ctx, ci.recorded) }()
	e, err := s.dom().create(ctx, &c, ci)
	return EntryOutput{Entry: e}, err
}

// GetFilePropertiesInput is the input of GetFileProperties.
type GetFilePropertiesInput struct{ Ref }

// GetFileProperties is Get File Properties and Get File Metadata, also
// through share snapshots.
func (s *Service) GetFileProperties(ctx context.Context, in GetFilePropertiesInput) (EntryOutput, error) {
	var e *Entry
	c := in.caller()
	err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		e, err = s.dom().readable(tx, &c, &opGetFileProperties, false)
		return err
	})
	return EntryOutput{Entry: e}, err
}

// SetFilePropertiesInput is the input of SetFileProperties.
type SetFilePropertiesInput struct {
	Ref
	// Resize sets the file's length to Size.
	Resize bool
	Size   int64
	// Props, when not nil, replace the HTTP properties.
	Props *Props
	// SMB are the SMB properties to set; absent ones are preserved.
	SMB *SMBRequest
}

// SetFileProperties is Set File Properties: size, HTTP and SMB
// properties (see domain.setProperties).
func (s *Service) SetFileProperties(ctx context.Context, in SetFilePropertiesInput) (EntryOutput, error) {
	c := in.caller()
	out, err := s.dom().setProperties(ctx, &c, &propsIn{op: &opSetProperties, resize: in.Resize, size: in.Size, props: in.Props, smb: in.SMB})
	return EntryOutput{Entry: out.e}, err
}

// SetFileMetadataInput is the input of SetFileMetadata.
type SetFileMetadataInput struct {
	Ref
	// Meta replaces the file's metadata (nil clears it).
	Meta map[string]string
}

// SetFileMetadata is Set File Metadata.
func (s *Service) SetFileMetadata(ctx context.Context, in SetFileMetadataInput) (EntryOutput, error) {
	c := in.caller()
	out, err := s.dom().setProperties(ctx, &c, &propsIn{op: &opSetFileMetadata, setMeta: true, meta: in.Meta})
	return EntryOutput{Entry: out.e}, err
}

// DeleteFileInput is the input of DeleteFile.
type DeleteFileInput struct{ Ref }

// DeleteFileOutput is the result of DeleteFile (nothing beyond success).
type DeleteFileOutput struct{}

// DeleteFile is Delete File: the file is deleted at once and its data
// references released (see domain.delete).
func (s *Service) DeleteFile(ctx context.Context, in DeleteFileInput) (DeleteFileOutput, error) {
	c := in.caller()
	return DeleteFileOutput{}, s.dom().delete(ctx, &c, &deleteIn{})
}

// PutRangeInput is the input of PutRange.
type PutRangeInput struct {
	Ref
	// Offset and Length are the range written; Data holds its bytes,
	// staged at offsets 0..Length. PutRange finishes Data.
	Offset, Length int64
	Data           *extent.Staged
	// PreserveLastWrite keeps the SMB last-write time.
	PreserveLastWrite bool
}

// PutRange is Put Range with x-ms-write: update: it writes Data within
// the file (416 InvalidRange past its end; see domain.writeRange).
func (s *Service) PutRange(ctx context.Context, in PutRangeInput) (EntryOutput, error) {
	c := in.caller()
	wi := &writeIn{op: &opPutRange, off: in.Offset, n: in.Length, data: in.Data, preserveLastWrite: in.PreserveLastWrite}
	defer func() { in.Data.Finish(ctx, wi.recorded) }()
	e, err := s.dom().writeRange(ctx, &c, wi)
	return EntryOutput{Entry: e}, err
}

// CheckPutRange applies Put Range's checks to in (its Data unused)
// before the body is read, for a request that sent Expect: 100-continue
// (checkWriteFirst): a write that would be refused is refused at once.
func (s *Service) CheckPutRange(ctx context.Context, in PutRangeInput) error {
	c := in.caller()
	return s.dom().checkWriteFirst(ctx, &c, &writeIn{op: &opPutRange, off: in.Offset, n: in.Length})
}

// ClearRangeInput is the input of ClearRange.
type ClearRangeInput struct {
	Ref
	// Offset and Length are the range cleared.
	Offset, Length int64
	// PreserveLastWrite keeps the SMB last-write time.
	PreserveLastWrite bool
}

// ClearRange is Put Range with x-ms-write: clear. Clearing frees whole
// 512-byte pages; bytes of a partly cleared page are zeroed but stay
// allocated (List Ranges still reports them) (azfile recorded test
// TestClearRangeNonDefaultCount). The zeros come from one small data
// item, used only if needed (clearRange).
func (s *Service) ClearRange(ctx context.Context, in ClearRangeInput) (EntryOutput, error) {
	zeros, err := s.data.Stage(ctx, bytes.NewReader(make([]byte, pageSize)), pageSize, extent.Digests{}, false)
	if err != nil {
		return EntryOutput{}, err
	}
	defer zeros.Release()
	c := in.caller()
	e, err := s.dom().writeRange(ctx, &c, &writeIn{op: &opPutRange, off: in.Offset, n: in.Length, zeros: zeros, preserveLastWrite: in.PreserveLastWrite})
	return EntryOutput{Entry: e}, err
}

// ListRangesInput is the input of ListRanges.
type ListRangesInput struct {
	Ref
	// Range, when not nil, limits the listing; it is resolved against
	// the file's size (416 InvalidRange).
	Range *wire.Range
	// PrevSnapshot, when not "", lists the changes since that share
	// snapshot (wire.FormatISO7) instead of the written ranges.
	PrevSnapshot string
}

// ListRangesOutput is the result of ListRanges.
type ListRangesOutput struct {
	Entry *Entry
	// Spans are the written ranges, or with PrevSnapshot the changed
	// ones (Clear: cleared since).
	Spans []extent.Span
}

// ListRanges is List Ranges: the file's written ranges, or the ranges
// changed since a share snapshot of the same file (by file ID; a file
// created after the snapshot diffs against nothing). An unknown snapshot
// is 404 ShareSnapshotNotFound.
func (s *Service) ListRanges(ctx context.Context, in ListRangesInput) (ListRangesOutput, error) {
	var e, prev *Entry
	c := in.caller()
	err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		if e, err = s.dom().readable(tx, &c, &opListRanges, false); err != nil {
			return err
		}
		if in.PrevSnapshot == "" {
			return nil
		}
		if _, err := loadShare(tx, in.Account, in.Share, in.PrevSnapshot); err != nil {
			if azerr.Has(err, azerr.ShareNotFound) {
				return azerr.New(azerr.ShareSnapshotNotFound)
			}
			return err
		}
		prev, err = loadByID(tx, in.Account, in.Share, in.PrevSnapshot, e.ID)
		return err
	})
	if err != nil {
		return ListRangesOutput{}, err
	}
	lo, hi := int64(0), e.Size
	if in.Range != nil {
		if lo, hi, err = in.Range.Resolve(e.Size); err != nil {
			return ListRangesOutput{}, err
		}
		hi += lo
	}
	out := ListRangesOutput{Entry: e}
	if in.PrevSnapshot != "" {
		var prevParts []extent.Part
		if prev != nil {
			prevParts = prev.Parts
		}
		out.Spans = extent.Diff(prevParts, e.Parts, lo, hi)
	} else {
		out.Spans = extent.Spans(e.Parts, lo, hi)
	}
	return out, nil
}

// GetFileInput is the input of GetFile.
type GetFileInput struct {
	Ref
	// Range is the range asked for; nil reads the whole file. It is
	// resolved against the file's size (416 InvalidRange).
	Range *wire.Range
	// Limit, when positive, is the longest range that may be read
	// (x-ms-range-get-content-md5: 400 OutOfRangeInput).
	Limit int64
	// RangeMD5 reads the range at once so its MD5 can be sent
	// (x-ms-range-get-content-md5; Body.MD5).
	RangeMD5 bool
}

// GetFileOutput is what GetFile found: the file and the range of it to
// send, with the inline data items the range needs (read in the
// transaction; the other items outlive it by the collector's grace
// period, so the front end streams them afterwards).
type GetFileOutput struct {
	Entry          *Entry
	Offset, Length int64
	// Body streams the range; the caller must send or close it. Its data
	// stays pinned until then, so a download outlives an overwrite.
	Body *extent.Body
}

// GetFile is Get File: the checks of a read (see domain.readRange) and
// the range to send, in one read-only transaction.
func (s *Service) GetFile(ctx context.Context, in GetFileInput) (GetFileOutput, error) {
	c := in.caller()
	out, err := s.dom().readRange(ctx, &c, &readIn{rng: in.Range, limit: in.Limit})
	if err != nil {
		return GetFileOutput{}, err
	}
	body, err := s.data.OpenBodyFrom(ctx, out.rp, in.RangeMD5, nil)
	if err != nil {
		return GetFileOutput{}, err
	}
	return GetFileOutput{Entry: out.e, Offset: out.off, Length: out.n, Body: body}, nil
}

// LeaseFileInput is the input of LeaseFile.
type LeaseFileInput struct {
	Ref
	Request lease.Request
}

// LeaseFileOutput is the result of LeaseFile.
type LeaseFileOutput struct {
	Result lease.Result
	Entry  *Entry
}

// LeaseFile is Lease File: acquire (infinite only), change, release and
// break (immediate); the state machine is package lease's (see
// domain.leaseFile).
func (s *Service) LeaseFile(ctx context.Context, in LeaseFileInput) (LeaseFileOutput, error) {
	c := in.caller()
	out, err := s.dom().leaseFile(ctx, &c, in.Request)
	if err != nil {
		return LeaseFileOutput{}, err
	}
	return LeaseFileOutput{Result: out.res, Entry: out.e}, nil
}

// RenameInput is the input of Rename.
type RenameInput struct {
	// Ref names the destination.
	Ref
	// Source is the share-relative path of the item to move.
	Source []string
	// Dir: Rename Directory (else Rename File).
	Dir bool
	// Replace replaces an existing destination file; IgnoreReadOnly
	// replaces a read-only one.
	Replace, IgnoreReadOnly bool
	// SourceLease and DestLease are the lease IDs of the source and of a
	// replaced destination.
	SourceLease, DestLease string
	// SMB, Meta (nil: preserve) and ContentType (nil: preserve) are the
	// properties the rename sets on the item.
	SMB         *SMBRequest
	Meta        map[string]string
	ContentType *string
}

// Rename is Rename File and Rename Directory, within one share (see
// domain.rename and the outcomes filerest/rename.go lists).
func (s *Service) Rename(ctx context.Context, in RenameInput) (EntryOutput, error) {
	c := in.caller()
	e, err := s.dom().rename(ctx, &c, &renameIn{src: in.Source, dir: in.Dir, replace: in.Replace, ignoreRO: in.IgnoreReadOnly,
		srcLease: in.SourceLease, dstLease: in.DestLease, smb: in.SMB, meta: in.Meta, contentType: in.ContentType})
	return EntryOutput{Entry: e}, err
}
