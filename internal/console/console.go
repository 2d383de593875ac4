// Package console is Cerulean's web console (--console-port): a
// single-page app in plain HTML, CSS and JavaScript, embedded in the
// binary (no framework, no build step, no request leaves the console's
// origin), that shows what the storage holds and what it was asked.
//
// How the browser reaches the services. The page calls the REST APIs
// themselves, signed in the browser with Shared Key (Web Crypto's
// HMAC-SHA256) under the key the user enters (prefilled with the
// well-known dev account's when the browser is on loopback and the dev
// account is served), so the console has exactly the REST API's
// authorization and holds no key of its own. The calls go to the
// console's own origin, under /api/{service}/, and the console passes
// them on to that service's listener with the prefix taken off and the
// rest of the URL unchanged (a reverse proxy). The alternative, calling
// the service ports from the page, would need CORS rules on every
// account for the console's origin, which would change what the
// service ports answer other clients (Vary, Access-Control-*) and what
// Get Service Properties shows. The signature covers what the service
// receives: the page signs the path it sends minus the /api/{service}
// prefix, that is "/" + account + the escaped path the service sees,
// and the query as sent; Host is not signed, so the hop does not change
// it. The proxy drops the headers a browser adds on its own that the
// service would read (Origin, which would ask for CORS, Referer,
// Cookie) and adds none (no X-Forwarded-*: the service's client is the
// console).
//
// What the REST API cannot show (a queue's invisible messages, the
// handles open on a share with their share modes and byte-range locks)
// comes from read-only JSON endpoints under /x/{account}/, backed by
// the Inspector the app wires in; a request to them is signed with
// Shared Key over its path without the /x prefix, exactly as a Blob
// request to /{account}/..., and verified with the account's keys.
// The activity list (/x/{account}/activity) is the last requests the
// service listeners answered for that account (server.Config.Requests
// feeds Activity). Clock control's endpoint (internal/clockctl) is
// mounted at /.cerulean/ as on the service ports, unauthenticated as
// there, and absent unless --clock-control is on.
package console

import (
	"crypto/tls"
	"embed"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/server"
)

//go:embed static
var static embed.FS

// Handler returns the console's HTTP handler.
func Handler(cfg Config) http.Handler {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	mux := http.NewServeMux()
	sub, _ := fs.Sub(static, "static")
	files := http.FileServerFS(sub)
	mux.Handle("/", noStore(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		files.ServeHTTP(w, r)
	})))
	mux.HandleFunc("/config.json", cfg.config)
	for name, base := range cfg.Services {
		target, err := url.Parse(base)
		if err != nil {
			continue
		}
		prefix := "/api/" + name
		mux.Handle(prefix+"/", proxy(prefix, target, cfg.Logger))
	}
	if cfg.ClockControl != nil {
		mux.Handle(server.ReservedPrefix+"/", http.StripPrefix(server.ReservedPrefix, cfg.ClockControl))
	}
	if cfg.Events != nil {
		mux.Handle(server.ReservedPrefix+"/events", http.StripPrefix(server.ReservedPrefix, cfg.Events))
	}
	x := &inspect{cfg: cfg}
	mux.Handle("/x/", x)
	return securityHeaders(mux)
}

// securityHeaders keeps the page from loading anything from elsewhere
// and from being framed.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data: blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}

func noStore(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// proxy passes a request under prefix on to target with the prefix
// taken off the path (escaped form included) and the query unchanged.
func proxy(prefix string, target *url.URL, log *slog.Logger) http.Handler {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// The target is this process's own listener (see Config.Services);
	// with --tls-cert its certificate may name another host than the
	// address dialled.
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // own listener
	tr.DisableCompression = true
	return &httputil.ReverseProxy{
		Transport: tr,
		Rewrite: func(pr *httputil.ProxyRequest) {
			out := pr.Out
			out.URL.Scheme = target.Scheme
			out.URL.Host = target.Host
			out.Host = ""
			out.URL.Path = strings.TrimPrefix(pr.In.URL.Path, prefix)
			if pr.In.URL.RawPath != "" {
				out.URL.RawPath = strings.TrimPrefix(pr.In.URL.RawPath, prefix)
			}
			for _, h := range []string{"Origin", "Referer", "Cookie"} {
				out.Header.Del(h)
			}
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			log.Warn("console proxy", "url", r.URL.Path, "err", err)
			http.Error(w, "the service did not answer: "+err.Error(), http.StatusBadGateway)
		},
	}
}

// config tells the page which services listen, which accounts exist,
// whether clock control is on and, for a browser on loopback, the dev
// account's key.
func (c Config) config(w http.ResponseWriter, r *http.Request) {
	services := []string{}
	for _, n := range []string{"blob", "queue", "table", "file", "dfs"} {
		if _, ok := c.Services[n]; ok {
			services = append(services, n)
		}
	}
	out := map[string]any{
		"services":     services,
		"endpoints":    c.Services,
		"accounts":     c.AccountNames,
		"clockControl": c.ClockControl != nil,
		"events":       c.Events != nil,
		"inspector":    c.Inspector != nil,
	}
	if c.DevKey != "" && loopback(r.RemoteAddr) {
		out["dev"] = map[string]string{"account": c.DevAccount, "key": c.DevKey}
	}
	writeJSON(w, http.StatusOK, out)
}

// loopback reports whether addr (host:port) is a loopback address.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
