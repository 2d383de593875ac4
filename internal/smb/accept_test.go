package smb

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// faultyListener fails the next accepts with the errors queued by fail.
type faultyListener struct {
	net.Listener
	mu    sync.Mutex
	queue []error
	// failed counts the errors returned.
	failed int
}

func (l *faultyListener) fail(errs ...error) {
	l.mu.Lock()
	l.queue = append(l.queue, errs...)
	l.mu.Unlock()
}

func (l *faultyListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if len(l.queue) > 0 {
		err := l.queue[0]
		l.queue = l.queue[1:]
		l.failed++
		l.mu.Unlock()
		return nil, err
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

func (l *faultyListener) failures() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// acceptErr is an accept error as the net package returns it.
func acceptErr(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
}

// serveFaulty starts e.srv on a faultyListener (besides the harness's own
// listener) whose first accepts fail with errs, and returns it and the
// channel Serve's result goes to.
func serveFaulty(t *testing.T, e *testEnv, errs ...error) (*faultyListener, chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &faultyListener{Listener: ln, queue: errs}
	done := make(chan error, 1)
	go func() { done <- e.srv.Serve(fl) }()
	return fl, done
}

// negotiateOn dials addr and checks that a NEGOTIATE is answered.
func negotiateOn(t *testing.T, e *testEnv, addr string) {
	t.Helper()
	v := *e
	v.addr = addr
	c := v.dial()
	if _, r := c.negotiate(smb2.Dialect311); r.hdr.Status != smb2.StatusSuccess {
		t.Fatalf("NEGOTIATE: %v", r.hdr.Status)
	}
}

// TestAcceptErrorsAreRetried: accepts failing with EMFILE, ENFILE,
// ENOBUFS and ECONNABORTED do not end the listener; it serves the next
// client, and the server stays ready throughout.
func TestAcceptErrorsAreRetried(t *testing.T) {
	e := newTestEnv(t)
	errs := []error{acceptErr(syscall.EMFILE), acceptErr(syscall.EMFILE), acceptErr(syscall.ENFILE),
		acceptErr(syscall.ENOBUFS), acceptErr(syscall.ECONNABORTED), acceptErr(syscall.EMFILE)}
	start := time.Now()
	fl, done := serveFaulty(t, e, errs...)
	negotiateOn(t, e, fl.Addr().String())
	if got := fl.failures(); got != len(errs) {
		t.Fatalf("%d accept errors returned, want %d", got, len(errs))
	}
	// 5+10+20+40+80+160 ms of back-off.
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("served after %v: the accept loop did not back off", d)
	}
	if err := e.srv.Ready(); err != nil {
		t.Fatalf("Ready after temporary accept errors: %v", err)
	}
	// The loop is still there: an error queued now fails the accept
	// after the next connection, and the one after is served.
	fl.fail(acceptErr(syscall.EMFILE))
	negotiateOn(t, e, fl.Addr().String())
	negotiateOn(t, e, fl.Addr().String())
	if got := fl.failures(); got != len(errs)+1 {
		t.Fatalf("%d accept errors returned, want %d", got, len(errs)+1)
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned %v", err)
	default:
	}
}

// TestAcceptUnknownErrorUnready: an accept error of no known kind is
// retried too, but the server reports itself unready while it lasts.
func TestAcceptUnknownErrorUnready(t *testing.T) {
	e := newTestEnv(t)
	boom := errors.New("accept: something odd")
	var errs []error
	for range 100 {
		errs = append(errs, boom)
	}
	fl, _ := serveFaulty(t, e, errs...)
	deadline := time.Now().Add(5 * time.Second)
	for e.srv.Ready() == nil {
		if time.Now().After(deadline) {
			t.Fatal("Ready stayed nil while accepts failed")
		}
		time.Sleep(time.Millisecond)
	}
	if err := e.srv.Ready(); !errors.Is(err, boom) {
		t.Fatalf("Ready: %v", err)
	}
	fl.mu.Lock()
	fl.queue = nil
	fl.mu.Unlock()
	negotiateOn(t, e, fl.Addr().String())
	if err := e.srv.Ready(); err != nil {
		t.Fatalf("Ready after accepting again: %v", err)
	}
}

// TestDeadListenerUnready: a listener closed by anything but Shutdown
// ends its loop and leaves the server unready; Shutdown itself does not.
func TestDeadListenerUnready(t *testing.T) {
	e := newTestEnv(t)
	if err := e.srv.Ready(); err != nil {
		t.Fatalf("Ready at start: %v", err)
	}
	fl, done := serveFaulty(t, e)
	negotiateOn(t, e, fl.Addr().String())
	fl.Listener.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Serve returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its listener closed")
	}
	err := e.srv.Ready()
	if err == nil || !strings.Contains(err.Error(), "stopped accepting") {
		t.Fatalf("Ready after the listener died: %v", err)
	}

	// Shutdown is no death.
	e2 := newTestEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e2.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e2.srv.Ready(); err != nil {
		t.Fatalf("Ready after Shutdown: %v", err)
	}
}

func TestTemporaryAccept(t *testing.T) {
	for _, err := range []error{acceptErr(syscall.EMFILE), acceptErr(syscall.ENFILE), acceptErr(syscall.ENOBUFS),
		acceptErr(syscall.ECONNABORTED), acceptErr(syscall.ENOMEM)} {
		if !temporaryAccept(err) {
			t.Errorf("%v not temporary", err)
		}
	}
	for _, err := range []error{net.ErrClosed, errors.New("x"), acceptErr(syscall.EBADF), acceptErr(syscall.EINVAL)} {
		if temporaryAccept(err) {
			t.Errorf("%v temporary", err)
		}
	}
	var d time.Duration
	var got []time.Duration
	for range 10 {
		d = nextAcceptDelay(d)
		got = append(got, d)
	}
	if got[0] != 5*time.Millisecond || got[1] != 10*time.Millisecond || got[9] != time.Second {
		t.Fatalf("delays %v", got)
	}
}
