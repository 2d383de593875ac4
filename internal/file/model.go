package file

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/policy"
	"github.com/cerulean-storage/cerulean/internal/reclaim"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Service is the File service of one Cerulean process. Like the other
// services it keeps no authoritative state in memory.
type Service struct {
	store kv.Store
	data  *extent.Store
	clock clock.Clock
	log   *slog.Logger
	// reclaimer, when set (SetReclaimer), purges deleted shares in the
	// background (domain_purge.go).
	reclaimer *reclaim.Reclaimer
	// props are the File Service Properties.
	props *svcprops.Service
}

// New returns the File service over store and chunks.
func New(store kv.Store, chunks chunk.Store, clk clock.Clock, log *slog.Logger) *Service {
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = slog.Default()
	}
	s := &Service{store: store, data: extent.NewClocked(store, chunks, clk), clock: clk, log: log,
		props: svcprops.New(svcprops.File, store, servicePropsKey)}
	return s
}

// Store returns the kv store (the SMB front end and tests open handles in
// it through package handle).
func (s *Service) Store() kv.Store { return s.store }

// Data returns the byte layer: the REST front end stages request bodies
// in it before the domain call that commits them, and opens response
// bodies from the parts a read returns.
func (s *Service) Data() *extent.Store { return s.data }

// Log returns the service's logger.
func (s *Service) Log() *slog.Logger { return s.log }

// Limits (Azure Files scale targets and naming rules,
// https://learn.microsoft.com/en-us/azure/storage/files/storage-files-scale-targets).
const (
	MaxFileSize     = 4 << 40 // 4 TiB
	MaxRangeWrite   = 4 << 20 // Put Range
	MaxNameLen      = 255     // one path component
	MaxPathLen      = 2048    // whole path
	MaxPathDepth    = 250     // subdirectories
	defaultQuotaGiB = 5120
	MaxQuotaGiB     = 102400
	maxShareSnaps   = 200
)

// Share is the stored record of a share or of one of its snapshots.
type Share struct {
	Created   time.Time         `json:"c"`
	Modified  time.Time         `json:"m"`
	ETag      string            `json:"e"`
	Quota     int               `json:"q"` // GiB
	Meta      map[string]string `json:"md,omitempty"`
	ACL       []signedID        `json:"acl,omitempty"`
	Lease     lease.Lease       `json:"l"`
	Tier      string            `json:"t,omitempty"`
	TierSince time.Time         `json:"ts,omitempty"`
	Protocols string            `json:"p,omitempty"` // "SMB" or "NFS"
	Squash    string            `json:"rs,omitempty"`
	DirLease  *bool             `json:"dl,omitempty"` // x-ms-enable-smb-directory-lease; nil: default (true)
	SnapVDir  *bool             `json:"sv,omitempty"` // x-ms-enable-snapshot-virtual-directory-access (NFS); nil: default (true)
}

// signedID is a stored access policy (one shape, with its
// stored and XML forms, for all four services).
type signedID = policy.Stored

// Props are a file's HTTP properties.
type Props struct {
	ContentType        string `json:"ct,omitempty"`
	ContentEncoding    string `json:"ce,omitempty"`
	ContentLanguage    string `json:"cl,omitempty"`
	ContentDisposition string `json:"cd,omitempty"`
	CacheControl       string `json:"cc,omitempty"`
	ContentMD5         []byte `json:"md5,omitempty"`
}

// SMBProps are the SMB (NTFS) properties of a file or directory.
type SMBProps struct {
	Attrs     Attributes `json:"a"`
	Created   time.Time  `json:"ct"`
	LastWrite time.Time  `json:"wt"`
	Changed   time.Time  `json:"ch"`
	PermKey   string     `json:"pk"`
	// LastAccess is the last access time an SMB client set (FileBasic
	// Information); zero (never set) reads as LastWrite. REST neither
	// shows nor changes it.
	LastAccess time.Time `json:"at,omitempty"`
}

// Accessed is the last access time: the one an SMB client set, otherwise
// the last write.
func (p *SMBProps) Accessed() time.Time {
	if p.LastAccess.IsZero() {
		return p.LastWrite
	}
	return p.LastAccess
}

// CopyInfo describes the last Copy File onto a file.
type CopyInfo struct {
	ID         string    `json:"id"`
	Source     string    `json:"src"`
	Status     string    `json:"st"`
	Progress   string    `json:"pr"`
	Completion time.Time `json:"ct"`
	Desc       string    `json:"d,omitempty"`
}

// Entry is the stored record of a directory or a file. Entries are keyed
// by their parent's file ID and their folded name, so listing a directory
// is one range scan and renaming a directory moves one key.
type Entry struct {
	Name     string            `json:"n"` // as created: names are case-preserving
	ID       uint64            `json:"id"`
	Parent   uint64            `json:"pi"`
	Dir      bool              `json:"d,omitempty"`
	Created  time.Time         `json:"c"` // creation of the record (not the SMB creation time)
	Modified time.Time         `json:"m"` // Last-Modified
	ETag     string            `json:"e"`
	SMB      SMBProps          `json:"s"`
	Meta     map[string]string `json:"md,omitempty"`
	// Files only.
	Size  int64         `json:"z,omitempty"`
	Props Props         `json:"p"`
	Parts []extent.Part `json:"x,omitempty"`
	Lease lease.Lease   `json:"l"`
	Copy  *CopyInfo     `json:"cp,omitempty"`
}

// loc is where an entry's record lives: its parent's ID and folded name.
type loc struct {
	Parent uint64 `json:"p"`
	Name   string `json:"n"` // folded
}

// RootID is the file ID of every share's root directory.
const RootID uint64 = 0

// Keys. Every component is escaped by kv.Key. snap is "" for the live
// share and the snapshot's timestamp (wire.FormatISO7) for a snapshot.
func shareKey(acct, sh, snap string) []byte { return kv.Key("fs", acct, sh, snap) }
func sharesPrefix(acct string) []byte       { return kv.Key("fs", acct) }
func shareVersionsPrefix(acct, sh string) []byte {
	return kv.Key("fs", acct, sh)
}
func entryKey(acct, sh, snap string, parent uint64, folded string) []byte {
	return kv.Key("fe", acct, sh, snap, idHex(parent), folded)
}
func childrenPrefix(acct, sh, snap string, parent uint64) []byte {
	return kv.Key("fe", acct, sh, snap, idHex(parent))
}
func entriesPrefix(acct, sh, snap string) []byte { return kv.Key("fe", acct, sh, snap) }
func idKey(acct, sh, snap string, id uint64) []byte {
	return kv.Key("fi", acct, sh, snap, idHex(id))
}
func idsPrefix(acct, sh, snap string) []byte { return kv.Key("fi", acct, sh, snap) }
func permKey(acct, sh, key string) []byte    { return kv.Key("fp", acct, sh, key) }
func permsPrefix(acct, sh string) []byte     { return kv.Key("fp", acct, sh) }
func servicePropsKey(acct string) []byte     { return kv.Key("sp", acct, "file") }

// rootKey is the key of a share's root directory record.
func rootKey(acct, sh, snap string) []byte { return entryKey(acct, sh, snap, RootID, "") }

func idHex(id uint64) string { return fmt.Sprintf("%016x", id) }

// fold is the key form of a name: Azure Files names are case-insensitive
// and case-preserving, like NTFS.
func fold(name string) string { return strings.ToUpper(name) }

// FormatID renders a file ID as Azure does (x-ms-file-id: decimal).
func FormatID(id uint64) string { return strconv.FormatUint(id, 10) }

// newID returns a random nonzero file ID.
func newID() uint64 {
	var b [8]byte
	for {
		_, _ = rand.Read(b[:])
		if id := binary.BigEndian.Uint64(b[:]); id != RootID {
			return id
		}
	}
}

// newETag returns a fresh ETag for a write at now.
func newETag(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return wire.NewETag(now, uint64(binary.BigEndian.Uint32(b[:])))
}

// Attributes are NTFS file attributes (MS-FSCC 2.6), the subset Azure Files
// accepts in x-ms-file-attributes (Set File Properties,
// https://learn.microsoft.com/en-us/rest/api/storageservices/set-file-properties,
// "File system attributes").
type Attributes uint32

// ShareOutput is the share (or snapshot) record an operation read or
// stored.
type ShareOutput struct {
	Share *Share
}

// Share protocols (x-ms-enabled-protocols).
const (
	ProtoSMB = "SMB"
	ProtoNFS = "NFS"
)
