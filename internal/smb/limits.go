package smb

import (
	"encoding/binary"
	"net"
	"time"

	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// What a client may hold without authenticating, and for how long
// (docs/smb.md, "Connection limits"):
//
//   - connections: at most Config.MaxConns in all and
//     Config.MaxConnsPerAddr from one IP address; one more is closed as
//     soon as it is accepted, with one log line per burst of refusals;
//   - time: a connection that has not completed a SESSION_SETUP within
//     Config.PreauthTimeout of its accept is closed, and an authenticated
//     one with no open file, no pending operation and no request for
//     Config.IdleTimeout is closed, as Windows' autodisconnect does;
//   - memory: a frame's buffer is allocated only once its 4-byte
//     transport header and its SMB header are checked, and grows as its
//     bytes arrive (smb2.ReadFrameChecked); before a session has logged
//     on a frame may be at most preauthFrameMax bytes, after that the
//     negotiated MaxTransactSize/MaxReadSize/MaxWriteSize plus headers.
const (
	DefaultMaxConns        = 1024
	DefaultMaxConnsPerAddr = 64
	DefaultPreauthTimeout  = 30 * time.Second
	DefaultIdleTimeout     = 15 * time.Minute
	// refusalLogEvery spaces the log lines about refused connections.
	refusalLogEvery = time.Minute
)

// addrKey is the client address connections are counted by: the IP
// without the port.
func addrKey(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// admitLocked decides whether a new connection from key may be served
// (s.mu held); on success it counts it until releaseLocked.
func (s *Server) admitLocked(key string) bool {
	if s.cfg.MaxConns > 0 && len(s.conns) >= s.cfg.MaxConns {
		s.refuseLocked(key, "total")
		return false
	}
	if s.cfg.MaxConnsPerAddr > 0 && s.admit.perAddr[key] >= s.cfg.MaxConnsPerAddr {
		s.refuseLocked(key, "per address")
		return false
	}
	if s.admit.perAddr == nil {
		s.admit.perAddr = map[string]int{}
	}
	s.admit.perAddr[key]++
	return true
}

// refuseLocked counts a refused connection and logs the first of a burst
// (then at most one line per refusalLogEvery, with the count).
func (s *Server) refuseLocked(key, which string) {
	s.admit.refused++
	now := time.Now()
	if now.Sub(s.admit.lastLog) < refusalLogEvery {
		return
	}
	s.log.Warn("SMB connection limit reached; refusing connections", "limit", which,
		"max_connections", s.cfg.MaxConns, "max_connections_per_address", s.cfg.MaxConnsPerAddr,
		"client", key, "refused", s.admit.refused)
	s.admit.refused, s.admit.lastLog = 0, now
}

// releaseLocked uncounts a connection from key (s.mu held).
func (s *Server) releaseLocked(key string) {
	if s.admit.perAddr[key] <= 1 {
		delete(s.admit.perAddr, key)
		return
	}
	s.admit.perAddr[key]--
}

// startTimers arms the pre-authentication deadline.
func (c *conn) startTimers() {
	if d := c.srv.cfg.PreauthTimeout; d > 0 {
		c.timers.preauth = time.AfterFunc(d, func() {
			c.log.Debug("closing an SMB connection that did not log on in time", "timeout", d)
			c.close()
		})
	}
}

// stopTimers stops both timers (serve is ending).
func (c *conn) stopTimers() {
	if c.timers.preauth != nil {
		c.timers.preauth.Stop()
	}
	if c.timers.idle != nil {
		c.timers.idle.Stop()
	}
}

// frameDone runs after each frame: the first logon stops the deadline
// and starts the idle timer, and every frame is activity.
func (c *conn) frameDone() {
	if !c.authenticated {
		return
	}
	if c.timers.preauth != nil {
		c.timers.preauth.Stop()
		c.timers.preauth = nil
	}
	d := c.srv.cfg.IdleTimeout
	if d <= 0 {
		return
	}
	c.timers.lastFrame = time.Now()
	if c.timers.idle == nil {
		c.timers.idle = time.NewTimer(d)
	}
}

// idleC fires when the idle timer runs out (nil before logon).
func (c *conn) idleC() <-chan time.Time {
	if c.timers.idle == nil {
		return nil
	}
	return c.timers.idle.C
}

// idleExpired is called when the idle timer fired: it reports whether
// the connection has been idle for IdleTimeout with nothing open, or
// re-arms the timer for the rest of the interval.
func (c *conn) idleExpired() bool {
	d := c.srv.cfg.IdleTimeout
	left := d - time.Since(c.timers.lastFrame)
	if left <= 0 && len(c.opens) == 0 && len(c.async) == 0 {
		c.log.Debug("closing an idle SMB connection", "idle", d)
		return true
	}
	if left <= 0 {
		left = d
	}
	c.timers.idle.Reset(left)
	return false
}

func (c *conn) frameState() frameState {
	return frameState{limit: c.frameLimit(), negotiated: c.dialect != 0}
}

// checkHead checks the start of a frame before its buffer is allocated:
// before NEGOTIATE only an SMB2 NEGOTIATE or an SMB1 NEGOTIATE (MS-SMB2
// 3.3.5.2: anything else ends the connection), after it no SMB1, and an
// SMB2 header must have its StructureSize.
func checkHead(negotiated bool, head []byte) error {
	switch smb2.ProtocolOf(head) {
	case smb2.ProtocolSMB2:
		if len(head) < smb2.HeaderSize || binary.LittleEndian.Uint16(head[4:]) != smb2.HeaderSize {
			return drop("malformed SMB2 header")
		}
		if !negotiated && smb2.Command(binary.LittleEndian.Uint16(head[12:])) != smb2.CommandNegotiate {
			return drop("%v before NEGOTIATE", smb2.Command(binary.LittleEndian.Uint16(head[12:])))
		}
	case smb2.ProtocolSMB1:
		// The SMB1 header's Command is its fifth byte; 0x72 is
		// SMB_COM_NEGOTIATE.
		if negotiated || len(head) < 5 || head[4] != 0x72 {
			return drop("SMB1 other than a first NEGOTIATE")
		}
	case smb2.ProtocolTransform, smb2.ProtocolCompression:
		if !negotiated {
			return drop("transform or compression header before NEGOTIATE")
		}
	default:
		return drop("unknown protocol")
	}
	return nil
}

func (c *conn) frameLimit() int {
	if !c.authenticated {
		return preauthFrameMax
	}
	return min(c.maxIO+64<<10, smb2.MaxFrameSize)
}
