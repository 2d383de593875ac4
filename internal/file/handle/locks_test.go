package handle

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Lock test steps: who acts (1 and 2 are two handles of file "f", 0 is a
// REST operation) and what.
type lockStep struct {
	h    int
	op   string // "lock", "unlock", "read", "write"
	r    []ByteRange
	want error
	done int // unlock: how many ranges were unlocked
}

func sh(off, n uint64) ByteRange { return ByteRange{Offset: off, Length: n} }
func ex(off, n uint64) ByteRange { return ByteRange{Offset: off, Length: n, Exclusive: true} }

func lk(h int, want error, r ...ByteRange) lockStep {
	return lockStep{h: h, op: "lock", r: r, want: want}
}
func ul(h int, want error, r ...ByteRange) lockStep {
	done := len(r)
	if want != nil {
		done = 0
	}
	return lockStep{h: h, op: "unlock", r: r, want: want, done: done}
}
func rd(h int, off, n uint64, want error) lockStep {
	return lockStep{h: h, op: "read", r: []ByteRange{sh(off, n)}, want: want}
}
func wr(h int, off, n uint64, want error) lockStep {
	return lockStep{h: h, op: "write", r: []ByteRange{sh(off, n)}, want: want}
}

const maxU = ^uint64(0)

// lockCases are the rules of locks.go, most taken from what smbtorture
// smb2.lock expects of Windows and smbd (the test names are its).
var lockCases = []struct {
	name  string
	steps []lockStep
}{
	{"exclusive excludes every other lock of another handle", []lockStep{
		lk(1, nil, ex(100, 10)), lk(2, ErrLockNotGranted, ex(100, 10)), lk(2, ErrLockNotGranted, sh(105, 1)),
		lk(2, ErrLockNotGranted, sh(90, 11)), lk(2, ErrLockNotGranted, ex(109, 50)),
		lk(2, nil, ex(110, 10)), lk(2, nil, sh(0, 100)),
	}},
	{"errorcode: a conflict on the holder's own handle, zero-length inside", []lockStep{
		lk(1, nil, ex(100, 10)), lk(1, ErrLockNotGranted, ex(100, 10)), lk(2, ErrLockNotGranted, ex(100, 10)),
		lk(1, ErrLockNotGranted, ex(102, 0)), lk(2, ErrLockNotGranted, ex(102, 0)),
		lk(1, ErrLockNotGranted, ex(102, 5)), lk(2, ErrLockNotGranted, ex(102, 5)),
	}},
	{"stacking: shared on shared, shared on own exclusive", []lockStep{
		lk(1, nil, sh(0, 10)), lk(1, nil, sh(0, 10)), ul(1, nil, sh(0, 10)), ul(1, nil, sh(0, 10)),
		lk(1, nil, ex(0, 10)), lk(1, nil, sh(0, 10)), lk(1, nil, sh(0, 10)),
		lk(2, ErrLockNotGranted, sh(0, 10)),
		ul(1, nil, sh(0, 10)), ul(1, nil, sh(0, 10)), ul(1, nil, sh(0, 10)), ul(1, ErrRangeNotLocked, sh(0, 10)),
		lk(2, nil, sh(0, 10)), ul(2, nil, sh(0, 10)),
	}},
	{"stacking: no exclusive on own shared, no two exclusive", []lockStep{
		lk(1, nil, sh(0, 10)), lk(1, ErrLockNotGranted, ex(0, 10)), ul(1, nil, sh(0, 10)),
		lk(1, nil, ex(0, 10)), lk(1, ErrLockNotGranted, ex(0, 10)), ul(1, nil, sh(0, 10)),
		ul(1, ErrRangeNotLocked, sh(0, 10)),
	}},
	{"overlap", []lockStep{
		lk(1, nil, ex(0, 4)), lk(1, ErrLockNotGranted, ex(2, 4)),
		lk(1, nil, sh(10, 4)), lk(1, nil, sh(12, 4)),
		lk(1, nil, ex(40, 4)), lk(2, ErrLockNotGranted, ex(42, 4)),
		lk(1, nil, sh(50, 4)), lk(2, nil, sh(52, 4)),
		lk(1, nil, sh(110, 4)), lk(1, nil, sh(112, 4)), ul(1, ErrRangeNotLocked, sh(110, 6)),
	}},
	{"zerobytelength: a zero-length lock meets ranges holding both X-1 and X", []lockStep{
		lk(1, nil, ex(10, 0)),
		lk(2, nil, ex(10, 0)), ul(2, nil, sh(10, 0)),
		lk(2, nil, ex(9, 1)), ul(2, nil, sh(9, 1)),
		lk(2, nil, ex(10, 1)), ul(2, nil, sh(10, 1)),
		lk(2, nil, ex(11, 1)), ul(2, nil, sh(11, 1)),
		lk(2, ErrLockNotGranted, ex(9, 2)),
		lk(2, nil, ex(10, 2)), ul(2, nil, sh(10, 2)),
		lk(2, ErrLockNotGranted, ex(9, 3)),
		lk(1, ErrLockNotGranted, ex(9, 2)), lk(1, nil, sh(9, 2)),
	}},
	{"zero-length locks, the other order", []lockStep{
		lk(1, nil, ex(9, 2)), lk(2, ErrLockNotGranted, ex(10, 0)), lk(1, ErrLockNotGranted, ex(10, 0)),
		lk(2, nil, ex(11, 0)), lk(2, nil, ex(9, 0)),
	}},
	{"{0,0} conflicts with nothing", []lockStep{
		lk(1, nil, ex(0, 0)), lk(2, nil, ex(0, 0)), lk(2, nil, ex(0, 5)), lk(1, nil, ex(0, 0)),
		ul(1, nil, sh(0, 0)), ul(1, nil, sh(0, 0)), ul(1, ErrRangeNotLocked, sh(0, 0)),
	}},
	{"ranges at the top of the 64-bit space", []lockStep{
		lk(1, ErrInvalidLockRange, ex(maxU, maxU)), lk(1, ErrInvalidLockRange, ex(maxU, 2)),
		lk(1, nil, ex(maxU, 0)), lk(2, nil, ex(maxU, 0)),
		lk(1, nil, ex(maxU, 1)), lk(2, ErrLockNotGranted, ex(maxU, 1)),
		lk(1, nil, ex(1<<63-1, 1)), lk(2, ErrLockNotGranted, ex(1<<63-1, 1)),
		lk(1, nil, ex(1<<63, 1)), lk(2, ErrLockNotGranted, ex(0, 1<<63+1)),
		lk(2, nil, ex(0, 1<<63-1)),
	}},
	{"unlock matches offset and length among the handle's own locks", []lockStep{
		lk(1, nil, ex(10001, 40002)), ul(2, ErrRangeNotLocked, sh(10001, 40002)),
		ul(1, ErrRangeNotLocked, sh(10001, 40001)), ul(1, ErrRangeNotLocked, sh(10000, 40002)),
		ul(1, nil, sh(10001, 40002)), ul(1, ErrRangeNotLocked, sh(10001, 40002)),
	}},
	{"unlock removes an exclusive lock before a shared one", []lockStep{
		lk(1, nil, ex(10, 0)), lk(1, nil, sh(10, 0)),
		lk(2, ErrLockNotGranted, ex(5, 10)), lk(2, ErrLockNotGranted, sh(5, 10)),
		ul(1, nil, sh(10, 0)), lk(2, nil, sh(5, 10)), lk(2, ErrLockNotGranted, ex(5, 10)),
	}},
	{"unlock removes the exclusive lock even when the shared one is older", []lockStep{
		lk(1, nil, sh(10, 0)), lk(1, nil, ex(10, 0)), lk(2, ErrLockNotGranted, sh(5, 10)),
		ul(1, nil, sh(10, 0)), lk(2, nil, sh(5, 10)),
	}},
	{"a lock request is all or nothing", []lockStep{
		lk(2, nil, ex(50, 10)),
		lk(1, ErrLockNotGranted, ex(0, 10), sh(20, 10), ex(55, 1)),
		lk(2, nil, ex(0, 10), ex(20, 10)),
		lk(1, ErrLockNotGranted, ex(100, 10), ex(105, 10)), // its own earlier range
		lk(1, nil, ex(100, 10), sh(100, 10), sh(105, 1)),
		lk(1, ErrInvalidLockRange, ex(200, 1), ex(maxU, 2)),
		lk(2, nil, ex(200, 1)),
	}},
	{"multiple unlock stops at the first range not locked", []lockStep{
		lk(1, nil, ex(10, 10)),
		ul(1, ErrRangeNotLocked, sh(0, 10), sh(10, 10)),
		lk(1, ErrLockNotGranted, ex(10, 10)), // still held
		ul(1, nil, sh(10, 10)),
		lk(1, nil, ex(0, 10)),
		{h: 1, op: "unlock", r: []ByteRange{sh(0, 10), sh(10, 10)}, want: ErrRangeNotLocked, done: 1},
		lk(1, nil, ex(0, 10)), // the first one was unlocked
	}},
	{"rw-shared: nobody writes through a shared lock", []lockStep{
		lk(1, nil, sh(0, 100)), lk(1, nil, sh(100, 100)),
		wr(1, 100, 100, ErrLockConflict), rd(1, 100, 100, nil),
		wr(2, 100, 100, ErrLockConflict), rd(2, 100, 100, nil),
		wr(0, 150, 1, ErrLockConflict), rd(0, 0, 1000, nil),
		ul(1, nil, sh(100, 100)), wr(2, 100, 100, nil), rd(2, 100, 100, nil),
		wr(2, 99, 2, ErrLockConflict), wr(2, 0, 0, nil),
	}},
	{"rw-exclusive: the owner reads and writes, nobody else", []lockStep{
		lk(1, nil, ex(0, 100)), lk(1, nil, ex(100, 100)),
		wr(1, 100, 100, nil), rd(1, 100, 100, nil),
		wr(2, 100, 100, ErrLockConflict), rd(2, 100, 100, ErrLockConflict),
		rd(0, 199, 1, ErrLockConflict), wr(0, 0, 1, ErrLockConflict), rd(0, 200, 10, nil), wr(0, 200, 10, nil),
		rd(2, 5, 0, nil), wr(2, 5, 0, nil),
		ul(1, nil, sh(100, 100)), wr(2, 100, 100, nil), rd(2, 100, 100, nil), rd(2, 99, 1, ErrLockConflict),
	}},
	{"own shared on own exclusive: reads pass, writes stop", []lockStep{
		lk(1, nil, ex(0, 10)), lk(1, nil, sh(0, 10)), wr(1, 0, 10, ErrLockConflict), rd(1, 0, 10, nil),
	}},
	{"a zero-length lock blocks I/O across it", []lockStep{
		lk(1, nil, ex(5, 0)), rd(2, 4, 1, nil), rd(2, 5, 1, nil), rd(2, 4, 2, ErrLockConflict),
		wr(0, 0, 10, ErrLockConflict), rd(2, 5, 0, nil),
	}},
}

// TestLockRules runs lockCases on two handles of one file.
func TestLockRules(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Hour)
		for i, c := range lockCases {
			t.Run(c.name, func(t *testing.T) {
				e.t = t
				fid := fmt.Sprintf("f%d", i)
				hs := []string{"", e.mustOpen(OpenRequest{FileID: fid, Access: Read | Write, ShareAccess: ShareAll}).HandleID,
					e.mustOpen(OpenRequest{FileID: fid, Access: Read | Write, ShareAccess: ShareAll}).HandleID}
				for n, s := range c.steps {
					var err error
					done := -1
					switch s.op {
					case "lock":
						err = e.update(func(tx kv.Tx) error { return Lock(tx, e.now(), "acct", "share", fid, hs[s.h], s.r) })
					case "unlock":
						e.must(func(tx kv.Tx) error {
							done, err = Unlock(tx, e.now(), "acct", "share", fid, hs[s.h], s.r)
							return nil
						})
					case "read", "write":
						check := CheckRead
						if s.op == "write" {
							check = CheckWrite
						}
						e.view(func(tx kv.Tx) error {
							err = check(tx, e.now(), "acct", "share", fid, hs[s.h], s.r[0].Offset, s.r[0].Length)
							return nil
						})
					}
					if s.want == nil && err != nil || s.want != nil && !errors.Is(err, s.want) {
						t.Fatalf("step %d (%s by %d of %+v): %v, want %v", n, s.op, s.h, s.r, err, s.want)
					}
					if s.op == "unlock" && done != s.done {
						t.Fatalf("step %d: unlocked %d ranges, want %d", n, done, s.done)
					}
				}
			})
		}
	})
}

func TestLockErrors(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Hour)
		h := e.mustOpen(OpenRequest{FileID: "f", Access: Read, ShareAccess: ShareAll})
		if err := e.update(func(tx kv.Tx) error { return Lock(tx, e.now(), "acct", "share", "f", h.HandleID, nil) }); !errors.Is(err, ErrInvalid) {
			t.Errorf("empty lock: %v", err)
		}
		e.must(func(tx kv.Tx) error {
			return Lock(tx, e.now(), "acct", "share", "f", h.HandleID, []ByteRange{ex(1, 2), sh(5, 5)})
		})
		e.view(func(tx kv.Tx) error {
			got, err := Locks(tx, e.now(), "acct", "share", "f", h.HandleID)
			if err != nil || len(got) != 2 || got[0] != ex(1, 2) || got[1] != sh(5, 5) {
				t.Errorf("Locks: %+v, %v", got, err)
			}
			return nil
		})
		e.close("f", h.HandleID)
		if err := e.update(func(tx kv.Tx) error {
			return Lock(tx, e.now(), "acct", "share", "f", h.HandleID, []ByteRange{ex(1, 2)})
		}); !errors.Is(err, ErrNoHandle) {
			t.Errorf("lock through a closed handle: %v", err)
		}
		e.must(func(tx kv.Tx) error {
			if n, err := Unlock(tx, e.now(), "acct", "share", "f", h.HandleID, []ByteRange{ex(1, 2)}); n != 0 || !errors.Is(err, ErrNoHandle) {
				t.Errorf("unlock through a closed handle: %d, %v", n, err)
			}
			if _, err := Locks(tx, e.now(), "acct", "share", "f", h.HandleID); !errors.Is(err, ErrNoHandle) {
				t.Errorf("Locks of a closed handle: %v", err)
			}
			return nil
		})
		if n := e.countKeys(pfxLock); n != 0 {
			t.Errorf("%d lock records left", n)
		}
		e.assertNoLeftovers()
	})
}

// TestLocksDieWithHandle: every way a handle goes releases its locks at
// once, and a dead handle's locks stop counting before Reap deletes them.
func TestLocksDieWithHandle(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Hour)
		e.heartbeat("fe2", time.Minute)
		lock := func(fid, hid string) {
			t.Helper()
			e.must(func(tx kv.Tx) error { return Lock(tx, e.now(), "acct", "share", fid, hid, []ByteRange{ex(0, 10)}) })
		}
		blocked := func(fid string) bool {
			t.Helper()
			var err error
			e.view(func(tx kv.Tx) error {
				err = CheckWrite(tx, e.now(), "acct", "share", fid, "", 5, 1)
				return nil
			})
			if err != nil && !errors.Is(err, ErrLockConflict) {
				t.Fatal(err)
			}
			return err != nil
		}
		type way struct {
			name  string
			owner string
			end   func(fid string, h Handle)
		}
		for _, w := range []way{
			{"close", "fe1", func(fid string, h Handle) { e.close(fid, h.HandleID) }},
			{"force close", "fe1", func(fid string, h Handle) {
				e.must(func(tx kv.Tx) error {
					_, err := ForceClose(tx, e.now(), "acct", "share", fid, h.HandleID, 0)
					return err
				})
			}},
			{"close session", "fe1", func(fid string, h Handle) {
				e.must(func(tx kv.Tx) error { _, err := CloseSession(tx, e.now(), h.SessionID); return err })
			}},
			{"retired owner", "fe2", func(fid string, h Handle) {
				e.must(func(tx kv.Tx) error { return Retire(tx, "fe2") })
			}},
		} {
			fid := "f-" + w.name
			h := e.mustOpen(OpenRequest{FileID: fid, Owner: w.owner, SessionID: "s-" + w.name, Access: Read | Write, ShareAccess: ShareAll})
			lock(fid, h.HandleID)
			if !blocked(fid) {
				t.Fatalf("%s: the lock does not block", w.name)
			}
			w.end(fid, h)
			if blocked(fid) {
				t.Errorf("%s: the lock outlived its handle", w.name)
			}
			h2 := e.mustOpen(OpenRequest{FileID: fid, Access: Read | Write, ShareAccess: ShareAll})
			lock(fid, h2.HandleID)
			e.close(fid, h2.HandleID)
		}
		// An expired owner: its locks stop counting at once; Reap
		// deletes them.
		e.heartbeat("fe3", time.Minute)
		h := e.mustOpen(OpenRequest{FileID: "g", Owner: "fe3", Access: Read | Write, ShareAccess: ShareAll})
		lock("g", h.HandleID)
		e.clk.Advance(2 * time.Minute)
		e.heartbeat("fe1", time.Hour)
		if blocked("g") {
			t.Error("an expired owner's lock still blocks")
		}
		h2 := e.mustOpen(OpenRequest{FileID: "g", Access: Read | Write, ShareAccess: ShareAll})
		lock("g", h2.HandleID)
		e.close("g", h2.HandleID)
		e.must(func(tx kv.Tx) error { _, err := Reap(tx, e.now(), 0); return err })
		if n := e.countKeys(pfxLock); n != 0 {
			t.Errorf("%d lock records left after Reap", n)
		}
		// A delete-pending file settled with dead handles.
		e.heartbeat("fe4", time.Minute)
		h = e.mustOpen(OpenRequest{FileID: "p", Owner: "fe4", Access: Read | Write | Delete, ShareAccess: ShareAll, DeleteOnClose: true})
		lock("p", h.HandleID)
		e.must(func(tx kv.Tx) error { return SetDeletePending(tx, e.now(), "acct", "share", "p", h.HandleID, true) })
		e.clk.Advance(2 * time.Minute)
		e.heartbeat("fe1", time.Hour)
		e.must(func(tx kv.Tx) error {
			ok, err := Settle(tx, e.now(), "acct", "share", "p")
			if !ok {
				t.Error("Settle did not report the file")
			}
			return err
		})
		// A purged share.
		h = e.mustOpen(OpenRequest{FileID: "q", Access: Read | Write | Delete, ShareAccess: ShareAll})
		lock("q", h.HandleID)
		e.must(func(tx kv.Tx) error { return SetDeletePending(tx, e.now(), "acct", "share", "q", h.HandleID, true) })
		if !e.deletePending("q") {
			t.Fatal("q is not delete-pending")
		}
		for more := true; more; {
			e.must(func(tx kv.Tx) (err error) { more, err = PurgeShare(tx, "acct", "share", 1); return err })
		}
		if n := e.countKeys(pfxLock); n != 0 {
			t.Errorf("%d lock records left", n)
		}
		e.must(func(tx kv.Tx) error { _, err := Reap(tx, e.now(), 0); return err })
		e.assertNoLeftovers()
	})
}

// TestConcurrentLocks: goroutines, each with its own handle, race for
// exclusive locks on overlapping ranges in a few disjoint slots of one
// file: exactly one wins each slot.
func TestConcurrentLocks(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Hour)
		const slots, perSlot = 4, 8
		var hs []string
		for range slots * perSlot {
			hs = append(hs, e.mustOpen(OpenRequest{FileID: "f", Access: Read | Write, ShareAccess: ShareAll}).HandleID)
		}
		var wg sync.WaitGroup
		errs := make([]error, len(hs))
		for i, hid := range hs {
			wg.Go(func() {
				slot, k := uint64(i%slots), uint64(i/slots)
				r := ex(slot*1000+k*3, 40) // all of a slot's ranges overlap
				errs[i] = e.update(func(tx kv.Tx) error { return Lock(tx, e.now(), "acct", "share", "f", hid, []ByteRange{r}) })
			})
		}
		wg.Wait()
		wins := make([]int, slots)
		for i, err := range errs {
			switch {
			case err == nil:
				wins[i%slots]++
			case !errors.Is(err, ErrLockNotGranted):
				t.Errorf("lock %d: %v", i, err)
			}
		}
		for s, w := range wins {
			if w != 1 {
				t.Errorf("slot %d: %d locks granted, want 1", s, w)
			}
		}
		n := 0
		e.view(func(tx kv.Tx) error {
			all, err := fileLocks(tx, "acct", "share", "f")
			for _, h := range all {
				n += len(h.locks)
			}
			return err
		})
		if n != slots {
			t.Errorf("%d locks stored, want %d", n, slots)
		}
	})
}

// FuzzOverlaps compares Overlaps and Valid with their definitions on
// bytes, near 0 and near the top of the 64-bit range.
func FuzzOverlaps(f *testing.F) {
	f.Add(uint8(10), uint8(0), uint8(9), uint8(2), false)
	f.Add(uint8(0), uint8(0), uint8(0), uint8(5), false)
	f.Add(uint8(255), uint8(1), uint8(250), uint8(6), true)
	f.Add(uint8(255), uint8(2), uint8(0), uint8(0), true)
	f.Fuzz(func(t *testing.T, o1, n1, o2, n2 uint8, top bool) {
		base := uint64(0)
		if top {
			base = maxU - 255
		}
		a, b := sh(base+uint64(o1), uint64(n1)), sh(base+uint64(o2), uint64(n2))
		// Valid: the last byte fits.
		if want := n1 == 0 || !top || int(o1)+int(n1)-1 <= 255; a.Valid() != want {
			t.Fatalf("%+v Valid %v, want %v", a, a.Valid(), want)
		}
		// Overlap: bytes in common, where a zero-length range at X is
		// the "byte" between X-1 and X: it meets any range holding both.
		in := func(r ByteRange, x int) bool { // r holds byte base+x
			lo := int(r.Offset - base)
			hi := lo + int(r.Length) - 1
			if !r.Valid() {
				hi = 255
			}
			return lo <= x && x <= hi
		}
		want := false
		switch {
		case a.Offset == 0 && a.Length == 0 || b.Offset == 0 && b.Length == 0:
		case n1 == 0 && n2 == 0:
		case n1 == 0:
			want = o1 > 0 && in(b, int(o1)-1) && in(b, int(o1))
		case n2 == 0:
			want = o2 > 0 && in(a, int(o2)-1) && in(a, int(o2))
		default:
			for x := 0; x <= 255; x++ {
				if in(a, x) && in(b, x) {
					want = true
				}
			}
		}
		if got := a.Overlaps(b); got != want || b.Overlaps(a) != got {
			t.Fatalf("%+v overlaps %+v: %v (reverse %v), want %v", a, b, got, b.Overlaps(a), want)
		}
	})
}
