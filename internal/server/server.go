package server

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/google/uuid"
)

// Request is what the middleware learned about a request before handing
// it to a service.
type Request struct {
	*http.Request
	// Account is the first path segment (path-style URLs).
	Account string
	// Authenticated is true when a Shared Key signature was verified for
	// Account; false means an anonymous request.
	Authenticated bool
	// HostStyle is true for a request in Azure's production URL form,
	// the account in the host (see Server.productStyle).
	HostStyle bool
	// OAuth is true when the server accepts bearer tokens (--oauth
	// basic), as request or copy-source credentials.
	OAuth bool
	// Principal is the identity of a verified bearer token (oauth basic
	// mode); nil for Shared Key, SAS and anonymous requests.
	Principal *auth.Principal
	// Now is the request's time from the injected clock: every expiry
	// decision of this request uses it.
	Now time.Time
	// Version is the x-ms-version sent (empty if none).
	Version string
	// ID is the x-ms-request-id of the response.
	ID string
	// Secondary is true for the read-only {account}-secondary endpoint;
	// Account is then the account itself.
	Secondary bool
	// SAS is the parsed (not yet verified) Shared Access Signature of a
	// request without an Authorization header whose query carries sig,
	// or of one with a bearer token whose SAS is bound to a user
	// (sduoid); nil otherwise. Services verify it after routing with
	// AuthorizeSAS.
	SAS *auth.SAS
	// sasBearer is the verified bearer token sent with a user-bound SAS.
	sasBearer *auth.Principal
	// Op is the operation the service routed the request to (its name,
	// e.g. "putBlob"), for metrics; "" until routed.
	Op string
	// HTTPS is true for a request that came over TLS. (net/http leaves
	// Request.TLS nil: the TLS layer sits under the metadata-name tap.)
	HTTPS bool

	kind     auth.Service
	accounts auth.Lookup
	serve    http.HandlerFunc // the service's whole front end, for ServeSub
}

// Handler serves one Azure service. It returns an error to be rendered
// (an *azerr.Error, or anything else as 500 InternalError); it must not
// have written to w when it returns an error.
type Handler interface {
	ServeAzure(w http.ResponseWriter, r *Request) error
}

// Service describes one listener.
type Service struct {
	Name    string // blob, queue, table, file
	Kind    auth.Service
	Addr    string
	Handler Handler
	// JSONErrors selects OData JSON error bodies (Table) instead of XML.
	JSONErrors bool
	// DFS, when set, tells the requests of the Data Lake Storage Gen2
	// API on a listener that also answers the Blob API (the dfs
	// endpoint): their errors get the dfs endpoint's JSON body
	// (WriteDFSError), the others Blob's XML.
	DFS func(*http.Request) bool
	// ServerHeader is sent on every response.
	ServerHeader string
	// IdleTimeout is how long an idle keep-alive connection stays open
	// (0: two minutes).
	IdleTimeout time.Duration
}

// Config is everything the front end needs.
type Config struct {
	Clock    clock.Clock
	Accounts auth.Lookup
	Logger   *slog.Logger
	// Observer, if set, sees every request a listener answers (metrics).
	Observer Observer
	// Requests, if set, gets one Exchange for every request an Observer
	// would see, once it is answered (the console's activity list).
	Requests func(Exchange)
	// TLS, if set, makes every service listener HTTPS (HTTP/1.1 only).
	TLS *tls.Config
	// OAuth accepts Entra ID bearer tokens in the emulator's basic mode
	// (see auth.VerifyBearer); off, a bearer token is an unsupported
	// authentication scheme.
	OAuth bool
	// DisableProductStyleURL takes the account from the first path
	// segment only, never from the host (Azurite's
	// --disableProductStyleUrl).
	DisableProductStyleURL bool
	// Principals, if set, sees the principal of every bearer token
	// authenticated (the directory of user principal names learns from
	// it, internal/hns/upn). Its error is logged; the request goes on.
	Principals func(ctx context.Context, p auth.Principal) error
	// Limits are the connection cap and the header and body deadlines
	// of every listener (zero: the defaults, see Limits).
	Limits Limits
	// Reserved, if set, serves the requests whose path begins with
	// ReservedPrefix on every listener, before the Azure middleware, with
	// the prefix stripped (clock control's admin endpoint,
	// internal/clockctl).
	Reserved http.Handler
}

// ReservedPrefix begins the paths of Cerulean's own endpoints on the
// service ports. No Azure URL can begin so: the first segment of a
// path-style URL is an account name (3-24 lowercase letters and digits),
// of a production-style URL a container, queue, table or share name
// (which begin with a letter or digit; "$root" and the other system
// containers with "$"); and a blob of the root container addressed
// without "$root" has no "/" in its name.
const ReservedPrefix = "/.cerulean"

// Observer sees every request a listener answers, not a batch's
// sub-requests: Begin once its headers are read, End once its handler
// has returned, with the operation it was routed to ("" when it failed
// before routing: authentication, version), the status sent and the time
// taken.
type Observer interface {
	Begin(service string)
	End(service, op string, code int, d time.Duration)
}

// Exchange describes one answered request for Config.Requests: what a
// client's trace would show of it (the SAS signature hidden).
type Exchange struct {
	Start     time.Time
	Service   string
	Method    string
	URL       string
	Account   string
	Op        string
	Status    int
	ErrorCode string
	RequestID string
	Client    string
	Duration  time.Duration
}

// Server runs the listeners of all services.
type Server struct {
	cfg      Config
	mu       sync.Mutex
	servers  []*http.Server
	bound    map[string]string
	serveErr chan error
	// conns counts the connections open across all listeners (the cap
	// of Limits.MaxConns); refusing, the refusals being answered.
	conns, refusing atomic.Int64
}

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
	s.mu.Lock()
	s.servers = append(s.servers, hs)
	s.bound[svc.Name] = boundAddr(svc.Addr, ln.Addr())
	s.mu.Unlock()
	go func() {
		if err := hs.Serve(tapListener{l}); err != nil && !errors.Is(err, http.ErrServerClosed) {
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
	servers := append([]*http.Server(nil), s.servers...)
	s.mu.Unlock()
	var first error
	for _, hs := range servers {
		if err := hs.Shutdown(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// wellFormedVersion reports whether v has the form of an x-ms-version,
// YYYY-MM-DD in ASCII digits (checked on every request: a byte loop, not
// a regular expression).
func wellFormedVersion(v string) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if i != 4 && i != 7 && (v[i] < '0' || v[i] > '9') {
			return false
		}
	}
	return true
}

// oldestVersion is the first version with the modern Shared Key scheme.
const oldestVersion = "2009-09-19"

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

// productStyle recognises Azure's production URL form, where the host
// names the account (http://devstoreaccount1.blob.localhost:10000/container/blob,
// as https://devstoreaccount1.blob.core.windows.net/container/blob): a
// host of two or more labels, not an IP address, whose first label is an
// account of this server (or its -secondary). It returns the request
// with the account put first in its path, the form the services route,
// the signature still checked over the path as sent.
func (s *Server) productStyle(hr *http.Request) (*http.Request, bool) {
	host := hr.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	label, rest, ok := strings.Cut(host, ".")
	if !ok || rest == "" || net.ParseIP(host) != nil {
		return nil, false
	}
	if _, known := s.cfg.Accounts(strings.TrimSuffix(label, auth.SecondarySuffix)); !known {
		return nil, false
	}
	return accountFirst(hr, label), true
}

// accountInHost recognises a request in the virtual-host form, whose
// path starts with the container (share, queue, table) instead of the
// account: the first path segment, account, is no account of this server,
// but the request is signed with Shared Key for one. Some SDK code builds
// such URLs even against a path-style endpoint (the JS file SDK's rename
// destination). It returns the request routed under the signing account,
// the signature still checked over the path as sent (see
// auth.WithAccountInHost).
func (s *Server) accountInHost(hr *http.Request, account string) (*http.Request, bool) {
	if _, known := s.cfg.Accounts(account); known {
		return nil, false
	}
	vals := hr.Header.Values("Authorization")
	if len(vals) != 1 {
		return nil, false
	}
	_, name, _, err := auth.ParseAuthorization(vals[0])
	if err != nil {
		return nil, false
	}
	if _, ok := s.cfg.Accounts(name); !ok {
		return nil, false
	}
	return accountFirst(hr, name), true
}

// accountFirst returns hr with account put first in its path, the
// path-style form the services route, marked so that Shared Key checks
// the signature over the path as sent (auth.WithAccountInHost).
func accountFirst(hr *http.Request, account string) *http.Request {
	out := hr.WithContext(auth.WithAccountInHost(hr.Context()))
	u := *hr.URL
	u.Path = "/" + account + u.Path
	if u.RawPath != "" {
		u.RawPath = "/" + account + u.RawPath
	}
	out.URL, out.RequestURI = &u, ""
	return out
}

// AccountURL is the account's endpoint URL as the client addressed it,
// "scheme://host/account" (no trailing slash), for the endpoint
// attributes of listings and OData metadata.
func (r *Request) AccountURL() string {
	scheme := "http"
	if r.HTTPS {
		scheme = "https"
	}
	if r.HostStyle {
		return scheme + "://" + r.Host
	}
	return scheme + "://" + r.Host + "/" + r.Account
}

// VerifySourceBearer checks the x-ms-copy-source-authorization value v
// ("Bearer <token>", the only scheme Azure takes there) as a token for
// account's svc endpoint: the copy source of another account read with
// the caller's Entra ID identity. Without --oauth basic no token is
// accepted.
func (r *Request) VerifySourceBearer(v, account string, svc auth.Service) error {
	scheme, tok, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return azerr.Newf(azerr.CannotVerifyCopySource, "x-ms-copy-source-authorization takes the Bearer scheme only.").WithStatus(http.StatusBadRequest)
	}
	if !r.OAuth {
		return azerr.Newf(azerr.CannotVerifyCopySource, "Bearer tokens are not accepted by this server (start it with --oauth basic).").WithStatus(http.StatusForbidden)
	}
	if err := auth.VerifyBearer(tok, account, svc, r.HTTPS, r.Now); err != nil {
		detail := "The copy source token is not valid."
		if ae, ok := azerr.As(err); ok {
			for _, d := range ae.Details {
				if d.Value != "" {
					detail = d.Value
				}
			}
		}
		return azerr.Newf(azerr.CannotVerifyCopySource, "%s", detail).WithStatus(http.StatusUnauthorized)
	}
	return nil
}

// AccountKey returns the first key of the request's account.
func (r *Request) AccountKey() ([]byte, bool) {
	if r.accounts == nil {
		return nil, false
	}
	a, ok := r.accounts(r.Account)
	if !ok || len(a.Keys) == 0 {
		return nil, false
	}
	return a.Keys[0], true
}

// bearerToken returns the token of a request's single
// "Authorization: Bearer <token>" header.
func bearerToken(r *http.Request) (string, bool) {
	vals := r.Header.Values("Authorization")
	if len(vals) != 1 {
		return "", false
	}
	scheme, tok, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// userBoundSAS returns the SAS of a request's query when it is a user
// delegation SAS bound to a user (sduoid), which is sent together with
// that user's bearer token ("Create a user delegation SAS"). A query
// without one is left to the bearer token; a malformed SAS naming a
// delegated user is refused as any malformed SAS is.
func userBoundSAS(hr *http.Request) (auth.SAS, bool, error) {
	if !auth.RawQueryHasSig(hr.URL.RawQuery) {
		return auth.SAS{}, false, nil
	}
	q := hr.URL.Query()
	sas, signed, err := auth.ParseSAS(q)
	switch {
	case err != nil && q.Has("sduoid"):
		return auth.SAS{}, false, err
	case err != nil || !signed || sas.DelegatedUserOID() == "":
		return auth.SAS{}, false, nil
	}
	return sas, true, nil
}

// redactSAS is u's path and query with a SAS signature hidden.
func redactSAS(u *url.URL) string {
	if u.RawQuery == "" {
		return u.EscapedPath()
	}
	q := u.Query()
	if q.Has("sig") {
		q.Set("sig", "REDACTED")
		return u.EscapedPath() + "?" + q.Encode()
	}
	return u.EscapedPath() + "?" + u.RawQuery
}

// newRequestID returns the x-ms-request-id of a response: a random
// (version 4) UUID, as the service sends.
func newRequestID() string { return uuid.NewString() }

// nowISO is the Time of an error body: the time of the response's Date
// header, which the middleware took from the server's clock (with clock
// control, ahead of the wall clock), else the wall clock's.
func nowISO(h http.Header) string {
	t, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		t = time.Now()
	}
	return t.UTC().Format("2006-01-02T15:04:05.0000000Z")
}

// drainAfterAnswer is drainBody for a request whose client asked for
// 100-continue and has just been given its final answer without one
// (expect.go), with Connection: close. A client that waits for the 100
// Continue sends nothing more; but one that sends the body at once
// anyway (Go's Transport with ExpectContinueTimeout 0 does, and RFC 9110
// §10.1.1 lets a client not wait) would see the connection reset under
// the answer if it were closed with the body still arriving, and report
// a transport error instead of the 503 or 4xx. So the answer is flushed
// first, then what the client sends is read and thrown away while it
// keeps coming (a pause of drainIdle ends it, as does drainBody's bound
// of 10 s and maxDrain); net/http sends no 100 Continue once the answer
// is written.
func drainAfterAnswer(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	if rc.Flush() != nil || rc.EnableFullDuplex() != nil {
		return
	}
	end := time.Now().Add(10 * time.Second)
	buf := make([]byte, 32<<10)
	for total := 0; total < maxDrain; {
		until := time.Now().Add(drainIdle)
		if until.After(end) {
			until = end
		}
		_ = rc.SetReadDeadline(until)
		capBody(r, until)
		n, err := r.Body.Read(buf)
		total += n
		if err != nil {
			return
		}
	}
}

// drainIdle is how long drainAfterAnswer waits for more of a body the
// client may not be sending.
const drainIdle = time.Second

// maxDrain bounds how much of an unread request body is read and thrown
// away before an error response.
const maxDrain = 64 << 20

// drainBody reads what is left of the request body (at most maxDrain
// bytes, for at most 10 seconds) before an error is written. A client
// still sending a large body would otherwise see the connection reset
// (Go's server discards at most 256 KiB after a handler) instead of the
// error — a 503 during a database outage must reach the SDK as a 503.
func drainBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.ContentLength == 0 || r.Method == http.MethodHead {
		return
	}
	until := time.Now().Add(10 * time.Second)
	_ = http.NewResponseController(w).SetReadDeadline(until)
	capBody(r, until)
	_, _ = io.CopyN(io.Discard, r.Body, maxDrain)
}
