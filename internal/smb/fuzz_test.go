package smb

import (
	"encoding/binary"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// frame prefixes payload with the Direct TCP header.
func frame(payload []byte) []byte {
	h := smb2.FrameHeader(len(payload))
	return append(h[:], payload...)
}

func negotiateFrame() []byte {
	req := smb2.NegotiateRequest{SecurityMode: 1, Capabilities: 0x7f, Dialects: []smb2.Dialect{0x0202, 0x0210, 0x0300, 0x0302, 0x0311}}
	req.Contexts = []smb2.NegotiateContext{
		smb2.PreauthIntegrityCapabilities{HashAlgorithms: []uint16{smb2.HashSHA512}, Salt: make([]byte, 32)}.Context(),
		smb2.SigningCapabilities{Algorithms: []smb2.SigningAlgorithm{smb2.SigningAESCMAC}}.Context(),
	}
	return frame(smb2.Marshal(smb2.Header{Command: smb2.CommandNegotiate, Credits: 31}, req.Encode()))
}

// FuzzConnection feeds arbitrary bytes to a new connection: the server
// must neither panic nor keep the connection (or its goroutines) once the
// client is gone.
func FuzzConnection(f *testing.F) {
	neg := negotiateFrame()
	f.Add(neg)
	f.Add(frame(smb2.EncodeSMB1Negotiate([]string{"NT LM 0.12", "SMB 2.???"})))
	f.Add(append(append([]byte{}, neg...), frame(smb2.Marshal(smb2.Header{Command: smb2.CommandSessionSetup, MessageID: 1}, smb2.SessionSetupRequest{SecurityBuffer: []byte("NTLMSSP\x00\x01\x00\x00\x00")}.Encode()))...))
	f.Add([]byte{0, 0, 0, 4, 0xfe, 'S', 'M', 'B'})
	f.Add([]byte{0, 0, 0, 64})
	f.Add([]byte{0x85, 0, 0, 0})
	two := smb2.Marshal(smb2.Header{Command: smb2.CommandEcho, MessageID: 1}, smb2.EchoRequest{}.Encode())
	binary.LittleEndian.PutUint32(two[20:], 72)
	f.Add(append(append([]byte{}, neg...), frame(append(append(two, make([]byte, 4)...), two...))...))
	e := newTestEnv(f) // shared by the iterations
	f.Fuzz(func(t *testing.T, data []byte) {
		e := e.with(t)
		nc, err := net.Dial("tcp", e.addr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = nc.Write(data)
		// Drain what the server answers, briefly, then hang up.
		_ = nc.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		buf := make([]byte, 4096)
		for {
			if _, err := nc.Read(buf); err != nil {
				break
			}
		}
		nc.Close()
		e.waitConns()
		e.checkNoPanics()
	})
}

// FuzzRequest sends one arbitrary request body, under a valid header of
// the chosen command, on an authenticated session with a tree connected:
// every decoder and handler sees hostile input.
func FuzzRequest(f *testing.F) {
	fid := smb2.FileID{Persistent: 1, Volatile: 1}
	for _, s := range []struct {
		cmd  smb2.Command
		body []byte
	}{
		{smb2.CommandCreate, smb2.CreateRequest{ImpersonationLevel: 2, DesiredAccess: smb2.FileAllAccess, ShareAccess: 7, CreateDisposition: smb2.FileOpenIf, Name: "fuzz.txt"}.Encode()},
		{smb2.CommandCreate, smb2.CreateRequest{ImpersonationLevel: 2, DesiredAccess: 0x81, ShareAccess: 7, CreateDisposition: smb2.FileOpen, CreateOptions: smb2.FileDirectoryFile}.Encode()},
		{smb2.CommandRead, smb2.ReadRequest{Length: 100, FileID: fid}.Encode()},
		{smb2.CommandWrite, smb2.WriteRequest{FileID: fid, Data: []byte("abc")}.Encode()},
		{smb2.CommandQueryDirectory, smb2.QueryDirectoryRequest{FileInformationClass: 37, FileID: fid, Pattern: "*", OutputBufferLength: 4096}.Encode()},
		{smb2.CommandQueryInfo, smb2.QueryInfoRequest{InfoType: 1, FileInfoClass: 18, OutputBufferLength: 4096, FileID: fid}.Encode()},
		{smb2.CommandSetInfo, smb2.SetInfoRequest{InfoType: 1, FileInfoClass: 10, FileID: fid, Buffer: smb2.FileRenameInformation{FileName: "x"}.Encode()}.Encode()},
		{smb2.CommandIoctl, smb2.IoctlRequest{CtlCode: smb2.FsctlValidateNegotiateInfo, FileID: smb2.FileIDAllOnes, Flags: 1, MaxOutputResponse: 24}.Encode()},
		{smb2.CommandLock, smb2.LockRequest{FileID: fid, Locks: []smb2.LockElement{{Length: 1, Flags: 2}}}.Encode()},
		{smb2.CommandChangeNotify, smb2.ChangeNotifyRequest{FileID: fid, OutputBufferLength: 100}.Encode()},
		{smb2.CommandTreeConnect, smb2.TreeConnectRequest{Path: `\\h\IPC$`}.Encode()},
		{smb2.CommandSessionSetup, smb2.SessionSetupRequest{SecurityBuffer: []byte{0x60, 0x01}}.Encode()},
		{smb2.CommandClose, smb2.CloseRequest{FileID: fid}.Encode()},
		{smb2.CommandFlush, smb2.FlushRequest{FileID: fid}.Encode()},
		{smb2.CommandLogoff, smb2.LogoffRequest{}.Encode()},
		{smb2.CommandCancel, nil},
		{smb2.CommandOplockBreak, make([]byte, 24)},
		{0x55, []byte{1, 2, 3}},
	} {
		f.Add(uint16(s.cmd), uint8(0), uint16(1), s.body)
	}
	e := newTestEnv(f) // shared by the iterations
	f.Fuzz(func(t *testing.T, cmd uint16, flags uint8, charge uint16, body []byte) {
		e := e.with(t)
		c := e.dial()
		c.negotiate(smb2.Dialect311)
		if st := c.login(testAcct, testKey1, 1); st != smb2.StatusSuccess {
			t.Fatal(st)
		}
		c.treeConnect(testShare)
		m := c.req(smb2.Command(cmd), body)
		m.hdr.Flags = smb2.Flags(flags) &^ smb2.FlagResponse
		m.hdr.CreditCharge = charge % 4
		c.send(m)
		_ = c.nc.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		buf := make([]byte, 4096)
		for {
			if _, err := c.nc.Read(buf); err != nil {
				break
			}
		}
		c.nc.Close()
		e.waitConns()
		e.checkNoPanics()
	})
}

// TestNoGoroutineLeak runs connections through their whole life and
// checks that the server's goroutines end with them.
func TestNoGoroutineLeak(t *testing.T) {
	e := newTestEnv(t)
	base := runtime.NumGoroutine()
	for i := 0; i < 20; i++ {
		c := e.connect()
		fid, _ := c.create("leak.txt", smb2.FileAllAccess, 7, smb2.FileOpenIf, 0)
		dir, _ := c.create("", 0x81, 7, smb2.FileOpen, smb2.FileDirectoryFile)
		c.send(c.req(smb2.CommandChangeNotify, smb2.ChangeNotifyRequest{OutputBufferLength: 4096, FileID: dir}.Encode()))
		c.recv()
		_ = fid
		if i%2 == 0 {
			c.nc.Close()
		} else {
			// A protocol violation: the server drops the connection.
			c.send(c.req(smb2.CommandNegotiate, nil))
			c.expectClosed()
		}
	}
	e.waitConns()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base+2 {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The handles of the lost connections were closed: an exclusive
	// open succeeds.
	c := e.connect()
	_, r := c.create("leak.txt", smb2.FileAllAccess, 0, smb2.FileOpen, 0)
	status(t, r, smb2.StatusSuccess)
}
