package hostile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

func smbFrame(payload []byte) []byte {
	h := smb2.FrameHeader(len(payload))
	return append(h[:], payload...)
}

func negotiateFrame(messageID uint64) []byte {
	req := smb2.NegotiateRequest{SecurityMode: 1, Capabilities: 0x7f, Dialects: []smb2.Dialect{0x0202, 0x0210, 0x0300, 0x0302, 0x0311}}
	req.Contexts = []smb2.NegotiateContext{
		smb2.PreauthIntegrityCapabilities{HashAlgorithms: []uint16{smb2.HashSHA512}, Salt: make([]byte, 32)}.Context(),
		smb2.SigningCapabilities{Algorithms: []smb2.SigningAlgorithm{smb2.SigningAESCMAC}}.Context(),
	}
	return smbFrame(smb2.Marshal(smb2.Header{Command: smb2.CommandNegotiate, Credits: 31, MessageID: messageID}, req.Encode()))
}

// smbNegotiate sends a NEGOTIATE on a new connection and checks that a
// successful NEGOTIATE response comes back within 10 s.
func smbNegotiate(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(negotiateFrame(0)); err != nil {
		return err
	}
	msg, err := smb2.ReadFrame(c, smb2.MaxFrameSize)
	if err != nil {
		return fmt.Errorf("reading the NEGOTIATE response: %w", err)
	}
	h, err := smb2.ParseHeader(msg)
	if err != nil {
		return err
	}
	if h.Command != smb2.CommandNegotiate || !h.IsResponse() || h.Status != smb2.StatusSuccess {
		return fmt.Errorf("NEGOTIATE answered with command %v status %v", h.Command, h.Status)
	}
	return nil
}

// smbOutcome is how the server dealt with an SMB probe: it closed the
// connection (closed), or answered a frame (status), within the bound.
type smbOutcome struct {
	closed   bool
	answered bool
	status   smb2.Status
	command  smb2.Command
}

// smbProbe writes raw to a new SMB connection, then reads until the server
// answers one frame or closes the connection, for at most bound.
// dialServed dials addr until a connection is answered a NEGOTIATE (one
// the server refuses is closed at once) and returns it.
func dialServed(t *testing.T, addr string, wait time.Duration) net.Conn {
	t.Helper()
	end := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(wait))
		_, _ = c.Write(negotiateFrame(0))
		_, err = smb2.ReadFrame(c, smb2.MaxFrameSize)
		_ = c.SetDeadline(time.Time{})
		if err == nil {
			return c
		}
		c.Close()
		if time.Now().After(end) {
			t.Fatalf("no connection to %s served within 5 s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func smbProbe(t *testing.T, addr string, raw []byte, bound time.Duration) smbOutcome {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(bound))
	if _, err := c.Write(raw); err != nil {
		return smbOutcome{closed: true}
	}
	msg, err := smb2.ReadFrame(c, smb2.MaxFrameSize)
	var ne net.Error
	switch {
	case err == nil:
		h, perr := smb2.ParseHeader(msg)
		if perr != nil {
			t.Fatalf("unparsable answer: %v", perr)
		}
		return smbOutcome{answered: true, status: h.Status, command: h.Command}
	case errors.As(err, &ne) && ne.Timeout():
		return smbOutcome{}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return smbOutcome{closed: true}
	default:
		return smbOutcome{closed: true} // reset by the server
	}
}

// smbCases are the raw SMB2 probes that hold on the current code: each is
// refused by closing the connection (wantClosed) or by an error answer
// (wantStatus), within 3 s.
//
// The SMB limits of docs/security.md (deadline, caps, frames bounded
// before logon) have their own probes in TestSMBLimits.
var smbCases = []struct {
	name       string
	raw        []byte
	wantClosed bool
	wantStatus smb2.Status
}{
	// NetBIOS session message types other than 0 (here 0x85, a
	// keep-alive, and 0x81, a session request) are not Direct TCP
	// (MS-SMB2 2.1).
	{name: "NetBIOS keep-alive type", raw: []byte{0x85, 0, 0, 0}, wantClosed: true},
	{name: "NetBIOS session request", raw: append([]byte{0x81, 0, 0, 0x44}, make([]byte, 0x44)...), wantClosed: true},
	{name: "empty frame", raw: []byte{0, 0, 0, 0}, wantClosed: true},
	// A frame larger than the pre-authentication bound (64 KiB) is
	// refused from its header, before any of it is read or allocated.
	{name: "16 MiB declared frame before negotiate", raw: []byte{0, 0xff, 0xff, 0xff}, wantClosed: true},
	{name: "1 MiB declared frame before negotiate", raw: []byte{0, 0x10, 0, 0}, wantClosed: true},
	// A complete frame too short for an SMB2 header.
	{name: "truncated SMB2 header", raw: smbFrame([]byte{0xfe, 'S', 'M', 'B', 64, 0}), wantClosed: true},
	{name: "not SMB at all", raw: smbFrame([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")), wantClosed: true},
}

// TestSMBRawAbuse: each raw SMB2 probe is refused, and the server answers a
// normal NEGOTIATE (and every other front door) afterwards.
func TestSMBRawAbuse(t *testing.T) {
	s := start(t, nil)
	for _, tc := range smbCases {
		var got smbOutcome
		within(t, 4*time.Second, tc.name, func() { got = smbProbe(t, s.addr["smb"], tc.raw, 3*time.Second) })
		switch {
		case tc.wantClosed && !got.closed:
			t.Errorf("%s: want the connection closed, got %+v", tc.name, got)
		case !tc.wantClosed && (!got.answered || got.status != tc.wantStatus):
			t.Errorf("%s: want status %v, got %+v", tc.name, tc.wantStatus, got)
		}
		if err := smbNegotiate(s.addr["smb"]); err != nil {
			t.Fatalf("after %s: %v", tc.name, err)
		}
	}
	// A command other than NEGOTIATE first (MS-SMB2 3.3.5.2: before
	// negotiation only NEGOTIATE is valid).
	for _, cmd := range []smb2.Command{smb2.CommandSessionSetup, smb2.CommandTreeConnect, smb2.CommandCreate, smb2.CommandRead, smb2.CommandEcho, 0x0042} {
		msg := smb2.Marshal(smb2.Header{Command: cmd, Credits: 1}, make([]byte, 48))
		got := smbProbe(t, s.addr["smb"], smbFrame(msg), 3*time.Second)
		if !got.closed && !(got.answered && got.status != smb2.StatusSuccess) {
			t.Errorf("command %v before NEGOTIATE: want closed or an error status, got %+v", cmd, got)
		}
	}
	// A NEGOTIATE whose dialect count runs past the frame.
	neg := negotiateFrame(0)
	binary.LittleEndian.PutUint16(neg[4+64+2:], 0xffff)
	if got := smbProbe(t, s.addr["smb"], neg, 3*time.Second); !got.closed && !(got.answered && got.status != smb2.StatusSuccess) {
		t.Errorf("NEGOTIATE with 65535 dialects in a short frame: %+v", got)
	}
	s.alive()
}

// TestSMBLimits: the SMB server's own limits hold against clients that
// connect and idle. A client that sends nothing, less than a frame header,
// or half of a frame it announced is closed at the pre-authentication
// deadline; a frame announced above the bound before logon is refused
// from its header; connections past the per-address cap are closed as they
// arrive, and a freed slot is served again.
func TestSMBLimits(t *testing.T) {
	const deadline = time.Second
	const perAddr = 6
	s := start(t, func(c *app.Config) {
		c.SMBLimits = app.SMBLimits{MaxConnsPerAddr: perAddr, PreauthTimeout: deadline}
	})
	addr := s.addr["smb"]
	for _, tc := range []struct {
		name string
		raw  []byte
	}{
		{"silent client", nil},
		{"two bytes of a frame header", []byte{0, 0}},
		{"60 KiB announced, 10 bytes sent", append([]byte{0, 0, 0xf0, 0}, 0xfe, 'S', 'M', 'B', 64, 0, 0, 0, 0, 0)},
		{"NEGOTIATE, then silence", negotiateFrame(0)},
	} {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		_ = c.SetDeadline(began.Add(deadline + 4*time.Second))
		if len(tc.raw) > 0 {
			if _, err := c.Write(tc.raw); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		}
		// Read (and drop) whatever the server answers until it closes.
		_, err = io.Copy(io.Discard, c)
		took := time.Since(began)
		c.Close()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("%s: still open %s after connecting, past the %s deadline", tc.name, took, deadline)
			continue
		}
		if took < deadline-100*time.Millisecond {
			t.Errorf("%s: closed after %s, before the %s deadline", tc.name, took, deadline)
		}
	}
	// Announced above the pre-logon bound: closed at once, not at the
	// deadline.
	var got smbOutcome
	within(t, deadline/2, "a 200 KiB frame before logon", func() {
		got = smbProbe(t, addr, []byte{0, 0x03, 0x20, 0}, deadline)
	})
	if !got.closed {
		t.Errorf("a 200 KiB frame before logon: want the connection closed, got %+v", got)
	}

	// The per-address cap: perAddr connections held open, the next one
	// closed as it arrives. Each held one is served a NEGOTIATE first: the
	// probes above close their connections, and the server frees their
	// slots when it sees the close, so a connection dialled just after may
	// still be refused; it is dialled again until served, so that exactly
	// perAddr are held when the next one arrives.
	held := make([]net.Conn, 0, perAddr)
	for i := 0; i < perAddr; i++ {
		held = append(held, dialServed(t, addr, deadline/2))
	}
	extra, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = extra.SetDeadline(time.Now().Add(deadline / 2))
	_, _ = extra.Write(negotiateFrame(0))
	if _, err := smb2.ReadFrame(extra, smb2.MaxFrameSize); err == nil {
		t.Errorf("connection %d from one address was served past the cap of %d", perAddr+1, perAddr)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Errorf("connection %d from one address was held open, not closed at once", perAddr+1)
	}
	extra.Close()
	for _, c := range held {
		c.Close()
	}
	// The slots come back once the held connections are gone.
	var last error
	for i := 0; i < 50; i++ {
		if last = smbNegotiate(addr); last == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if last != nil {
		t.Errorf("after the held connections closed: %v", last)
	}
	s.alive()
}
