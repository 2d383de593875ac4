package smb

import (
	"errors"
	"slices"
	"time"

	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// Byte-range locks (MS-SMB2 3.3.5.14; MS-FSA 2.1.5.7). The locks themselves
// live in the store (file.Opens.Lock, package handle), global across front
// ends; this file parses LOCK and runs blocking locks.
//
// A lock that conflicts and did not ask to fail immediately goes
// asynchronous (an interim STATUS_PENDING) and is retried on the
// connection's goroutine: at once when any connection of this server
// releases locks (an unlock, a close, a tree disconnect, a logoff, a lost
// connection), and by polling, every 100 ms growing to 1 s, for locks
// released elsewhere (another server process on the same store, a REST
// Force Close Handles, an owner that expired). It completes with
// STATUS_SUCCESS once granted, STATUS_CANCELLED on CANCEL, and
// STATUS_RANGE_NOT_LOCKED when its open closes, its tree disconnects or
// its session logs off (smbd's answers; smb2.lock.cancel, cancel-tdis,
// cancel-logoff).

// Polling of blocked locks.
const (
	lockPollMin = 100 * time.Millisecond
	lockPollMax = time.Second
)

func (w *lockWaiters) add(c *conn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conns == nil {
		w.conns = map[*conn]chan struct{}{}
	}
	w.conns[c] = c.wake
}

func (w *lockWaiters) remove(c *conn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.conns, c)
}

// notify wakes every waiting connection (without blocking: a wake
// already queued is enough).
func (w *lockWaiters) notify() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ch := range w.conns {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// locksReleased tells the server's blocked locks that locks may have
// been released (after an unlock or a close).
func (c *conn) locksReleased() { c.srv.lockWake.notify() }

// parseLocks checks the elements of a LOCK request as smbd does
// (MS-SMB2 3.3.5.14): the first element decides whether the request
// locks or unlocks. A lock request is blocking when its only element
// lacks FAIL_IMMEDIATELY; with several elements every one must have it.
// An element that does not fit is STATUS_INVALID_PARAMETER, except in an
// unlock request, where the elements before it are still unlocked
// (bad is then its index, else len(els)).
func parseLocks(els []smb2.LockElement) (ranges []file.LockRange, unlock, blocking bool, bad int, err error) {
	const (
		shared    = smb2.LockFlagShared
		exclusive = smb2.LockFlagExclusive
		fail      = smb2.LockFlagFailImmediately
	)
	switch els[0].Flags {
	case shared, exclusive:
		if len(els) > 1 {
			return nil, false, false, 0, smb2.StatusInvalidParameter
		}
		blocking = true
	case shared | fail, exclusive | fail:
	case smb2.LockFlagUnlock:
		unlock = true
	default:
		return nil, false, false, 0, smb2.StatusInvalidParameter
	}
	bad = len(els)
	for i, el := range els {
		switch el.Flags {
		case shared, exclusive, shared | fail, exclusive | fail:
			if !unlock && len(els) > 1 && el.Flags&fail == 0 {
				return nil, false, false, 0, smb2.StatusInvalidParameter
			}
		case smb2.LockFlagUnlock:
			if !unlock {
				return nil, false, false, 0, smb2.StatusInvalidParameter
			}
		default:
			if !unlock {
				return nil, false, false, 0, smb2.StatusInvalidParameter
			}
		}
		if unlock && el.Flags != smb2.LockFlagUnlock {
			bad = i
			break
		}
		ranges = append(ranges, file.LockRange{Offset: el.Offset, Length: el.Length, Exclusive: el.Flags&exclusive != 0})
	}
	return ranges, unlock, blocking, bad, nil
}

// lock answers LOCK (MS-SMB2 3.3.5.14). LockSequence is ignored: there
// are no resilient, durable or multichannel opens.
func (c *conn) lock(r *request) ([]byte, error) {
	req, err := smb2.DecodeLockRequest(r.msg)
	if err != nil {
		return nil, err
	}
	o, err := c.lookupOpen(r, req.FileID)
	if err != nil {
		return nil, err
	}
	ranges, unlock, blocking, bad, err := parseLocks(req.Locks)
	if err != nil {
		return nil, err
	}
	if unlock {
		if len(ranges) > 0 {
			err = c.srv.vfs.Unlock(c.ctx, o.f, ranges)
			c.locksReleased()
		}
		if err == nil && bad < len(req.Locks) {
			err = smb2.StatusInvalidParameter
		}
		if err != nil {
			return nil, err
		}
		return smb2.LockResponse{}.Encode(), nil
	}
	if blocking {
		// Listen before trying, so that a release right after the try
		// is not missed.
		c.waitForLocks()
	}
	err = c.srv.vfs.Lock(c.ctx, o.f, ranges)
	if !blocking || !errors.Is(err, file.ErrLockNotGranted) {
		if err != nil {
			return nil, err
		}
		return smb2.LockResponse{}.Encode(), nil
	}
	if len(c.async) >= maxAsyncPerConn {
		return nil, smb2.StatusInsufficientResources
	}
	c.nextAsync++
	a := &asyncOp{id: c.nextAsync, hdr: r.hdr, sess: r.sess, open: o, signed: r.signed, lock: ranges}
	c.async[a.id] = a
	r.async = a
	c.pollLocks(lockPollMin)
	return nil, errAsync
}

// waitForLocks registers c for release notifications.
func (c *conn) waitForLocks() {
	if c.wake == nil {
		c.wake = make(chan struct{}, 1)
	}
	c.srv.lockWake.add(c)
}

// pollLocks arms the poll of blocked locks in d (sooner if armed).
func (c *conn) pollLocks(d time.Duration) {
	if c.lockPoll == nil {
		c.lockPoll = time.NewTimer(d)
		c.lockPollDelay = d
		return
	}
	c.lockPoll.Stop()
	select {
	case <-c.lockPoll.C:
	default:
	}
	c.lockPoll.Reset(d)
	c.lockPollDelay = d
}

// lockPollC is the poll timer's channel, nil when nothing is blocked.
func (c *conn) lockPollC() <-chan time.Time {
	if c.lockPoll == nil {
		return nil
	}
	return c.lockPoll.C
}

// retryLocks tries the blocked locks again, oldest first, after a wake
// (polled false) or a poll (polled true), and completes those granted or
// failed; when some remain it re-arms the poll, else it stops listening.
func (c *conn) retryLocks(polled bool) {
	var ids []uint64
	for id, a := range c.async {
		if a.lock != nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		a := c.async[id]
		if a == nil {
			continue
		}
		err := c.srv.vfs.Lock(c.ctx, a.open.f, a.lock)
		switch {
		case err == nil:
			c.finishAsync(a, smb2.StatusSuccess)
		case errors.Is(err, file.ErrLockNotGranted):
		default:
			c.finishAsync(a, c.asyncStatus(err))
		}
	}
	for _, a := range c.async {
		if a.lock != nil {
			d := lockPollMin
			if polled {
				d = min(c.lockPollDelay+lockPollMin, lockPollMax)
			}
			c.pollLocks(d)
			return
		}
	}
	if c.lockPoll != nil {
		c.lockPoll.Stop()
		c.lockPoll = nil
	}
	c.srv.lockWake.remove(c)
}

// asyncStatus maps the error of an asynchronous operation to its final
// status.
func (c *conn) asyncStatus(err error) smb2.Status {
	if st, ok := smb2.AsStatus(err); ok {
		return st
	}
	if st, ok := fileStatus(err); ok {
		return st
	}
	c.log.Error("SMB async request failed", "err", err)
	return smb2.StatusInternalError
}
