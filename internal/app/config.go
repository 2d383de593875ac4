// What configures a server: Config, the account lists and marks its
// flags parse, and the checks of their combinations.

package app

import (
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/events"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/smb"
	"github.com/cerulean-storage/cerulean/internal/vfs"
)

// HTTPEngineEnv names the environment variable Start reads when
// Config.HTTPEngine is empty (so that every test starting an App can run
// on either engine).
const HTTPEngineEnv = "CERULEAN_HTTP_ENGINE"

// DevAccount and DevKey are the well-known development credentials.
const (
	DevAccount = "devstoreaccount1"
	DevKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Config configures a server. Ports of -1 disable a service; 0 picks a
// free port.
type Config struct {
	Host string
	// BlobHost, QueueHost, TableHost, FileHost, DFSHost and SMBHost,
	// when set, override Host for one listener (Azurite's --blobHost and
	// the like).
	BlobHost, QueueHost, TableHost, FileHost, DFSHost, SMBHost string
	// KeepAlive, when set, is how long an idle HTTP connection stays open,
	// by service name ("blob", "queue", "table", "file"); unset: two
	// minutes.
	KeepAlive map[string]time.Duration
	BlobPort  int
	QueuePort int
	TablePort int
	FilePort  int
	// DFSPort is the Data Lake Storage Gen2 (dfs) endpoint: the dfs API
	// and the Blob API of the same accounts (-1 disables it; 0 picks a
	// free port like the others).
	DFSPort int
	// HierarchicalNamespace makes every account hierarchical (Data Lake
	// Storage Gen2); HierarchicalAccounts makes the named ones so.
	HierarchicalNamespace bool
	HierarchicalAccounts  []string
	// ChangeFeed turns the blob change feed on for every account;
	// ChangeFeedAccounts for the named ones (internal/changelog).
	ChangeFeed         bool
	ChangeFeedAccounts []string
	// ChangeFeedRetention is how long change log records are kept (0:
	// for ever).
	ChangeFeedRetention time.Duration
	// BlobVersioning turns blob versioning on for every flat account;
	// VersioningAccounts for the named ones (versioning.go).
	BlobVersioning     bool
	VersioningAccounts []string
	// BlobImmutability gives every container of the accounts with blob
	// versioning version-level immutability support (Azure's
	// ImmutableStorageWithVersioning, a management-plane setting):
	// immutability policies and legal holds on blob versions
	// (internal/blob/immutability.go).
	BlobImmutability bool
	// ImmutabilityAccounts: the accounts marked :immutability in
	// --accounts (immutability.go).
	ImmutabilityAccounts []string
	// ImmutabilityPolicy is the default version-level policy of the
	// accounts with version-level immutability support (nil: none;
	// immutability.go).
	ImmutabilityPolicy *blob.DefaultPolicy
	// ShareSoftDelete is the File service's share delete retention in
	// days for every account (0: off; an account's File Service
	// Properties may enable their own). internal/file/domain_softdelete.go.
	ShareSoftDelete int
	// ContainerSoftDelete is the Blob service's container delete
	// retention in days for every account, flat or hierarchical (0: off;
	// containersd.go). internal/blob/domain_containersd.go.
	ContainerSoftDelete int
	// Events are the blob event subscriptions (events.go).
	Events EventsConfig
	// SMBPort is the SMB2/3 port serving the File service's shares
	// (-1 disables it; 0 picks a free port like the others).
	SMBPort  int
	DataDir  string
	Accounts []auth.Account // empty: the dev account
	Clock    clock.Clock
	Logger   *slog.Logger
	NoSync   bool // tests only: skip fsync (embedded store)
	// FS is the filesystem of the embedded store's files (nil: the
	// operating system's); tests put a fault-injecting one here.
	FS vfs.FS
	// LogSize is the embedded store's write-ahead log size (0: its
	// default); tests keep it small.
	LogSize int64
	// Postgres selects the PostgreSQL backend (kv store and chunk store in
	// one database) instead of the embedded store in DataDir.
	Postgres         string
	PostgresMaxConns int
	// InMemory keeps everything in the process's memory (kv/mem and
	// chunk/memchunk): nothing is written to disk, nothing survives the
	// process. DataDir is not used; Postgres must be empty.
	InMemory bool
	// ExtentMemoryLimit bounds the bytes of bodies held by the in-memory
	// chunk store (0: half of the machine's RAM, as Azurite's
	// --extentMemoryLimit default; negative: no limit). A write past it
	// fails with 409 MemoryExtentStoreAtSizeLimit. Bodies of at most
	// extent.InlineMax bytes live in the kv store with the metadata and
	// are not counted, as Azurite does not count its metadata.
	ExtentMemoryLimit int64
	GCEvery           time.Duration
	// SMBHeartbeat is how often the SMB server renews the liveness lease
	// of its open handles; the lease lasts three intervals, after which a
	// killed server's handles stop counting (0: the smb package's
	// default, 10 s).
	SMBHeartbeat time.Duration
	// SMBRequireSigning and SMBEncrypt harden the SMB server for networks
	// beyond loopback (smb.Config.RequireSigning and Encrypt).
	SMBRequireSigning bool
	SMBEncrypt        smb.EncryptMode
	// SMBListener, if set, is the SMB server's listener instead of one
	// bound to SMBHost:SMBPort (tests inject accept failures with it).
	SMBListener net.Listener
	// SMBLimits are the SMB server's connection caps and timeouts
	// (smb.Config: 0 takes the smb package's default, negative removes
	// the limit).
	SMBLimits SMBLimits
	// MetricsPort serves Prometheus metrics and the /healthz and /readyz
	// endpoints (-1 disables it, 0 picks a free port).
	MetricsPort int
	// TLS, if set, serves the Blob, Queue, Table and File endpoints over
	// HTTPS (the metrics port and SMB are unchanged).
	TLS *tls.Config
	// OAuth accepts Entra ID bearer tokens without verifying their
	// signature (auth.VerifyBearer), over HTTPS only.
	OAuth bool
	// UPNRecheck is how long a front end trusts its memory of the user
	// principal name a bearer token taught it before reading the store
	// again (0: upn.Recheck, 15 minutes); test/multiproc shortens it.
	UPNRecheck time.Duration
	// DisableProductStyleURL: see server.Config.
	DisableProductStyleURL bool
	// HTTPLimits are the resource limits of the HTTP listeners: the cap
	// on open connections across Blob, Queue, Table, File and dfs, the
	// header read timeout and the progress rule of request bodies (zero
	// values: server's defaults; docs/security.md).
	HTTPLimits server.Limits
	// HTTPEngine is the HTTP/1.1 server of the plain listeners:
	// server.EngineGo (net/http's) or server.EngineCerulean (see
	// server.Config.Engine). Empty: CERULEAN_HTTP_ENGINE, else
	// EngineCerulean.
	HTTPEngine string
	// IdleTimeout, when set, is how long an idle HTTP connection stays
	// open on every listener that KeepAlive does not name.
	IdleTimeout time.Duration
	// ClockControl makes the server's clock Clock (nil: the wall clock)
	// plus an offset that the admin endpoint under server.ReservedPrefix
	// advances (internal/clockctl, --clock-control). Off, that endpoint
	// answers 404.
	ClockControl bool
	// Console serves the web console (internal/console) on ConsolePort
	// (0 picks a free port) at Host; off by default.
	Console     bool
	ConsolePort int
}

// SMBLimits bound what SMB clients may hold (internal/smb, limits.go).
type SMBLimits struct {
	MaxConns        int
	MaxConnsPerAddr int
	PreauthTimeout  time.Duration
	IdleTimeout     time.Duration
}

// hnsMark, as the last field of an account in ParseAccounts' syntax,
// gives the account a hierarchical namespace. It is no base64 key (its
// length is not a multiple of four).
const hnsMark = "hns"

// HierarchicalAccounts returns the accounts of s (ParseAccounts' syntax)
// marked with a last field "hns".
func HierarchicalAccounts(s string) []string { return markedAccounts(s, hnsMark) }

// ParseAccounts parses "name:key1[:key2][:hns];name2:key..." into
// accounts (see HierarchicalAccounts for the hns mark).
func ParseAccounts(s string) ([]auth.Account, error) {
	var out []auth.Account
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		fields, _ := accountMarks(strings.Split(item, ":"))
		if len(fields) < 2 || len(fields) > 3 || fields[0] == "" {
			return nil, fmt.Errorf("account %q: want name:key1[:key2]", item)
		}
		if seen[fields[0]] {
			return nil, fmt.Errorf("account %q listed twice", fields[0])
		}
		seen[fields[0]] = true
		a := auth.Account{Name: fields[0]}
		for i, k := range fields[1:] {
			raw, err := base64.StdEncoding.DecodeString(k)
			if err != nil || len(raw) == 0 {
				return nil, fmt.Errorf("account %q: key %d is not base64", fields[0], i+1)
			}
			a.Keys = append(a.Keys, raw)
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, errors.New("no accounts given")
	}
	return out, nil
}

// DevAccounts returns the dev account only.
func DevAccounts() []auth.Account {
	k, _ := base64.StdEncoding.DecodeString(DevKey)
	return []auth.Account{{Name: DevAccount, Keys: [][]byte{k}}}
}

// scheme is "https" when the services serve TLS, else "http".
func (c Config) scheme() string {
	if c.TLS != nil {
		return "https"
	}
	return "http"
}

// hierarchical returns whether an account has a hierarchical namespace.
func (c Config) hierarchical() func(string) bool {
	if c.HierarchicalNamespace {
		return func(string) bool { return true }
	}
	set := map[string]bool{}
	for _, n := range c.HierarchicalAccounts {
		set[n] = true
	}
	return func(acct string) bool { return set[acct] }
}

// AccountName is the first configured account (the dev account by default).
func (c Config) AccountName() string {
	if len(c.Accounts) == 0 {
		return DevAccount
	}
	return c.Accounts[0].Name
}

// EventsConfig configures blob event subscriptions (internal/events,
// docs/events.md).
type EventsConfig struct {
	// SubscriptionsFile is the contents of --event-subscriptions (JSON,
	// events.ParseSubscriptions); nil: none.
	SubscriptionsFile []byte
	// Webhooks are --event-webhook URLs: every blob event of every
	// account, Event Grid schema.
	Webhooks []string
	// Subscriptions are subscriptions given directly (tests).
	Subscriptions []events.Subscription
	// NoWake leaves delivery to the poll alone: writes do not wake the
	// deliverer (for measuring the difference).
	NoWake bool
	// Poll, Retry and LeaseTTL: events.Config (zero: its defaults).
	Poll     time.Duration
	Retry    []time.Duration
	LeaseTTL time.Duration
}

// changeFeedMark, as a last field of an account in ParseAccounts'
// syntax (before or after hnsMark), turns the account's blob change feed
// on, as the account setting does on Azure. It is no base64 key (its
// length is not a multiple of four).
const changeFeedMark = "changefeed"

// accountMarks strips the marks (hnsMark, changeFeedMark, versioningMark,
// immutabilityMark) that end the
// fields of one account in ParseAccounts' syntax and returns the fields
// left and the marks found. Marks follow at least a name and a key.
func accountMarks(fields []string) ([]string, map[string]bool) {
	marks := map[string]bool{}
	for len(fields) >= 3 {
		last := fields[len(fields)-1]
		if (last != hnsMark && last != changeFeedMark && last != versioningMark && last != immutabilityMark) || marks[last] {
			break
		}
		marks[last] = true
		fields = fields[:len(fields)-1]
	}
	return fields, marks
}

// markedAccounts returns the accounts of s (ParseAccounts' syntax)
// carrying mark.
func markedAccounts(s, mark string) []string {
	var out []string
	for _, item := range strings.Split(s, ";") {
		fields, marks := accountMarks(strings.Split(strings.TrimSpace(item), ":"))
		if marks[mark] {
			out = append(out, fields[0])
		}
	}
	return out
}

// immutabilityMark, as a last field of an account in ParseAccounts'
// syntax (marks in any order), gives every container of the account
// version-level immutability support, as enabling it on a storage account
// does on Azure ("Configure immutability policies for blob versions").
// It needs the account's blob versioning, which Azure requires for it.
const immutabilityMark = "immutability"

// versioningMark, as a last field of an account in ParseAccounts' syntax
// (before or after the hns mark), turns blob versioning on for the
// account, as Azure's account setting IsVersioningEnabled does. Like
// hnsMark it is no base64 key.
const versioningMark = "versioning"

// ImmutabilityAccounts returns the accounts of s (ParseAccounts' syntax)
// marked with a trailing field "immutability".
func ImmutabilityAccounts(s string) []string { return markedAccounts(s, immutabilityMark) }

// VersioningAccounts returns the accounts of s (ParseAccounts' syntax)
// marked with a trailing field "versioning".
func VersioningAccounts(s string) []string { return markedAccounts(s, versioningMark) }

// ChangeFeedAccounts returns the accounts of s (ParseAccounts' syntax)
// marked with a field "changefeed".
func ChangeFeedAccounts(s string) []string { return markedAccounts(s, changeFeedMark) }
