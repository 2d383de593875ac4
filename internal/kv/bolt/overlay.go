package bolt

import (
	"bytes"
	"slices"
	"sort"

	bbolt "go.etcd.io/bbolt"
)

// layer is the writes of one or more groups: entries sorted by key, one
// per key, deletes kept as tombstones (they hide the key in bbolt).
type layer struct {
	es []entry
}

// find returns the index of the first entry with key >= k.
func (l *layer) find(k []byte) int {
	return sort.Search(len(l.es), func(i int) bool { return bytes.Compare(l.es[i].key, k) >= 0 })
}

// mergeLayers merges an older and a newer layer; the newer wins.
func mergeLayers(older, newer *layer) *layer {
	out := make([]entry, 0, len(older.es)+len(newer.es))
	a, b := older.es, newer.es
	for len(a) > 0 && len(b) > 0 {
		switch c := bytes.Compare(a[0].key, b[0].key); {
		case c < 0:
			out = append(out, a[0])
			a = a[1:]
		case c > 0:
			out = append(out, b[0])
			b = b[1:]
		default:
			out = append(out, b[0])
			a, b = a[1:], b[1:]
		}
	}
	out = append(out, a...)
	out = append(out, b...)
	return &layer{es: out}
}

// readState is what View transactions see: the bbolt state committed by
// the last checkpoint (transaction id txid) plus the layers of the
// groups made durable in the log since, oldest first. It is immutable.
//
// Layers are kept in sizes that shrink towards the newest (each at
// least twice the next), so a state holds O(log n) layers and each
// entry is copied O(log n) times before the next checkpoint drops them.
type readState struct {
	txid    int
	layers  []*layer
	entries int
}

// with returns the state with l published on top.
func (rs *readState) with(l *layer) *readState {
	ls := append(slices.Clone(rs.layers), l)
	for n := len(ls); n >= 2 && len(ls[n-2].es) <= 2*len(ls[n-1].es); n = len(ls) {
		ls = append(ls[:n-2], mergeLayers(ls[n-2], ls[n-1]))
	}
	return &readState{txid: rs.txid, layers: ls, entries: rs.entries + len(l.es)}
}

// get looks key up in the layers, newest first.
func (rs *readState) get(key []byte) (e entry, ok bool) {
	for i := len(rs.layers) - 1; i >= 0; i-- {
		l := rs.layers[i]
		if j := l.find(key); j < len(l.es) && bytes.Equal(l.es[j].key, key) {
			return l.es[j], true
		}
	}
	return entry{}, false
}

// scanMerged visits the keys in [start, end) of the layers over the bbolt
// bucket b, newest value winning and tombstones hiding keys, ascending or
// descending, at most limit (<= 0: all) of them.
func (rs *readState) scanMerged(b *bbolt.Bucket, start, end []byte, limit int, reverse bool, fn func(k, v []byte) bool) {
	type pos struct {
		l    *layer
		i    int // current index
		stop int // forward: exclusive upper index; reverse: inclusive lower index
	}
	ps := make([]pos, 0, len(rs.layers))
	for _, l := range rs.layers {
		lo := l.find(start)
		hi := len(l.es)
		if end != nil {
			hi = l.find(end)
		}
		if lo >= hi {
			continue
		}
		if reverse {
			ps = append(ps, pos{l: l, i: hi - 1, stop: lo})
		} else {
			ps = append(ps, pos{l: l, i: lo, stop: hi})
		}
	}
	valid := func(p *pos) bool {
		if reverse {
			return p.i >= p.stop
		}
		return p.i < p.stop
	}
	c := b.Cursor()
	var ck, cv []byte
	if reverse {
		if end == nil {
			ck, cv = c.Last()
		} else if ck, _ = c.Seek(end); ck == nil {
			ck, cv = c.Last()
		} else {
			ck, cv = c.Prev()
		}
		if ck != nil && bytes.Compare(ck, start) < 0 {
			ck = nil
		}
	} else {
		ck, cv = c.Seek(start)
		if ck != nil && end != nil && bytes.Compare(ck, end) >= 0 {
			ck = nil
		}
	}
	// before reports whether a comes first in the scan order.
	before := func(a, b []byte) bool {
		if reverse {
			return bytes.Compare(a, b) > 0
		}
		return bytes.Compare(a, b) < 0
	}
	for n := 0; ; {
		var k []byte
		for i := range ps {
			if p := &ps[i]; valid(p) && (k == nil || before(p.l.es[p.i].key, k)) {
				k = p.l.es[p.i].key
			}
		}
		if ck != nil && (k == nil || before(ck, k)) {
			k = ck
		}
		if k == nil {
			return
		}
		// The newest layer holding k wins over older ones and bbolt.
		var win *entry
		for i := range ps {
			if p := &ps[i]; valid(p) && bytes.Equal(p.l.es[p.i].key, k) {
				win = &p.l.es[p.i] // later layers are newer
				if reverse {
					p.i--
				} else {
					p.i++
				}
			}
		}
		v := cv
		if ck != nil && bytes.Equal(ck, k) {
			if reverse {
				ck, cv = c.Prev()
				if ck != nil && bytes.Compare(ck, start) < 0 {
					ck = nil
				}
			} else {
				ck, cv = c.Next()
				if ck != nil && end != nil && bytes.Compare(ck, end) >= 0 {
					ck = nil
				}
			}
		}
		if win != nil {
			if win.del {
				continue
			}
			v = win.val
		}
		if v == nil {
			v = emptyValue
		}
		if !fn(k, v) {
			return
		}
		if n++; limit > 0 && n >= limit {
			return
		}
	}
}

var emptyValue = []byte{}
