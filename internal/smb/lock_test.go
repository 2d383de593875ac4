package smb

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file/filerest"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
	"github.com/cerulean-storage/cerulean/internal/smb/smbfs"
)

const (
	lkShared    = smb2.LockFlagShared
	lkExclusive = smb2.LockFlagExclusive
	lkUnlock    = smb2.LockFlagUnlock
	lkFail      = smb2.LockFlagFailImmediately
)

func el(off, n uint64, flags uint32) smb2.LockElement {
	return smb2.LockElement{Offset: off, Length: n, Flags: flags}
}

func (c *rawClient) lock(fid smb2.FileID, els ...smb2.LockElement) resp {
	c.t.Helper()
	return c.call(smb2.CommandLock, smb2.LockRequest{FileID: fid, Locks: els}.Encode())
}

// lockFile creates name with 400 bytes and returns its FileId.
func (c *rawClient) lockFile(name string) smb2.FileID {
	c.t.Helper()
	fid, r := c.create(name, smb2.FileAllAccess, 7, smb2.FileOpenIf, smb2.FileNonDirectoryFile)
	status(c.t, r, smb2.StatusSuccess)
	status(c.t, c.call(smb2.CommandWrite, smb2.WriteRequest{FileID: fid, Data: bytes.Repeat([]byte("x"), 400)}.Encode()), smb2.StatusSuccess)
	return fid
}

func (c *rawClient) read(fid smb2.FileID, off uint64, n uint32) smb2.Status {
	c.t.Helper()
	return c.call(smb2.CommandRead, smb2.ReadRequest{FileID: fid, Offset: off, Length: n}.Encode()).hdr.Status
}

func (c *rawClient) write(fid smb2.FileID, off uint64, n int) smb2.Status {
	c.t.Helper()
	return c.call(smb2.CommandWrite, smb2.WriteRequest{FileID: fid, Offset: off, Data: bytes.Repeat([]byte("y"), n)}.Encode()).hdr.Status
}

func TestLockRequests(t *testing.T) {
	e := newTestEnv(t)
	c := e.connect()
	fid := c.lockFile("l.bin")
	for _, tc := range []struct {
		name string
		els  []smb2.LockElement
		want smb2.Status
	}{
		{"no flags", []smb2.LockElement{el(0, 0, 0)}, smb2.StatusInvalidParameter},
		{"unlock|exclusive", []smb2.LockElement{el(1, 1, lkUnlock|lkExclusive)}, smb2.StatusInvalidParameter},
		{"unlock|fail-immediately", []smb2.LockElement{el(1, 1, lkUnlock|lkFail)}, smb2.StatusInvalidParameter},
		{"unknown flag", []smb2.LockElement{el(1, 1, lkShared|0x100)}, smb2.StatusInvalidParameter},
		{"a blocking element among several", []smb2.LockElement{el(0, 1, lkShared|lkFail), el(5, 1, lkShared)}, smb2.StatusInvalidParameter},
		{"an unlock in a lock request", []smb2.LockElement{el(0, 1, lkShared|lkFail), el(5, 1, lkUnlock)}, smb2.StatusInvalidParameter},
		{"overflowing range", []smb2.LockElement{el(^uint64(0), ^uint64(0), lkExclusive|lkFail)}, smb2.StatusInvalidLockRange},
		{"unlock of nothing", []smb2.LockElement{el(1, 1, lkUnlock)}, smb2.StatusRangeNotLocked},
		{"unlock of nothing, then a bad element", []smb2.LockElement{el(1, 1, lkUnlock), el(1, 1, 0)}, smb2.StatusRangeNotLocked},
	} {
		if r := c.lock(fid, tc.els...); r.hdr.Status != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, r.hdr.Status, tc.want)
		}
	}
	status(t, c.lock(smb2.FileID{Persistent: fid.Persistent + 1, Volatile: fid.Volatile}, el(0, 1, lkShared|lkFail)), smb2.StatusFileClosed)

	r := c.lock(fid, el(0, 10, lkExclusive|lkFail))
	status(t, r, smb2.StatusSuccess)
	if lr, err := smb2.DecodeLockResponse(r.msg); err != nil {
		t.Fatalf("LOCK response %v: %v", lr, err)
	}
	status(t, c.lock(fid, el(0, 10, lkExclusive|lkFail)), smb2.StatusLockNotGranted)
	// An unlock array unlocks up to a bad element, then fails.
	status(t, c.lock(fid, el(0, 10, lkUnlock), el(5, 5, lkShared)), smb2.StatusInvalidParameter)
	status(t, c.lock(fid, el(0, 10, lkExclusive|lkFail)), smb2.StatusSuccess)
	// Several lock elements: all or nothing.
	status(t, c.lock(fid, el(20, 10, lkExclusive|lkFail), el(5, 1, lkExclusive|lkFail)), smb2.StatusLockNotGranted)
	status(t, c.lock(fid, el(20, 10, lkExclusive|lkFail), el(40, 1, lkShared|lkFail)), smb2.StatusSuccess)
	status(t, c.lock(fid, el(0, 10, lkUnlock), el(20, 10, lkUnlock), el(40, 1, lkUnlock)), smb2.StatusSuccess)
	status(t, c.lock(fid, el(0, 10, lkUnlock)), smb2.StatusRangeNotLocked)

	// Directories cannot be locked; an attribute-only open cannot lock.
	dir, r := c.create("dir", 0x81, 7, smb2.FileOpenIf, smb2.FileDirectoryFile)
	status(t, r, smb2.StatusSuccess)
	status(t, c.lock(dir, el(0, 1, lkShared|lkFail)), smb2.StatusInvalidParameter)
	attr, r := c.create("l.bin", 0x80, 7, smb2.FileOpen, 0)
	status(t, r, smb2.StatusSuccess)
	status(t, c.lock(attr, el(0, 1, lkShared|lkFail)), smb2.StatusAccessDenied)
}

// restErr runs one REST request on the File service and returns its
// Azure error (nil for success).
func (e *testEnv) restErr(method, target, body string, hdr ...string) error {
	hr := httptest.NewRequest(method, "http://127.0.0.1:10003/"+testAcct+target, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		hr.Header.Set(hdr[i], hdr[i+1])
	}
	hr.Header.Set("x-ms-version", "2025-05-05")
	w := httptest.NewRecorder()
	err := filerest.New(e.svc).ServeAzure(w, &server.Request{Request: hr, Account: testAcct, Authenticated: true, Now: time.Now()})
	if err == nil && w.Code >= 300 {
		return errors.New(w.Result().Status)
	}
	return err
}

func TestLockReadWriteAndREST(t *testing.T) {
	e := newTestEnv(t)
	c := e.connect()
	h1 := c.lockFile("rw.bin")
	h2, r := c.create("rw.bin", smb2.FileAllAccess, 7, smb2.FileOpen, 0)
	status(t, r, smb2.StatusSuccess)
	c2 := e.connect()
	h3, r := c2.create("rw.bin", smb2.FileAllAccess, 7, smb2.FileOpen, 0)
	status(t, r, smb2.StatusSuccess)

	status(t, c.lock(h1, el(0, 100, lkExclusive|lkFail)), smb2.StatusSuccess)
	status(t, c.lock(h1, el(100, 100, lkShared|lkFail)), smb2.StatusSuccess)
	for _, tc := range []struct {
		name string
		got  smb2.Status
		want smb2.Status
	}{
		{"owner reads its exclusive range", c.read(h1, 50, 10), smb2.StatusSuccess},
		{"owner writes its exclusive range", c.write(h1, 50, 10), smb2.StatusSuccess},
		{"owner reads its shared range", c.read(h1, 150, 10), smb2.StatusSuccess},
		{"owner writes its shared range", c.write(h1, 150, 10), smb2.StatusFileLockConflict},
		{"other open reads the exclusive range", c.read(h2, 95, 10), smb2.StatusFileLockConflict},
		{"other open writes the exclusive range", c.write(h2, 0, 1), smb2.StatusFileLockConflict},
		{"other session reads the exclusive range", c2.read(h3, 99, 1), smb2.StatusFileLockConflict},
		{"other session reads the shared range", c2.read(h3, 100, 100), smb2.StatusSuccess},
		{"other session writes the shared range", c2.write(h3, 199, 1), smb2.StatusFileLockConflict},
		{"other session writes after the locks", c2.write(h3, 200, 100), smb2.StatusSuccess},
		{"a read past the end of file over a lock", c2.read(h3, 50, 1000), smb2.StatusFileLockConflict},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}

	// REST: Get File and Put Range over the locked ranges.
	path := "/" + testShare + "/rw.bin"
	locked := func(err error) bool { return azerr.Has(err, azerr.FileLockConflict) }
	get := func(rng string) error { return e.restErr(http.MethodGet, path, "", "x-ms-range", rng) }
	put := func(rng string, n int) error {
		return e.restErr(http.MethodPut, path+"?comp=range", strings.Repeat("z", n), "x-ms-range", rng, "x-ms-write", "update")
	}
	clear := func(rng string) error {
		return e.restErr(http.MethodPut, path+"?comp=range", "", "x-ms-range", rng, "x-ms-write", "clear")
	}
	for _, tc := range []struct {
		name   string
		err    error
		locked bool
	}{
		{"get of the exclusive range", get("bytes=90-99"), true},
		{"get of the whole file", e.restErr(http.MethodGet, path, ""), true},
		{"get of the shared range", get("bytes=100-199"), false},
		{"get after the locks", get("bytes=200-399"), false},
		{"put into the shared range", put("bytes=199-199", 1), true},
		{"put into the exclusive range", put("bytes=0-9", 10), true},
		{"clear over the exclusive range", clear("bytes=0-399"), true},
		{"put after the locks", put("bytes=200-209", 10), false},
	} {
		if got := locked(tc.err); got != tc.locked || !got && tc.err != nil {
			t.Errorf("%s: %v, want locked %v", tc.name, tc.err, tc.locked)
		}
	}
	// A resize is not checked against locks (MS-FSA).
	if err := e.restErr(http.MethodPut, path+"?comp=properties", "", "x-ms-content-length", "150"); err != nil {
		t.Errorf("resize of a locked file: %v", err)
	}
	// Closing the holder releases its locks for everyone.
	status(t, c.close(h1), smb2.StatusSuccess)
	if st := c.write(h2, 0, 150); st != smb2.StatusSuccess {
		t.Errorf("write after the holder closed: %v", st)
	}
	if err := get("bytes=0-149"); err != nil {
		t.Errorf("get after the holder closed: %v", err)
	}
}

// TestBlockingLock: a LOCK without FAIL_IMMEDIATELY waits (interim
// STATUS_PENDING) until granted, cancelled or its open goes.
func TestBlockingLock(t *testing.T) {
	e := newTestEnv(t)
	holder := e.connect()
	waiter := e.connect()
	h := holder.lockFile("b.bin")
	w, r := waiter.create("b.bin", smb2.FileAllAccess, 7, smb2.FileOpen, 0)
	status(t, r, smb2.StatusSuccess)
	status(t, holder.lock(h, el(100, 50, lkExclusive)), smb2.StatusSuccess)

	pend := func() (*msg, resp) {
		t.Helper()
		m := waiter.req(smb2.CommandLock, smb2.LockRequest{FileID: w, Locks: []smb2.LockElement{el(120, 10, lkExclusive)}}.Encode())
		waiter.send(m)
		interim := waiter.recv()
		status(t, interim, smb2.StatusPending)
		if interim.hdr.Flags&smb2.FlagAsync == 0 || interim.hdr.AsyncID == 0 || interim.hdr.MessageID != m.hdr.MessageID {
			t.Fatalf("interim header %+v", interim.hdr)
		}
		return m, interim
	}
	final := func(m *msg, interim resp, want smb2.Status) {
		t.Helper()
		r := waiter.recv()
		status(t, r, want)
		if r.hdr.MessageID != m.hdr.MessageID || r.hdr.AsyncID != interim.hdr.AsyncID || r.hdr.Flags&smb2.FlagAsync == 0 {
			t.Fatalf("final header %+v", r.hdr)
		}
		if r.hdr.Flags&smb2.FlagSigned == 0 || !smb2.Verify(r.msg, waiter.key, waiter.alg) {
			t.Fatal("the final response is not signed")
		}
		if want == smb2.StatusSuccess {
			if _, err := smb2.DecodeLockResponse(r.msg); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Granted when the holder unlocks (on another connection).
	m, interim := pend()
	status(t, holder.lock(h, el(100, 50, lkUnlock)), smb2.StatusSuccess)
	final(m, interim, smb2.StatusSuccess)
	status(t, holder.lock(h, el(125, 1, lkShared|lkFail)), smb2.StatusLockNotGranted)
	status(t, waiter.lock(w, el(120, 10, lkUnlock)), smb2.StatusSuccess)

	// CANCEL by AsyncId.
	status(t, holder.lock(h, el(100, 50, lkExclusive)), smb2.StatusSuccess)
	m, interim = pend()
	// An unlock of the pending range finds nothing (smb2.lock.cancel).
	status(t, waiter.lock(w, el(120, 10, lkUnlock)), smb2.StatusRangeNotLocked)
	cancel := smb2.Header{Command: smb2.CommandCancel, Flags: smb2.FlagAsync, AsyncID: interim.hdr.AsyncID, SessionID: waiter.sid}
	if err := smb2.WriteFrame(waiter.nc, smb2.Marshal(cancel, smb2.CancelRequest{}.Encode())); err != nil {
		t.Fatal(err)
	}
	final(m, interim, smb2.StatusCancelled)

	// CANCEL by MessageId.
	m, interim = pend()
	cancel = smb2.Header{Command: smb2.CommandCancel, MessageID: m.hdr.MessageID, SessionID: waiter.sid}
	if err := smb2.WriteFrame(waiter.nc, smb2.Marshal(cancel, smb2.CancelRequest{}.Encode())); err != nil {
		t.Fatal(err)
	}
	final(m, interim, smb2.StatusCancelled)

	// Closing the waiting open: RANGE_NOT_LOCKED, before the CLOSE reply.
	m, interim = pend()
	waiter.send(waiter.req(smb2.CommandClose, smb2.CloseRequest{FileID: w}.Encode()))
	final(m, interim, smb2.StatusRangeNotLocked)
	status(t, waiter.recv(), smb2.StatusSuccess)

	// A tree disconnect, and a logoff, answer it the same way.
	for _, end := range []smb2.Command{smb2.CommandTreeDisconnect, smb2.CommandLogoff} {
		w, r = waiter.create("b.bin", smb2.FileAllAccess, 7, smb2.FileOpen, 0)
		status(t, r, smb2.StatusSuccess)
		m, interim = pend()
		body := smb2.TreeDisconnectRequest{}.Encode()
		if end == smb2.CommandLogoff {
			body = smb2.LogoffRequest{}.Encode()
		}
		waiter.send(waiter.req(end, body))
		final(m, interim, smb2.StatusRangeNotLocked)
		status(t, waiter.recv(), smb2.StatusSuccess)
		if end == smb2.CommandTreeDisconnect {
			waiter.treeConnect(testShare)
		}
	}

	// Granted when the holder's connection drops.
	waiter = e.connect()
	w, r = waiter.create("b.bin", smb2.FileAllAccess, 7, smb2.FileOpen, 0)
	status(t, r, smb2.StatusSuccess)
	m, interim = pend()
	holder.nc.Close()
	final(m, interim, smb2.StatusSuccess)
}

// TestBlockingLockAcrossServers: a lock released through another server
// on the same store (no wake-up reaches this one) is found by polling.
func TestBlockingLockAcrossServers(t *testing.T) {
	e := newTestEnv(t)
	srv2 := New(Config{
		FS:       smbfs.New(e.svc, "smb-test-2"),
		Accounts: []auth.Account{{Name: testAcct, Keys: [][]byte{e.key1()}}},
		Logger:   slog.New(slog.DiscardHandler),
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv2.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv2.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	e2 := &testEnv{t: t, svc: e.svc, srv: srv2, addr: ln.Addr().String(), panics: e.panics}

	holder := e.connect()
	h := holder.lockFile("x.bin")
	status(t, holder.lock(h, el(0, 10, lkExclusive|lkFail)), smb2.StatusSuccess)
	waiter := e2.connect()
	w, r := waiter.create("x.bin", smb2.FileAllAccess, 7, smb2.FileOpen, 0)
	status(t, r, smb2.StatusSuccess)
	status(t, waiter.lock(w, el(5, 1, lkShared|lkFail)), smb2.StatusLockNotGranted)
	if st := waiter.read(w, 0, 10); st != smb2.StatusFileLockConflict {
		t.Fatalf("read across servers: %v", st)
	}
	waiter.send(waiter.req(smb2.CommandLock, smb2.LockRequest{FileID: w, Locks: []smb2.LockElement{el(5, 1, lkShared)}}.Encode()))
	status(t, waiter.recv(), smb2.StatusPending)
	start := time.Now()
	status(t, holder.lock(h, el(0, 10, lkUnlock)), smb2.StatusSuccess)
	status(t, waiter.recv(), smb2.StatusSuccess)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("granted after %v", d)
	}
	if st := holder.write(h, 5, 1); st != smb2.StatusFileLockConflict {
		t.Fatalf("write under the other server's lock: %v", st)
	}
}

// key1 is the account's first key.
func (e *testEnv) key1() []byte {
	k, _ := base64.StdEncoding.DecodeString(testKey1)
	return k
}

// FuzzParseLocks checks parseLocks's outcome on arbitrary elements
// against the rules of MS-SMB2 3.3.5.14 as smbd applies them.
func FuzzParseLocks(f *testing.F) {
	for _, flags := range [][]uint32{
		{0}, {lkShared}, {lkExclusive | lkFail}, {lkUnlock}, {lkUnlock | lkExclusive},
		{lkShared | lkFail, lkShared}, {lkUnlock, 0}, {lkUnlock, lkUnlock}, {0, lkUnlock},
		{lkExclusive | lkFail, lkShared | lkFail, lkExclusive | lkFail},
	} {
		var b []byte
		for _, fl := range flags {
			b = append(b, byte(fl), byte(fl>>8))
		}
		f.Add(b)
	}
	valid := map[uint32]bool{lkShared: true, lkExclusive: true, lkShared | lkFail: true, lkExclusive | lkFail: true}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 2 || len(b) > 64 {
			return
		}
		var els []smb2.LockElement
		for i := 0; i+1 < len(b); i += 2 {
			els = append(els, el(uint64(i), uint64(b[i]), uint32(b[i])|uint32(b[i+1])<<8))
		}
		ranges, unlock, blocking, bad, err := parseLocks(els)
		first := els[0].Flags
		if first != lkUnlock {
			ok := valid[first] && (len(els) == 1 || first&lkFail != 0)
			for _, x := range els[1:] {
				ok = ok && valid[x.Flags] && x.Flags&lkFail != 0
			}
			if ok != (err == nil) {
				t.Fatalf("lock request %+v: err %v", els, err)
			}
			if err == nil && (unlock || len(ranges) != len(els) || blocking != (first&lkFail == 0)) {
				t.Fatalf("lock request %+v: %d ranges, unlock %v, blocking %v", els, len(ranges), unlock, blocking)
			}
			return
		}
		if err != nil || !unlock || blocking {
			t.Fatalf("unlock request %+v: unlock %v blocking %v err %v", els, unlock, blocking, err)
		}
		want := len(els)
		for i, x := range els {
			if x.Flags != lkUnlock {
				want = i
				break
			}
		}
		if bad != want || len(ranges) != want {
			t.Fatalf("unlock request %+v: bad %d with %d ranges, want %d", els, bad, len(ranges), want)
		}
	})
}
