package file

import (
	"context"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// The domain's content operations: ReadRange (REST Get File, SMB READ),
// WriteRange (REST Put Range update and clear, Put Range From URL, SMB
// WRITE) and SetProperties with a resize (REST Set File Properties
// x-ms-content-length, SMB FileEndOfFileInformation and
// FileAllocationInformation). New data is staged by the front door before
// the call (extent.Store.Stage: the bytes are stored as data items outside
// any transaction); the domain splices it into the entry's parts and
// reference-counts it (extent.AdjustRefs) inside its one transaction.

// readIn is a ReadRange.
type readIn struct {
	// rng is a REST caller's range: nil reads the whole file; it is
	// resolved against the file's size (416 InvalidRange).
	rng *wire.Range
	// limit, when positive, is the longest range a REST caller may read
	// (x-ms-range-get-content-md5: 400 OutOfRangeInput).
	limit int64
	// off and n are an SMB caller's range; it may reach past the end of
	// file.
	off, n int64
}

// readOut is what ReadRange found: the file, the range of it to send
// (n 0 with off at or past the end: nothing, for SMB io.EOF) and the
// inline data items the range needs (read in the transaction; the other
// items outlive it by the collector's grace period, so the front door
// streams them afterwards).
type readOut struct {
	e      *Entry
	off, n int64
	// rp holds the range's inline items and pins on its other data
	// items, taken inside the read transaction (extent.ReadPins): open
	// the reader with it, or Release it.
	rp *extent.ReadPins
}

// readRange reads a range of c's file in one read-only transaction: the
// checks of admit (opGetFile), then the byte-range locks over the range
// (for SMB the range asked for, even past the end of file, as smbd checks
// it).
func (d domain) readRange(ctx context.Context, c *caller, in *readIn) (readOut, error) {
	var out readOut
	if err := opGetFile.precheck(c); err != nil {
		return out, err
	}
	// The transaction function works on copies of c and in, captured by
	// value, so that neither escapes to the heap (as Get File's request
	// did not before).
	cv, iv := *c, *in
	rp := d.s.data.NewReadPins()
	err := d.s.store.View(ctx, func(tx kv.Tx) error {
		cc, ii := cv, iv
		c, in := &cc, &ii
		now := d.now(c)
		t, err := d.load(tx, now, c, false)
		if err != nil {
			return err
		}
		e := t.e
		if err := d.admit(tx, now, c, e, &opGetFile); err != nil {
			return err
		}
		off, n := in.off, in.n
		if c.open == nil {
			off, n = 0, e.Size
			if in.rng != nil {
				if off, n, err = in.rng.Resolve(e.Size); err != nil {
					return err
				}
			}
			if in.limit > 0 && n > in.limit {
				return azerr.Newf(azerr.OutOfRangeInput, "The range must be 4 MiB or smaller when x-ms-range-get-content-md5 is true.")
			}
		}
		if err := d.checkRange(tx, now, c, e, off, n, false); err != nil {
			return err
		}
		if c.open != nil {
			if off >= e.Size {
				out = readOut{e: e, off: off, rp: rp}
				return nil
			}
			n = min(n, e.Size-off)
		}
		out = readOut{e: e, off: off, n: n, rp: rp}
		return rp.Load(tx, e.Parts, off, n)
	})
	if err != nil {
		rp.Release()
	}
	return out, err
}

// readable loads c's existing file (or directory, dir) for a read by
// operation op (Get File Properties, List Ranges, Get Directory
// Properties, List Directories and Files) inside tx: the checks of admit.
func (d domain) readable(tx kv.Tx, c *caller, op *fileOp, dir bool) (*Entry, error) {
	now := d.now(c)
	t, err := d.load(tx, now, c, dir)
	if err != nil {
		return nil, err
	}
	if err := d.admit(tx, now, c, t.e, op); err != nil {
		return nil, err
	}
	return t.e, nil
}

// writeIn is a WriteRange of n bytes at off. Exactly one of data, zeros
// and from is the source.
type writeIn struct {
	// op is opPutRange or opPutRangeFromURL.
	op *fileOp
	// off is the first byte written; WriteToEOF (SMB) appends at the
	// end of file.
	off, n int64
	// data are the bytes to write, staged at offsets 0..n.
	data *extent.Staged
	// zeros is Put Range's clear (x-ms-write: clear): one staged page of
	// zeros for the partly cleared pages (see clearRange).
	zeros *extent.Staged
	// from returns, inside the transaction, the parts of a copy source
	// (Put Range From URL), written at their offset plus shift.
	from  func(tx kv.Tx) ([]extent.Part, error)
	shift int64
	// preserveLastWrite keeps the SMB last-write time (REST
	// x-ms-file-last-write-time: preserve).
	preserveLastWrite bool
	// recorded is set by writeRange: whether data may be recorded, for
	// data.Finish (extent.Recording); false after a refused write.
	recorded bool
}

// writeRange writes a range of c's file in one transaction and returns the
// stored file. In order: the checks of admit, the source (from), the
// range — a REST caller writes within the file (416 InvalidRange), an SMB
// write past the end extends it (MS-FSA 2.1.5.4; the gap reads as zeros)
// within the share's quota and 4 TiB (checkSize) — then the byte-range
// locks over it (checkRange). The write stamps the SMB last-write (unless
// preserved, or frozen on the SMB open: Open.Frozen) and change times, a
// new ETag and Last-Modified, and makes a broken REST lease available
// (lease.OnWrite).
func (d domain) writeRange(ctx context.Context, c *caller, in *writeIn) (*Entry, error) {
	if err := in.op.precheck(c); err != nil {
		return nil, err
	}
	var out *Entry
	cv, iv := *c, *in // captured by value: see readRange
	err := d.s.store.Update(ctx, extent.Recording(&in.recorded, func(tx kv.Tx) error {
		cc, ii := cv, iv
		c, in := &cc, &ii
		now := d.now(c)
		t, err := d.writeTarget(tx, now, c, in)
		if err != nil {
			return err
		}
		e := t.e
		var src []extent.Part
		if in.from != nil {
			if src, err = in.from(tx); err != nil {
				return err
			}
		}
		at, end, err := d.writeBounds(tx, now, c, t, in)
		if err != nil {
			return err
		}
		old := e.Parts
		switch {
		case in.data != nil:
			if err := in.data.Write(tx); err != nil {
				return err
			}
			if len(in.data.Parts) == 0 {
				e.Parts = extent.Splice(e.Parts, at, in.n, nil)
			}
			for _, p := range in.data.Parts {
				p.Off += at
				e.Parts = extent.Splice(e.Parts, p.Off, p.Len, &p)
			}
		case in.from != nil:
			e.Parts = extent.SpliceShifted(e.Parts, at, in.n, src, in.shift)
		default:
			if e.Parts, err = clearRange(tx, e.Parts, at, in.n, in.zeros); err != nil {
				return err
			}
		}
		if err := extent.AdjustRefs(tx, now, old, e.Parts); err != nil {
			return err
		}
		e.Size = end
		if c.open != nil {
			c.open.stamp(e, now, TimeLastWrite|TimeChanged)
		} else {
			rangeWritten(e, now, in.preserveLastWrite)
		}
		out = e
		return d.store(tx, now, c, e)
	}))
	return out, err
}

// writeTarget is writeRange's first checks: the file and what admit
// requires of the operation.
func (d domain) writeTarget(tx kv.Tx, now time.Time, c *caller, in *writeIn) (target, error) {
	t, err := d.load(tx, now, c, false)
	if err != nil {
		return target{}, err
	}
	return t, d.admit(tx, now, c, t.e, in.op)
}

// writeBounds is writeRange's checks of the range: where it starts and
// ends, within the file for a REST caller, the byte-range locks, the
// quota for an SMB write past the end.
func (d domain) writeBounds(tx kv.Tx, now time.Time, c *caller, t target, in *writeIn) (at, end int64, err error) {
	e := t.e
	at = in.off
	if at == WriteToEOF {
		at = e.Size
	}
	end = at + in.n
	if c.open == nil && end > e.Size {
		return 0, 0, azerr.New(azerr.InvalidRange)
	}
	if err := d.checkRange(tx, now, c, e, at, in.n, true); err != nil {
		return 0, 0, err
	}
	end = max(e.Size, end)
	if c.open != nil {
		if err := d.checkSize(t.share, end); err != nil {
			return 0, 0, err
		}
	}
	return at, end, nil
}

// checkWriteFirst applies writeRange's checks, in a read-only
// transaction, to a REST write whose body has not been read: the request
// sent Expect: 100-continue and its client holds the body back until
// asked (server/expect.go); a refused write is answered at once. The
// write's transaction applies them again.
func (d domain) checkWriteFirst(ctx context.Context, c *caller, in *writeIn) error {
	if err := in.op.precheck(c); err != nil {
		return err
	}
	return d.s.store.View(ctx, func(tx kv.Tx) error {
		cc := *c
		now := d.now(&cc)
		t, err := d.writeTarget(tx, now, &cc, in)
		if err != nil {
			return err
		}
		_, _, err = d.writeBounds(tx, now, &cc, t, in)
		return err
	})
}

// store stamps the write of e at now (a new ETag and Last-Modified; a
// broken or expired REST lease becomes available, lease.OnWrite) and
// stores it.
func (d domain) store(tx kv.Tx, now time.Time, c *caller, e *Entry) error {
	e.Lease = lease.OnWrite(e.Lease, now)
	touch(e, now)
	return putEntry(tx, c.acct, c.share, "", e)
}

// resize sets e's end of file to size at now: the read-only attribute
// (a REST caller: a resize is a content change, truncation or extension,
// which the attribute refuses (inferred)), the quota
// (checkSize), then content past a smaller size is released. Byte-range
// locks do not apply (see checkRange). An SMB resize is a content write:
// it stamps the last-write and change times; a REST Set File Properties
// sets those from its own headers.
func (d domain) resize(tx kv.Tx, now time.Time, c *caller, sh *Share, e *Entry, size int64) error {
	if c.open == nil {
		if err := d.readOnlyREST(e, true); err != nil {
			return err
		}
	}
	if err := d.checkSize(sh, size); err != nil {
		return err
	}
	if size < e.Size {
		old := e.Parts
		e.Parts = extent.Trim(e.Parts, size)
		if err := extent.AdjustRefs(tx, now, old, e.Parts); err != nil {
			return err
		}
	}
	e.Size = size
	if c.open != nil {
		rangeWritten(e, now, false)
	}
	return nil
}
