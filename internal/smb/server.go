package smb

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/smb/ntlm"
)

// Config configures a Server.
type Config struct {
	// FS is the File service's VFS whose shares are served (required),
	// e.g. smbfs.New(fileService, DefaultOwner()). Its owner id is the
	// liveness identity of this server's handles and must be unique
	// among live servers.
	FS FileSystem
	// Accounts are the storage accounts that may log on: user = account
	// name (any case), password = one of its keys as base64 text.
	Accounts []auth.Account
	// Clock is the NTLM challenge timestamp's source (default the wall
	// clock). The VFS decides liveness with the File service's clock.
	Clock  clock.Clock
	Logger *slog.Logger
	// HeartbeatEvery is how often the owner's liveness is renewed
	// (default 10 s); each heartbeat extends it by three intervals.
	HeartbeatEvery time.Duration
	// MaxIOSize is the MaxReadSize, MaxWriteSize and MaxTransactSize
	// offered to clients (default and ceiling file.MaxIOSize).
	MaxIOSize int
	// ServerName is the NetBIOS name in the NTLM challenge (default
	// "CERULEAN").
	ServerName string
	// Observer, if set, sees every request answered (metrics).
	Observer Observer
	// RequireSigning makes NEGOTIATE answer SIGNING_REQUIRED and every
	// session refuse requests neither signed nor encrypted
	// (STATUS_ACCESS_DENIED; MS-SMB2 3.3.5.2.4). Guest and anonymous
	// logons are always refused.
	RequireSigning bool
	// Encrypt is when SMB 3 sessions are encrypted (crypt.go; default
	// EncryptOff). It applies to every share.
	Encrypt EncryptMode

	// Connection limits (limits.go). MaxConns and MaxConnsPerAddr cap
	// the connections in all and from one IP address (0: 1024 and 64;
	// negative: no cap); a connection beyond them is closed at once.
	MaxConns        int
	MaxConnsPerAddr int
	// PreauthTimeout closes a connection that has not completed a
	// SESSION_SETUP this long after it was accepted (0: 30 s; negative:
	// never).
	PreauthTimeout time.Duration
	// IdleTimeout closes an authenticated connection with no open file
	// and no pending operation that has sent nothing for this long (0:
	// 15 minutes, as Windows' autodisconnect; negative: never).
	IdleTimeout time.Duration
}

// Observer sees each SMB2 request once it is answered: its command, the
// NTSTATUS of the reply (an asynchronous operation's interim
// STATUS_PENDING; its final reply is not observed) and the time taken.
// Requests that end the connection (malformed, outside the credit
// window) are not observed.
type Observer interface {
	SMB(command, status string, d time.Duration)
}

// Server is an SMB2/3 server. It is safe for concurrent use.
type Server struct {
	cfg   Config
	log   *slog.Logger
	vfs   FileSystem
	auth  *ntlm.Server
	guid  [16]byte
	maxIO int

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	closing   bool
	started   bool
	hbStop    chan struct{}
	hbDone    chan struct{}
	connWG    sync.WaitGroup

	// lockWake wakes the connections with blocked locks (lock.go).
	lockWake lockWaiters
	// notify holds the change-notify watches of every open (notify.go).
	notify notifyHub

	// accepting is what the accept loops report to Ready (accept.go).
	accepting acceptState
	// admit counts connections by client address (limits.go).
	admit admission

	// onPanic, if set (tests), sees every panic a connection recovered.
	onPanic func(any)
}

// New returns a Server for cfg. It starts nothing: Serve starts the
// owner's heartbeat with the first listener.
func New(cfg Config) *Server {
	if cfg.FS == nil {
		panic("smb: Config.FS is nil")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.HeartbeatEvery <= 0 {
		cfg.HeartbeatEvery = 10 * time.Second
	}
	if cfg.MaxIOSize <= 0 || cfg.MaxIOSize > file.MaxIOSize {
		cfg.MaxIOSize = file.MaxIOSize
	}
	if cfg.MaxIOSize < 65536 {
		cfg.MaxIOSize = 65536
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MaxConnsPerAddr == 0 {
		cfg.MaxConnsPerAddr = DefaultMaxConnsPerAddr
	}
	if cfg.PreauthTimeout == 0 {
		cfg.PreauthTimeout = DefaultPreauthTimeout
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.ServerName == "" {
		cfg.ServerName = "CERULEAN"
	}
	s := &Server{
		cfg:       cfg,
		log:       cfg.Logger.With("service", "smb"),
		vfs:       cfg.FS,
		maxIO:     cfg.MaxIOSize,
		listeners: map[net.Listener]struct{}{},
		conns:     map[*conn]struct{}{},
	}
	_, _ = rand.Read(s.guid[:])
	accounts := map[string]ntlm.Account{}
	for _, a := range cfg.Accounts {
		acct := ntlm.Account{Name: a.Name}
		for _, k := range a.Keys {
			acct.Passwords = append(acct.Passwords, base64.StdEncoding.EncodeToString(k))
		}
		accounts[strings.ToLower(a.Name)] = acct
	}
	s.auth = ntlm.NewServer(ntlm.Config{
		Lookup: func(user, _ string) (ntlm.Account, bool) {
			a, ok := accounts[strings.ToLower(user)]
			return a, ok
		},
		NetBIOSComputer: cfg.ServerName,
		Clock:           cfg.Clock,
	})
	return s
}

// Owner returns the VFS owner id of the server's handles.
func (s *Server) Owner() string { return s.vfs.Owner() }

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("smb: server closed")

// Serve accepts connections on ln until Shutdown (ErrServerClosed) or
// until ln is closed by something else (that error; Ready then reports
// the listener dead). Other accept errors are retried (accept.go). The first call starts the owner's heartbeat; if the first
// heartbeat fails, Serve returns its error without accepting.
func (s *Server) Serve(ln net.Listener) error {
	if err := s.start(); err != nil {
		ln.Close()
		return err
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
	}()
	// Only a closed listener ends the loop; other errors are retried
	// after a growing delay (accept.go).
	var delay time.Duration
	failures := 0
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				return ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				s.listenerDied(ln, err)
				return err
			}
			s.acceptFailed(ln, err, failures == 0)
			failures++
			delay = nextAcceptDelay(delay)
			time.Sleep(delay)
			continue
		}
		if failures > 0 {
			s.acceptRecovered(ln, failures)
			failures, delay = 0, 0
		}
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			nc.Close()
			return ErrServerClosed
		}
		key := addrKey(nc.RemoteAddr())
		if !s.admitLocked(key) {
			s.mu.Unlock()
			nc.Close()
			continue
		}
		c := newConn(s, nc)
		s.conns[c] = struct{}{}
		s.connWG.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.connWG.Done()
			c.serve()
			s.mu.Lock()
			delete(s.conns, c)
			s.releaseLocked(key)
			s.mu.Unlock()
		}()
	}
}

// start runs the first heartbeat and starts the heartbeat goroutine once.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closing {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.vfs.Heartbeat(ctx, s.vfs.Now().Add(3*s.cfg.HeartbeatEvery)); err != nil {
		return fmt.Errorf("smb: owner heartbeat: %w", err)
	}
	s.started = true
	s.hbStop, s.hbDone = make(chan struct{}), make(chan struct{})
	go s.heartbeat()
	return nil
}

// heartbeat renews the owner's liveness until Shutdown.
func (s *Server) heartbeat() {
	defer close(s.hbDone)
	t := time.NewTicker(s.cfg.HeartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-s.hbStop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.HeartbeatEvery)
		err := s.vfs.Heartbeat(ctx, s.vfs.Now().Add(3*s.cfg.HeartbeatEvery))
		cancel()
		if err != nil {
			s.log.Error("owner heartbeat failed; open handles expire if this persists", "owner", s.vfs.Owner(), "err", err)
		}
	}
}

// Shutdown stops accepting, closes every connection (each closes its
// handles, applying delete-on-close), waits for them up to ctx, stops
// the heartbeat and retires the owner, so handles a connection could not
// close are dead at once.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	for ln := range s.listeners {
		ln.Close()
	}
	for c := range s.conns {
		c.close()
	}
	started := s.started
	s.started = false
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.connWG.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if started {
		close(s.hbStop)
		<-s.hbDone
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if rerr := s.vfs.Retire(rctx); rerr != nil && err == nil {
			err = fmt.Errorf("smb: retiring owner: %w", rerr)
		}
		cancel()
	}
	return err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
