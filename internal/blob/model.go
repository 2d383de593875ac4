package blob

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/blobtags"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/copysrc"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
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

// block is one committed block of a block blob: the next NParts parts of
// the blob's content.
type block struct {
	Name   string `json:"n"` // base64 id as sent
	Size   int64  `json:"s"`
	NParts int    `json:"p"`
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

// Layout is how an account lays out the names of its blobs, chosen once
// per account (layoutOf): flat, where a blob's name is its key, or
// hierarchical (Data Lake Storage Gen2), where names resolve through the
// namespace tree of internal/hns/ns and a container is a filesystem. The
// Blob domain asks the account's layout for what differs between the two
// and keeps the rest to itself. internal/app wires the namespace
// (SetNamespace); the dfs endpoint (internal/datalake) only calls the
// domain's methods.
type Layout interface {
	// resolve reads the blob ref names as the Blob API shows it: a blob
	// record, or a file of the tree (with its PathProperties, its user
	// principal names filled in when upn) that c may access for want.
	resolve(tx kv.Tx, ref BlobRef, now time.Time, c ns.Caller, want acl.Perm, upn bool) (*blobRec, *PathProperties, error)
	// create is Put Blob: the blob, or the file with its missing
	// parents, created or replaced.
	create(ctx context.Context, in PutBlobInput) (PutBlobOutput, error)
	// replace is Put Block List's commit: the blob or file replaced by
	// the named blocks.
	replace(ctx context.Context, in PutBlockListInput) (PutBlockListOutput, error)
	// update reads the blob or file ref, checks the write rules (the
	// conditions, the lease, and the container-level WORM rule op,
	// containerworm.go), lets fn change it and writes it back, in a
	// transaction of its own; updateTx does the same in tx.
	update(ctx context.Context, ref BlobRef, a Access, op wormOp, c ns.Caller, now time.Time, fn func(tx kv.Tx, b *blobRec) error) (*blobRec, error)
	updateTx(tx kv.Tx, ref BlobRef, a Access, op wormOp, c ns.Caller, now time.Time, fn func(tx kv.Tx, b *blobRec) error) (*blobRec, error)
	// delete is Delete Blob.
	delete(ctx context.Context, in DeleteBlobInput) (DeleteBlobOutput, error)
	// checkReplace applies replace's write rules before the block list
	// is read (Expect: 100-continue, checkfirst.go).
	checkReplace(ctx context.Context, in PutBlockListInput) error
	// source reads ref as a copy's source (copySource): nil when there
	// is nothing to copy there.
	source(tx kv.Tx, ref BlobRef, now time.Time, c ns.Caller) (*blobRec, error)
	// list is List Blobs.
	list(ctx context.Context, in ListBlobsInput) (ListBlobsOutput, error)
	// pageBlobs is nil when page blobs may be written, else the
	// refusal (a hierarchical account keeps none).
	pageBlobs() error
	// containerCreated runs in the transaction that creates the
	// container ref.
	containerCreated(tx kv.Tx, ref ContainerRef) error
	// containerDeleted runs in the transaction that deletes the
	// container ref.
	containerDeleted(tx kv.Tx, ref ContainerRef) error
}

// flatLayout is the layout of an account without a hierarchical
// namespace: the Blob domain's own records. ns is the namespace of the
// process's hierarchical accounts (nil: there are none), kept for the
// tree a container may have from a time the account was hierarchical.
type flatLayout struct {
	s  *Service
	ns *ns.Namespace
}

// hierLayout is the layout of a hierarchical account: its names are
// paths of ns, whose nodes own a file's properties and lease while the
// Blob domain keeps its bytes (hns.go).
type hierLayout struct {
	s  *Service
	ns *ns.Namespace
}

// layouts are a service's two layouts, made once (layoutOf returns them
// without allocating: it is on every read's path).
type layouts struct {
	flat, hier Layout
	// isHier reports the hierarchical accounts (SetNamespace); nil:
	// none is.
	isHier func(account string) bool
}

// wormOp is a write the WORM rules tell apart.
type wormOp int

// wormPolicy is a container's time-based retention policy.
type wormPolicy struct {
	Days            int          `json:"d"`
	State           string       `json:"s"`
	AppendWrites    bool         `json:"a,omitempty"`
	AppendWritesAll bool         `json:"aa,omitempty"`
	ETag            string       `json:"e"`
	Extensions      int          `json:"x,omitempty"`
	History         []WORMUpdate `json:"hi,omitempty"`
	// Version marks a default version-level policy: one set on a
	// container with version-level immutability support, whose scope
	// is the versions written into it rather than the container (see
	// defaultPolicy).
	Version bool `json:"v,omitempty"`
}

// wormHold is a container's legal hold.
type wormHold struct {
	Tags            []string `json:"t,omitempty"`
	AppendWritesAll bool     `json:"aa,omitempty"`
}

// containerWORM is a container's policy and legal hold.
type containerWORM struct {
	Policy *wormPolicy `json:"p,omitempty"`
	Hold   *wormHold   `json:"h,omitempty"`
}

// sourceRecord is o, a file a copy reads, as the block blob the copy
// makes, and the check of the ranges it may read.
func sourceRecord(o *copysrc.Object) (*blobRec, func(off, n int64) error) {
	readable := o.Readable
	if readable == nil {
		readable = func(int64, int64) error { return nil }
	}
	return &blobRec{
		Type: BlockBlob, Created: o.Created, Modified: o.Modified, ETag: o.ETag, Size: o.Size, Meta: o.Meta,
		Parts: o.Parts, Props: HTTPHeaders(o.Props),
	}, readable
}

// pathRec is node as a blob record without content, and its path
// properties.
func pathRec(node *ns.Node) (*blobRec, *PathProperties) {
	b := &blobRec{Type: BlockBlob, Created: node.Created, Modified: node.Modified, ETag: node.ETag, Size: node.Size,
		Props: HTTPHeaders{ContentType: node.Props.Type, ContentEncoding: node.Props.Encoding, ContentLanguage: node.Props.Language,
			ContentDisposition: node.Props.Disposition, CacheControl: node.Props.CacheCtl, ContentMD5: node.Props.MD5},
		Meta: node.Metadata, Lease: node.Lease, Tags: node.Tags, CPK: node.CPK}
	b.Tier, b.TierChanged = node.Tier, node.TierChanged
	if a := node.Append; a != nil {
		b.Type, b.Appends, b.Sealed = AppendBlob, a.Blocks, a.Sealed
	}
	if c := node.Copy; c != nil {
		b.Copy = &CopyInfo{ID: c.ID, Source: c.Source, Status: c.Status, Progress: c.Progress, Completion: c.Completion}
	}
	if node.Dir {
		b.Meta = maps.Clone(node.Metadata)
		if b.Meta == nil {
			b.Meta = map[string]string{}
		}
		b.Meta["hdi_isfolder"] = "true"
	}
	return b, &PathProperties{Dir: node.Dir, Owner: node.Owner, Group: node.Group, Permissions: node.Permissions(), ACL: node.ACL.String(), Expiry: node.Expiry}
}

// pathSnapshot is a snapshot of a file: the file as a blob record (no
// lease: a snapshot has none) and its path properties then.
type pathSnapshot struct {
	Rec   blobRec `json:"b"`
	Owner string  `json:"o,omitempty"`
	Group string  `json:"g,omitempty"`
	ACL   string  `json:"a,omitempty"`
	Perms string  `json:"pm,omitempty"`
}

// immPolicy is a version's time-based retention policy.
type immPolicy struct {
	Until time.Time `json:"u"`
	Mode  string    `json:"m"` // PolicyUnlocked or PolicyLocked
}

// deletion records when a blob or snapshot was soft-deleted and when its
// retention ends. A later change of the policy does not move Expires.
type deletion struct {
	At      time.Time `json:"at"`
	Expires time.Time `json:"ex"`
}
