package smb

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// Accept errors. A listener keeps accepting after any error but a closed
// listener: running out of descriptors (EMFILE, ENFILE), of buffers
// (ENOBUFS, ENOMEM) or a connection aborted before it was accepted
// (ECONNABORTED) passes once connections close, so the loop waits (5 ms
// doubling to 1 s, as net/http's Server.Serve does) and tries again.
// Errors of no known kind are retried the same way but make the server
// unready (Server.Ready) until an accept succeeds again; a listener
// closed by anything but Shutdown ends its loop and leaves the server
// unready for good, so a load balancer stops sending clients to a front
// end whose SMB port no longer answers.
const (
	acceptDelayMin = 5 * time.Millisecond
	acceptDelayMax = time.Second
)

// temporaryAccept reports whether an accept error is known to pass.
func temporaryAccept(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EAGAIN, syscall.EPROTO} {
		if errors.Is(err, e) {
			return true
		}
	}
	// net.Error's Temporary is deprecated for callers guessing at
	// arbitrary errors; for accept it is still what the standard library
	// reports for the kinds above on other platforms.
	var te interface {
		Timeout() bool
		Temporary() bool
	}
	return errors.As(err, &te) && (te.Timeout() || te.Temporary())
}

// nextAcceptDelay doubles the wait after a failed accept, from
// acceptDelayMin up to acceptDelayMax.
func nextAcceptDelay(d time.Duration) time.Duration {
	return min(max(2*d, acceptDelayMin), acceptDelayMax)
}

// acceptFailed records a failed accept on ln (not a closed listener) and
// logs the first failure of a run.
func (s *Server) acceptFailed(ln net.Listener, err error, first bool) {
	temp := temporaryAccept(err)
	s.accepting.mu.Lock()
	if !temp {
		if s.accepting.failing == nil {
			s.accepting.failing = map[net.Listener]error{}
		}
		s.accepting.failing[ln] = err
	}
	s.accepting.mu.Unlock()
	switch {
	case !first:
	case temp:
		s.log.Warn("SMB accept failed; retrying", "addr", ln.Addr().String(), "err", err)
	default:
		s.log.Error("SMB accept failed with an unexpected error; retrying, not ready until it accepts again", "addr", ln.Addr().String(), "err", err)
	}
}

// acceptRecovered clears ln's failure once an accept succeeded.
func (s *Server) acceptRecovered(ln net.Listener, failures int) {
	s.accepting.mu.Lock()
	delete(s.accepting.failing, ln)
	s.accepting.mu.Unlock()
	if failures > 0 {
		s.log.Info("SMB accept recovered", "addr", ln.Addr().String(), "failed_accepts", failures)
	}
}

// listenerDied records that ln's loop ended outside Shutdown.
func (s *Server) listenerDied(ln net.Listener, err error) {
	s.accepting.mu.Lock()
	delete(s.accepting.failing, ln)
	if s.accepting.dead == nil {
		s.accepting.dead = fmt.Errorf("SMB listener %s stopped accepting: %w", ln.Addr(), err)
	}
	s.accepting.mu.Unlock()
	s.log.Error("SMB listener stopped accepting connections", "addr", ln.Addr().String(), "err", err)
}

// Ready returns nil while every listener given to Serve accepts
// connections: an error once a listener has stopped for good (closed
// other than by Shutdown) or while its accepts fail with an error not
// known to pass. /readyz reports it.
func (s *Server) Ready() error {
	s.accepting.mu.Lock()
	defer s.accepting.mu.Unlock()
	if s.accepting.dead != nil {
		return s.accepting.dead
	}
	for ln, err := range s.accepting.failing {
		return fmt.Errorf("SMB listener %s: accept failing: %w", ln.Addr(), err)
	}
	return nil
}
