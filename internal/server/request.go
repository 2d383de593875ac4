package server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
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
	"github.com/cerulean-storage/cerulean/internal/wire"
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

// AzureHandler serves one Azure service. It returns an error to be rendered
// (an *azerr.Error, or anything else as 500 InternalError); it must not
// have written to w when it returns an error.
type AzureHandler interface {
	ServeAzure(w http.ResponseWriter, r *Request) error
}

// Service describes one listener.
type Service struct {
	Name    string // blob, queue, table, file
	Kind    auth.Service
	Addr    string
	Handler AzureHandler
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

// ReservedPrefix begins the paths of Cerulean's own endpoints on the
// service ports. No Azure URL can begin so: the first segment of a
// path-style URL is an account name (3-24 lowercase letters and digits),
// of a production-style URL a container, queue, table or share name
// (which begin with a letter or digit; "$root" and the other system
// containers with "$"); and a blob of the root container addressed
// without "$root" has no "/" in its name.
const ReservedPrefix = "/.cerulean"

// Server runs the listeners of all services.
type Server struct {
	cfg Config
	mu  sync.Mutex
	// stops shut each listener's server down (http.Server.Shutdown, or
	// connServer's, which shuts its fallback down too).
	stops    []func(context.Context) error
	bound    map[string]string
	serveErr chan error
	// conns counts the connections open across all listeners (the cap
	// of Limits.MaxConns); refusing, the refusals being answered.
	conns, refusing atomic.Int64
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
	vals := hr.Header["Authorization"]
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
	vals := r.Header["Authorization"]
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
func newRequestID() string {
	var u [16]byte
	_, _ = rand.Read(u[:]) // never fails: crypto/rand crashes the program instead
	return wire.FormatUUID(&u, 4)
}

// nowISO is the Time of an error body: the time of the response's Date
// header, which the middleware took from the server's clock (with clock
// control, ahead of the wall clock), else the wall clock's.
func nowISO(h http.Header) string {
	t, err := wire.ParseHTTPDate(h.Get("Date"))
	if err != nil {
		t = time.Now()
	}
	return t.UTC().Format("2006-01-02T15:04:05.0000000Z")
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
	// Engine is the HTTP/1.1 server of the plain listeners:
	// EngineCerulean ("" too; conn.go) or EngineGo. TLS listeners run
	// net/http's.
	Engine string
}

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
