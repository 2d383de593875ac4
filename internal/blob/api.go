// The exported types the operations share: references (BlobRef,
// ContainerRef, PathRef), the access conditions (Access, TagCondition,
// Call), and the inputs and outputs that more than one operation, or the
// namespace below them, reads. An operation's own input and output stay
// beside it in its domain_*.go or hns_dfs*.go file.

package blob

import (
	"io"
	"time"

	"github.com/cerulean-storage/cerulean/internal/blobtags"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/copysrc"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// WORMUpdate is one entry of a policy's update history (ARM's
// UpdateHistoryProperty).
type WORMUpdate struct {
	Update                                string    `json:"update"` // put, lock, extend
	ImmutabilityPeriodSinceCreationInDays int       `json:"immutabilityPeriodSinceCreationInDays"`
	Timestamp                             time.Time `json:"timestamp"`
	AllowProtectedAppendWrites            bool      `json:"allowProtectedAppendWrites"`
	AllowProtectedAppendWritesAll         bool      `json:"allowProtectedAppendWritesAll"`
}

// CPK is the customer-provided key of a request: its SHA-256 (base64, as
// sent and stored) and the cipher for the request's content.
type CPK struct {
	SHA    string
	Cipher *extent.Cipher
}

// Call is what every domain input carries besides its own fields.
type Call struct {
	// Now is the operation's time, from the injected clock; zero: the
	// service reads its clock. The REST handlers pass the time the
	// request arrived (server.Request.Now), which is also the response's
	// Date, so that Date and Last-Modified agree as they do on Azure.
	Now time.Time
	// Caller is the bearer principal acting, whose access the ACLs of a
	// hierarchical account's paths decide; nil is a superuser (Shared
	// Key, SAS, and every domain caller that is not a request). Flat
	// accounts do not consult it.
	Caller *acl.Principal
	// CPK is the customer-provided key of the call (nil: none): the
	// content written is encrypted with it, and a blob written with one
	// is read and changed only with it (cpk.go).
	CPK *CPK
	// RequestID and ClientRequestID are the request's x-ms-request-id and
	// x-ms-client-request-id, which the change feed records.
	RequestID, ClientRequestID string
}

// TagCondition is a parsed blob-tags condition ("x-ms-if-tags" on REST,
// Specifying conditional headers for Blob service operations). A
// condition that did not parse keeps its error, which the operation
// returns where it evaluates the condition, after the blob is found, as
// Azure answers a missing blob before a malformed condition.
type TagCondition struct {
	expr *blobtags.Expr
	err  error
}

// Access are the conditions an operation is made under: the HTTP-style
// conditions on ETag and modification time, the tags condition, and the
// lease id the caller holds ("" for none).
type Access struct {
	Cond    cond.Conditions
	IfTags  TagCondition
	LeaseID string
	// Tier is Delete Blob's access-tier conditions (TierCondition); the
	// other operations leave it empty.
	Tier TierCondition
	// CondErr is a set of conditions that did not parse, for the reads
	// that report it only once the blob is found (see checkRead).
	CondErr error
}

// BlobRef addresses a blob, or one of its snapshots, in an account.
type BlobRef struct {
	Account   string
	Container string
	Blob      string
	Snapshot  string // "" for the base blob
	// VersionID addresses a version of the blob (versionid=; "" for
	// none), domain_versions.go.
	VersionID string
}

// Checksums are the transactional digests sent with content (Content-MD5
// and x-ms-content-crc64 on REST): each, when set, must match the
// content received (extent.Staged.CheckDigests: 400 Md5Mismatch or
// Crc64Mismatch, naming both values).
type Checksums = extent.Digests

// PutBlockListOutput is the blob Put Block List committed.
type PutBlockListOutput struct {
	// VersionID is the version the write made current ("" with
	// versioning off): x-ms-version-id.
	VersionID       string
	ETag            string
	LastModified    time.Time
	ServerEncrypted bool
}

// PutBlobOutput is the blob Put Blob wrote.
type PutBlobOutput struct {
	// VersionID is the version the write made current ("" with
	// versioning off): x-ms-version-id.
	VersionID    string
	ETag         string
	LastModified time.Time
	// The digests of a block blob's content, computed as it was stored.
	ContentMD5   []byte
	ContentCRC64 []byte
	// ServerEncrypted is whether the content is encrypted at rest, as
	// Azure always reports it.
	ServerEncrypted bool
}

// DeleteSnapshots says what Delete Blob does with a blob's snapshots.
type DeleteSnapshots string

// DeleteBlobInput is Delete Blob of a blob or a snapshot.
type DeleteBlobInput struct {
	Call
	Ref             BlobRef
	Access          Access
	DeleteSnapshots DeleteSnapshots // for a base blob only
	// Permanent removes a soft-deleted snapshot for good (deletetype=permanent).
	Permanent bool
}

// DeleteBlobOutput says how Delete Blob deleted.
type DeleteBlobOutput struct {
	// SoftDeleted is true when the account's DeleteRetentionPolicy kept
	// what was deleted as soft-deleted records (see softdelete.go).
	SoftDeleted bool
}

// DeleteSnapshots values (x-ms-delete-snapshots on REST).
const (
	DeleteSnapshotsNone    DeleteSnapshots = ""        // refuse a blob with snapshots
	DeleteSnapshotsInclude DeleteSnapshots = "include" // the blob and its snapshots
	DeleteSnapshotsOnly    DeleteSnapshots = "only"    // the snapshots, not the blob
)

// LeaseBlobInput is Lease Blob: one lease action (lease.Request, whose
// LeaseID is the lease the action names) under the conditions of Access
// (its LeaseID is not used).
type LeaseBlobInput struct {
	Call
	Ref     BlobRef
	Access  Access
	Request lease.Request
}

// LeaseBlobOutput is the outcome of the lease action and the blob's
// ETag and Last-Modified, which a lease action does not change.
type LeaseBlobOutput struct {
	ETag         string
	LastModified time.Time
	Result       lease.Result
}

// SnapshotBlobInput is Snapshot Blob: Metadata, when not empty, is the
// snapshot's instead of the blob's. Access.LeaseID, when set, must be
// the blob's active lease; an active lease does not otherwise prevent a
// snapshot.
type SnapshotBlobInput struct {
	Call
	Ref      BlobRef
	Access   Access
	Metadata map[string]string
}

// SnapshotBlobOutput is the snapshot taken: its time (the snapshot
// parameter that addresses it) and the ETag and Last-Modified of the
// blob it was taken from. ServerEncrypted is false: the snapshot writes
// no content.
type SnapshotBlobOutput struct {
	// VersionID is the version the write made current ("" with
	// versioning off): x-ms-version-id.
	VersionID       string
	Snapshot        string
	ETag            string
	LastModified    time.Time
	ServerEncrypted bool
}

// ContainerRef addresses a container in an account.
type ContainerRef struct {
	Account   string
	Container string
}

// CopySource is what Copy Blob reads: a blob or snapshot served here
// (Blob), possibly of another account, or a file of the File service,
// which the REST handler resolves through the file peer (file).
// Authorizing the source is the caller's: the domain call reads it.
type CopySource struct {
	Blob BlobRef
	// URL is the source as the caller named it, recorded as the blob's
	// copy source (x-ms-copy-source on reads).
	URL string
	// Cond are the conditions on the source (x-ms-source-if-* on REST)
	// and LeaseID the lease the caller holds on it ("" for none).
	Cond    cond.Conditions
	LeaseID string
	// File, set for a file of the File service (which the REST handler
	// resolves through the file peer), reads it inside the copy's
	// transaction; nil for a blob.
	File copysrc.Reader
}

// ListBlobsInclude are the records a listing includes besides the live
// base blobs.
type ListBlobsInclude struct {
	Snapshots        bool
	Deleted          bool // soft-deleted blobs (and snapshots) still retained
	UncommittedBlobs bool // blobs with uncommitted blocks only
	// Versions lists the previous versions of each blob, oldest first,
	// after its snapshots and before its current version
	// (domain_versions.go).
	Versions bool
	// DeletedWithVersions lists once each name that has versions and no
	// current version (HasVersionsOnly).
	DeletedWithVersions bool
}

// ListBlobsInput is List Blobs: one page of at most MaxResults entries
// of the blobs whose names start with Prefix, names containing Delimiter
// after the prefix folded into one prefix entry each, from Marker (the
// NextMarker of the previous page; "" for the first).
type ListBlobsInput struct {
	Call
	Ref       ContainerRef
	Prefix    string
	Delimiter string
	Marker    string
	// StartFrom is startFrom: list only names from this one on
	// (inclusive); "" for all. It bounds every page, so a client may send
	// it with each marker or with the first page only.
	StartFrom  string
	MaxResults int
	Include    ListBlobsInclude
	// ShowOnly is showonly of a hierarchical account's listing
	// ("deleted", "directories", "files"; "" for all), which the
	// datalake SDKs' ListDeletedPaths and ListDirectoryPaths send. A flat
	// account's listing does not consult it.
	ShowOnly string
}

// UndeleteBlobInput is Undelete Blob of the base blob Ref.
type UndeleteBlobInput struct {
	Call
	Ref BlobRef
	// DeletionID is the deletion id of x-ms-undelete-source
	// ("?deletionid={id}", which the C++ datalake SDK's UndeletePath
	// sends to the Blob endpoint): on a hierarchical account it restores
	// that soft-deleted path (UndeletePath).
	DeletionID string
}

// GetBlobTagsInput is Get Blob Tags of a blob or snapshot. LeaseID, when
// set, must be the base blob's active lease.
type GetBlobTagsInput struct {
	Call
	Ref     BlobRef
	LeaseID string
	IfTags  TagCondition
	// BlobCond is the x-ms-blob-if-* conditions (tagcond.go).
	BlobCond cond.Conditions
}

// SetBlobTagsInput is Set Blob Tags: Tags replace every tag of the base
// blob Ref (none: no tags). A leased blob needs its LeaseID.
type SetBlobTagsInput struct {
	Call
	Ref     BlobRef
	LeaseID string
	IfTags  TagCondition
	Tags    blobtags.Tags
	// BlobCond is the x-ms-blob-if-* conditions (tagcond.go).
	BlobCond cond.Conditions
}

// SetBlobTierInput is Set Blob Tier of a block blob or one of its
// snapshots: Tier is Hot, Cool, Cold or Archive (any case). A leased
// base blob needs its LeaseID.
type SetBlobTierInput struct {
	Call
	Ref     BlobRef
	LeaseID string
	Tier    string
}

// SetBlobTierOutput says whether the change is a rehydration from
// Archive (which Azure answers 202 Accepted; it completes at once here).
type SetBlobTierOutput struct {
	Rehydrating bool
}

// FindBlobsByTagsInput is Find Blobs by Tags: the base blobs whose tags
// match Where, in the account or, when Container is set, in that
// container; one page of at most MaxResults from Marker (the previous
// page's NextMarker, "" for the first).
type FindBlobsByTagsInput struct {
	Call
	Account    string
	Container  string
	Where      *blobtags.Expr
	Marker     string
	MaxResults int
}

// TaggedBlob is a blob Find Blobs by Tags found, with all its tags.
type TaggedBlob struct {
	Container, Name string
	Tags            blobtags.Tags
}

// FindBlobsByTagsOutput is one page of matches; NextMarker is "" on the
// last.
type FindBlobsByTagsOutput struct {
	Items      []TaggedBlob
	NextMarker string
}

// PathProperties is what a path of a hierarchical account answers
// besides a blob's properties: x-ms-resource-type, x-ms-owner,
// x-ms-group, x-ms-permissions and x-ms-acl (the datalake SDKs read them
// from Get Blob Properties: azdatalake path GetProperties).
type PathProperties struct {
	Dir                       bool
	Owner, Group, Permissions string
	ACL                       string
	// Expiry is a file's expiry (x-ms-expiry-time; zero: none).
	Expiry time.Time
}

// PathRef names a path of a hierarchical account (who acts on it is the
// Call's Caller).
type PathRef struct {
	Account, Filesystem, Path string
}

func (p PathRef) fs() ns.FS { return ns.FS{Account: p.Account, Filesystem: p.Filesystem} }

// Immutability is what a write sets on the version it creates (Put
// Blob, Put Block List, Copy Blob): a policy when Until is set, a legal
// hold when Hold is.
type Immutability struct {
	Until time.Time
	Mode  string
	Hold  bool
}

// DefaultPolicy is an account's default version-level time-based
// retention policy (ARM's AccountImmutabilityPolicyProperties): Days from
// each version's write, Locked or Unlocked.
type DefaultPolicy struct {
	Days   int
	Locked bool
}

// TierCondition is Delete Blob's access-tier conditions (version
// 2026-04-06, "Delete Blob", x-ms-access-tier-if-modified-since and
// x-ms-access-tier-if-unmodified-since): the delete goes ahead only if
// the blob's access tier was (or was not) changed since the time. A
// tier never changed with Set Blob Tier dates from the blob's creation.
// A condition not met is 412 AccessTierChangeTimeConditionNotMet
// (azblob's recorded TestBlobDeleteAccessTierIfModifiedSinceFalse).
type TierCondition struct {
	ModifiedSince   *time.Time
	UnmodifiedSince *time.Time
}

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

// CopyInfo describes the last copy onto a blob (x-ms-copy-* on reads).
type CopyInfo struct {
	ID         string    `json:"id"`
	Source     string    `json:"src"`
	Status     string    `json:"st"`
	Progress   string    `json:"pr"`
	Completion time.Time `json:"ct"`
}

// NewBlob is what a write creating a whole blob (Put Blob, Put Block
// List, Put Blob From URL) says of it besides its content.
type NewBlob struct {
	HTTPHeaders HTTPHeaders
	Metadata    map[string]string
	Tier        string        // "" for the account default
	Tags        blobtags.Tags // blob index tags
	// Immutability is the policy and legal hold the write sets on the
	// version it makes (nil: none; immutability.go).
	Immutability *Immutability
}

// BlobProperties are what a read reports of a blob or snapshot (Get Blob
// Properties' response headers, and Get Blob's).
type BlobProperties struct {
	Type         string
	ETag         string
	LastModified time.Time
	CreationTime time.Time
	Size         int64
	HTTPHeaders  HTTPHeaders
	Metadata     map[string]string
	// Lease is the base blob's lease at the time of the read; a
	// snapshot's (HasLease false) is not reported.
	Lease    lease.Effective
	HasLease bool
	TagCount int
	// A block blob's access tier, whether it is the inferred default,
	// and when Set Blob Tier last changed it (nil: never).
	AccessTier         string
	AccessTierInferred bool
	AccessTierChanged  *time.Time
	// SmartAccessTier is the tier a Smart blob is in ("" otherwise).
	SmartAccessTier string
	// A page blob's sequence number.
	SequenceNumber int64
	// An append blob's committed block count and seal.
	CommittedBlockCount int
	Sealed              bool
	// The last copy onto the blob (nil: none).
	Copy *CopyInfo
	// ServerEncrypted is whether the content is encrypted at rest.
	ServerEncrypted bool
	// EncryptionKeySHA256 is the SHA-256 of the customer-provided key
	// the content is encrypted with ("": none; cpk.go).
	EncryptionKeySHA256 string
	// Path is set for a path of a hierarchical account.
	Path *PathProperties
	// VersionID is the version read ("" for a blob without one);
	// IsCurrentVersion whether it is the current version (reported on
	// an account with versioning on).
	VersionID        string
	IsCurrentVersion bool
	// ImmutabilityUntil and ImmutabilityMode are the version's
	// immutability policy (zero and "": none); LegalHold its legal hold
	// (immutability.go).
	ImmutabilityUntil time.Time
	ImmutabilityMode  string
	LegalHold         bool
}

// PutBlobInput is Put Blob: a whole blob of Type created or replaced at
// Ref (the base blob).
type PutBlobInput struct {
	Call
	Ref    BlobRef
	Type   string // BlockBlob, PageBlob or AppendBlob
	Access Access
	// CreateOnly refuses to replace an existing blob (403
	// AuthorizationPermissionMismatch): a caller allowed to create blobs
	// but not to write them.
	CreateOnly bool
	NewBlob
	// A block blob's content: Length bytes of Body (-1: until EOF),
	// checked against Checksums.
	Body      io.Reader
	Length    int64
	Checksums Checksums
	// A page blob's size (a multiple of 512) and sequence number.
	Size           int64
	SequenceNumber int64
	// CheckFirst applies the write rules (container, conditions, lease)
	// once before the body is read, so a refused write is answered
	// without it: the request sent Expect: 100-continue and its client
	// holds the body back until asked (server/expect.go). The rules are
	// applied again, authoritatively, in the write's transaction.
	CheckFirst bool
}

// PutBlockListInput is Put Block List: the blob Ref committed from
// Blocks, in order, each looked up among the uncommitted blocks, the
// committed ones, or both (wire.BlockKind).
type PutBlockListInput struct {
	Call
	Ref    BlobRef
	Access Access
	// CreateOnly refuses to replace an existing blob (see PutBlobInput).
	CreateOnly bool
	NewBlob
	Blocks []wire.BlockRef
}

// ListedBlob is one entry of a listing.
type ListedBlob struct {
	Name string
	// IsPrefix is a virtual directory (a BlobPrefix): only Name is set.
	IsPrefix bool
	// Uncommitted is a blob with uncommitted blocks only: only Name is set.
	Uncommitted bool
	Snapshot    string
	Properties  BlobProperties // the lease only for a live base blob
	Tags        blobtags.Tags
	// A soft-deleted blob or snapshot: when, and the whole days of
	// retention left.
	Deleted                bool
	DeletedTime            time.Time
	RemainingRetentionDays int
	// DeletionID names a soft-deleted path of a hierarchical account (the
	// id Path Undelete takes in x-ms-undelete-source).
	DeletionID string
	// HasVersionsOnly is a name with versions and no current version
	// (include=deletedwithversions); Properties are its latest version's.
	HasVersionsOnly bool
}

// ListBlobsOutput is one page of a listing; NextMarker is "" on the last.
type ListBlobsOutput struct {
	Items      []ListedBlob
	NextMarker string
}
