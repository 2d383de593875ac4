package blob

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/blobtags"
	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/policy"
	"github.com/cerulean-storage/cerulean/internal/reclaim"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// Service is the Blob service of one Cerulean process. It keeps no
// authoritative state in memory: any number of processes may share a store.
type Service struct {
	store kv.Store
	data  *extent.Store
	clock clock.Clock
	log   *slog.Logger
	// hns is the namespace of the hierarchical accounts (SetNamespace);
	// nil: every account is flat.
	hns *ns.Namespace
	// layouts are the flat and hierarchical name layouts (layoutOf).
	layouts layouts
	// reclaim removes deleted containers in the background
	// (container_reclaim.go).
	reclaim *reclaim.Reclaimer
	// props are the Blob Service Properties and Stats.
	props *svcprops.Service
	// feed reports the accounts with the change feed on (domain_changes.go).
	feed func(account string) bool
	// feedRetention is how long change log records are kept (0: for
	// ever; SetChangeFeedRetention).
	feedRetention time.Duration
	// versioning says which accounts keep blob versions
	// (domain_versions.go); nil: none.
	versioning func(account string) bool
	// logged: the accounts whose changes are logged for other readers
	// (event subscriptions) without the change feed (SetChangeLog).
	logged func(account string) bool
	// appended is told of each change log append (SetAppended); nil:
	// nobody listens.
	appended func(account string)
	// containerSD is the container delete retention in days per account
	// (domain_containersd.go); nil: off.
	containerSD func(account string) int
	// immutability says which accounts' containers support
	// version-level immutability (immutability.go); nil: none.
	immutability func(account string) bool
	// immutabilityDefault: the accounts' default version-level
	// policies (immutability.go).
	immutabilityDefault func(account string) *DefaultPolicy
}

// New returns the Blob service over store and chunks.
func New(store kv.Store, chunks chunk.Store, clk clock.Clock, log *slog.Logger) *Service {
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = slog.Default()
	}
	s := &Service{store: store, data: extent.New(store, chunks), clock: clk, log: log,
		props: svcprops.New(svcprops.Blob, store, servicePropsKey)}
	if w, ok := clk.(clock.Waller); ok {
		s.data.SetWall(w.Wall().Now) // clock control: chunk ages and pin leases stay real
	}
	s.reclaim = s.newReclaimer()
	s.setLayouts(nil, nil)
	return s
}

// Blob types.
const (
	BlockBlob  = "BlockBlob"
	PageBlob   = "PageBlob"
	AppendBlob = "AppendBlob"
)

// container is the stored record of a container.
type container struct {
	Created      time.Time         `json:"c"`
	Modified     time.Time         `json:"m"`
	ETag         string            `json:"e"`
	Meta         map[string]string `json:"md,omitempty"`
	Lease        lease.Lease       `json:"l"`
	PublicAccess string            `json:"pa,omitempty"` // "", "container", "blob"
	ACL          []SignedID        `json:"acl,omitempty"`
	// WORM is the container-level immutability policy and legal hold
	// (containerworm.go); nil: none.
	WORM *containerWORM `json:"w,omitempty"`
}

// SignedID is a stored access policy (one shape, with its
// stored and XML forms, for all four services).
type SignedID = policy.Stored

// HTTPHeaders are a blob's content properties, as Set Blob Properties
// names them ("blob HTTP headers"): its type, encoding, language,
// disposition, cache control and stored MD5.
type HTTPHeaders struct {
	ContentType        string `json:"ct,omitempty"`
	ContentEncoding    string `json:"ce,omitempty"`
	ContentLanguage    string `json:"cl,omitempty"`
	ContentDisposition string `json:"cd,omitempty"`
	CacheControl       string `json:"cc,omitempty"`
	ContentMD5         []byte `json:"md5,omitempty"`
}

// block is one committed block of a block blob: the next NParts parts of
// the blob's content.
type block struct {
	Name   string `json:"n"` // base64 id as sent
	Size   int64  `json:"s"`
	NParts int    `json:"p"`
}

// CopyInfo describes the last copy onto a blob (x-ms-copy-* on reads).
type CopyInfo struct {
	ID         string    `json:"id"`
	Source     string    `json:"src"`
	Status     string    `json:"st"`
	Progress   string    `json:"pr"`
	Completion time.Time `json:"ct"`
}

// blobRec is the stored record of a blob or of one of its snapshots.
type blobRec struct {
	Type     string            `json:"t"`
	Created  time.Time         `json:"c"`
	Modified time.Time         `json:"m"`
	ETag     string            `json:"e"`
	Size     int64             `json:"z"`
	Props    HTTPHeaders       `json:"p"`
	Meta     map[string]string `json:"md,omitempty"`
	Lease    lease.Lease       `json:"l"`
	Parts    []extent.Part     `json:"x,omitempty"`
	Blocks   []block           `json:"b,omitempty"`
	SeqNum   int64             `json:"sn,omitempty"`
	Appends  int               `json:"ab,omitempty"` // committed append blocks
	Sealed   bool              `json:"se,omitempty"`
	Copy     *CopyInfo         `json:"cp,omitempty"`
	// HasBlockList is true when the content was committed with Put Block
	// List (Get Block List then reports it); Put Blob leaves it false.
	HasBlockList bool `json:"hb,omitempty"`
	// Tier is a block blob's access tier when set explicitly (Set Blob
	// Tier, or x-ms-access-tier on the write); "" is the account default,
	// Hot, reported as inferred. TierChanged is when Set Blob Tier last
	// changed it.
	Tier        string     `json:"tr,omitempty"`
	TierChanged *time.Time `json:"tc,omitempty"`
	// Tags are the blob index tags (tags.go).
	Tags blobtags.Tags `json:"tg,omitempty"`
	// Del is set on soft-deleted records (stored under "bd", never "b").
	Del *deletion `json:"del,omitempty"`
	// CPK is the SHA-256 (base64) of the customer-provided key the
	// content is encrypted with; "" for none (cpk.go). The key itself
	// is never stored.
	CPK string `json:"k,omitempty"`
	// VersionID is the id of the version the record is (the base blob's
	// current version, or a previous version under "bv"); "" for a blob
	// written with versioning off (domain_versions.go).
	VersionID string `json:"v,omitempty"`
	// Imm is the version's time-based retention policy and Hold its
	// legal hold (immutability.go).
	Imm  *immPolicy `json:"im,omitempty"`
	Hold bool       `json:"lh,omitempty"`
	// prev is set on a previous version as read (findVersion), never
	// stored.
	prev bool
	// raw is the stored record b was decoded from, as the transaction
	// that read it returned it (findBlob): valid only inside that
	// transaction (kv.Tx), where putVersion stores it as it is.
	raw []byte
}

// uncommitted is a stored uncommitted block.
type uncommitted struct {
	Size  int64         `json:"s"`
	Parts []extent.Part `json:"x"`
	Seq   int64         `json:"q"`
	CPK   string        `json:"k,omitempty"` // the SHA-256 of its key (cpk.go)
}

// Keys. Every component is escaped by kv.Key, so a container's blobs form
// one contiguous range and the base blob ("" snapshot) sorts before its
// snapshots. ContainerKey, BlobKey and BlockKey are exported for the
// tests of the front end that damage stored records
// (blobrest/corrupt_test.go).

// ContainerKey is the key of container c's record.
func ContainerKey(acct, c string) []byte  { return kv.Key("c", acct, c) }
func containersPrefix(acct string) []byte { return kv.Key("c", acct) }

// BlobKey is the key of the record of blob name (snapshot snap, "" for
// the base blob) in container c.
func BlobKey(acct, c, name, snap string) []byte {
	return kv.Key("b", acct, c, name, snap)
}
func blobsPrefix(acct, c string) []byte              { return kv.Key("b", acct, c) }
func blobVersionsPrefix(acct, c, name string) []byte { return kv.Key("b", acct, c, name) }

// BlockKey is the key of uncommitted block id of blob name.
func BlockKey(acct, c, name, id string) []byte { return kv.Key("u", acct, c, name, id) }
func blocksPrefix(acct, c, name string) []byte { return kv.Key("u", acct, c, name) }
func servicePropsKey(acct string) []byte       { return kv.Key("sp", acct, "blob") }

// Soft-deleted blobs and snapshots live in their own range, "bd", with the
// tuple shape of "b", so reads and listings of live blobs never visit
// them; "bx" indexes them by expiry for the collector.
func deletedKey(acct, c, name, snap string) []byte {
	return kv.Key("bd", acct, c, name, snap)
}
func deletedPrefix(acct, c string) []byte               { return kv.Key("bd", acct, c) }
func deletedVersionsPrefix(acct, c, name string) []byte { return kv.Key("bd", acct, c, name) }
func expiryKey(due time.Time, acct, c, name, snap string) []byte {
	return kv.Key("bx", fmt.Sprintf("%020d", due.UnixNano()), acct, c, name, snap)
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newETag returns a quoted hex ETag derived from the write time plus random
// bits: unique for two writes in the same clock tick and never reused after
// delete and recreate.
func newETag(now time.Time) string {
	// Azure's ETags are 0x8D... (FILETIME ticks); ours keep that look.
	ticks := uint64(now.UnixNano()/100) + 116444736000000000
	return `"0x` + strconv.FormatUint(ticks, 16) + randHex(4) + `"`
}
