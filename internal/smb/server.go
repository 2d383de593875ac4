package smb

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/smb/ntlm"
)

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
