package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// The write-ahead log is one file of fixed size, filled with zeros when
// it is created, so that appending a record and fdatasync never change
// the file's size or block map (no filesystem journal commit for
// metadata). Records are appended from offset 0; a checkpoint (a synced
// bbolt commit recording the last sequence number it contains) makes
// every record obsolete and the next record is written at offset 0
// again.
//
// Record layout (little endian):
//
//	len   uint32  length of seq+payload
//	crc   uint32  CRC-32C of the database's log id, seq and payload
//	seq   uint64  group sequence number, consecutive
//	payload       entries: op byte (1 put, 2 delete), uvarint key length,
//	              key, and for puts uvarint value length and value
//
// Recovery replays the records that follow the checkpoint: from offset
// 0, while the record is whole (length and CRC) and its seq is exactly
// the next expected one. Older records left behind by an earlier round
// carry smaller sequence numbers and stop the replay, as do zeros and a
// record torn by a crash (which was never acknowledged: a group is
// answered only after the fdatasync that covers it). The log id, random
// per database file, keeps a log left next to another database from
// being replayed into it.

const (
	walHeader      = 16
	walDefaultSize = 64 << 20
	walTestSize    = 4 << 20
	opPut          = 1
	opDelete       = 2
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

type wal struct {
	f    *os.File
	size int64  // fixed file size
	off  int64  // where the next record goes
	id   []byte // the database's log id, the CRC's seed
}

func (w *wal) checksum(body []byte) uint32 {
	return crc32.Update(crc32.Checksum(w.id, crcTable), crcTable, body)
}

// openWAL opens (creating and zero-filling if needed) the log at path;
// durable makes the zeros durable before it returns.
func openWAL(path string, size int64, durable bool) (*wal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.Size() < size {
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
			if err := f.Sync(); err != nil {
				f.Close()
				return nil, err
			}
		}
	} else {
		size = st.Size()
	}
	return &wal{f: f, size: size}, nil
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

// write seals the records in b (their checksums) and writes them at off.
func (w *wal) write(b []byte, off int64) error {
	for p := b; len(p) >= walHeader; {
		n := int(binary.LittleEndian.Uint32(p[0:])) + 8
		binary.LittleEndian.PutUint32(p[4:], w.checksum(p[8:n]))
		p = p[n:]
	}
	if _, err := w.f.WriteAt(b, off); err != nil {
		return fmt.Errorf("kv/bolt: log write: %w", err)
	}
	return nil
}

// replay calls fn for each record after seq last, in order, and returns
// the sequence number of the last one.
func (w *wal) replay(last uint64, fn func(seq uint64, es []entry) error) (uint64, error) {
	r := io.NewSectionReader(w.f, 0, w.size)
	var hdr [walHeader]byte
	for off := int64(0); off+walHeader <= w.size; {
		if _, err := r.ReadAt(hdr[:], off); err != nil {
			return last, fmt.Errorf("kv/bolt: log read: %w", err)
		}
		n := int64(binary.LittleEndian.Uint32(hdr[0:]))
		crc := binary.LittleEndian.Uint32(hdr[4:])
		seq := binary.LittleEndian.Uint64(hdr[8:])
		if n < 8 || off+8+n > w.size || seq != last+1 {
			break
		}
		body := make([]byte, n)
		if _, err := r.ReadAt(body, off+8); err != nil {
			return last, fmt.Errorf("kv/bolt: log read: %w", err)
		}
		if w.checksum(body) != crc {
			break // torn: never acknowledged
		}
		es, err := decodeEntries(body[8:])
		if err != nil {
			return last, err // a whole record that does not parse: a bug
		}
		if err := fn(seq, es); err != nil {
			return last, err
		}
		last = seq
		off += 8 + n
	}
	return last, nil
}

func (w *wal) close() error { return w.f.Close() }
