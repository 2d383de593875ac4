// The running server (App): the stores, services, doors and background
// loops Start builds, and what callers read of it (endpoints, connection
// string, errors).

package app

import (
	"context"
	"net"
	"net/http"
	"sort"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/blob/blobrest"
	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/clockctl"
	"github.com/cerulean-storage/cerulean/internal/console"
	"github.com/cerulean-storage/cerulean/internal/datalake"
	"github.com/cerulean-storage/cerulean/internal/events"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/file/filerest"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/metrics"
	"github.com/cerulean-storage/cerulean/internal/queue"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/smb"
	"github.com/cerulean-storage/cerulean/internal/table"
)

// App is a running server.
type App struct {
	cfg    Config
	store  kv.Store
	chunks chunk.Store
	srv    *server.Server
	Blob   *blob.Service
	// BlobREST is the Blob REST front end over Blob.
	BlobREST *blobrest.Service
	Queue    *queue.Service
	Table    *table.Service
	File     *file.Service
	DFS      *datalake.Service
	// fileREST is the File REST front end over File.
	fileREST *filerest.Service
	// BlobURL is the account URL of the Blob service, e.g.
	// http://127.0.0.1:10000/devstoreaccount1.
	BlobURL string
	// QueueURL, TableURL and FileURL likewise, when those services listen.
	QueueURL string
	TableURL string
	FileURL  string
	DFSURL   string
	// SMBAddr is the SMB listener's address (host:port), when it listens.
	SMBAddr string
	// MetricsURL is the metrics listener's base URL, when it listens:
	// MetricsURL+"/metrics", "/healthz", "/readyz".
	MetricsURL string
	metrics    *metrics.Metrics
	metricsSrv *http.Server
	smb        *smb.Server
	smbDone    chan error
	cancel     context.CancelFunc
	done       chan struct{}
	// reclaimDone is closed when the background reclaimer (deleted
	// containers, detached Data Lake trees) has stopped.
	reclaimDone chan struct{}
	// Clock is clock control's clock (nil without Config.ClockControl).
	Clock *clockctl.Control
	// clockDone is closed when clock control's refresher has stopped.
	clockDone chan struct{}
	// ConsoleURL is the web console's base URL, when it listens.
	ConsoleURL string
	consoleSrv *http.Server
	activity   *console.Activity
	events     eventsRun
}

// Endpoints lists the bound services, e.g. {"blob": "127.0.0.1:10000"}.
func (a *App) Endpoints() map[string]string {
	out := map[string]string{}
	for _, n := range []string{"blob", "queue", "table", "file", "dfs"} {
		if addr := a.srv.Addr(n); addr != "" {
			out[n] = addr
		}
	}
	return out
}

// ConnectionString returns a connection string for the first account, to
// be pasted into a client on this machine (wildcard listeners become
// loopback addresses, see ClientAddr).
func (a *App) ConnectionString(key string) string {
	acct := a.cfg.Accounts[0].Name
	scheme := a.cfg.scheme()
	parts := []string{"DefaultEndpointsProtocol=" + scheme, "AccountName=" + acct, "AccountKey=" + key}
	eps := a.Endpoints()
	names := make([]string, 0, len(eps))
	for n := range eps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		label := strings.ToUpper(n[:1]) + n[1:]
		if n == "dfs" {
			label = "DFS"
		}
		parts = append(parts, label+"Endpoint="+scheme+"://"+ClientAddr(eps[n])+"/"+acct)
	}
	return strings.Join(parts, ";") + ";"
}

// ClientAddr is the address a client on this machine dials for a
// listener's address: a wildcard host (0.0.0.0, ::), which no client can
// connect to, becomes the loopback address of its family. Behind a
// container's port mapping or from another machine, clients use that
// machine's address and the mapped port instead.
func ClientAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip.To4() == nil {
			host = "::1"
		}
	}
	return net.JoinHostPort(host, port)
}

// Errors reports listener failures.
func (a *App) Errors() <-chan error { return a.srv.Errors() }

// OpenHTTPConns is the number of connections the HTTP listeners hold
// open (the count HTTPLimits.MaxConns caps).
func (a *App) OpenHTTPConns() int { return a.srv.OpenConns() }

// Scheme is the services' URL scheme: "https" with Config.TLS, else
// "http".
func (a *App) Scheme() string { return a.cfg.scheme() }

// eventsRun is the app's event delivery.
type eventsRun struct {
	d    *events.Deliverer // nil: no subscriptions
	done chan struct{}
}
