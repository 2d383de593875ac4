package file

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Data operations of the SMB view: READ, WRITE and the size setters. Each
// is a call of the File domain (domain_io.go) with the open as its
// caller, the same calls REST Get File, Put Range and Set File Properties
// make: new data is staged as data items before the transaction
// (extent.Store.Stage), spliced into the entry's parts and reference
// counted (extent.AdjustRefs) inside it, and the write is stamped with
// new SMB last-write and change times, a new ETag and Last-Modified.

// Read returns up to n bytes of o's file from offset off (SMB2 READ): a
// short result at the end of file, and io.EOF when off is at or past the
// end (STATUS_END_OF_FILE). Holes of a sparse file read as zeros. o needs
// FILE_READ_DATA or FILE_EXECUTE (ErrAccessDenied); n is at most
// MaxIOSize (ErrInvalidParameter); a range overlapping another open's
// exclusive byte-range lock is ErrFileLockConflict; ErrIsDirectory,
// ErrFileClosed. It is the domain's ReadRange (domain.readRange), as REST
// Get File is.
func (v *Opens) Read(ctx context.Context, o *Open, off int64, n int) ([]byte, error) {
	c := smbCaller(o)
	if err := opGetFile.precheck(&c); err != nil {
		return nil, err
	}
	if off < 0 || n < 0 || n > MaxIOSize {
		return nil, fmt.Errorf("%w: read of %d bytes at %d", ErrInvalidParameter, n, off)
	}
	out, err := v.s.dom().readRange(ctx, &c, &readIn{off: off, n: int64(n)})
	if err != nil {
		return nil, err
	}
	if out.off >= out.e.Size {
		out.rp.Release()
		return nil, io.EOF
	}
	buf := make([]byte, out.n)
	if out.n == 0 {
		out.rp.Release()
		return buf, nil
	}
	// The read transaction pinned the data items (extent.ReadPins), so
	// reading them after it is safe however soon the collector runs.
	cr := v.s.data.OpenReader(ctx, out.rp, nil)
	defer cr.Close()
	if _, err := io.ReadFull(cr, buf); err != nil {
		return nil, fmt.Errorf("reading file %d: %w", o.FileID, err)
	}
	return buf, nil
}

// Write writes data at off (WriteToEOF: at the end of file) through o
// (SMB2 WRITE). Unlike Put Range, a write past the end of file extends
// it (the gap reads as zeros). The file's SMB last-write and change
// times become now, with a new ETag and Last-Modified. o needs
// FILE_WRITE_DATA or FILE_APPEND_DATA (ErrAccessDenied); data is at most
// MaxIOSize (ErrInvalidParameter); a file larger than the share's quota
// or than 4 TiB is ErrDiskFull; a range overlapping another open's
// byte-range lock, or a shared lock of o, is ErrFileLockConflict;
// ErrIsDirectory, ErrFileClosed. The data is staged here, then written
// by the domain's WriteRange (domain.writeRange), as REST Put Range is.
func (v *Opens) Write(ctx context.Context, o *Open, off int64, data []byte) error {
	c := smbCaller(o)
	if err := opPutRange.precheck(&c); err != nil {
		return err
	}
	if off < WriteToEOF || len(data) > MaxIOSize {
		return fmt.Errorf("%w: write of %d bytes at %d", ErrInvalidParameter, len(data), off)
	}
	if off > MaxFileSize-int64(len(data)) {
		return fmt.Errorf("%w: a write to %d", ErrDiskFull, off+int64(len(data)))
	}
	if len(data) == 0 {
		// A zero-length write changes nothing (MS-FSA 2.1.5.4) but still
		// needs a live handle.
		return v.s.store.View(ctx, func(tx kv.Tx) error {
			_, _, err := v.live(tx, v.s.clock.Now(), o)
			return err
		})
	}
	n := int64(len(data))
	st, err := v.s.data.Stage(ctx, bytes.NewReader(data), n, extent.Digests{}, false)
	if err != nil {
		return err
	}
	// The chunks stay pinned until the transaction recording them is
	// done, and are freed at once if the write is refused, as REST Put
	// Range's are (extent.Staged.Finish).
	in := &writeIn{op: &opPutRange, off: off, n: n, data: st}
	defer func() { st.Finish(ctx, in.recorded) }()
	_, err = v.s.dom().writeRange(ctx, &c, in)
	return err
}

// SetEndOfFile truncates or extends o's file to size
// (FileEndOfFileInformation): content past a smaller size is released, a
// larger size reads as zeros. o needs FILE_WRITE_DATA (ErrAccessDenied);
// ErrDiskFull, ErrInvalidParameter, ErrIsDirectory, ErrFileClosed. It is
// the domain's resize (domain.setProperties), as REST Set File Properties
// with x-ms-content-length is.
func (v *Opens) SetEndOfFile(ctx context.Context, o *Open, size int64) error {
	c := smbCaller(o)
	_, err := v.s.dom().setProperties(ctx, &c, &propsIn{op: &opSetEndOfFile, resize: true, size: size})
	return err
}

// SetAllocation handles FileAllocationInformation: the service allocates
// nothing ahead, so a size at or above the end of file changes nothing;
// a smaller one truncates the file to it (MS-FSA 2.1.5.15.1). o needs
// FILE_WRITE_DATA (ErrAccessDenied); ErrIsDirectory, ErrFileClosed.
func (v *Opens) SetAllocation(ctx context.Context, o *Open, size int64) error {
	c := smbCaller(o)
	_, err := v.s.dom().setProperties(ctx, &c, &propsIn{op: &opSetAllocation, resize: true, alloc: true, size: size})
	return err
}
