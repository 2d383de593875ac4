package ns

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// Key layout (all keys are kv.Key tuples; see docs/datalake.md):
//
//	("dlr", account, filesystem)   -> root directory Node of filesystem
//	("dln", account, parent, name) -> child Node
//	("dlg", account, id)           -> garbage record
//	("dlx", time, account, id)     -> the dln key of a file expiring at time
//	("dlt", account, key, value, id), ("dlu", account, id): tags.go
//
// parent and id are 16-byte random node ids, unique in the account. A
// child is found under its parent's id and its own name, never under its
// full path nor its filesystem, so moving a directory (within a
// filesystem or to another one of the account) rewrites one key whatever
// it holds.

// idLen is the size of a node id.
const idLen = 16

func newID() []byte {
	b := make([]byte, idLen)
	_, _ = rand.Read(b)
	return b
}

func rootKey(acct, fs string) []byte { return kv.Key("dlr", acct, fs) }

func childKey(acct string, parent []byte, name string) []byte {
	return kv.Key("dln", acct, string(parent), name)
}

func childrenPrefix(acct string, parent []byte) []byte {
	return kv.Key("dln", acct, string(parent))
}

func garbageKey(acct string, id []byte) []byte { return kv.Key("dlg", acct, string(id)) }

// expiryKey is the expiry index entry of file id of acct expiring at t:
// the time as 16 hex digits of Unix nanoseconds, so the index sorts by
// time and the collector reads it from the start up to its now.
func expiryKey(t time.Time, acct string, id []byte) []byte {
	ns := t.UnixNano()
	if ns < 0 {
		ns = 0
	}
	return kv.Key("dlx", fmt.Sprintf("%016x", ns), acct, string(id))
}

// indexExpiry records that the file n, whose entry is key, expires. The
// index is a hint: the collector acts on an entry only while key still
// holds a node with that id that is expired then, so an entry left behind
// by a rename, a replacement, a delete or a changed expiry is dropped
// without effect (and a rename or a new expiry writes its own entry).
func indexExpiry(tx kv.Tx, acct string, key []byte, n *Node) error {
	if n.Dir || n.Expiry.IsZero() {
		return nil
	}
	return tx.Put(expiryKey(n.Expiry, acct, n.ID), key)
}

// CopyState is a concluded copy's x-ms-copy-* properties.
type CopyState struct {
	ID         string    `json:"id"`
	Source     string    `json:"src"`
	Status     string    `json:"st"`
	Progress   string    `json:"pr"`
	Completion time.Time `json:"ct"`
}

// ContentProps are the content headers of a file (x-ms-content-type and
// the others of Path Create / Path Update).
type ContentProps struct {
	Type        string `json:"t,omitempty"`
	Encoding    string `json:"e,omitempty"`
	Language    string `json:"l,omitempty"`
	Disposition string `json:"d,omitempty"`
	CacheCtl    string `json:"c,omitempty"`
	MD5         []byte `json:"m,omitempty"`
}

// Node is a file or directory. Its record is stored in the entry that
// names it in its parent (or in the root key).
type Node struct {
	ID       []byte            `json:"i"`
	Dir      bool              `json:"d,omitempty"`
	ETag     string            `json:"e"`
	Created  time.Time         `json:"c"`
	Modified time.Time         `json:"m"`
	Metadata map[string]string `json:"md,omitempty"`
	Props    ContentProps      `json:"p"`
	// Size and Ref describe a file's content. Ref is opaque here: the Blob
	// layer owns what it refers to, and gets it back from the collector
	// when the file is gone.
	Size  int64  `json:"s,omitempty"`
	Ref   []byte `json:"r,omitempty"`
	Owner string `json:"o"`
	Group string `json:"g"`
	// ACL is the access ACL and, for directories, the default ACL, with
	// the sticky bit.
	ACL acl.ACL `json:"a"`
	// Expiry is a file's Set Expiry time (zero: none). Stored for the
	// endpoint, which enforces it.
	Expiry time.Time `json:"x,omitzero"`
	// Copy is the state of the copy that made this file (Copy Blob onto
	// a path: the x-ms-copy-* properties), nil when none did or when its
	// content or properties were written since.
	Copy *CopyState `json:"cp,omitempty"`
	// Tier is a file's access tier set with Set Blob Tier on the Blob
	// endpoint ("" : the account default, reported as inferred), and
	// TierChanged when it was set. The namespace only keeps them.
	Tier        string     `json:"tr,omitempty"`
	TierChanged *time.Time `json:"tc,omitempty"`
	// Lease is the path's lease (Path Lease, Lease Blob on the Blob
	// view, x-ms-lease-action of append and flush): the one lease of
	// the path, which every write and delete of it checks.
	Lease lease.Lease `json:"ls,omitzero"`
	// Tags are a file's blob index tags (Set Blob Tags, x-ms-tags on the
	// Blob view's writes), indexed for Find Blobs by Tags (tags.go).
	Tags map[string]string `json:"tg,omitempty"`
	// Up: the node has an up entry in the tag index (it is a tagged file
	// or a directory above one, tags.go), which a rename must move. Set
	// with the entry and never cleared while the node lives, so a rename
	// of a node on no tagged chain reads nothing more.
	Up bool `json:"up,omitempty"`
	// Append is a file's append blob state when the Blob API made it an
	// append blob (Put Blob with x-ms-blob-type: AppendBlob, a copy of
	// one); nil for every other file, which the Blob API shows as a
	// block blob. It is the one record of the file's blob type.
	Append *AppendState `json:"ap,omitempty"`
	// CPK is the SHA-256 (base64) of the customer-provided key the item
	// was written with (x-ms-encryption-key; "": none). The Blob layer
	// encrypts the file's content with the key and checks every later
	// request's key against this; the namespace only keeps it, so a
	// rename, which moves the node, keeps it.
	CPK string `json:"k,omitempty"`
}

// AppendState is what an append blob file has besides its content: the
// number of blocks appended (x-ms-blob-committed-block-count) and
// whether it is sealed (x-ms-blob-sealed). The namespace only keeps it.
type AppendState struct {
	Blocks int  `json:"n,omitempty"`
	Sealed bool `json:"s,omitempty"`
}

// Access returns n's ACL.
func (n *Node) Access() acl.ACL { return n.ACL }

func (n *Node) setACL(a acl.ACL) { n.ACL = a }

// Permissions is x-ms-permissions of n.
func (n *Node) Permissions() string { return n.Access().PermissionsString() }

// newETag returns a quoted ETag in Azure's 0x8D... look (FILETIME ticks
// of now) with random bits, so two writes in one clock tick differ.
func newETag(now time.Time) string {
	ticks := uint64(now.UnixNano()/100) + 116444736000000000
	r := make([]byte, 4)
	_, _ = rand.Read(r)
	return `"0x` + strconv.FormatUint(ticks, 16) + hex.EncodeToString(r) + `"`
}

// garbage is a detached node awaiting the collector: a directory whose
// remaining children are still keyed under ID, or a file whose content
// Ref must be handed back to the Blob layer.
type garbage struct {
	Dir bool   `json:"d,omitempty"`
	Ref []byte `json:"r,omitempty"`
}

// SplitPath splits a path into its components. Leading and trailing
// slashes are ignored ("/a/b/" is "a/b"); "" and "/" are the root (no
// components). Empty components ("a//b"), "." and ".." are invalid, as are
// components with characters kv keys or the ACL/continuation formats
// cannot carry unambiguously (NUL).
func SplitPath(p string) ([]string, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil, nil
	}
	parts := strings.Split(p, "/")
	for _, c := range parts {
		if c == "" || c == "." || c == ".." || strings.IndexByte(c, 0) >= 0 {
			return nil, withMessage(ErrInvalidPath, "The specified path %q is not a valid path.", p)
		}
	}
	return parts, nil
}

// DefaultMaxResults is List Paths' page size when maxResults is absent
// ("If omitted or greater than 5,000, the response will include up to
// 5,000 items", Path - List).
const DefaultMaxResults = 5000

// Expired reports whether n is a file whose expiry (Set Expiry, Path
// Create's x-ms-expiry-*) has passed at now. An expired file is gone for
// every operation (Lookup, Set, Modify, Delete, a rename's source: 404;
// List and ScanBlobs leave it out), and an item created or renamed onto
// its name replaces it as it would a live file, handing its content to
// the collector.
func (n *Node) Expired(now time.Time) bool {
	return !n.Dir && !n.Expiry.IsZero() && !now.Before(n.Expiry)
}
