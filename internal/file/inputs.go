package file

import (
	"strings"
	"unicode/utf8"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/copysrc"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// The typed values of the domain's inputs that the front ends build:
// copy sources and their SMB headers, CRC64 conditions, and the name
// rules, share markers and share-lease check both doors share.

// CopySource is the source of a Copy File or Put Range from URL, parsed
// and authorized by the front end before the transaction: a file of a
// share served here (Acct, Share, Comps, Snap), or a blob of this
// server's Blob service (Blob set).
type CopySource struct {
	// Raw is the x-ms-copy-source value, recorded as the copy's source.
	Raw string
	// Blob, when set, reads the source blob inside the writer's
	// transaction (the Blob domain's reader, resolved by the front end
	// through internal/xcopy).
	Blob copysrc.Reader
	// Acct is the source's account (the request's, or another served
	// here), Share its share.
	Acct, Share string
	// Path is the share-relative path, Comps the path split on "/".
	Path  string
	Comps []string
	// Snap is the share snapshot (?sharesnapshot=, normalized); "" for
	// the live share.
	Snap string
}

// CopySMB holds the SMB headers of Copy File (Copy File,
// https://learn.microsoft.com/en-us/rest/api/storageservices/copy-file,
// version 2019-07-07 and later); each property can be taken from the source.
type CopySMB struct {
	// Times are x-ms-file-creation-time, x-ms-file-last-write-time and
	// x-ms-file-change-time: "source", or a FileTime (default "now").
	Times          [3]CopyTime
	Attrs          *Attributes // x-ms-file-attributes; nil: default or source
	AttrsSource    bool        // x-ms-file-attributes: source
	SetArchive     bool        // x-ms-file-copy-set-archive
	IgnoreReadOnly bool        // x-ms-file-copy-ignore-readonly
	PermSource     bool        // x-ms-file-permission-copy-mode: source
	Perm           string      // x-ms-file-permission (SDDL); "" none or inherit
	PermKey        string      // x-ms-file-permission-key
}

// CopyTime is one time header of Copy File: the source's time, or a
// FileTime.
type CopyTime struct {
	Source bool
	Time   FileTime
}

// CRCConditions are the CRC64 headers of Put Range from URL, each 8 bytes
// (little endian, as azfile encodes them) or nil.
type CRCConditions struct {
	// Content is x-ms-source-content-crc64, IfMatch
	// x-ms-source-if-match-crc64, IfNoneMatch
	// x-ms-source-if-none-match-crc64.
	Content, IfMatch, IfNoneMatch []byte
}

// SourceError is a failure to read the source of a Put Range from URL:
// the REST front end reports it as the service reports source failures
// (CannotVerifyCopySource with the source's status and code).
type SourceError struct{ Err error }

func (e *SourceError) Error() string { return "reading the copy source: " + e.Err.Error() }
func (e *SourceError) Unwrap() error { return e.Err }

// ValidName checks one path component. A name that is not UTF-8 is 400
// InvalidResourceName, as the Blob service answers one (wire.ValidBlobName):
// it must not reach the store, whose JSON records would turn each bad
// byte into U+FFFD and so give different names the same file.
func ValidName(c string) error {
	if !utf8.ValidString(c) {
		return azerr.New(azerr.InvalidResourceName)
	}
	if c == "" || c == "." || c == ".." || len([]rune(c)) > MaxNameLen {
		return azerr.New(azerr.InvalidResourceName)
	}
	for _, ch := range c {
		if ch < 0x20 || ch == 0x7f || strings.ContainsRune(`"\/:|<>*?`, ch) {
			return azerr.New(azerr.InvalidResourceName)
		}
	}
	return nil
}

// shareMarker is the NextMarker of a listing that stops before the share
// (or snapshot) sh@snap: "/account/share" or "/account/share/snapshot".
// It is opaque to clients; parseShareMarker also takes a bare share name.
func shareMarker(acct, sh, snap string) string {
	m := "/" + acct + "/" + sh
	if snap != "" {
		m += "/" + snap
	}
	return m
}

func parseShareMarker(acct, m string) (sh, snap string) {
	m = strings.TrimPrefix(m, "/"+acct+"/")
	sh, snap, _ = strings.Cut(m, "/")
	return sh, snap
}

// shareLeaseRead applies the share lease to an operation it does not gate
// (only Delete Share is gated (Lease Share,
// https://learn.microsoft.com/en-us/rest/api/storageservices/lease-share, "a
// lock on a share for delete operations")): x-ms-lease-id is optional but
// must match when sent (412 LeaseIdMismatchWithShareOperation /
// LeaseNotPresentWithShareOperation), like containers (Lease Container,
// https://learn.microsoft.com/en-us/rest/api/storageservices/lease-container,
// and the legacy .NET client's container lease tests in
// Azure/azure-storage-net).
func shareLeaseRead(sh *Share, c *caller) error {
	return lease.CheckRead(sh.Lease, c.leaseID, lease.Share, c.at)
}

// checkNotBelow refuses to move directory id under dir: dir must be
// neither id nor one of its descendants (BySubtree).
func checkNotBelow(tx kv.Tx, acct, sh string, dir *Entry, id uint64) error {
	for cur := dir; ; {
		if cur.ID == id {
			return refused(BySubtree, "")
		}
		if cur.ID == RootID {
			return nil
		}
		next, err := loadByID(tx, acct, sh, "", cur.Parent)
		if err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		cur = next
	}
}

// BadHandleMarker is the error of a List Handles marker that does not
// decode.
func BadHandleMarker(m string) error {
	return azerr.Newf(azerr.InvalidQueryParameterValue, "The marker is not valid.").With("QueryParameterName", "marker").With("QueryParameterValue", m)
}
