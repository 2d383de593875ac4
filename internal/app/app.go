// Package app assembles a Cerulean server: store, chunk store, services
// and listeners. cmd/cerulean and the end-to-end tests both start servers
// through it, so tests run exactly what users run.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/blob/blobrest"
	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/chunk/memchunk"
	"github.com/cerulean-storage/cerulean/internal/chunk/sqlchunk"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/clockctl"
	"github.com/cerulean-storage/cerulean/internal/clockctl/clockhttp"
	"github.com/cerulean-storage/cerulean/internal/console"
	"github.com/cerulean-storage/cerulean/internal/datalake"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/file/filerest"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/hns/upn"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/bolt"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres"
	"github.com/cerulean-storage/cerulean/internal/metrics"
	"github.com/cerulean-storage/cerulean/internal/queue"
	"github.com/cerulean-storage/cerulean/internal/queue/queuerest"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/smb"
	"github.com/cerulean-storage/cerulean/internal/smb/smbfs"
	"github.com/cerulean-storage/cerulean/internal/table"
	"github.com/cerulean-storage/cerulean/internal/table/tablerest"
	"github.com/cerulean-storage/cerulean/internal/xcopy"
)

// Start opens the store and starts the listeners.
func Start(cfg Config) (*App, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.HTTPEngine == "" {
		cfg.HTTPEngine = os.Getenv(HTTPEngineEnv)
	}
	switch cfg.HTTPEngine {
	case "", server.EngineGo, server.EngineCerulean:
	default:
		return nil, fmt.Errorf("HTTP engine %q: want %q or %q", cfg.HTTPEngine, server.EngineGo, server.EngineCerulean)
	}
	if len(cfg.Accounts) == 0 {
		cfg.Accounts = DevAccounts()
	}
	if cfg.GCEvery == 0 {
		cfg.GCEvery = time.Minute
	}
	if err := cfg.checkImmutability(); err != nil {
		return nil, err
	}
	if err := cfg.checkVersioning(); err != nil {
		return nil, err
	}
	if err := cfg.checkContainerSoftDelete(); err != nil {
		return nil, err
	}
	subs, err := cfg.subscriptions()
	if err != nil {
		return nil, err
	}
	store, chunks, err := openStores(cfg)
	if err != nil {
		return nil, err
	}
	if os.Getenv(kv.UpdateTwiceEnv) == "1" {
		store = kv.Twice(store) // a test mode, see kv.Twice
	}
	if cfg.Postgres == "" {
		// Only this process uses the store: its read transactions are
		// tracked, and the collector frees data as soon as nothing names
		// or pins it, without a grace period (extent.TrackViews).
		store = extent.TrackViews(store)
	}
	ctl, err := startClock(&cfg, store)
	if err != nil {
		store.Close()
		return nil, err
	}
	accounts := map[string]auth.Account{}
	for _, a := range cfg.Accounts {
		accounts[a.Name] = a
	}
	lookup := func(name string) (auth.Account, bool) {
		a, ok := accounts[name]
		return a, ok
	}
	a := &App{cfg: cfg, store: store, chunks: chunks, done: make(chan struct{}), Clock: ctl}
	scfg := server.Config{Clock: cfg.Clock, Accounts: lookup, Logger: cfg.Logger, TLS: cfg.TLS, OAuth: cfg.OAuth, DisableProductStyleURL: cfg.DisableProductStyleURL, Limits: cfg.HTTPLimits, Engine: cfg.HTTPEngine}
	// a.Blob is built below, before the server takes requests.
	worm := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		blobrest.WORMHandler(a.Blob, lookup, cfg.Clock, cfg.Logger).ServeHTTP(w, r)
	})
	scfg.Reserved = a.reserved(clockhttp.Handler(ctl), worm)
	if cfg.OAuth {
		// upn=true on the dfs endpoint names the users whose tokens
		// this server (or any sharing the store) has authenticated.
		names := upn.New(store, cfg.Clock, cfg.UPNRecheck)
		scfg.Principals = func(ctx context.Context, p auth.Principal) error { return names.Learn(ctx, p.OID, p.UPN) }
	}
	if cfg.MetricsPort >= 0 || cfg.Console {
		// The console draws request rates from the same counters, so
		// they are kept with the console on even without a metrics port.
		a.metrics = metrics.New(a.storeReady)
		scfg.Observer = a.metrics
	}
	if cfg.Console {
		a.activity = console.NewActivity(0)
		scfg.Requests = a.activity.Add
	}
	a.srv = server.New(scfg)
	a.Blob = blob.New(store, chunks, cfg.Clock, cfg.Logger)
	a.Blob.SetChangeFeed(cfg.changeFeedOn())
	a.Blob.SetChangeFeedRetention(cfg.ChangeFeedRetention)
	a.Blob.SetVersioning(cfg.versioningOn())
	a.Blob.SetContainerSoftDelete(func(string) int { return cfg.ContainerSoftDelete })
	a.Blob.SetImmutability(cfg.immutabilityOn())
	if p := cfg.ImmutabilityPolicy; p != nil {
		a.Blob.SetImmutabilityDefault(func(string) *blob.DefaultPolicy { return p })
	}
	if err := a.setupEvents(subs); err != nil {
		store.Close()
		return nil, err
	}
	a.BlobREST = blobrest.New(a.Blob)
	a.Queue = queue.New(store, cfg.Clock, cfg.Logger)
	// One background reclaimer for every delete that returns at once
	// (internal/reclaim): deleted containers, detached Data Lake trees,
	// deleted queues and cleared messages.
	a.Queue.SetReclaimer(a.Blob.Reclaimer())
	a.Table = table.New(store, cfg.Clock, cfg.Logger)
	a.Table.SetReclaimer(a.Blob.Reclaimer())
	a.File = file.New(store, chunks, cfg.Clock, cfg.Logger)
	a.File.SetReclaimer(a.Blob.Reclaimer())
	a.File.SetShareSoftDelete(func(string) int { return cfg.ShareSoftDelete })
	a.fileREST = filerest.New(a.File)
	// The hierarchical accounts' names live in one namespace, which the
	// Blob domain resolves them through (their containers are its
	// filesystems); the dfs endpoint calls the same domain.
	a.Blob.SetNamespace(ns.New(cfg.Clock), cfg.hierarchical())
	a.DFS = datalake.New(datalake.Config{Blob: a.Blob, BlobREST: a.BlobREST, Clock: cfg.Clock, Logger: cfg.Logger})
	if ctl != nil {
		// Deadlines standing for real time outlast an advance.
		ctl.OnAdvance(handle.ShiftOwners)
		ctl.OnAdvance(extent.ShiftGrace)
	}
	if a.metrics != nil {
		// Every routed operation, from the services' route tables.
		a.metrics.Operations("blob", blobrest.Operations())
		a.metrics.Operations("queue", queuerest.Operations())
		a.metrics.Operations("table", tablerest.Operations())
		a.metrics.Operations("file", filerest.Operations())
		a.metrics.Operations("dfs", append(datalake.Operations(), blobrest.Operations()...))
	}
	for _, svc := range []struct {
		port int
		host string
		url  *string
		desc server.Service
	}{
		{cfg.BlobPort, cfg.BlobHost, &a.BlobURL, server.Service{Name: "blob", Kind: auth.Blob, Handler: a.BlobREST, ServerHeader: "Windows-Azure-Blob/1.0 Microsoft-HTTPAPI/2.0"}},
		{cfg.QueuePort, cfg.QueueHost, &a.QueueURL, server.Service{Name: "queue", Kind: auth.Queue, Handler: queuerest.New(a.Queue), ServerHeader: "Windows-Azure-Queue/1.0 Microsoft-HTTPAPI/2.0"}},
		{cfg.TablePort, cfg.TableHost, &a.TableURL, server.Service{Name: "table", Kind: auth.Table, Handler: tablerest.New(a.Table, cfg.Logger), JSONErrors: true, ServerHeader: "Windows-Azure-Table/1.0 Microsoft-HTTPAPI/2.0"}},
		{cfg.FilePort, cfg.FileHost, &a.FileURL, server.Service{Name: "file", Kind: auth.File, Handler: a.fileREST, ServerHeader: "Windows-Azure-File/1.0 Microsoft-HTTPAPI/2.0"}},
		// The dfs endpoint signs as Blob does (Authorize with Shared Key:
		// the Blob and Data Lake Storage services share the scheme) and
		// answers the Blob API too.
		{cfg.DFSPort, cfg.DFSHost, &a.DFSURL, server.Service{Name: "dfs", Kind: auth.Blob, Handler: a.DFS, DFS: datalake.IsDFS, ServerHeader: "Windows-Azure-HDFS/1.0 Microsoft-HTTPAPI/2.0"}},
	} {
		if svc.port < 0 {
			continue
		}
		host := svc.host
		if host == "" {
			host = cfg.Host
		}
		svc.desc.Addr = net.JoinHostPort(host, strconv.Itoa(svc.port))
		svc.desc.IdleTimeout = cfg.KeepAlive[svc.desc.Name]
		if _, set := cfg.KeepAlive[svc.desc.Name]; !set {
			svc.desc.IdleTimeout = cfg.IdleTimeout
		}
		addr, err := a.srv.Listen(svc.desc)
		if err != nil {
			_ = a.srv.Shutdown(context.Background())
			store.Close()
			return nil, fmt.Errorf("%s listener: %w", svc.desc.Name, err)
		}
		*svc.url = cfg.scheme() + "://" + addr + "/" + cfg.Accounts[0].Name
	}
	a.linkCopyPeers()
	if a.cfg.MetricsPort >= 0 {
		if err := a.startMetrics(); err != nil {
			_ = a.srv.Shutdown(context.Background())
			store.Close()
			return nil, err
		}
	}
	if cfg.Console {
		if err := a.startConsole(ctl); err != nil {
			_ = a.srv.Shutdown(context.Background())
			store.Close()
			return nil, err
		}
	}
	if cfg.SMBPort >= 0 {
		if err := a.startSMB(); err != nil {
			_ = a.srv.Shutdown(context.Background())
			store.Close()
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	go a.collect(ctx)
	a.reclaimDone = make(chan struct{})
	go func() {
		defer close(a.reclaimDone)
		// A large reclaim leaves the heap much smaller than the memory
		// the runtime holds: give it back to the system at once rather
		// than over the scavenger's minutes, so the process's RSS
		// follows the live data.
		a.Blob.Reclaimer().SetAfterDrain(func(steps int) {
			if steps >= bigReclaim {
				debug.FreeOSMemory()
			}
		})
		a.Blob.Reclaimer().Run(ctx, a.cfg.GCEvery)
	}()
	a.startEvents(ctx)
	a.clockDone = make(chan struct{})
	go func() {
		defer close(a.clockDone)
		if ctl != nil {
			ctl.Run(ctx)
		}
	}()
	return a, nil
}

// startClock sets up clock control: with cfg.ClockControl, cfg.Clock
// becomes the offset clock over it, its offset loaded from the store (and
// shared through it on PostgreSQL). Without, a store whose clock was
// advanced before keeps its offset, fixed (its messages, leases and
// timestamps were written on that time, which must not run backwards),
// and a warning says so; on PostgreSQL the front end is refused instead,
// as it would not follow the advances of the front ends sharing the
// database.
func startClock(cfg *Config, store kv.Store) (*clockctl.Control, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !cfg.ClockControl {
		off, err := clockctl.Stored(ctx, store)
		if err != nil || off == 0 {
			return nil, err
		}
		if cfg.Postgres != "" {
			return nil, fmt.Errorf("this database's clock was advanced by %s with --clock-control: every front end on it must run with --clock-control, to share that offset and its later advances", off)
		}
		cfg.Clock = clock.NewOffset(cfg.Clock, off)
		cfg.Logger.Warn("this store's clock was advanced with --clock-control before: it keeps that offset (time never runs backwards for the data stored); without the flag nothing advances it further", "offset", off.String())
		return nil, nil
	}
	ctl, err := clockctl.Open(ctx, store, cfg.Clock, cfg.Postgres != "", cfg.Logger)
	if err != nil {
		return nil, err
	}
	cfg.Clock = ctl
	cfg.Logger.Warn("clock control is on: anyone who reaches a service port can advance the server's clock (POST "+server.ReservedPrefix+"/clock/advance?by=<duration>); for tests only",
		"offset", ctl.Offset().String(), "shared", ctl.Shared())
	return ctl, nil
}

// startMetrics serves the metrics and health endpoints on cfg.MetricsPort.
func (a *App) startMetrics() error {
	ln, err := net.Listen("tcp", net.JoinHostPort(a.cfg.Host, strconv.Itoa(a.cfg.MetricsPort)))
	if err != nil {
		return fmt.Errorf("metrics listener: %w", err)
	}
	a.MetricsURL = "http://" + ln.Addr().String()
	header := 10 * time.Second
	if h := a.cfg.HTTPLimits.HeaderTimeout; h > 0 && h < header {
		header = h // a shorter header timeout applies here too
	}
	a.metricsSrv = &http.Server{Handler: a.metrics.Handler(), ReadHeaderTimeout: header,
		ErrorLog: slog.NewLogLogger(a.cfg.Logger.Handler(), slog.LevelDebug)}
	go func() {
		if err := a.metricsSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.cfg.Logger.Error("metrics listener", "err", err)
		}
	}()
	return nil
}

// storeReady reads one key: the store answers (on PostgreSQL, the
// database is reachable); and the SMB listener, if any, accepts.
func (a *App) storeReady(ctx context.Context) error {
	if a.smb != nil {
		// A front end whose SMB port stopped accepting is not ready.
		if err := a.smb.Ready(); err != nil {
			return err
		}
	}
	err := a.store.View(ctx, func(tx kv.Tx) error {
		if _, err := tx.Get([]byte("\x00ready")); err != nil && !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// startSMB starts the SMB2/3 server on cfg.SMBPort.
func (a *App) startSMB() error {
	host := a.cfg.SMBHost
	if host == "" {
		host = a.cfg.Host
	}
	ln := a.cfg.SMBListener
	if ln == nil {
		var err error
		ln, err = net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(a.cfg.SMBPort)))
		if err != nil {
			return fmt.Errorf("smb listener: %w", err)
		}
	}
	// The NTLM challenge's timestamp is the real time (clock.Wall).
	cfg := smb.Config{FS: smbfs.New(a.File, smb.DefaultOwner()), Accounts: a.cfg.Accounts, Clock: clock.Wall(a.cfg.Clock), Logger: a.cfg.Logger, HeartbeatEvery: a.cfg.SMBHeartbeat,
		RequireSigning: a.cfg.SMBRequireSigning, Encrypt: a.cfg.SMBEncrypt}
	lim := a.cfg.SMBLimits
	cfg.MaxConns, cfg.MaxConnsPerAddr, cfg.PreauthTimeout, cfg.IdleTimeout = lim.MaxConns, lim.MaxConnsPerAddr, lim.PreauthTimeout, lim.IdleTimeout
	if a.metrics != nil {
		cfg.Observer = a.metrics
	}
	a.smb = smb.New(cfg)
	a.SMBAddr = ln.Addr().String()
	a.smbDone = make(chan error, 1)
	go func() {
		err := a.smb.Serve(ln)
		if err != nil && !errors.Is(err, smb.ErrServerClosed) {
			a.cfg.Logger.Error("SMB server failed", "err", err)
		}
		a.smbDone <- err
	}()
	return nil
}

// collect runs the garbage collector in the background. On a store only
// this process uses, the data collector (which frees overwritten and
// deleted bodies, with no grace period there) runs twelve times as often
// as the rest, every 5 s by default, so disk and memory follow the live
// data under steady overwrites.
func (a *App) collect(ctx context.Context) {
	defer close(a.done)
	t := time.NewTicker(a.cfg.GCEvery)
	defer t.Stop()
	dataEvery := a.cfg.GCEvery
	if a.cfg.Postgres == "" {
		dataEvery = max(a.cfg.GCEvery/12, 100*time.Millisecond)
	}
	dt := time.NewTicker(dataEvery)
	defer dt.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-dt.C:
			a.collectData(ctx)
			continue
		case <-t.C:
		}
		a.collectData(ctx)
		if _, err := a.Blob.SweepOrphans(ctx); err != nil && ctx.Err() == nil {
			a.cfg.Logger.Warn("orphan sweep failed", "err", err)
		}
		if _, err := a.Queue.CollectGarbage(ctx); err != nil && ctx.Err() == nil {
			a.cfg.Logger.Warn("queue garbage collection failed", "err", err)
		}
		if _, err := a.File.ReapHandles(ctx); err != nil && ctx.Err() == nil {
			a.cfg.Logger.Warn("handle reaping failed", "err", err)
		}
		// Shares whose purge a stopped process left unfinished.
		if err := a.File.PurgeDeletedShares(ctx); err != nil && ctx.Err() == nil {
			a.cfg.Logger.Warn("file share purge failed", "err", err)
		}
	}
}

// bigReclaim is the number of reclaim transactions (of up to 1,024
// records each) after which a round gives memory back to the system.
const bigReclaim = 64

// bigCollect is the number of data items freed in one pass after which
// the pass gives memory back to the system.
const bigCollect = 10000

// collectData frees soft-deleted blobs past their retention and data
// items nothing names or pins any more (blob.Service.CollectGarbage).
func (a *App) collectData(ctx context.Context) {
	if n, err := a.Blob.CollectGarbage(ctx); err != nil && ctx.Err() == nil {
		a.cfg.Logger.Warn("garbage collection failed", "err", err)
	} else if n > 0 {
		a.cfg.Logger.Debug("garbage collected", "items", n)
		if n >= bigCollect {
			debug.FreeOSMemory() // as after a big reclaim
		}
	}
}

// Close stops accepting requests, waits for in-flight ones (up to ctx),
// stops background work and closes the store cleanly.
func (a *App) Close(ctx context.Context) error {
	if a.metrics != nil {
		a.metrics.Drain()
	}
	err := a.srv.Shutdown(ctx)
	if a.smb != nil {
		if serr := a.smb.Shutdown(ctx); err == nil {
			err = serr
		}
		if serr := <-a.smbDone; err == nil && !errors.Is(serr, smb.ErrServerClosed) {
			err = serr
		}
	}
	a.cancel()
	<-a.done
	<-a.reclaimDone
	<-a.clockDone
	a.waitEvents()
	if a.metricsSrv != nil {
		if merr := a.metricsSrv.Shutdown(ctx); err == nil {
			err = merr
		}
	}
	if a.consoleSrv != nil {
		if cerr := a.consoleSrv.Shutdown(ctx); err == nil {
			err = cerr
		}
	}
	if cerr := a.store.Close(); err == nil {
		err = cerr
	}
	return err
}

// openStores opens the metadata store and the chunk store: PostgreSQL when
// cfg.Postgres is set, else the embedded bbolt file and chunk directory.
func openStores(cfg Config) (kv.Store, chunk.Store, error) {
	if cfg.InMemory {
		if cfg.Postgres != "" {
			return nil, nil, errors.New("in-memory mode and PostgreSQL exclude each other")
		}
		limit := cfg.ExtentMemoryLimit
		if limit == 0 {
			limit = DefaultExtentMemoryLimit()
		}
		if limit > 0 {
			cfg.Logger.Info("in-memory mode: nothing is written to disk", "extent_memory_limit_bytes", limit)
		} else {
			cfg.Logger.Info("in-memory mode: nothing is written to disk", "extent_memory_limit_bytes", "none")
		}
		return mem.New(), memchunk.New(memchunk.Options{Limit: limit, Now: cfg.Clock.Now}), nil
	}
	if cfg.Postgres != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db, err := postgres.Open(ctx, cfg.Postgres, postgres.Options{MaxConns: cfg.PostgresMaxConns})
		if err != nil {
			return nil, nil, fmt.Errorf("opening PostgreSQL store: %w", err)
		}
		chunks, err := sqlchunk.New(ctx, db)
		if err != nil {
			db.Close()
			return nil, nil, fmt.Errorf("opening PostgreSQL chunk store: %w", err)
		}
		return db, chunks, nil
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("data directory: %w", err)
	}
	store, err := bolt.Open(metaPath(cfg.DataDir), bolt.Options{NoSync: cfg.NoSync, FS: cfg.FS, LogSize: cfg.LogSize})
	if err != nil {
		return nil, nil, fmt.Errorf("opening store: %w", err)
	}
	chunks, err := chunk.NewFSOn(cfg.DataDir, cfg.FS)
	if err != nil {
		store.Close()
		return nil, nil, fmt.Errorf("opening chunk store: %w", err)
	}
	return store, chunks, nil
}

// linkCopyPeers lets copies cross between the Blob and File services when
// both listen: Copy Blob and the *FromURL writes from a file, Copy File
// and Put Range From URL from a blob (see xcopy).
func (a *App) linkCopyPeers() {
	port := func(u string) string {
		pu, err := url.Parse(u)
		if err != nil {
			return ""
		}
		return pu.Port()
	}
	if a.BlobURL == "" || a.FileURL == "" {
		return
	}
	a.BlobREST.SetFilePeer(&xcopy.Peer{Source: a.fileREST, Kind: "file", Port: port(a.FileURL)})
	a.fileREST.SetBlobPeer(&xcopy.Peer{Source: a.BlobREST, Kind: "blob", Port: port(a.BlobURL)})
}
