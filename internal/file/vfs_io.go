package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// Data operations of the SMB view: READ, WRITE and the size setters. A
// content change goes through the same path as Put Range and Set File
// Properties: new data is staged as data items before the transaction
// (extent.Store.Stage), spliced into the entry's parts and reference
// counted (extent.AdjustRefs) inside it, and the write is stamped with
// new SMB last-write and change times, a new ETag and Last-Modified.

// WriteToEOF as a Write offset appends at the end of file (SMB2 WRITE
// Offset 0xFFFFFFFFFFFFFFFF, MS-FSA 2.1.5.4 FILE_WRITE_TO_END_OF_FILE).
const WriteToEOF int64 = -1

// dataFile checks that o is a file open with one of the access bits in
// need: ErrIsDirectory, ErrAccessDenied.
func dataFile(o *Open, need uint32, what string) error {
	if o.Dir {
		return fmt.Errorf("%w: %s on a directory", ErrIsDirectory, what)
	}
	if !o.has(need) {
		return fmt.Errorf("%w: %s needs access %#x, the open has %#x", ErrAccessDenied, what, need, o.GrantedAccess)
	}
	return nil
}

// Read returns up to n bytes of o's file from offset off (SMB2 READ): a
// short result at the end of file, and io.EOF when off is at or past the
// end (STATUS_END_OF_FILE). Holes of a sparse file read as zeros. o needs
// FILE_READ_DATA or FILE_EXECUTE (ErrAccessDenied); n is at most
// MaxIOSize (ErrInvalidParameter); a range overlapping another open's
// exclusive byte-range lock is ErrFileLockConflict; ErrIsDirectory,
// ErrFileClosed.
func (v *VFS) Read(ctx context.Context, o *Open, off int64, n int) ([]byte, error) {
	if err := dataFile(o, accessRead, "read"); err != nil {
		return nil, err
	}
	if off < 0 || n < 0 || n > MaxIOSize {
		return nil, fmt.Errorf("%w: read of %d bytes at %d", ErrInvalidParameter, n, off)
	}
	var parts []extent.Part
	var inline map[string][]byte
	var size int64
	err := v.s.store.View(ctx, func(tx kv.Tx) error {
		now := v.s.clock.Now()
		_, e, err := v.live(tx, now, o)
		if err != nil {
			return err
		}
		// The requested range, even past the end of file, must not
		// overlap another open's exclusive lock (as smbd checks it).
		if err := checkIO(tx, now, o, off, int64(n), false); err != nil {
			return err
		}
		size, parts = e.Size, e.Parts
		if off >= size {
			return nil
		}
		inline, err = extent.Prefetch(tx, parts, off, min(int64(n), size-off))
		return err
	})
	if err != nil {
		return nil, err
	}
	if off >= size {
		return nil, io.EOF
	}
	cnt := min(int64(n), size-off)
	buf := make([]byte, cnt)
	if cnt == 0 {
		return buf, nil
	}
	// The data items outlive the transaction by the collector's grace
	// period, so streaming them after it is safe (as Get File does).
	cr := v.s.data.NewReader(ctx, parts, inline, off, cnt)
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
// ErrIsDirectory, ErrFileClosed.
func (v *VFS) Write(ctx context.Context, o *Open, off int64, data []byte) error {
	if err := dataFile(o, accessWrite, "write"); err != nil {
		return err
	}
	if off < WriteToEOF || len(data) > MaxIOSize {
		return fmt.Errorf("%w: write of %d bytes at %d", ErrInvalidParameter, len(data), off)
	}
	if off > maxFileSize-int64(len(data)) {
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
	st, err := v.s.data.Stage(ctx, bytes.NewReader(data), n, nil, false)
	if err != nil {
		return err
	}
	// The chunks stay pinned until the transaction recording them is done.
	defer st.Release()
	return v.update(ctx, o, func(tx kv.Tx, now time.Time, sh *share, e *entry) error {
		at := off
		if at == WriteToEOF {
			at = e.Size
		}
		if err := checkIO(tx, now, o, at, n, true); err != nil {
			return err
		}
		end := max(e.Size, at+n)
		if end > maxFileSize || checkQuota(sh, end) != nil {
			return fmt.Errorf("%w: a file of %d bytes", ErrDiskFull, end)
		}
		if err := st.Write(tx); err != nil {
			return err
		}
		old := e.Parts
		// Stage made parts at offsets 0..n; shift them to at.
		for _, p := range st.Parts {
			p.Off += at
			e.Parts = extent.Splice(e.Parts, p.Off, p.Len, &p)
		}
		if err := extent.AdjustRefs(tx, now, old, e.Parts); err != nil {
			return err
		}
		e.Size = end
		// Times the client set or froze on this handle stay as set.
		o.stamp(e, now, TimeLastWrite|TimeChanged)
		return nil
	})
}

// errUnchanged, returned by an update function, ends the update
// without a write (and without error).
var errUnchanged = errors.New("file: unchanged")

// update runs fn on o's live entry in one transaction, then stamps the
// write (ETag, Last-Modified; a broken or expired REST lease is cleared as
// for any write) and stores the entry.
func (v *VFS) update(ctx context.Context, o *Open, fn func(tx kv.Tx, now time.Time, sh *share, e *entry) error) error {
	return v.s.store.Update(ctx, func(tx kv.Tx) error {
		now := v.s.clock.Now()
		sh, e, err := v.live(tx, now, o)
		if err != nil {
			return err
		}
		if err := fn(tx, now, sh, e); err != nil {
			if errors.Is(err, errUnchanged) {
				return nil
			}
			return err
		}
		e.Lease = lease.OnWrite(e.Lease, now)
		touch(e, now)
		return putEntry(tx, o.Account, o.Share, "", e)
	})
}

// resize sets e's size at now: content past a smaller size is released.
func resize(tx kv.Tx, now time.Time, sh *share, e *entry, size int64) error {
	if size < 0 {
		return fmt.Errorf("%w: size %d", ErrInvalidParameter, size)
	}
	if size > maxFileSize || checkQuota(sh, size) != nil {
		return fmt.Errorf("%w: a file of %d bytes", ErrDiskFull, size)
	}
	if size < e.Size {
		old := e.Parts
		e.Parts = extent.Trim(e.Parts, size)
		if err := extent.AdjustRefs(tx, now, old, e.Parts); err != nil {
			return err
		}
	}
	e.Size = size
	rangeWritten(e, now, false)
	return nil
}

// SetEndOfFile truncates or extends o's file to size
// (FileEndOfFileInformation): content past a smaller size is released, a
// larger size reads as zeros. o needs FILE_WRITE_DATA (ErrAccessDenied);
// ErrDiskFull, ErrInvalidParameter, ErrIsDirectory, ErrFileClosed.
func (v *VFS) SetEndOfFile(ctx context.Context, o *Open, size int64) error {
	if err := dataFile(o, AccessWriteData, "set end of file"); err != nil {
		return err
	}
	return v.update(ctx, o, func(tx kv.Tx, now time.Time, sh *share, e *entry) error {
		return resize(tx, now, sh, e, size)
	})
}

// SetAllocation handles FileAllocationInformation: the service allocates
// nothing ahead, so a size at or above the end of file changes nothing;
// a smaller one truncates the file to it (MS-FSA 2.1.5.15.1). o needs
// FILE_WRITE_DATA (ErrAccessDenied); ErrIsDirectory, ErrFileClosed.
func (v *VFS) SetAllocation(ctx context.Context, o *Open, size int64) error {
	if err := dataFile(o, AccessWriteData, "set allocation"); err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("%w: allocation %d", ErrInvalidParameter, size)
	}
	return v.update(ctx, o, func(tx kv.Tx, now time.Time, sh *share, e *entry) error {
		if size >= e.Size {
			return errUnchanged
		}
		return resize(tx, now, sh, e, size)
	})
}
