package server

import (
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// exchange is one request's pass through the stages of Server.Wrap, in
// their order: observe, prepare, syncClock, stamp, version, checkVersion,
// address, authenticate, admit, cors, dispatch. A stage that refuses the
// request returns an error, which Wrap renders (fail) and stops at.
type exchange struct {
	s   *Server
	svc *Service
	// sw is the response writer; it records whether the answer has
	// started (clientGone) and the status sent (observed).
	sw *statusWriter
	// hr is the request as the middleware sees it: tracked for Expect:
	// 100-continue (prepare), with the account put first in its path for
	// a production-style URL (address). Errors are rendered and requests
	// logged against it.
	hr *http.Request
	// r is what the service gets; its Request may differ from hr when
	// the account was found in the Authorization header (accountInHost).
	r *Request
	// debug is whether the debug log was on when the request came.
	debug bool
}

// observe begins the observation of a request the Observer sees or the
// debug log records (a batch's sub-requests are neither): it reports
// whether to call observed, and the start to give it, once the request
// is answered.
func (x *exchange) observe() (time.Time, bool) {
	obs := x.s.cfg.Observer
	x.debug = x.s.cfg.Logger.Enabled(x.hr.Context(), slog.LevelDebug)
	if sub := x.hr.Context().Value(batchVersionKey{}) != nil; (obs == nil && x.s.cfg.Requests == nil && !x.debug) || sub {
		return time.Time{}, false
	}
	start := time.Now()
	if obs != nil {
		obs.Begin(x.svc.Name)
	}
	return start, true
}

// observed ends the observation begun by observe: the Observer's End and,
// at --log-level debug, one line per request as a client's trace would
// show it (SAS signature hidden).
func (x *exchange) observed(start time.Time) {
	op := ""
	if x.r != nil {
		op = x.r.Op
	}
	d := time.Since(start)
	if obs := x.s.cfg.Observer; obs != nil {
		obs.End(x.svc.Name, op, x.sw.status(), d)
	}
	if rec := x.s.cfg.Requests; rec != nil {
		acct := auth.AccountFromPath(x.hr.URL.EscapedPath())
		if x.r != nil && x.r.Account != "" {
			acct = x.r.Account
		}
		rec(Exchange{Start: start, Service: x.svc.Name, Method: x.hr.Method, URL: redactSAS(x.hr.URL), Account: acct, Op: op,
			Status: x.sw.status(), ErrorCode: wire.Field(x.sw.Header(), "X-Ms-Error-Code"), RequestID: wire.Field(x.sw.Header(), "X-Ms-Request-Id"),
			Client: x.hr.RemoteAddr, Duration: d})
	}
	if x.debug {
		x.s.cfg.Logger.Debug("request", "service", x.svc.Name, "method", x.hr.Method, "url", redactSAS(x.hr.URL),
			"operation", op, "status", x.sw.status(), "error", wire.Field(x.sw.Header(), "X-Ms-Error-Code"),
			"request_id", wire.Field(x.sw.Header(), "X-Ms-Request-Id"), "duration", d)
	}
}

// prepare restores the case of the request's metadata names as sent and
// tracks whether an Expect: 100-continue was answered (fail).
func (x *exchange) prepare() {
	restoreMetadataNames(x.hr)
	x.hr = trackContinue(x.hr)
}

// syncClock brings a clock under control on a shared store to its offset
// as of now, read outside any transaction (a batch's parts use the
// batch's). Its error is rendered once the response is stamped.
func (x *exchange) syncClock() error {
	if sy, ok := x.s.cfg.Clock.(clock.Syncer); ok && x.hr.Context().Value(batchVersionKey{}) == nil {
		return sy.Sync(x.hr.Context())
	}
	return nil
}

// stamp takes the request's time from the injected clock and a request
// id, and sets the headers every response carries: x-ms-request-id,
// Date, Server and the client's x-ms-client-request-id echoed.
func (x *exchange) stamp() (now time.Time, id string) {
	now = x.s.cfg.Clock.Now()
	id = newRequestID()
	h := x.sw.Header()
	// The names are canonical: set without canonicalising, and the
	// values in one allocation (each slice capped at its element).
	vals := make([]string, 4)
	vals[0], vals[1] = id, httpDate(now)
	h["X-Ms-Request-Id"], h["Date"] = vals[0:1:1], vals[1:2:2]
	if x.svc.ServerHeader != "" {
		vals[2] = x.svc.ServerHeader
		h["Server"] = vals[2:3:3]
	}
	if c := wire.Field(x.hr.Header, "X-Ms-Client-Request-Id"); c != "" && len(c) <= 1024 {
		vals[3] = c
		h["X-Ms-Client-Request-Id"] = vals[3:4:4]
	}
	return now, id
}

// lastDate is the Date header of the last second stamped: every
// response of that second carries the same text.
var lastDate atomic.Pointer[stampedDate]

type stampedDate struct {
	sec  int64
	text string
}

// httpDate is wire.FormatHTTPDate(now), formatted once a second.
func httpDate(now time.Time) string {
	sec := now.Unix()
	if d := lastDate.Load(); d != nil && d.sec == sec {
		return d.text
	}
	text := wire.FormatHTTPDate(now)
	lastDate.Store(&stampedDate{sec: sec, text: text})
	return text
}

// version returns the x-ms-version sent (a batch sub-request without one:
// the batch's; "" if none) and names on the response the version that
// processes the request.
func (x *exchange) version() string {
	version := wire.Field(x.hr.Header, "X-Ms-Version")
	if v, ok := x.hr.Context().Value(batchVersionKey{}).(string); ok && version == "" {
		version = v // a batch sub-request: the batch's version
	}
	if version != "" {
		x.sw.Header().Set("X-Ms-Version", version)
	} else {
		// Every response names the version that processed it. A request
		// without one (an anonymous read of a public blob from a browser)
		// is processed as 2009-09-19, the version the service uses for
		// anonymous requests to containers made public with 2009-09-19 or
		// later (Versioning for the Azure Storage services,
		// https://learn.microsoft.com/en-us/rest/api/storageservices/versioning-for-the-azure-storage-services).
		x.sw.Header().Set("X-Ms-Version", oldestVersion)
	}
	return version
}

// checkVersion refuses an x-ms-version that is not a date or is older
// than the modern Shared Key scheme.
func (x *exchange) checkVersion() error {
	if v := x.r.Version; v != "" && (!wellFormedVersion(v) || v < oldestVersion) {
		return azerr.InvalidHeader("x-ms-version", v)
	}
	return nil
}

// address finds the account the request is for: from the host of a
// production-style URL (unless disabled), else the first path segment;
// {account}-secondary names the read-only secondary endpoint of account;
// a first segment that is no account, on a request signed for one, is
// the virtual-host form (accountInHost).
func (x *exchange) address() {
	r := x.r
	if !x.s.cfg.DisableProductStyleURL {
		if phr, ok := x.s.productStyle(x.hr); ok {
			x.hr, r.Request, r.HostStyle = phr, phr, true
		}
	}
	r.Account = auth.AccountFromPath(x.hr.URL.EscapedPath())
	if base, ok := strings.CutSuffix(r.Account, auth.SecondarySuffix); ok {
		if _, known := x.s.cfg.Accounts(base); known {
			r.Account, r.Secondary = base, true
		}
	}
	if hr, ok := x.s.accountInHost(x.hr, r.Account); ok {
		r.Request, r.Account = hr, auth.AccountFromPath(hr.URL.EscapedPath())
	}
}

// authenticate verifies the request's credentials (not a CORS
// preflight's): a bearer token when OAuth is on (with a SAS bound to its
// user, the SAS authorizes), else a Shared Key signature; an unsigned
// request without Authorization may carry a SAS, parsed here and
// verified by the service after routing (AuthorizeSAS), or be anonymous.
func (x *exchange) authenticate() error {
	hr, r, now := x.hr, x.r, x.r.Now
	if hr.Method == http.MethodOptions {
		return nil
	}
	if tok, bearer := bearerToken(hr); bearer && x.s.cfg.OAuth {
		// Entra ID in the emulator's basic mode (auth.VerifyBearer):
		// a valid token authenticates for the account of the URL.
		if err := auth.VerifyBearer(tok, r.Account, x.svc.Kind, r.HTTPS, now); err != nil {
			return err
		}
		p := auth.BearerPrincipal(tok)
		r.Authenticated, r.Principal = true, &p
		if x.s.cfg.Principals != nil {
			if err := x.s.cfg.Principals(hr.Context(), p); err != nil {
				x.s.cfg.Logger.Warn("learning a bearer principal", "oid", p.OID, "err", err)
			}
		}
		if sas, ok, err := userBoundSAS(hr); err != nil {
			return err
		} else if ok {
			// A SAS bound to one user (sduoid) with a token: the
			// SAS authorizes, the token only says who sends it
			// (auth.SASRequest.Bearer).
			r.Authenticated, r.Principal, r.SAS, r.sasBearer = false, nil, &sas, &p
		}
		return nil
	}
	// The signed date is the client's real time: under clock
	// control the skew is measured against the wall clock.
	wallNow := now
	if w, ok := x.s.cfg.Clock.(clock.Waller); ok {
		wallNow = w.Wall().Now()
	}
	acct, ok, err := auth.Authenticate(r.Request, x.svc.Kind, x.s.cfg.Accounts, wallNow)
	if err != nil {
		return err
	}
	r.Authenticated = ok
	if ok {
		r.Account = acct
	} else if len(hr.Header["Authorization"]) == 0 {
		q := hr.URL.Query()
		sas, signed, err := auth.ParseSAS(q)
		if err == nil && !signed && auth.RawQueryHasSig(hr.URL.RawQuery) {
			// A sig the query parser dropped (a bad escape):
			// a malformed SAS, refused as one, never served as
			// an anonymous request.
			err = auth.MalformedSignature()
		}
		if err != nil {
			return err
		}
		if signed {
			r.SAS = &sas
		}
	}
	return nil
}

// admit refuses a request for an account this server does not have, and
// a write to a read-only secondary endpoint.
func (x *exchange) admit() error {
	r, m := x.r, x.hr.Method
	r.kind, r.accounts = x.svc.Kind, x.s.cfg.Accounts
	if _, known := x.s.cfg.Accounts(r.Account); !known {
		return azerr.Newf(azerr.ResourceNotFound, "The specified account does not exist.")
	}
	if r.Secondary && m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions {
		return azerr.Newf(azerr.InsufficientAccountPermissions, "Write operations are not allowed.")
	}
	return nil
}

// cors applies the account's CORS rules, for a service that has them
// (CORSRuler), to a request that can use them: it answers a preflight
// (OPTIONS) itself, reporting true (done), and adds the CORS headers to
// the answer of any other request.
func (x *exchange) cors() (done bool) {
	hr := x.hr
	ruler, ok := x.svc.Handler.(CORSRuler)
	if !ok || !(hr.Method == http.MethodOptions || hr.Method == http.MethodGet || hr.Method == http.MethodHead || wire.Field(hr.Header, "Origin") != "") {
		return false
	}
	rules, err := ruler.CORSRules(hr.Context(), x.r.Account)
	if err != nil {
		return x.refuse(err)
	}
	if hr.Method == http.MethodOptions {
		x.refuse(preflight(x.sw, hr, rules))
		return true
	}
	corsHeaders(x.sw, hr, rules)
	return false
}

// dispatch hands the request to the service and renders the error it
// returns, unless the client went away: then nothing failed here and
// nobody reads an answer (its status perhaps already sent).
func (x *exchange) dispatch() {
	hr := x.hr
	err := x.svc.Handler.ServeAzure(x.sw, x.r)
	if err == nil {
		return
	}
	if clientGone(hr.Context(), err, x.sw.code != 0) {
		x.s.cfg.Logger.InfoContext(hr.Context(), "client disconnected", "service", x.svc.Name, "method", hr.Method,
			"url", redactSAS(hr.URL), "operation", x.r.Op, "err", err)
		return
	}
	e := ToAzure(hr.Context(), x.s.cfg.Logger, err)
	if hr.Context().Value(batchVersionKey{}) != nil {
		// Requests are logged whole by observed; a batch's parts here.
		x.s.cfg.Logger.Debug("batch sub-request failed", "service", x.svc.Name, "method", hr.Method, "url", redactSAS(hr.URL), "status", e.Status, "code", e.Code)
	}
	x.fail(e)
}

// refuse renders err, if any, as the request's answer (fail) and reports
// whether it did.
func (x *exchange) refuse(err error) bool {
	if err == nil {
		return false
	}
	e, ok := err.(*azerr.Error) // as ToAzure, without its errors.As allocation
	if !ok {
		e = ToAzure(x.hr.Context(), x.s.cfg.Logger, err)
	}
	x.fail(e)
	return true
}

// fail renders e in the service's error format (Table's JSON, the dfs
// endpoint's JSON, else XML). A body the client withholds for an
// Expect: 100-continue not yet answered is not read: the connection
// ends after the answer (RFC 9110 §10.1.1: say so when the body is not
// read).
func (x *exchange) fail(e *azerr.Error) {
	w, hr := x.sw, x.hr
	withheld := continueWithheld(hr)
	if withheld {
		w.Header().Set("Connection", "close")
	} else {
		drainBody(w, hr)
	}
	switch {
	case x.svc.JSONErrors:
		WriteJSONError(w, hr, e)
	case x.svc.DFS != nil && x.svc.DFS(hr):
		WriteDFSError(w, hr, e)
	default:
		WriteXMLError(w, hr, e)
	}
	if withheld {
		drainAfterAnswer(w, hr)
	}
}
