// The serve command: its flags, each also read from CERULEAN_<NAME>, and
// the server it runs (runServer, which the Azurite entry points share).

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/profile"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// serveFlagSet is serve's command line: every flag is also read from
// CERULEAN_<NAME> (its default).
type serveFlagSet struct {
	*flag.FlagSet
	host, tlsCert, tlsKey, oauth, data, logLevel, pg, extentLimit, accounts          *string
	blobPort, queuePort, tablePort, filePort, dfsPort, smbPort, metricsPort, pgConns *int
	hns, inMemory, clockControl, versioning, immutability                            *bool
	consolePort                                                                      *int
	smbSecurity                                                                      *smbSecurityFlags
	smbLimits                                                                        smbLimitFlags
	maxConns                                                                         *int
	httpEngine                                                                       *string
	headerTimeout, bodyWindow, keepAlive                                             *time.Duration
	bodyBytes                                                                        *string
	changeFeed                                                                       *bool
	shareSoftDelete                                                                  *int
	containerSoftDelete                                                              *int
	immutabilityPolicy                                                               *string
	changeFeedRetention                                                              *int
	eventSubs                                                                        *string
	eventWebhooks                                                                    *repeated
}

// repeated is a flag given any number of times.
type repeated []string

func (r *repeated) String() string { return strings.Join(*r, ",") }

func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// portFlag defines a port flag: its default from CERULEAN_<NAME>, the
// port rule in its usage.
func portFlag(fs *flag.FlagSet, name string, def int, what string) *int {
	return fs.Int(name, envInt(name, def), what+" ("+portRule+"; env "+envName(name)+")")
}

// serveFlags defines serve's flags on a new FlagSet writing errors to
// stderr.
func serveFlags(stderr io.Writer) *serveFlagSet {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &serveFlagSet{FlagSet: fs}
	f.host = fs.String("host", env("host", "127.0.0.1"), "address to listen on; 0.0.0.0 for every interface (env CERULEAN_HOST)")
	f.blobPort = portFlag(fs, "blob-port", 10000, "Blob service port")
	f.queuePort = portFlag(fs, "queue-port", 10001, "Queue service port")
	f.tablePort = portFlag(fs, "table-port", 10002, "Table service port")
	f.filePort = portFlag(fs, "file-port", 10003, "File service port")
	f.dfsPort = portFlag(fs, "dfs-port", 10004, "Data Lake Storage Gen2 (dfs) port, also answering the Blob API")
	f.smbPort = portFlag(fs, "smb-port", 10445, "SMB2/3 port serving the File shares")
	f.metricsPort = portFlag(fs, "metrics-port", -1, "port for Prometheus metrics (/metrics) and health checks (/healthz, /readyz)")
	f.consolePort = portFlag(fs, "console-port", -1, "port of the web console (docs/console.md): browse and change the accounts' data signed with an account key, see the last requests; bound to --host like the services")
	f.hns = fs.Bool("hierarchical-namespace", env("hierarchical-namespace", "") == "true" || env("hierarchical-namespace", "") == "1", "give every account a hierarchical namespace (Data Lake Storage Gen2); an account listed as name:key1[:key2]:hns in --accounts gets one alone (env CERULEAN_HIERARCHICAL_NAMESPACE)")
	f.versioning = fs.Bool("blob-versioning", env("blob-versioning", "") == "true" || env("blob-versioning", "") == "1", "keep every previous state of a blob as a version (Azure's blob versioning) on every account; an account listed as name:key1[:key2]:versioning in --accounts gets it alone; not with a hierarchical namespace (env CERULEAN_BLOB_VERSIONING)")
	f.immutability = fs.Bool("blob-immutability", env("blob-immutability", "") == "true" || env("blob-immutability", "") == "1", "give every container of the accounts with blob versioning version-level immutability support: immutability policies and legal holds on blob versions (Set Blob Immutability Policy, Set Blob Legal Hold); such a container is deleted only when empty (env CERULEAN_BLOB_IMMUTABILITY)")
	f.immutabilityPolicy = fs.String("blob-immutability-policy", env("blob-immutability-policy", ""), "DAYS[:locked]: the default version-level retention policy of the accounts with version-level immutability support, which every version written without a policy of its own (and without a container default) gets, from its write; Unlocked unless :locked (Azure's account-level immutability policy) (env CERULEAN_BLOB_IMMUTABILITY_POLICY)")
	f.tlsCert = fs.String("tls-cert", env("tls-cert", ""), "PEM certificate (chain) file: serve Blob, Queue, Table and File over HTTPS; needs --tls-key (env CERULEAN_TLS_CERT)")
	f.tlsKey = fs.String("tls-key", env("tls-key", ""), "PEM private key file of --tls-cert (env CERULEAN_TLS_KEY)")
	f.oauth = fs.String("oauth", env("oauth", ""), "basic: accept Entra ID bearer tokens without verifying their signature (development only; needs --tls-cert) (env CERULEAN_OAUTH)")
	f.data = fs.String("data", env("data", "./cerulean-data"), "embedded data directory (env CERULEAN_DATA)")
	f.logLevel = fs.String("log-level", env("log-level", "info"), "debug, info, warn or error (env CERULEAN_LOG_LEVEL)")
	f.pg = fs.String("postgres", env("postgres", ""), "PostgreSQL DSN (postgres://...): use PostgreSQL instead of the embedded store; several processes may share one database (env CERULEAN_POSTGRES)")
	f.pgConns = fs.Int("postgres-max-conns", envInt("postgres-max-conns", 0), "PostgreSQL connection pool size (0: 4 per CPU, 8 to 64) (env CERULEAN_POSTGRES_MAX_CONNS)")
	f.inMemory = fs.Bool("in-memory", env("in-memory", "") == "true" || env("in-memory", "") == "1", "keep everything in memory, write nothing to disk; data is lost when the process exits (env CERULEAN_IN_MEMORY)")
	f.extentLimit = fs.String("extent-memory-limit", env("extent-memory-limit", ""), "with --in-memory: most bytes of blob/file bodies held in memory, e.g. 512M or 2G (default: half of RAM) (env CERULEAN_EXTENT_MEMORY_LIMIT)")
	f.smbSecurity = addSMBSecurityFlags(fs, "smb-require-signing", "smb-encrypt", true)
	f.smbLimits = addSMBLimitFlags(fs)
	f.maxConns = fs.Int("max-connections", envInt("max-connections", server.DefaultMaxConns), "most HTTP connections open at once across the Blob, Queue, Table, File and dfs ports; past it a connection is answered 503 ServerBusy and closed; 0 or -1: no cap (env CERULEAN_MAX_CONNECTIONS)")
	f.httpEngine = fs.String("http-engine", env("http-engine", server.EngineCerulean), "HTTP/1.1 server of the plain (not TLS) listeners: cerulean (serves the requests of the shape the Azure SDKs send on the connection's goroutine and hands any other connection to net/http's server; less CPU per request) or go (net/http's for every connection) (env CERULEAN_HTTP_ENGINE)")
	f.headerTimeout = fs.Duration("header-timeout", envDuration("header-timeout", server.DefaultHeaderTimeout), "longest time to read a request's headers (env CERULEAN_HEADER_TIMEOUT)")
	f.bodyWindow = fs.Duration("body-progress-timeout", envDuration("body-progress-timeout", server.DefaultBodyWindow), "a request body must bring --body-progress-bytes within every such time spent waiting for it, else 500 OperationTimedOut and the connection closes; 0: no rule (env CERULEAN_BODY_PROGRESS_TIMEOUT)")
	f.bodyBytes = fs.String("body-progress-bytes", env("body-progress-bytes", "64K"), "see --body-progress-timeout, e.g. 64K or 1M (env CERULEAN_BODY_PROGRESS_BYTES)")
	f.keepAlive = fs.Duration("keep-alive-timeout", envDuration("keep-alive-timeout", 2*time.Minute), "how long an idle keep-alive HTTP connection stays open (env CERULEAN_KEEP_ALIVE_TIMEOUT)")
	f.clockControl = fs.Bool("clock-control", env("clock-control", "") == "true" || env("clock-control", "") == "1", "tests only: the server's clock becomes the real time plus an offset that POST "+server.ReservedPrefix+"/clock/advance?by=61s on any service port advances (GET "+server.ReservedPrefix+"/clock shows it); anyone who reaches the ports can use it (env CERULEAN_CLOCK_CONTROL)")
	f.accounts = fs.String("accounts", env("accounts", ""), "accounts as name:key1[:key2][:hns][:changefeed][:versioning];... (:hns: a hierarchical namespace; :changefeed: the blob change feed on; :versioning: blob versioning) (env CERULEAN_ACCOUNTS; default: the dev account)")
	f.eventSubs = fs.String("event-subscriptions", env("event-subscriptions", ""), "a JSON file of blob event subscriptions (webhook or storage queue destinations, event type and subject filters, Event Grid or CloudEvents schema; docs/events.md); their accounts' change log is on (env CERULEAN_EVENT_SUBSCRIPTIONS)")
	f.eventWebhooks = &repeated{}
	if v := env("event-webhook", ""); v != "" {
		*f.eventWebhooks = append(*f.eventWebhooks, strings.Split(v, ",")...)
	}
	fs.Var(f.eventWebhooks, "event-webhook", "a webhook URL receiving every blob event of every account in the Event Grid schema, after its validation handshake; repeatable (env CERULEAN_EVENT_WEBHOOK, comma-separated; docs/events.md)")
	f.changeFeed = fs.Bool("blob-change-feed", env("blob-change-feed", "") == "true" || env("blob-change-feed", "") == "1", "turn the blob change feed on for every account: each committed blob change is logged, in order, and served as Avro in the read-only $blobchangefeed container (docs/change-feed.md); name:key:changefeed in --accounts turns it on for one (env CERULEAN_BLOB_CHANGE_FEED)")
	f.shareSoftDelete = fs.Int("share-soft-delete", envInt("share-soft-delete", 0), "File share soft delete: days (1 to 365) a deleted share is kept, restorable with Restore Share, for every account; 0: off; an account's File Service Properties (ShareDeleteRetentionPolicy) can turn it on for that account (env CERULEAN_SHARE_SOFT_DELETE)")
	f.changeFeedRetention = fs.Int("blob-change-feed-retention", envInt("blob-change-feed-retention", 0), "days (1 to 146000) the blob change feed keeps its records, whole hours at a time, as the account's change feed retention on Azure; 0: for ever (env CERULEAN_BLOB_CHANGE_FEED_RETENTION)")
	f.containerSoftDelete = fs.Int("container-soft-delete", envInt("container-soft-delete", 0), "Blob container soft delete: days (1 to 365) a deleted container is kept, with its blobs, restorable with Restore Container, for every account (a hierarchical one keeps its filesystem's directories, files and ACLs); 0: off (env CERULEAN_CONTAINER_SOFT_DELETE)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: cerulean serve [flags]")
		printFlags(fs.Output(), fs)
	}
	return f
}

// checkPorts refuses a port outside -1..65535.
func checkPorts(ports map[string]int) error {
	names := make([]string, 0, len(ports))
	for n := range ports {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if p := ports[n]; p < -1 || p > 65535 {
			return fmt.Errorf("--%s %d: want a port (1-65535), 0 for any free port or -1 for off", n, p)
		}
	}
	return nil
}

func serve(args []string, stdout, stderr io.Writer) error {
	f := serveFlags(stderr)
	fs := f.FlagSet
	if wantsHelp(args) {
		fs.SetOutput(stdout)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageErr(err)
	}
	if fs.NArg() > 0 {
		return usageErr(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	host, blobPort, queuePort, tablePort, filePort, dfsPort := f.host, f.blobPort, f.queuePort, f.tablePort, f.filePort, f.dfsPort
	hns, smbPort, metricsPort, tlsCert, tlsKey, oauth, data, logLevel := f.hns, f.smbPort, f.metricsPort, f.tlsCert, f.tlsKey, f.oauth, f.data, f.logLevel
	pg, pgConns, inMemory, extentLimit, accounts := f.pg, f.pgConns, f.inMemory, f.extentLimit, f.accounts
	if err := checkPorts(map[string]int{"blob-port": *blobPort, "queue-port": *queuePort, "table-port": *tablePort, "file-port": *filePort, "dfs-port": *dfsPort, "smb-port": *smbPort, "metrics-port": *metricsPort, "console-port": *f.consolePort}); err != nil {
		return usageErr(err)
	}
	smbHeartbeat, err := smbLiveness(env("smb-liveness", ""))
	if err != nil {
		return usageErr(err)
	}
	recheck, err := upnRecheck(env("upn-recheck", ""))
	if err != nil {
		return usageErr(err)
	}
	smbLim, err := f.smbLimits.limits()
	if err != nil {
		return usageErr(err)
	}
	// CERULEAN_CPUPROFILE=file profiles the server alone (benchmarks with
	// the client in another process), written when it stops.
	stopProfile, err := profile.CPU(env("cpuprofile", ""))
	if err != nil {
		return err
	}
	defer stopProfile()
	// CERULEAN_ALLOCPROFILE=file writes the allocation profile when it
	// stops.
	writeAllocs := profile.Allocs(env("allocprofile", ""))
	defer func() {
		if err := writeAllocs(); err != nil {
			fmt.Fprintf(stderr, "cerulean: allocation profile: %v\n", err)
		}
	}()
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usageErr(fmt.Errorf("--log-level %q: want debug, info, warn or error", *logLevel))
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	cfg := app.Config{Host: *host, BlobPort: *blobPort, QueuePort: *queuePort, TablePort: *tablePort, FilePort: *filePort, DFSPort: *dfsPort, HierarchicalNamespace: *hns, SMBPort: *smbPort, DataDir: *data, Logger: log, Postgres: *pg, PostgresMaxConns: *pgConns, SMBHeartbeat: smbHeartbeat, MetricsPort: *metricsPort, InMemory: *inMemory, UPNRecheck: recheck}
	if err := f.smbSecurity.apply(&cfg); err != nil {
		return usageErr(err)
	}
	cfg.SMBLimits = smbLim
	cfg.HTTPEngine = *f.httpEngine
	if cfg.HTTPLimits, err = httpLimits(*f.maxConns, *f.headerTimeout, *f.bodyWindow, *f.bodyBytes); err != nil {
		return usageErr(err)
	}
	if *f.keepAlive <= 0 {
		return usageErr(fmt.Errorf("--keep-alive-timeout %s: want a positive duration", *f.keepAlive))
	}
	cfg.IdleTimeout = *f.keepAlive
	cfg.ClockControl = *f.clockControl
	cfg.Console, cfg.ConsolePort = *f.consolePort >= 0, *f.consolePort
	if *extentLimit != "" {
		if !*inMemory {
			return usageErr(errors.New("--extent-memory-limit needs --in-memory"))
		}
		if cfg.ExtentMemoryLimit, err = app.ParseSize(*extentLimit); err != nil {
			return usageErr(fmt.Errorf("--extent-memory-limit: %w", err))
		}
	}
	if *tlsCert != "" || *tlsKey != "" {
		if *tlsCert == "" || *tlsKey == "" {
			return usageErr(errors.New("--tls-cert and --tls-key go together"))
		}
		pair, err := tls.LoadX509KeyPair(*tlsCert, *tlsKey)
		if err != nil {
			return usageErr(fmt.Errorf("--tls-cert/--tls-key: %w", err))
		}
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	}
	switch *oauth {
	case "":
	case "basic":
		if cfg.TLS == nil {
			return usageErr(errors.New("--oauth basic needs --tls-cert and --tls-key: clients send bearer tokens over HTTPS only"))
		}
		cfg.OAuth = true
		log.Warn("OAuth basic mode: any well-formed Entra ID token for Azure Storage gets full access; signatures are not verified")
	default:
		return usageErr(fmt.Errorf("--oauth %q: want basic (or nothing)", *oauth))
	}
	accts, key, err := accountsFromEnv(*accounts)
	if err != nil {
		return err
	}
	cfg.Accounts = accts
	cfg.HierarchicalAccounts = app.HierarchicalAccounts(*accounts)
	cfg.ChangeFeed, cfg.ChangeFeedAccounts = *f.changeFeed, app.ChangeFeedAccounts(*accounts)
	cfg.BlobVersioning = *f.versioning
	cfg.BlobImmutability = *f.immutability
	cfg.ImmutabilityAccounts = app.ImmutabilityAccounts(*accounts)
	if cfg.ImmutabilityPolicy, err = app.ParseImmutabilityPolicy(*f.immutabilityPolicy); err != nil {
		return usageErr(fmt.Errorf("--blob-immutability-policy: %w", err))
	}
	cfg.VersioningAccounts = app.VersioningAccounts(*accounts)
	if d := *f.shareSoftDelete; d < 0 || d > 365 {
		return usageErr(fmt.Errorf("--share-soft-delete %d: want 0 (off) to 365 days", d))
	}
	cfg.ShareSoftDelete = *f.shareSoftDelete
	if d := *f.containerSoftDelete; d < 0 || d > 365 {
		return usageErr(fmt.Errorf("--container-soft-delete %d: want 0 (off) to 365 days", d))
	}
	cfg.ContainerSoftDelete = *f.containerSoftDelete
	if d := *f.changeFeedRetention; d < 0 || d > 146000 {
		return usageErr(fmt.Errorf("--blob-change-feed-retention %d: want 0 (for ever) to 146000 days", d))
	}
	cfg.ChangeFeedRetention = time.Duration(*f.changeFeedRetention) * 24 * time.Hour
	cfg.Events.Webhooks = *f.eventWebhooks
	if *f.eventSubs != "" {
		if cfg.Events.SubscriptionsFile, err = os.ReadFile(*f.eventSubs); err != nil {
			return usageErr(fmt.Errorf("--event-subscriptions: %v", err))
		}
	}
	store := "embedded:" + *data
	if *pg != "" {
		store = "postgres:" + redactDSN(*pg)
	} else if *inMemory {
		store = "memory"
	}
	return runServer(cfg, log, key, store, nil)
}

// runServer starts the app, logs its endpoints, calls ready (if set) and
// serves until SIGINT or SIGTERM.
func runServer(cfg app.Config, log *slog.Logger, key, store string, ready func(*app.App)) error {
	cfg.Logger = log
	if len(cfg.Accounts) > 1 || (len(cfg.Accounts) == 1 && cfg.Accounts[0].Name != app.DevAccount) {
		names := make([]string, len(cfg.Accounts))
		for i, a := range cfg.Accounts {
			names[i] = a.Name
		}
		log.Info("accounts configured", "accounts", strings.Join(names, ","))
	}
	a, err := app.Start(cfg)
	if err != nil {
		return usageErr(err)
	}
	for name, addr := range a.Endpoints() {
		log.Info("listening", "service", name, "endpoint", a.Scheme()+"://"+addr+"/"+cfg.AccountName())
	}
	if a.ConsoleURL != "" {
		log.Info("listening", "service", "console", "endpoint", a.ConsoleURL+"/")
	}
	if a.MetricsURL != "" {
		log.Info("listening", "service", "metrics", "endpoint", a.MetricsURL+"/metrics", "health", a.MetricsURL+"/healthz", "ready", a.MetricsURL+"/readyz")
	}
	if a.SMBAddr != "" {
		log.Info("listening", "service", "smb", "endpoint", "//"+a.SMBAddr+"/<share>", "user", cfg.AccountName())
	}
	if path := os.Getenv(healthFileEnv); path != "" {
		remove, err := writeHealthFile(path, a, cfg.AccountName())
		if err != nil {
			_ = a.Close(context.Background())
			return usageErr(err)
		}
		defer remove()
	}
	log.Info("ready", "store", store, "connection_string", a.ConnectionString(key))
	if ready != nil {
		ready(a)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case <-ctx.Done():
		log.Info("shutting down: finishing in-flight requests")
	case err := <-a.Errors():
		log.Error("listener failed", "err", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Close(sctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	log.Info("stopped")
	return nil
}

// httpLimits turns the limit flags of serve into server.Limits (0
// connections or a 0 progress timeout on the command line turn that limit
// off, as -1 does).
func httpLimits(maxConns int, header, window time.Duration, bytes string) (server.Limits, error) {
	var l server.Limits
	switch {
	case maxConns <= 0:
		l.MaxConns = -1
	default:
		l.MaxConns = maxConns
	}
	if header <= 0 {
		return l, fmt.Errorf("--header-timeout %s: want a positive duration", header)
	}
	l.HeaderTimeout = header
	if window <= 0 {
		l.BodyWindow = -1
	} else {
		l.BodyWindow = window
	}
	n, err := app.ParseSize(bytes)
	if err != nil || n <= 0 {
		return l, fmt.Errorf("--body-progress-bytes %q: want a positive size, e.g. 64K", bytes)
	}
	l.BodyMinBytes = n
	return l, nil
}

// smbLiveness parses CERULEAN_SMB_LIVENESS, a hidden setting for tests
// (test/multiproc): the liveness lease of the SMB server's open handles as
// a Go duration, e.g. "3s". A killed server's handles stop counting (REST
// and other front ends no longer see them) at most this long after its
// last heartbeat; the heartbeat runs every third of it. Unset or empty:
// the default (a 30 s lease, renewed every 10 s). It returns the
// heartbeat interval for app.Config.SMBHeartbeat.
func smbLiveness(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 30*time.Millisecond {
		return 0, fmt.Errorf("CERULEAN_SMB_LIVENESS=%q: want a duration of at least 30ms, e.g. 3s", v)
	}
	return d / 3, nil
}

// upnRecheck parses CERULEAN_UPN_RECHECK, a hidden setting for tests
// (test/multiproc): how long a process trusts its memory of a user
// principal name learned from a bearer token before reading the store
// again, as a Go duration, e.g. "2s" (app.Config.UPNRecheck). Unset or
// empty: the default, 15 minutes.
func upnRecheck(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("CERULEAN_UPN_RECHECK=%q: want a positive duration, e.g. 2s", v)
	}
	return d, nil
}

// redactDSN hides a password in a postgres:// URL for logging.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		if strings.Contains(dsn, "password") {
			return "(DSN with password)"
		}
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// tuneGC runs the collector half as often as Go's default (GOGC=200)
// unless GOGC is set: request handling allocates many short-lived
// objects, the live heap is small (about 25 MiB while streaming a 1 GiB
// blob), and measured Get Blob throughput rises by 10-20%.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(200)
	}
}
