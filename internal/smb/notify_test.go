package smb

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// Filters of the tests.
const (
	notifyNames = smb2.FileNotifyChangeFileName | smb2.FileNotifyChangeDirName
	notifyAll   = 0xfff
)

// watchDir opens the directory name for CHANGE_NOTIFY.
func (c *rawClient) watchDir(name string) smb2.FileID {
	c.t.Helper()
	dir, r := c.create(name, 0x81, 7, smb2.FileOpen, smb2.FileDirectoryFile)
	status(c.t, r, smb2.StatusSuccess)
	return dir
}

// notify sends a CHANGE_NOTIFY on dir and returns the request.
func (c *rawClient) notify(dir smb2.FileID, filter uint32, outLen uint32, flags uint16) *msg {
	c.t.Helper()
	m := c.req(smb2.CommandChangeNotify, smb2.ChangeNotifyRequest{Flags: flags, OutputBufferLength: outLen, FileID: dir, CompletionFilter: filter}.Encode())
	c.send(m)
	return m
}

// notifyPending sends a CHANGE_NOTIFY and checks it goes async.
func (c *rawClient) notifyPending(dir smb2.FileID, filter uint32, outLen uint32, flags uint16) *msg {
	c.t.Helper()
	m := c.notify(dir, filter, outLen, flags)
	status(c.t, c.recv(), smb2.StatusPending)
	return m
}

// notifyRecs checks that r is a successful CHANGE_NOTIFY response and
// returns its records as "action name" strings.
func notifyRecs(t *testing.T, r resp) []string {
	t.Helper()
	status(t, r, smb2.StatusSuccess)
	nr, err := smb2.DecodeChangeNotifyResponse(r.msg)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := smb2.DecodeFileNotifyInformation(nr.Output)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rec := range recs {
		out = append(out, fmt.Sprintf("%d %s", rec.Action, rec.FileName))
	}
	return out
}

func wantRecs(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("notified %q, want %q", got, want)
	}
}

// expectNothing checks that no frame arrives on c for a while.
func (c *rawClient) expectNothing() {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := smb2.ReadFrame(c.nc, smb2.MaxFrameSize); err == nil {
		c.t.Fatal("got a response; want none")
	}
}

func (c *rawClient) setInfo(fid smb2.FileID, class smb2.InfoClass, buf []byte) {
	c.t.Helper()
	status(c.t, c.call(smb2.CommandSetInfo, smb2.SetInfoRequest{InfoType: smb2.InfoTypeFile, FileInfoClass: class, FileID: fid, Buffer: buf}.Encode()), smb2.StatusSuccess)
}

func TestChangeNotifyReportsChanges(t *testing.T) {
	e := newTestEnv(t)
	w, c := e.connect(), e.connect()
	dir := w.watchDir("")

	// A create on another connection is ADDED.
	m := w.notifyPending(dir, notifyAll, 4096, 0)
	f, r := c.create("f.txt", 0x1f01ff, 7, smb2.FileCreate, 0)
	status(t, r, smb2.StatusSuccess)
	final := w.recv()
	wantRecs(t, notifyRecs(t, final), "1 f.txt")
	if final.hdr.MessageID != m.hdr.MessageID || final.hdr.Flags&smb2.FlagAsync == 0 || final.hdr.Credits != 0 || final.hdr.Flags&smb2.FlagSigned == 0 {
		t.Fatalf("final header %+v", final.hdr)
	}
	// A write is MODIFIED (size and last write); repeats, kept while no
	// request was pending, fold into one record.
	if st := c.write(f, 0, 5); st != smb2.StatusSuccess {
		t.Fatal(st)
	}
	if st := c.write(f, 5, 5); st != smb2.StatusSuccess {
		t.Fatal(st)
	}
	w.notify(dir, notifyAll, 4096, 0)
	wantRecs(t, notifyRecs(t, w.recv()), "3 f.txt")
	// Times and attributes.
	w.notifyPending(dir, notifyAll, 4096, 0)
	c.setInfo(f, smb2.FileBasicInformationClass, smb2.FileBasicInformation{FileAttributes: 0x2}.Encode())
	wantRecs(t, notifyRecs(t, w.recv()), "3 f.txt")
	// End of file.
	w.notifyPending(dir, smb2.FileNotifyChangeSize, 4096, 0)
	c.setInfo(f, smb2.FileEndOfFileInformationClass, smb2.FileEndOfFileInformation{EndOfFile: 1}.Encode())
	wantRecs(t, notifyRecs(t, w.recv()), "3 f.txt")
	// A rename in the directory: old and new names.
	w.notifyPending(dir, notifyAll, 4096, 0)
	c.setInfo(f, smb2.FileRenameInformationClass, smb2.FileRenameInformation{FileName: "g.txt"}.Encode())
	wantRecs(t, notifyRecs(t, w.recv()), "4 f.txt", "5 g.txt")
	// Delete-pending is reported when the entry goes, at its last close.
	w.notifyPending(dir, notifyAll, 4096, 0)
	g2, r := c.create("g.txt", 0x10080, 7, smb2.FileOpen, 0)
	status(t, r, smb2.StatusSuccess)
	c.setInfo(f, smb2.FileDispositionInformationClass, smb2.FileDispositionInformation{DeletePending: true}.Encode())
	status(t, c.close(f), smb2.StatusSuccess)
	w.expectNothing()
	status(t, c.close(g2), smb2.StatusSuccess)
	wantRecs(t, notifyRecs(t, w.recv()), "2 g.txt")
	// A directory made and removed by the watching connection itself.
	m = w.notify(dir, notifyAll, 4096, 0)
	status(t, w.recv(), smb2.StatusPending)
	d, r := w.create("sub", 0x110080, 7, smb2.FileCreate, smb2.FileDirectoryFile|smb2.FileDeleteOnClose)
	status(t, r, smb2.StatusSuccess)
	final = w.recv()
	if final.hdr.MessageID != m.hdr.MessageID {
		t.Fatalf("got %v, want the notify's final response", final.hdr)
	}
	wantRecs(t, notifyRecs(t, final), "1 sub")
	w.notifyPending(dir, notifyAll, 4096, 0)
	status(t, w.close(d), smb2.StatusSuccess)
	wantRecs(t, notifyRecs(t, w.recv()), "2 sub")
}

func TestChangeNotifyFilter(t *testing.T) {
	e := newTestEnv(t)
	w, c := e.connect(), e.connect()
	dir := w.watchDir("")
	w.notifyPending(dir, smb2.FileNotifyChangeDirName, 4096, 0)
	f, r := c.create("f", 0x1f01ff, 7, smb2.FileCreate, 0)
	status(t, r, smb2.StatusSuccess)
	if st := c.write(f, 0, 1); st != smb2.StatusSuccess {
		t.Fatal(st)
	}
	w.expectNothing()
	d, r := c.create("d", 0x80, 7, smb2.FileCreate, smb2.FileDirectoryFile)
	status(t, r, smb2.StatusSuccess)
	wantRecs(t, notifyRecs(t, w.recv()), "1 d")
	// The first request's filter stays: a later one asking for file
	// names does not change it (as smbd).
	w.notifyPending(dir, notifyAll, 4096, 0)
	_, r = c.create("f2", 0x1f01ff, 7, smb2.FileCreate, 0)
	status(t, r, smb2.StatusSuccess)
	w.expectNothing()
	// Entries below a child are not reported without WATCH_TREE.
	_, r = c.create(`d\x`, 0x80, 7, smb2.FileCreate, smb2.FileDirectoryFile)
	status(t, r, smb2.StatusSuccess)
	w.expectNothing()
	status(t, c.close(d), smb2.StatusSuccess)
}

func TestChangeNotifyWatchTree(t *testing.T) {
	e := newTestEnv(t)
	w, c := e.connect(), e.connect()
	d, r := c.create("d", 0x80, 7, smb2.FileCreate, smb2.FileDirectoryFile)
	status(t, r, smb2.StatusSuccess)
	status(t, c.close(d), smb2.StatusSuccess)
	root := w.watchDir("")
	sub := w.watchDir("D") // any case
	w.notifyPending(root, notifyNames, 4096, smb2.ChangeNotifyWatchTree)
	w.notifyPending(sub, notifyNames, 4096, 0)
	_, r = c.create(`d\e`, 0x80, 7, smb2.FileCreate, smb2.FileDirectoryFile)
	status(t, r, smb2.StatusSuccess)
	got := append(notifyRecs(t, w.recv()), notifyRecs(t, w.recv())...)
	slices.Sort(got)
	wantRecs(t, got, `1 d\e`, "1 e")
	// Deeper still: only the tree watch sees it.
	w.notifyPending(root, notifyNames, 4096, 0)
	w.notifyPending(sub, notifyNames, 4096, 0)
	_, r = c.create(`d\e\f`, 0x80, 7, smb2.FileCreate, 0)
	status(t, r, smb2.StatusSuccess)
	wantRecs(t, notifyRecs(t, w.recv()), `1 d\e\f`)
	w.expectNothing()
	// A move between directories is REMOVED from one, ADDED to the other.
	w.notifyPending(root, notifyNames, 4096, 0)
	f, r := c.create(`d\e\f`, 0x10080, 7, smb2.FileOpen, 0)
	status(t, r, smb2.StatusSuccess)
	c.setInfo(f, smb2.FileRenameInformationClass, smb2.FileRenameInformation{FileName: `d\f`}.Encode())
	got = append(notifyRecs(t, w.recv()), notifyRecs(t, w.recv())...)
	if !slices.Equal(got, []string{`2 d\e\f`, `1 d\f`, `1 f`}) && !slices.Equal(got, []string{`1 f`, `2 d\e\f`, `1 d\f`}) {
		t.Fatalf("notified %q", got)
	}
}

func TestChangeNotifyBuffersChanges(t *testing.T) {
	e := newTestEnv(t)
	w, c := e.connect(), e.connect()
	dir := w.watchDir("")
	// Before the first CHANGE_NOTIFY nothing is kept.
	_, r := c.create("before", 0x80, 7, smb2.FileCreate, 0)
	status(t, r, smb2.StatusSuccess)
	w.notifyPending(dir, notifyNames, 4096, 0)
	_, r = c.create("a", 0x80, 7, smb2.FileCreate, 0)
	status(t, r, smb2.StatusSuccess)
	wantRecs(t, notifyRecs(t, w.recv()), "1 a")
	// Changes with no request pending wait for the next one, which
	// completes at once.
	for _, n := range []string{"b", "c"} {
		_, r = c.create(n, 0x80, 7, smb2.FileCreate, 0)
		status(t, r, smb2.StatusSuccess)
	}
	w.notify(dir, notifyNames, 4096, 0)
	r = w.recv()
	if r.hdr.Flags&smb2.FlagAsync != 0 {
		t.Fatalf("buffered changes answered async: %+v", r.hdr)
	}
	wantRecs(t, notifyRecs(t, r), "1 b", "1 c")
	// A cancelled request leaves the changes for the next.
	m := w.notifyPending(dir, notifyNames, 4096, 0)
	cancel := smb2.Header{Command: smb2.CommandCancel, MessageID: m.hdr.MessageID, SessionID: w.sid}
	w.send(&msg{hdr: cancel, body: smb2.CancelRequest{}.Encode()})
	status(t, w.recv(), smb2.StatusCancelled)
	_, r = c.create("d", 0x80, 7, smb2.FileCreate, 0)
	status(t, r, smb2.StatusSuccess)
	w.notify(dir, notifyNames, 4096, 0)
	wantRecs(t, notifyRecs(t, w.recv()), "1 d")
}

func TestChangeNotifyOverflow(t *testing.T) {
	e := newTestEnv(t)
	w, c := e.connect(), e.connect()
	dir := w.watchDir("")
	// Changes that do not fit the request's buffer: ENUM_DIR, no data.
	w.notifyPending(dir, notifyNames, 4096, 0)
	small := w.watchDir("")
	w.notifyPending(small, notifyNames, 16, 0)
	_, r := c.create("a-long-file-name", 0x80, 7, smb2.FileCreate, 0)
	status(t, r, smb2.StatusSuccess)
	var got []resp
	got = append(got, w.recv(), w.recv())
	slices.SortFunc(got, func(a, b resp) int { return int(a.hdr.Status) - int(b.hdr.Status) })
	wantRecs(t, notifyRecs(t, got[0]), "1 a-long-file-name")
	status(t, got[1], smb2.StatusNotifyEnumDir)
	if len(got[1].msg) != smb2.HeaderSize+9 {
		t.Fatalf("ENUM_DIR response of %d bytes", len(got[1].msg))
	}
	// More buffered changes than the first request's buffer: ENUM_DIR at
	// the next request, then reporting resumes.
	for i := range 200 {
		_, r = c.create(fmt.Sprintf("file%03d", i), 0x80, 7, smb2.FileCreate, 0)
		status(t, r, smb2.StatusSuccess)
	}
	w.notify(dir, notifyNames, 4096, 0)
	status(t, w.recv(), smb2.StatusNotifyEnumDir)
	w.notifyPending(dir, notifyNames, 4096, 0)
	_, r = c.create("z", 0x80, 7, smb2.FileCreate, 0)
	status(t, r, smb2.StatusSuccess)
	wantRecs(t, notifyRecs(t, w.recv()), "1 z")
}

func TestChangeNotifyCloseForgetsWatch(t *testing.T) {
	e := newTestEnv(t)
	w, c := e.connect(), e.connect()
	dir := w.watchDir("")
	w.notifyPending(dir, notifyNames, 4096, 0)
	status(t, w.close(dir), smb2.StatusNotifyCleanup)
	status(t, w.recv(), smb2.StatusSuccess)
	if e.srv.notify.watching(testAcct + "/" + testShare) {
		t.Fatal("watch kept after close")
	}
	dir = w.watchDir("")
	w.notifyPending(dir, notifyNames, 4096, 0)
	status(t, w.call(smb2.CommandLogoff, smb2.LogoffRequest{}.Encode()), smb2.StatusSuccess)
	if e.srv.notify.watching(testAcct + "/" + testShare) {
		t.Fatal("watch kept after logoff")
	}
	_, r := c.create("x", 0x80, 7, smb2.FileCreate, 0)
	status(t, r, smb2.StatusSuccess)
}

func TestCancelMessageIDZero(t *testing.T) {
	// Samba's client cancels a request whose interim response it has not
	// read with MessageId 0 (without AES-GMAC signing).
	e := newTestEnv(t)
	w := e.connect()
	dir := w.watchDir("")
	m := w.notify(dir, notifyNames, 4096, 0)
	w.send(&msg{hdr: smb2.Header{Command: smb2.CommandCancel, SessionID: w.sid}, body: smb2.CancelRequest{}.Encode()})
	status(t, w.recv(), smb2.StatusPending)
	final := w.recv()
	status(t, final, smb2.StatusCancelled)
	if final.hdr.MessageID != m.hdr.MessageID {
		t.Fatalf("cancelled %+v", final.hdr)
	}
}
