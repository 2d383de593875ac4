package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/cerulean-storage/cerulean/internal/vfs"
)

// The write-ahead log is one file filled with zeros when it is created,
// so that appending a record and fdatasync never change the file's size
// or block map (no filesystem journal commit for metadata). Records are
// appended from offset 0; a checkpoint (a synced bbolt commit recording
// the last sequence number it contains) makes every record obsolete and
// the next record is written at offset 0 again.
//
// A new log starts small (walInitialSize): an empty store does not
// occupy 64 MiB. A checkpoint forced by the log (half full, or a record
// that did not fit) doubles it, up to Options.LogSize, right after the
// commit, while it holds no record and nothing writes to it (grow): the
// new part is zero-filled and synced before any record goes there, so
// the file's size and blocks still never change under a record's
// fdatasync. An idle or lightly written store keeps its small log; a busy
// one reaches the full size after a few checkpoints.
//
// Record layout (little endian):
//
//	len    uint32  length of seq+synced+payload
//	crc    uint32  CRC-32C of the database's log id, seq, synced and payload
//	seq    uint64  group sequence number, consecutive
//	synced uint64  the last sequence number known durable (synced) when
//	               this record was written
//	payload        entries: op byte (1 put, 2 delete), uvarint key length,
//	               key, and for puts uvarint value length and value
//
// Recovery replays the records that follow the checkpoint: from offset
// 0, while the record is whole (length and CRC) and its seq is exactly
// the next expected one. Older records left behind by an earlier round
// carry smaller sequence numbers and end the replay, as do zeros and a
// record torn by a crash (which was never acknowledged: a group is
// answered only after the fdatasync that covers it). The log id, random
// per database file, keeps a log left next to another database from
// being replayed into it.
//
// As in pebble's log format (github.com/cockroachdb/pebble,
// record/record.go: checksummed chunks whose headers, in recycled log
// files, carry the log number, so stale bytes are never taken for
// records), a record proves itself by its checksum, log id and sequence
// number. Where the replay ends, recovery also tells a torn tail from
// damage: a crash can only damage records written after the last
// fdatasync, and every record names, in synced, the last record known
// durable when it was written. So
// if a whole record of this log, beyond the end of the replay, says
// that the record the replay needed next had been synced, that record
// was acknowledged and is now unreadable: the log is damaged, Open
// refuses to start (naming the offset) and leaves the file as it is,
// instead of starting the log again over the evidence and silently
// dropping every acknowledged group after the damage. Damage to the last
// synced records, with nothing written after them, looks like a torn
// tail and cannot be told from one.
//
// Logs written before the synced field existed (no format key in the
// database) are replayed with the older 16-byte header, without that
// check.

const (
	walHeader      = 24
	walHeaderV1    = 16 // before the synced field
	walFormat      = 2  // the format key's value for walHeader records
	walDefaultSize = 64 << 20
	walTestSize    = 4 << 20
	walInitialSize = 1 << 20 // a new log's size; it grows up to Options.LogSize
	opPut          = 1
	opDelete       = 2
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

type wal struct {
	f       vfs.File
	path    string
	size    int64  // file size
	max     int64  // size grow stops at
	durable bool   // grow syncs the zeros it writes (a durable store)
	off     int64  // where the next record goes
	id      []byte // the database's log id, the CRC's seed
	hdr     int    // header length of the records on file: walHeader, or walHeaderV1 for an old log
	synced  uint64 // sequence number of the last record made durable (syncer only)

	// Zero-filling a new log in the background (prezero): zmu orders the
	// filler's writes of zeros before any record write that reaches the
	// same bytes. hi is the end of the furthest record write so far; the
	// filler only writes zeros at or past it, and stops once a record
	// write has passed it.
	zmu     sync.Mutex
	zeroing atomic.Bool // the filler may still write: record writes take zmu
	hi      int64
	zstop   chan struct{}
	zdone   chan struct{}
}

func (w *wal) checksum(body []byte) uint32 {
	return crc32.Update(crc32.Checksum(w.id, crcTable), crcTable, body)
}

// openWAL opens the log at path, creating it and filling it with size
// zeros if it is new or empty; durable makes the zeros durable before it
// returns. With background, a new log is instead extended to size at once
// (a sparse file reads as zeros, which is all replay needs) and filled
// with real zeros by a goroutine while the store serves: start-up does not
// wait for 64 MiB to be written and synced, and later log writes still
// find their blocks allocated (see prezero).
func openWAL(fsys vfs.FS, path string, size int64, durable, background bool) (*wal, error) {
	f, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.Size() > 0 {
		// An existing log keeps its size and its bytes: recovery reads
		// it before anything is written to it.
		size = st.Size()
	} else if t, ok := f.(interface{ Truncate(int64) error }); background && ok {
		if err := t.Truncate(size); err != nil {
			f.Close()
			return nil, err
		}
		if durable {
			if err := f.Datasync(); err != nil {
				f.Close()
				return nil, err
			}
		}
		w := &wal{f: f, path: path, size: size, hdr: walHeader, zstop: make(chan struct{}), zdone: make(chan struct{})}
		w.zeroing.Store(true)
		go w.prezero(durable, size)
		return w, nil
	} else {
		// Write real zeros (not a sparse extension or fallocate): later
		// overwrites then need no block allocation.
		zero := make([]byte, 1<<20)
		for off := st.Size(); off < size; {
			n := min(int64(len(zero)), size-off)
			if _, err := f.WriteAt(zero[:n], off); err != nil {
				f.Close()
				return nil, err
			}
			off += n
		}
		if durable {
			if err := f.Datasync(); err != nil {
				f.Close()
				return nil, err
			}
		}
	}
	return &wal{f: f, path: path, size: size, hdr: walHeader}, nil
}

// entry is one write of a group: a put, or a delete when del is set.
type entry struct {
	key []byte
	val []byte
	del bool
}

// encodeRecord builds the record of group seq, without its checksum
// (append adds it).
func encodeRecord(seq uint64, es []entry) []byte {
	n := walHeader
	for _, e := range es {
		n += 1 + binary.MaxVarintLen32 + len(e.key)
		if !e.del {
			n += binary.MaxVarintLen32 + len(e.val)
		}
	}
	b := make([]byte, walHeader, n)
	binary.LittleEndian.PutUint64(b[8:], seq)
	for _, e := range es {
		if e.del {
			b = append(b, opDelete)
			b = binary.AppendUvarint(b, uint64(len(e.key)))
			b = append(b, e.key...)
			continue
		}
		b = append(b, opPut)
		b = binary.AppendUvarint(b, uint64(len(e.key)))
		b = append(b, e.key...)
		b = binary.AppendUvarint(b, uint64(len(e.val)))
		b = append(b, e.val...)
	}
	binary.LittleEndian.PutUint32(b[0:], uint32(len(b)-8))
	return b
}

var errBadRecord = errors.New("kv/bolt: malformed log record")

// ErrLogDamaged is returned by Open when the write-ahead log lost records
// that had been acknowledged: bytes changed after they were synced.
var ErrLogDamaged = errors.New("kv/bolt: write-ahead log damaged")

// decodeEntries parses a record's payload.
func decodeEntries(p []byte) ([]entry, error) {
	var es []entry
	for len(p) > 0 {
		op := p[0]
		p = p[1:]
		kl, n := binary.Uvarint(p)
		if n <= 0 || kl > uint64(len(p)-n) {
			return nil, errBadRecord
		}
		e := entry{key: p[n : n+int(kl)]}
		p = p[n+int(kl):]
		switch op {
		case opDelete:
			e.del = true
		case opPut:
			vl, n := binary.Uvarint(p)
			if n <= 0 || vl > uint64(len(p)-n) {
				return nil, errBadRecord
			}
			e.val = p[n : n+int(vl)]
			p = p[n+int(vl):]
		default:
			return nil, errBadRecord
		}
		es = append(es, e)
	}
	return es, nil
}

// reserve claims the next n bytes of the log and returns their offset;
// ok is false when they do not fit (the caller checkpoints instead). The
// writer reserves; the syncer writes.
func (w *wal) reserve(n int) (off int64, ok bool) {
	if w.off+int64(n) > w.size {
		return 0, false
	}
	off = w.off
	w.off += int64(n)
	return off, true
}

// write seals the records in b (the synced field, w.synced, and their
// checksums) and writes them at off.
func (w *wal) write(b []byte, off int64) error {
	for p := b; len(p) >= walHeader; {
		n := int(binary.LittleEndian.Uint32(p[0:])) + 8
		binary.LittleEndian.PutUint64(p[16:], w.synced)
		binary.LittleEndian.PutUint32(p[4:], w.checksum(p[8:n]))
		p = p[n:]
	}
	if w.zeroing.Load() { // only while a new log is being filled
		w.zmu.Lock()
		if off+int64(len(b)) > w.hi {
			w.hi = off + int64(len(b))
		}
		w.zmu.Unlock()
	}
	if _, err := w.f.WriteAt(b, off); err != nil {
		return fmt.Errorf("kv/bolt: log write: %w", err)
	}
	return nil
}

// prezero fills a new, sparse log with real zeros, 1 MiB at a time, so
// that record writes overwrite allocated blocks and their fdatasyncs need
// not commit block allocations. It only writes where no record write has
// reached (at or past hi, checked and written under zmu, which record
// writes take to raise hi before they write), and stops when a record
// write passes it or the log closes. The zeros need no sync for
// correctness (unwritten parts of a sparse file read as zeros); with
// durable they are synced at the end, as the inline fill does.
func (w *wal) prezero(durable bool, size int64) {
	defer close(w.zdone)
	zero := make([]byte, 1<<20)
	// size is the log's size at creation: grow, on the writer, extends
	// the file past it with its own zeros.
	for off := int64(0); off < size; off += int64(len(zero)) {
		select {
		case <-w.zstop:
			return
		default:
		}
		n := min(int64(len(zero)), size-off)
		w.zmu.Lock()
		if off < w.hi {
			// A record write got here first: what lies before it is
			// written or will be, and what lies past it is reached in
			// turn; allocating the rest is left to the writes.
			w.zeroing.Store(false)
			w.zmu.Unlock()
			return
		}
		_, err := w.f.WriteAt(zero[:n], off)
		w.zmu.Unlock()
		if err != nil {
			return // the log's own writes report their failures
		}
	}
	if durable {
		_ = w.f.Datasync()
	}
	w.zeroing.Store(false)
}

// replay calls fn for each record after seq last, in order, and returns
// the sequence number of the last one. It fails, leaving the file as it
// is, if the log is damaged where the replay ends (see above).
func (w *wal) replay(last uint64, fn func(seq uint64, es []entry) error) (uint64, error) {
	r := io.NewSectionReader(w.f, 0, w.size)
	hdr := make([]byte, w.hdr)
	off := int64(0)
	for off+int64(w.hdr) <= w.size {
		if _, err := r.ReadAt(hdr, off); err != nil {
			return last, fmt.Errorf("kv/bolt: log read: %w", err)
		}
		n := int64(binary.LittleEndian.Uint32(hdr[0:]))
		crc := binary.LittleEndian.Uint32(hdr[4:])
		seq := binary.LittleEndian.Uint64(hdr[8:])
		if n < int64(w.hdr)-8 || off+8+n > w.size || seq != last+1 {
			break
		}
		body := make([]byte, n)
		if _, err := r.ReadAt(body, off+8); err != nil {
			return last, fmt.Errorf("kv/bolt: log read: %w", err)
		}
		if w.checksum(body) != crc {
			break // torn, unless checkTail finds otherwise
		}
		es, err := decodeEntries(body[w.hdr-8:])
		if err != nil {
			return last, fmt.Errorf("kv/bolt: %s: record %d at offset %d: %w", w.path, seq, off, err)
		}
		if err := fn(seq, es); err != nil {
			return last, err
		}
		last = seq
		off += 8 + n
	}
	if w.hdr == walHeader {
		if err := w.checkTail(off, last); err != nil {
			return last, err
		}
	}
	return last, nil
}

// checkTail reports damage if a whole record of this log after off says
// that record last+1, which the replay could not read at off, had been
// synced before it was written. Records are found by trying every
// offset: the length at off may itself be what was damaged.
func (w *wal) checkTail(off int64, last uint64) error {
	if off >= w.size {
		return nil
	}
	b := make([]byte, w.size-off)
	if _, err := w.f.ReadAt(b, off); err != nil && err != io.EOF {
		return fmt.Errorf("kv/bolt: log read: %w", err)
	}
	maxRecords := uint64(w.size / walHeader)
	for i := 0; i+walHeader <= len(b); i++ {
		n := int(binary.LittleEndian.Uint32(b[i:]))
		if n < walHeader-8 || n > len(b)-i-8 {
			continue
		}
		// Cheap tests first: a record after the damage follows record
		// last+1 (which it says was synced) within as many records as
		// the log can hold.
		seq := binary.LittleEndian.Uint64(b[i+8:])
		synced := binary.LittleEndian.Uint64(b[i+16:])
		if synced <= last || seq <= synced || seq-last > maxRecords {
			continue
		}
		if w.checksum(b[i+8:i+8+n]) != binary.LittleEndian.Uint32(b[i+4:]) {
			continue
		}
		return fmt.Errorf("%w: %s is damaged at offset %d: record %d cannot be read there, "+
			"yet record %d, written at offset %d after record %d had been synced, is intact; "+
			"starting would lose acknowledged writes, so the store does not open and the log is left as it is "+
			"(restore the data directory from a backup, or move the log aside to accept the loss of every write after the last checkpoint)",
			ErrLogDamaged, w.path, off, last+1, seq, off+int64(i), synced)
	}
	return nil
}

// grow extends the log to at least need bytes (doubling, capped at max)
// with real zeros, synced when the store is durable. It runs only right
// after a checkpoint, when the log holds no record and the syncer is idle
// (checkpoint waited for it), so no record write races the extension; a
// crash during it leaves a log of obsolete records and zeros, whatever
// its size. It reports whether the log grew.
func (w *wal) grow(need int64) (bool, error) {
	if w.size >= w.max {
		return false, nil
	}
	size := w.size
	for size < need || size == w.size {
		size *= 2
		if size >= w.max {
			size = w.max
			break
		}
	}
	zero := make([]byte, 1<<20)
	for off := w.size; off < size; {
		n := min(int64(len(zero)), size-off)
		if _, err := w.f.WriteAt(zero[:n], off); err != nil {
			return false, fmt.Errorf("kv/bolt: log grow: %w", err)
		}
		off += n
	}
	if w.durable {
		if err := w.f.Datasync(); err != nil {
			return false, fmt.Errorf("kv/bolt: log grow: %w", err)
		}
	}
	w.size = size
	return true, nil
}

func (w *wal) close() error {
	if w.zstop != nil {
		close(w.zstop)
		<-w.zdone
		w.zstop = nil
	}
	return w.f.Close()
}

// sync makes the log's written records durable. fdatasync suffices: the
// file's size and blocks never change after it is created.
func (w *wal) sync() error { return w.f.Datasync() }
