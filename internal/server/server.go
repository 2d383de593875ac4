package server

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
)

// New returns a server; call Listen for each service, then Serve.
func New(cfg Config) *Server {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Limits = cfg.Limits.withDefaults()
	return &Server{cfg: cfg, bound: map[string]string{}, serveErr: make(chan error, 8)}
}

// Listen binds svc.Addr (port 0 picks a free port) and starts serving in
// the background. It returns the bound address.
func (s *Server) Listen(svc Service) (string, error) {
	ln, err := net.Listen("tcp", svc.Addr)
	if err != nil {
		return "", err
	}
	// The cap counts TCP connections, under TLS (overTLS looks for the
	// *tls.Conn under the tap); a refusal is answered over TLS itself.
	lim := &limitListener{Listener: ln, max: int64(s.cfg.Limits.MaxConns), open: &s.conns, refusing: &s.refusing,
		answer: func() []byte { return s.busyAnswer(svc) }}
	var l net.Listener = lim
	if s.cfg.TLS != nil {
		cfg := s.cfg.TLS.Clone()
		cfg.NextProtos = []string{"http/1.1"}
		lim.tls = cfg
		l = tls.NewListener(lim, cfg)
	}
	idle := svc.IdleTimeout
	if idle <= 0 {
		idle = 2 * time.Minute
	}
	handler := s.Wrap(svc)
	if s.cfg.Reserved != nil {
		handler = reserved(handler, http.StripPrefix(ReservedPrefix, s.cfg.Reserved))
	}
	hs := &http.Server{
		Handler:           s.bodyProgress(handler),
		ReadHeaderTimeout: s.cfg.Limits.HeaderTimeout,
		IdleTimeout:       idle,
		ErrorLog:          slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelDebug),
		ConnContext:       tapContext,
	}
	// net/http's server under the tap, or (plain listeners, by default)
	// connServer, which hands net/http's the connections it does not serve.
	serve, stop := func() error { return hs.Serve(tapListener{l}) }, hs.Shutdown
	if s.cfg.TLS == nil && s.cfg.Engine != EngineGo {
		cs := newConnServer(hs.Handler, hs, ln.Addr(), s.cfg.Logger)
		serve, stop = func() error { return cs.serve(l) }, cs.shutdown
	}
	s.mu.Lock()
	s.stops = append(s.stops, stop)
	s.bound[svc.Name] = boundAddr(svc.Addr, ln.Addr())
	s.mu.Unlock()
	go func() {
		if err := serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.serveErr <- err
		}
	}()
	return ln.Addr().String(), nil
}

// reserved sends the requests under ReservedPrefix to admin, the others
// to azure.
func reserved(azure, admin http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; strings.HasPrefix(p, ReservedPrefix+"/") {
			admin.ServeHTTP(w, r)
			return
		}
		azure.ServeHTTP(w, r)
	})
}

// boundAddr is the address a listener is reached at: the host it was
// asked to listen on (0.0.0.0 stays 0.0.0.0, as Azurite prints it, rather
// than Go's [::]) with the port it got.
func boundAddr(requested string, got net.Addr) string {
	host, _, err := net.SplitHostPort(requested)
	_, port, err2 := net.SplitHostPort(got.String())
	if err != nil || err2 != nil || host == "" {
		return got.String()
	}
	return net.JoinHostPort(host, port)
}

// Addr returns the bound address of a service by name.
func (s *Server) Addr(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bound[name]
}

// Errors reports listener failures.
func (s *Server) Errors() <-chan error { return s.serveErr }

// Shutdown stops accepting connections and waits for in-flight requests.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	stops := append([]func(context.Context) error(nil), s.stops...)
	s.mu.Unlock()
	var first error
	for _, stop := range stops {
		if err := stop(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Wrap returns the http.Handler for svc with the common middleware: each
// request passes the stages below in order (pipeline.go), the first that
// refuses it rendering the error and ending the pipeline.
func (s *Server) Wrap(svc Service) http.Handler {
	var handler http.HandlerFunc
	handler = func(w http.ResponseWriter, hr *http.Request) {
		x := exchange{s: s, svc: &svc, sw: &statusWriter{ResponseWriter: w}, hr: hr}
		if start, observed := x.observe(); observed {
			defer x.observed(start)
		}
		x.prepare()
		syncErr := x.syncClock()
		now, id := x.stamp()
		version := x.version()
		x.r = &Request{Request: x.hr, Now: now, Version: version, ID: id, serve: handler, HTTPS: x.hr.TLS != nil || overTLS(x.hr), OAuth: s.cfg.OAuth}
		if x.refuse(syncErr) || x.refuse(x.checkVersion()) {
			return
		}
		x.address()
		if x.refuse(x.authenticate()) || x.refuse(x.admit()) || x.cors() {
			return
		}
		x.dispatch()
	}
	return handler
}
