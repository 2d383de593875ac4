package smb

// The MessageId window and credits of one connection (MS-SMB2 3.3.1.1,
// 3.3.1.2, 3.3.5.2.3), kept as Samba keeps it:
//
//   - low is the lowest MessageId not yet used; every id below it has
//     been used (or was never valid).
//   - span is the width of the window: ids low ... low+span-1 are valid
//     unless already used. It grows by every credit granted and shrinks
//     as low advances.
//   - granted is the number of credits the client holds: ids it may
//     still send. It is span minus the used ids above low; a client that
//     skips ids leaves holes that keep low back and span wide, and the
//     window never grows beyond max (the bitmap's size), so a client
//     cannot make the server remember an unbounded number of holes.
//
// used is a bitmap indexed by id modulo max.

// maxCredits is the most credits a client may hold (Samba's "smb2 max
// credits"; smbtorture smb2.credits expects a grant of 8192).
const maxCredits = 8192

type creditWindow struct {
	low     uint64
	span    uint64
	granted uint64
	max     uint64
	used    []uint64 // bitmap of max bits
}

func newCreditWindow(max uint64) *creditWindow {
	// The window starts as {0} (MS-SMB2 3.3.1.1): one credit.
	return &creditWindow{span: 1, granted: 1, max: max, used: make([]uint64, (max+63)/64)}
}

func (w *creditWindow) bit(id uint64) (int, uint64) {
	i := id % w.max
	return int(i / 64), 1 << (i % 64)
}

// consume checks that the ids mid ... mid+charge-1 are all inside the
// window and unused, and marks them used. charge is at least 1. It
// reports false (and changes nothing) otherwise: the request must be
// refused and, per MS-SMB2 3.3.5.2.3, the connection dropped.
func (w *creditWindow) consume(mid uint64, charge uint64) bool {
	if charge == 0 {
		charge = 1
	}
	if charge > w.granted || mid < w.low || mid+charge < mid || mid+charge > w.low+w.span {
		return false
	}
	for id := mid; id < mid+charge; id++ {
		word, mask := w.bit(id)
		if w.used[word]&mask != 0 {
			return false
		}
	}
	for id := mid; id < mid+charge; id++ {
		word, mask := w.bit(id)
		w.used[word] |= mask
	}
	w.granted -= charge
	// Slide the window past the ids used at its bottom.
	for w.span > 0 {
		word, mask := w.bit(w.low)
		if w.used[word]&mask == 0 {
			break
		}
		w.used[word] &^= mask
		w.low++
		w.span--
	}
	return true
}

// grant decides how many credits a response gives back for a request
// that charged charge (at least 1) and asked for requested, and extends
// the window by that many. extraMax is how many beyond the charge the
// command may grant (0 for NEGOTIATE, maxCredits for a successful
// SESSION_SETUP and other requests, as Samba and Windows 2016 do). The grant never makes the
// client hold more than max credits nor the window wider than max, and
// never leaves a client without credits while the window allows one.
func (w *creditWindow) grant(charge, requested uint16, extraMax uint64) uint16 {
	c := uint64(charge)
	if c == 0 {
		c = 1
	}
	r := uint64(requested)
	if r == 0 {
		r = 1
	}
	extra := r - 1
	if extra > extraMax {
		extra = extraMax
	}
	n := c + extra
	if room := w.max - w.span; n > room {
		n = room
	}
	if room := w.max - w.granted; n > room {
		n = room
	}
	if n > 0xFFFF {
		n = 0xFFFF
	}
	w.span += n
	w.granted += n
	return uint16(n)
}

// chargeNeeded is the CreditCharge a request of the given payload sizes
// needs (MS-SMB2 3.3.5.2.5): one credit per 64 KiB of the larger of what
// it sends and what it may receive.
func chargeNeeded(send, recv uint64) uint64 {
	n := send
	if recv > n {
		n = recv
	}
	if n == 0 {
		return 1
	}
	return (n-1)/65536 + 1
}
