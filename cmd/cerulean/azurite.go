package main

// Azurite's command line. Invoked as azurite, azurite-blob, azurite-queue
// or azurite-table (a link to this binary), or as `cerulean azurite …`,
// cerulean takes the flags of Azurite 3.x with their meaning, so a
// docker-compose file, a CI service definition or a Testcontainers module
// written for Azurite runs it by changing only the image or binary name.
// The flags are those of Azurite's own Environment (dist/src/common/
// Environment.js in the azurite npm package, 3.37.0) and its per-service
// entry points; see README "Coming from Azurite".

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"software.sslmate.com/src/go-pkcs12"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// azuriteEntries maps Azurite's program names to the services each one
// serves by default.
var azuriteEntries = map[string][]string{
	"azurite":       {"blob", "queue", "table"},
	"azurite-blob":  {"blob"},
	"azurite-queue": {"queue"},
	"azurite-table": {"table"},
}

// azuriteEntry reports whether argv0 (a path) names one of Azurite's
// programs, and which.
func azuriteEntry(argv0 string) (string, bool) {
	name := strings.TrimSuffix(filepath.Base(argv0), ".exe")
	_, ok := azuriteEntries[name]
	return name, ok
}

// azuriteFlags is the parsed command line of an Azurite entry point.
type azuriteFlags struct {
	entry string
	hosts map[string]*string // blob, queue, table, file, dfs, smb
	ports map[string]*int
	alive map[string]*int // keep-alive seconds by service
	set   map[string]bool // flags given on the command line

	location, debug, cert, key, pwd, oauth string

	silent, loose, skipAPIVersionCheck, disableProductStyleURL, disableTelemetry bool

	inMemory          bool
	extentMemoryLimit float64 // MiB; -1: unset

	smbSecurity *smbSecurityFlags // smbflags.go
}

// parseAzuriteFlags parses args as Azurite's program entry would.
// A help flag prints the flags to help.
func parseAzuriteFlags(entry string, args []string, help io.Writer) (*azuriteFlags, error) {
	f := &azuriteFlags{entry: entry, hosts: map[string]*string{}, ports: map[string]*int{}, alive: map[string]*int{}, set: map[string]bool{}}
	fs := flag.NewFlagSet(entry, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are one line, printed by main
	defPort := map[string]int{"blob": 10000, "queue": 10001, "table": 10002, "file": 10003, "dfs": 10004, "smb": 10445}
	for _, svc := range []string{"blob", "queue", "table", "file", "dfs", "smb"} {
		f.hosts[svc] = fs.String(svc+"Host", "127.0.0.1", "listening address of the "+svc+" service")
		f.ports[svc] = fs.Int(svc+"Port", defPort[svc], "listening port of the "+svc+" service ("+portRule+")")
		if svc != "smb" {
			f.alive[svc] = fs.Int(svc+"KeepAliveTimeout", 5, "seconds an idle keep-alive connection of the "+svc+" service stays open")
		}
	}
	for _, names := range [][2]string{{"l", "location"}, {"d", "debug"}} {
		p := &f.location
		usage := "workspace folder (data directory); default: the current directory"
		if names[1] == "debug" {
			p, usage = &f.debug, "write the debug log to this file"
		}
		fs.StringVar(p, names[0], "", usage)
		fs.StringVar(p, names[1], "", usage)
	}
	fs.BoolVar(&f.silent, "s", false, "no per-request log on the console")
	fs.BoolVar(&f.silent, "silent", false, "no per-request log on the console")
	fs.BoolVar(&f.loose, "L", false, "accepted; unsupported headers and parameters are always ignored")
	fs.BoolVar(&f.loose, "loose", false, "accepted; unsupported headers and parameters are always ignored")
	fs.BoolVar(&f.skipAPIVersionCheck, "skipApiVersionCheck", false, "accepted; every x-ms-version is served")
	fs.BoolVar(&f.disableProductStyleURL, "disableProductStyleUrl", false, "the account is always the first path segment")
	fs.BoolVar(&f.disableTelemetry, "disableTelemetry", false, "accepted; cerulean collects no telemetry")
	fs.StringVar(&f.cert, "cert", "", "certificate: a PEM file (with --key) or a PFX file (with --pwd)")
	fs.StringVar(&f.key, "key", "", "PEM private key of --cert")
	fs.StringVar(&f.pwd, "pwd", "", "password of the PFX file given as --cert")
	fs.StringVar(&f.oauth, "oauth", "", `OAuth level: "basic" (needs --cert)`)
	fs.BoolVar(&f.inMemory, "inMemoryPersistence", false, "keep all data in memory; nothing is written to disk")
	fs.Float64Var(&f.extentMemoryLimit, "extentMemoryLimit", -1, "MiB of blob and message bodies kept in memory with --inMemoryPersistence (default: half of RAM)")
	f.smbSecurity = addSMBSecurityFlags(fs, "smbRequireSigning", "smbEncrypt", false)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(help, "Usage: %s [flags] (Azurite 3.x's command line; see README \"Coming from Azurite\")\n", entry)
			printFlags(help, fs)
			return nil, err
		}
		return nil, usageErr(err)
	}
	if fs.NArg() > 0 {
		return nil, usageErr(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if f.set["d"] || f.set["debug"] {
		if f.debug == "" {
			return nil, usageErr(errors.New("must provide a debug log file path for parameter -d or --debug"))
		}
	}
	if f.inMemory && f.location != "" {
		return nil, usageErr(errors.New("the --inMemoryPersistence option is not supported when the --location option is set"))
	}
	if !f.inMemory && f.extentMemoryLimit >= 0 {
		return nil, usageErr(errors.New("the --extentMemoryLimit option is only supported when the --inMemoryPersistence option is set"))
	}
	if f.inMemory && f.set["extentMemoryLimit"] && f.extentMemoryLimit < 0 {
		return nil, usageErr(fmt.Errorf("--extentMemoryLimit %v: want a number of megabytes", f.extentMemoryLimit))
	}
	return f, nil
}

// enabled reports whether the entry point serves svc: its own services,
// plus File, dfs (Data Lake Storage Gen2) and SMB when one of their flags
// is given.
func (f *azuriteFlags) enabled(svc string) bool {
	for _, s := range azuriteEntries[f.entry] {
		if s == svc {
			return true
		}
	}
	return f.set[svc+"Host"] || f.set[svc+"Port"]
}

// config turns the flags into an app.Config and the logger they ask for.
func (f *azuriteFlags) config(stderr io.Writer) (app.Config, *slog.Logger, func(), error) {
	cfg := app.Config{KeepAlive: map[string]time.Duration{}}
	port := func(svc string) int {
		if !f.enabled(svc) {
			return -1
		}
		return *f.ports[svc]
	}
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort, cfg.DFSPort, cfg.SMBPort = port("blob"), port("queue"), port("table"), port("file"), port("dfs"), port("smb")
	cfg.BlobHost, cfg.QueueHost, cfg.TableHost, cfg.FileHost, cfg.DFSHost, cfg.SMBHost = *f.hosts["blob"], *f.hosts["queue"], *f.hosts["table"], *f.hosts["file"], *f.hosts["dfs"], *f.hosts["smb"]
	cfg.Host = "127.0.0.1"
	cfg.MetricsPort = -1
	cfg.DisableProductStyleURL = f.disableProductStyleURL
	if err := f.smbSecurity.apply(&cfg); err != nil {
		return cfg, nil, nil, usageErr(err)
	}
	for svc, secs := range f.alive {
		if *secs < 0 {
			return cfg, nil, nil, usageErr(fmt.Errorf("--%sKeepAliveTimeout %d: want seconds, 0 or more", svc, *secs))
		}
		if *secs > 0 {
			cfg.KeepAlive[svc] = time.Duration(*secs) * time.Second
		}
	}
	if f.inMemory {
		if err := configureMemory(&cfg, f.extentMemoryLimit); err != nil {
			return cfg, nil, nil, usageErr(err)
		}
	} else {
		loc := f.location
		if loc == "" {
			wd, err := os.Getwd()
			if err != nil {
				return cfg, nil, nil, usageErr(fmt.Errorf("--location: %w", err))
			}
			loc = wd
		}
		if err := writableDir(loc); err != nil {
			return cfg, nil, nil, usageErr(fmt.Errorf("--location %s: %w", loc, err))
		}
		cfg.DataDir = loc
	}
	tlsCfg, err := azuriteTLS(f.cert, f.key, f.pwd)
	if err != nil {
		return cfg, nil, nil, usageErr(err)
	}
	cfg.TLS = tlsCfg
	switch f.oauth {
	case "":
	case "basic":
		if cfg.TLS == nil {
			return cfg, nil, nil, usageErr(errors.New("--oauth basic needs --cert: clients send bearer tokens over HTTPS only"))
		}
		cfg.OAuth = true
	default:
		return cfg, nil, nil, usageErr(fmt.Errorf("--oauth %q: want basic", f.oauth))
	}
	level := slog.LevelInfo
	if f.silent {
		level = slog.LevelWarn
	}
	var h slog.Handler = slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})
	closeLog := func() {}
	if f.debug != "" {
		if err := os.MkdirAll(filepath.Dir(f.debug), 0o755); err != nil {
			return cfg, nil, nil, usageErr(fmt.Errorf("--debug %s: %w", f.debug, err))
		}
		file, err := os.OpenFile(f.debug, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return cfg, nil, nil, usageErr(fmt.Errorf("--debug: %w", err))
		}
		h = slog.NewMultiHandler(h, slog.NewTextHandler(file, &slog.HandlerOptions{Level: slog.LevelDebug}))
		closeLog = func() { file.Close() }
	}
	return cfg, slog.New(h), closeLog, nil
}

// writableDir creates dir if needed and checks that files can be created
// in it, so an unusable --location fails before any listener opens.
func writableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".cerulean-probe-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// azuriteTLS loads Azurite's certificate flags: --cert and --key name PEM
// files; --cert and --pwd a PKCS#12 (PFX) file and its password.
func azuriteTLS(cert, key, pwd string) (*tls.Config, error) {
	switch {
	case cert == "" && key == "" && pwd == "":
		return nil, nil
	case cert == "":
		return nil, errors.New("--key and --pwd go with --cert")
	case key != "":
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("--cert/--key: %w", err)
		}
		return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
	case pwd != "" || strings.EqualFold(filepath.Ext(cert), ".pfx") || strings.EqualFold(filepath.Ext(cert), ".p12"):
		pair, err := loadPFX(cert, pwd)
		if err != nil {
			return nil, fmt.Errorf("--cert %s: %w", cert, err)
		}
		return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
	}
	return nil, errors.New("--cert needs --key (PEM) or --pwd (PFX)")
}

// loadPFX decodes a PKCS#12 file: its private key, its certificate and
// any chain certificates after it.
func loadPFX(path, password string) (tls.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, leaf, chain, err := pkcs12.DecodeChain(data, password)
	if err != nil {
		if errors.Is(err, pkcs12.ErrIncorrectPassword) {
			return tls.Certificate{}, errors.New("wrong password (--pwd)")
		}
		return tls.Certificate{}, err
	}
	out := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
	for _, c := range chain {
		out.Certificate = append(out.Certificate, c.Raw)
	}
	if _, err := x509.ParseCertificate(leaf.Raw); err != nil {
		return tls.Certificate{}, err
	}
	return out, nil
}

// azuriteMain runs an Azurite entry point.
func azuriteMain(entry string, args []string, stdout, stderr io.Writer) error {
	f, err := parseAzuriteFlags(entry, args, stdout)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	cfg, log, closeLog, err := f.config(stderr)
	if err != nil {
		return err
	}
	defer closeLog()
	accounts, key, err := accountsFromEnv("")
	if err != nil {
		return err
	}
	cfg.Accounts = accounts
	store := "embedded:" + cfg.DataDir
	if f.inMemory {
		store = "memory"
	}
	return runServer(cfg, log, key, store, func(a *app.App) {
		printAzuriteReady(stdout, entry, a)
	})
}

// printAzuriteReady prints Azurite's start lines on standard output, which
// tools wait for (Testcontainers' wait strategies match "Blob service is
// successfully listening"). The single-service programs print their own
// line ("successfully listens on") as well.
func printAzuriteReady(w io.Writer, entry string, a *app.App) {
	eps := a.Endpoints()
	for _, svc := range []string{"blob", "queue", "table", "file", "dfs"} {
		addr, ok := eps[svc]
		if !ok {
			continue
		}
		name := strings.ToUpper(svc[:1]) + svc[1:]
		if svc == "dfs" {
			name = "DFS"
		}
		url := a.Scheme() + "://" + addr
		fmt.Fprintf(w, "Azurite %s service is starting at %s\n", name, url)
		if entry != "azurite" {
			fmt.Fprintf(w, "Azurite %s service successfully listens on %s\n", name, url)
		}
		fmt.Fprintf(w, "Azurite %s service is successfully listening at %s\n", name, url)
	}
	if a.SMBAddr != "" {
		fmt.Fprintf(w, "Azurite SMB service is successfully listening at smb://%s\n", a.SMBAddr)
	}
}
