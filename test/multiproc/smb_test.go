package multiproc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
	gosmb2 "github.com/hirochachacha/go-smb2"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// The SMB servers' liveness lease in TestSMBHandlesExpireWithTheirFrontEnd,
// set through the hidden CERULEAN_SMB_LIVENESS (the default is 30 s): a
// server renews its owner record every smbHeartbeat, each renewal valid for
// smbLiveness, so a killed server's handles stop counting between
// smbLiveness-smbHeartbeat and smbLiveness after it died.
const (
	smbLiveness  = 6 * time.Second
	smbHeartbeat = smbLiveness / 3
)

const statusSharingViolation = 0xC0000043

// holdModes are the files smbtorture's smb2.hold-sharemode opens in
// sharemode_hold_test, each with access 0x1F01FF and the share mode its
// name spells (N: share nothing).
var holdModes = []string{"N", "R", "W", "D", "RW", "RD", "WD", "RWD"}

// TestSMBHandlesExpireWithTheirFrontEnd: share modes hold across front
// ends through the global open table in PostgreSQL, and a front end that
// dies loses its handles once its liveness lease expires.
//
// Node 0 (A) serves File and SMB, node 1 (B) File (REST) only, node 2 (C)
// File and SMB. Files are created over REST on B; smbtorture's
// smb2.hold-sharemode holds them open over SMB on A, and go-smb2 holds
// another file open (share read|write) on C. While A lives: REST on B gets
// 409 SharingViolation for Put Range, Get File and Delete File of the file
// A holds with share none, but may read the one A holds with share read;
// an SMB open of the held file through C gets STATUS_SHARING_VIOLATION;
// List Handles on B shows A's and C's handles. Then A is killed with
// SIGKILL (no handle is closed): B is refused until A's lease runs out and
// not much longer; afterwards B writes and deletes the file, C opens the
// others, and List Handles no longer shows A's handles but still shows C's,
// whose front end is alive (Delete File of C's file is still refused).
func TestSMBHandlesExpireWithTheirFrontEnd(t *testing.T) {
	var l layout
	l.services = [nodes][]service{{fileSvc, smbSvc}, {fileSvc}, {fileSvc, smbSvc}}
	l.env = []string{"CERULEAN_SMB_LIVENESS=" + smbLiveness.String()}
	torture := needProgram(t, "smbtorture")
	c := newMixedCluster(t, l)
	ctx := ctxFor(t, 3*time.Minute)
	const A, B, C = 0, 1, 2
	const shareName = "locks"

	sc := c.File(B).NewShareClient(shareName)
	_, err := sc.Create(ctx, nil)
	must(t, "create share on B", err)
	dir := sc.NewDirectoryClient("sharemode_hold_test")
	_, err = dir.Create(ctx, nil)
	must(t, "create directory on B", err)
	content := []byte("0123456789")
	for _, m := range holdModes {
		upload(ctx, t, dir.NewFileClient(m), content)
	}
	otherFile := sc.NewRootDirectoryClient().NewFileClient("other.txt")
	upload(ctx, t, otherFile, content)

	// C holds other.txt (go-smb2 opens share read|write).
	fsC := c.mountSMB(ctx, C, shareName)
	held, err := fsC.OpenFile("other.txt", os.O_RDWR, 0)
	must(t, "SMB open of other.txt on C", err)
	defer held.Close()

	// A holds the eight share modes until it dies.
	holder := holdShareModes(ctx, t, torture, c.nodes[A].ports[smbSvc], shareName)

	fileN, fileR := dir.NewFileClient("N"), dir.NewFileClient("R")
	wantCode(t, "B: Put Range on N held by A", putRange(ctx, fileN), 409, string(fileerror.SharingViolation))
	wantCode(t, "B: Get File of N held by A", getFile(ctx, fileN), 409, string(fileerror.SharingViolation))
	wantCode(t, "B: Delete File of N held by A", deleteFile(ctx, fileN), 409, string(fileerror.SharingViolation))
	wantCode(t, "B: Put Range on R held by A", putRange(ctx, fileR), 409, string(fileerror.SharingViolation))
	if err := getFile(ctx, fileR); err != nil {
		t.Errorf("B: Get File of R (A shares read): %v", errOrOK(err))
	}
	wantCode(t, "B: Delete File of other.txt held by C", deleteFile(ctx, otherFile), 409, string(fileerror.SharingViolation))
	if _, err := fsC.OpenFile("sharemode_hold_test/N", os.O_RDONLY, 0); !ntStatus(err, statusSharingViolation) {
		t.Errorf("C: SMB open of N held by A: %v, want STATUS_SHARING_VIOLATION", err)
	}

	handles := listHandles(ctx, t, sc)
	aHandles := map[string]string{} // handle id -> path
	perPath := map[string]int{}
	for _, h := range handles {
		if strings.HasPrefix(h.path, "sharemode_hold_test/") {
			aHandles[h.id] = h.path
			perPath[h.path]++
		}
	}
	for _, m := range holdModes {
		if perPath["sharemode_hold_test/"+m] != 1 {
			t.Errorf("B: List Handles shows %d handles of sharemode_hold_test/%s, want A's one (all: %v)", perPath["sharemode_hold_test/"+m], m, handles)
		}
	}
	cHandle := ""
	for _, h := range handles {
		if h.path == "other.txt" {
			cHandle = h.id
		}
	}
	if cHandle == "" {
		t.Fatalf("B: List Handles does not show C's handle of other.txt: %v", handles)
	}

	// Kill A: no graceful shutdown, its handles stay in the open table.
	killed := time.Now()
	c.Kill(A)
	holder.stop()
	if pid, alive := c.Alive(A); alive {
		t.Fatalf("node A (pid %d) still runs", pid)
	}
	// At once, the dead front end's handles still count.
	if _, err := fsC.OpenFile("sharemode_hold_test/N", os.O_RDONLY, 0); !ntStatus(err, statusSharingViolation) {
		t.Errorf("C: SMB open of N right after A died: %v, want STATUS_SHARING_VIOLATION", err)
	}
	if n := countIDs(listHandles(ctx, t, sc), aHandles); n != len(aHandles) && time.Since(killed) < smbLiveness-smbHeartbeat {
		t.Errorf("B: right after A died, List Handles shows %d of A's %d handles", n, len(aHandles))
	}
	// Until the lease runs out, B is refused; then it succeeds.
	var freed time.Duration
	for {
		err := putRange(ctx, fileN)
		freed = time.Since(killed)
		if err == nil {
			break
		}
		if st, code := status(err); st != 409 || code != string(fileerror.SharingViolation) {
			t.Fatalf("B: Put Range on N %v after A died: %v, want 409 SharingViolation or success", freed.Round(time.Millisecond), errOrOK(err))
		}
		if freed > smbLiveness+5*time.Second {
			t.Fatalf("B: Put Range on N still refused %v after A died (lease %v)", freed.Round(time.Millisecond), smbLiveness)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("A's handles stopped counting %v after it was killed (lease %v, heartbeat every %v)", freed.Round(time.Millisecond), smbLiveness, smbHeartbeat)
	if min := smbLiveness - smbHeartbeat - 500*time.Millisecond; freed < min {
		t.Errorf("A's handles stopped counting %v after A died, before its lease could have expired (%v at the earliest)", freed, min)
	}

	// A's handles are gone everywhere; C's stays.
	after := listHandles(ctx, t, sc)
	if n := countIDs(after, aHandles); n != 0 {
		t.Errorf("B: List Handles still shows %d of dead A's handles: %v", n, after)
	}
	if countIDs(after, map[string]string{cHandle: ""}) != 1 {
		t.Errorf("B: List Handles lost live C's handle %s of other.txt: %v", cHandle, after)
	}
	wantCode(t, "B: Delete File of other.txt still held by C", deleteFile(ctx, otherFile), 409, string(fileerror.SharingViolation))
	f, err := fsC.OpenFile("sharemode_hold_test/RWD", os.O_RDWR, 0)
	if err != nil {
		t.Errorf("C: SMB open of RWD after A's lease expired: %v", err)
	} else {
		f.Close()
	}
	if err := deleteFile(ctx, fileN); err != nil {
		t.Errorf("B: Delete File of N after A's lease expired: %v", errOrOK(err))
	}
	must(t, "close C's handle", held.Close())
	if err := deleteFile(ctx, otherFile); err != nil {
		t.Errorf("B: Delete File of other.txt after C closed it: %v", errOrOK(err))
	}
}

// waitSMB waits until n's SMB listener completes a session setup with the
// dev account (the server accepts connections only once its first
// liveness heartbeat is written).
func (c *cluster) waitSMB(n *node, exited <-chan struct{}, deadline time.Time) error {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(n.ports[smbSvc]))
	var last error
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, nc, err := dialSMB(ctx, addr)
		cancel()
		if err == nil {
			_ = s.Logoff()
			nc.Close()
			return nil
		}
		last = err
		select {
		case <-exited:
			return fmt.Errorf("node %d exited before serving SMB (%v):\n%s", n.idx, n.waitErr, tail(n.logPath, 20))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.signal(n, syscall.SIGKILL)
			return fmt.Errorf("node %d: SMB not answering after 60s (%v):\n%s", n.idx, last, tail(n.logPath, 20))
		}
	}
}

// dialSMB opens a go-smb2 session with the dev account (user = account
// name, password = its key).
func dialSMB(ctx context.Context, addr string) (*gosmb2.Session, net.Conn, error) {
	nc, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	d := &gosmb2.Dialer{Initiator: &gosmb2.NTLMInitiator{User: app.DevAccount, Password: app.DevKey}}
	s, err := d.DialContext(ctx, nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	return s, nc, nil
}

// mountSMB connects go-smb2 to a share on process i's SMB listener, for
// the rest of the test.
func (c *cluster) mountSMB(ctx context.Context, i int, shareName string) *gosmb2.Share {
	c.t.Helper()
	p, ok := c.nodes[i].ports[smbSvc]
	if !ok {
		c.t.Fatalf("node %d does not serve SMB", i)
	}
	s, nc, err := dialSMB(ctx, net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		c.t.Fatalf("go-smb2 session on node %d: %v", i, err)
	}
	fs, err := s.Mount(shareName)
	if err != nil {
		nc.Close()
		c.t.Fatalf("go-smb2 mount of %s on node %d: %v", shareName, i, err)
	}
	c.t.Cleanup(func() {
		_ = fs.Umount()
		_ = s.Logoff()
		nc.Close()
	})
	return fs
}

// ntStatus reports whether err (from go-smb2) carries the NTSTATUS code.
func ntStatus(err error, code uint32) bool {
	var re *gosmb2.ResponseError
	return errors.As(err, &re) && re.Code == code
}

// holder is a running smbtorture smb2.hold-sharemode.
type holder struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// holdShareModes runs smbtorture smb2.hold-sharemode against the share on
// the SMB port and returns once it holds its files open. (It does not exit
// on SIGINT; stop kills it.)
func holdShareModes(ctx context.Context, t *testing.T, bin string, port int, shareName string) *holder {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, "//127.0.0.1/"+shareName, "-p", strconv.Itoa(port),
		"-U", app.DevAccount+"%"+app.DevKey, "smb2.hold-sharemode")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir()) // no user smb.conf
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &holder{cmd: cmd, done: make(chan struct{})}
	t.Cleanup(h.stop)
	ready := make(chan struct{})
	var log bytes.Buffer // written by the reader until done is closed
	go func() {
		defer close(h.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "Waiting for SIGINT") {
				close(ready)
				for sc.Scan() {
				}
				return
			}
		}
	}()
	select {
	case <-ready:
		return h
	case <-h.done:
		_ = cmd.Wait()
		t.Fatalf("smbtorture smb2.hold-sharemode ended without holding its files:\n%s", log.String())
	case <-time.After(60 * time.Second):
		h.stop()
		t.Fatalf("smbtorture smb2.hold-sharemode not holding its files after 60s:\n%s", log.String())
	}
	return nil
}

func (h *holder) stop() {
	if h.cmd.ProcessState != nil {
		return
	}
	_ = h.cmd.Process.Kill()
	<-h.done
	_ = h.cmd.Wait()
}

// needProgram finds an external program, skipping the test when it is
// missing (failing it when CI is set: CI installs it with
// scripts/install-smb-clients.sh).
func needProgram(t *testing.T, prog string) string {
	t.Helper()
	path, err := exec.LookPath(prog)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (CI installs it with scripts/install-smb-clients.sh)", prog)
		}
		t.Skipf("%s is not installed", prog)
	}
	return path
}

func upload(ctx context.Context, t *testing.T, fc *file.Client, content []byte) {
	t.Helper()
	_, err := fc.Create(ctx, int64(len(content)), nil)
	must(t, "Create File", err)
	must(t, "Upload", fc.UploadBuffer(ctx, content, nil))
}

func putRange(ctx context.Context, fc *file.Client) error {
	_, err := fc.UploadRange(ctx, 0, streaming.NopCloser(bytes.NewReader([]byte("x"))), nil)
	return err
}

func getFile(ctx context.Context, fc *file.Client) error {
	r, err := fc.DownloadStream(ctx, nil)
	if err == nil {
		r.Body.Close()
	}
	return err
}

func deleteFile(ctx context.Context, fc *file.Client) error {
	_, err := fc.Delete(ctx, nil)
	return err
}

// listedHandle is a handle as List Handles shows it.
type listedHandle struct{ id, path string }

func (h listedHandle) String() string { return h.path + "#" + h.id }

// listHandles lists every handle of a share (recursive List Handles on
// its root directory, following markers).
func listHandles(ctx context.Context, t *testing.T, sc *share.Client) []listedHandle {
	t.Helper()
	var out []listedHandle
	opts := &directory.ListHandlesOptions{Recursive: to.Ptr(true)}
	for {
		resp, err := sc.NewRootDirectoryClient().ListHandles(ctx, opts)
		must(t, "List Handles", err)
		for _, h := range resp.Handles {
			out = append(out, listedHandle{id: str(h.ID), path: strings.TrimPrefix(str(h.Path), "/")})
		}
		if str(resp.NextMarker) == "" {
			return out
		}
		opts.Marker = resp.NextMarker
	}
}

// countIDs counts the handles in hs whose id is a key of ids.
func countIDs(hs []listedHandle, ids map[string]string) int {
	n := 0
	for _, h := range hs {
		if _, ok := ids[h.id]; ok {
			n++
		}
	}
	return n
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
