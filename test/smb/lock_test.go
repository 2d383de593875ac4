package smb

import (
	"bytes"
	"crypto/rand"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	ntlmssp "github.com/Azure/go-ntlmssp"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

const statusFileLockConflict = 0xC0000054

// lockClient is a minimal SMB2 client for what go-smb2 cannot do: LOCK.
// It speaks SMB 2.1 with unsigned requests (the server enables signing
// but does not require it), built from the server's own codec.
type lockClient struct {
	t   *testing.T
	nc  net.Conn
	mid uint64
	sid uint64
	tid uint32
}

func (c *lockClient) call(cmd smb2.Command, body []byte) (smb2.Header, []byte) {
	c.t.Helper()
	hdr := smb2.Header{Command: cmd, MessageID: c.mid, SessionID: c.sid, TreeID: c.tid, Credits: 64, CreditCharge: 1}
	c.mid++
	if err := smb2.WriteFrame(c.nc, smb2.Marshal(hdr, body)); err != nil {
		c.t.Fatal(err)
	}
	_ = c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	msg, err := smb2.ReadFrame(c.nc, smb2.MaxFrameSize)
	if err != nil {
		c.t.Fatalf("%v: %v", cmd, err)
	}
	rh, err := smb2.ParseHeader(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	return rh, msg
}

// lockClient logs on to the server (NTLMv2 with the dev account) and
// connects shareName.
func (e *env) lockClient(shareName string) *lockClient {
	e.t.Helper()
	nc, err := net.Dial("tcp", e.app.SMBAddr)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { nc.Close() })
	c := &lockClient{t: e.t, nc: nc}
	neg := smb2.NegotiateRequest{SecurityMode: smb2.SigningEnabled, Dialects: []smb2.Dialect{smb2.Dialect210}}
	_, _ = rand.Read(neg.ClientGUID[:])
	if h, _ := c.call(smb2.CommandNegotiate, neg.Encode()); h.Status != smb2.StatusSuccess {
		e.t.Fatalf("negotiate: %v", h.Status)
	}
	tok, err := ntlmssp.NewNegotiateMessage("", "")
	if err != nil {
		e.t.Fatal(err)
	}
	h, msg := c.call(smb2.CommandSessionSetup, smb2.SessionSetupRequest{SecurityMode: 1, SecurityBuffer: tok}.Encode())
	if h.Status != smb2.StatusMoreProcessingRequired {
		e.t.Fatalf("session setup: %v", h.Status)
	}
	c.sid = h.SessionID
	ss, err := smb2.DecodeSessionSetupResponse(msg)
	if err != nil {
		e.t.Fatal(err)
	}
	if tok, err = ntlmssp.NewAuthenticateMessage(ss.SecurityBuffer, app.DevAccount, app.DevKey, nil); err != nil {
		e.t.Fatal(err)
	}
	if h, _ = c.call(smb2.CommandSessionSetup, smb2.SessionSetupRequest{SecurityMode: 1, SecurityBuffer: tok}.Encode()); h.Status != smb2.StatusSuccess {
		e.t.Fatalf("session setup: %v", h.Status)
	}
	h, _ = c.call(smb2.CommandTreeConnect, smb2.TreeConnectRequest{Path: `\\127.0.0.1\` + shareName}.Encode())
	if h.Status != smb2.StatusSuccess {
		e.t.Fatalf("tree connect: %v", h.Status)
	}
	c.tid = h.TreeID
	return c
}

// open opens name for reading and writing (no DELETE access, so that
// go-smb2's opens, which do not share delete, can join).
func (c *lockClient) open(name string) smb2.FileID {
	c.t.Helper()
	h, msg := c.call(smb2.CommandCreate, smb2.CreateRequest{
		ImpersonationLevel: smb2.ImpersonationImpersonation, DesiredAccess: smb2.FileReadData | smb2.FileWriteData | smb2.FileReadAttributes,
		ShareAccess: smb2.ShareRead | smb2.ShareWrite | smb2.ShareDelete, CreateDisposition: smb2.FileOpen, Name: name,
	}.Encode())
	if h.Status != smb2.StatusSuccess {
		c.t.Fatalf("create %s: %v", name, h.Status)
	}
	cr, err := smb2.DecodeCreateResponse(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	return cr.FileID
}

func (c *lockClient) lock(fid smb2.FileID, off, n uint64, flags uint32) smb2.Status {
	c.t.Helper()
	h, _ := c.call(smb2.CommandLock, smb2.LockRequest{FileID: fid, Locks: []smb2.LockElement{{Offset: off, Length: n, Flags: flags}}}.Encode())
	return h.Status
}

// TestRESTAgainstSMBLocks: byte-range locks taken over SMB hold against
// REST (azfile: 409 FileLockConflict) and against another SMB client
// (go-smb2: STATUS_FILE_LOCK_CONFLICT), and go with the handle.
func TestRESTAgainstSMBLocks(t *testing.T) {
	e := start(t)
	sc := e.share("locks")
	content := randomBytes(2048)
	e.upload(sc, "f.bin", content)
	e.upload(sc, "src.bin", randomBytes(1024))
	fc := fileClient(sc, "f.bin")
	srcURL, err := fileClient(sc, "src.bin").GetSASURL(sas.FilePermissions{Read: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}

	lc := e.lockClient("locks")
	fid := lc.open("f.bin")
	const excl, shared = smb2.LockFlagExclusive | smb2.LockFlagFailImmediately, smb2.LockFlagShared | smb2.LockFlagFailImmediately
	for _, l := range []struct {
		off, n uint64
		flags  uint32
	}{{0, 100, excl}, {1000, 100, shared}} {
		if st := lc.lock(fid, l.off, l.n, l.flags); st != smb2.StatusSuccess {
			t.Fatalf("lock %d+%d: %v", l.off, l.n, st)
		}
	}
	get := func(off, n int64) error {
		r, err := fc.DownloadStream(e.ctx, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: off, Count: n}})
		if err == nil {
			r.Body.Close()
		}
		return err
	}
	put := func(off int64, n int) error {
		_, err := fc.UploadRange(e.ctx, off, streaming.NopCloser(bytes.NewReader(randomBytes(n))), nil)
		return err
	}
	for _, c := range []struct {
		name   string
		err    error
		locked bool
	}{
		{"Get File of the exclusive range", get(50, 10), true},
		{"Get File of the whole file", get(0, 0), true},
		{"Get File of the shared range", get(1000, 100), false},
		{"Get File elsewhere", get(100, 900), false},
		{"Put Range into the shared range", put(1050, 10), true},
		{"Put Range over the exclusive range", put(90, 20), true},
		{"Put Range elsewhere", put(500, 10), false},
		{"Clear Range over the exclusive range", func() error { _, err := fc.ClearRange(e.ctx, file.HTTPRange{Offset: 0, Count: 512}, nil); return err }(), true},
		{"Put Range From URL into the exclusive range", func() error { _, err := fc.UploadRangeFromURL(e.ctx, srcURL, 0, 64, 16, nil); return err }(), true},
		{"Put Range From URL elsewhere", func() error { _, err := fc.UploadRangeFromURL(e.ctx, srcURL, 0, 1500, 16, nil); return err }(), false},
		{"Resize (not a ranged write)", func() error { _, err := fc.Resize(e.ctx, 2048, nil); return err }(), false},
	} {
		if got := hasCode(c.err, fileerror.FileLockConflict); got != c.locked || !got && c.err != nil {
			t.Errorf("%s: %v, want FileLockConflict %v", c.name, c.err, c.locked)
		}
	}

	// Another SMB client (go-smb2) reads and writes around the locks.
	f, err := e.mount("locks").OpenFile("f.bin", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 10)
	if _, err := f.ReadAt(buf, 95); !ntStatus(err, statusFileLockConflict) {
		t.Errorf("go-smb2 read of the exclusive range: %v", err)
	}
	if _, err := f.ReadAt(buf, 1000); err != nil {
		t.Errorf("go-smb2 read of the shared range: %v", err)
	}
	if _, err := f.WriteAt(buf, 1095); !ntStatus(err, statusFileLockConflict) {
		t.Errorf("go-smb2 write into the shared range: %v", err)
	}

	// Unlocking, then Force Close Handles over REST, release the locks.
	if st := lc.lock(fid, 0, 100, smb2.LockFlagUnlock); st != smb2.StatusSuccess {
		t.Fatalf("unlock: %v", st)
	}
	if err := get(0, 100); err != nil {
		t.Errorf("Get File after the unlock: %v", err)
	}
	if err := put(1050, 10); !hasCode(err, fileerror.FileLockConflict) {
		t.Errorf("Put Range into the range still locked: %v", err)
	}
	// The SMB FileId's persistent part is the handle id REST lists.
	if _, err := fc.ForceCloseHandles(e.ctx, strconv.FormatUint(fid.Persistent, 10), nil); err != nil {
		t.Fatal(err)
	}
	if err := put(1050, 10); err != nil {
		t.Errorf("Put Range after Force Close Handles: %v", err)
	}
	if _, err := f.WriteAt(buf, 1095); err != nil {
		t.Errorf("go-smb2 write after Force Close Handles: %v", err)
	}
	if st := lc.lock(fid, 0, 1, excl); st != smb2.StatusFileClosed {
		t.Errorf("lock through a force-closed handle: %v", st)
	}
}
