// Package copysrc is what a copy in one storage service reads from
// another service of the same server, below the HTTP line: Copy File and
// Put Range From URL read a blob, Copy Blob and the *FromURL blob writes
// read a file (what azcopy does between Blob and Files). Each service's
// domain hands the other a Reader for one object; the copy calls it
// inside its own transaction, so the destination shares the source's data
// items exactly as a copy inside one service does. Resolving and
// authorizing the source URL is the front ends' (internal/xcopy).
package copysrc

import (
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Object is what a copy takes from its source: content and the properties
// a copy carries over.
type Object struct {
	Size     int64
	Parts    []extent.Part
	ETag     string
	Created  time.Time
	Modified time.Time
	Meta     map[string]string
	Props    Props
	// Readable, when set, checks inside the same transaction that the
	// copy may read the n bytes at off (a range resolved against Size):
	// a file's SMB byte-range locks deny some ranges and not others.
	// Nil: every range is readable.
	Readable func(off, n int64) error
}

// Props are the HTTP properties a copy carries over. Blob and File keep
// them in structs of the same fields in the same order, so each converts
// its own to and from Props.
type Props struct {
	ContentType        string
	ContentEncoding    string
	ContentLanguage    string
	ContentDisposition string
	CacheControl       string
	ContentMD5         []byte
}

// Reader reads one source object inside tx, the copy's transaction, at
// the copy's time now. A missing or unreadable source is
// CannotVerifyCopySource (Failure) or the error a read of it gives.
type Reader func(tx kv.Tx, now time.Time) (*Object, error)

// Mapped is r with the errors of its read and of the object's Readable
// passed through f (a front end's mapping of a domain's refusals).
func (r Reader) Mapped(f func(error) error) Reader {
	return func(tx kv.Tx, now time.Time) (*Object, error) {
		o, err := r(tx, now)
		if err != nil {
			return nil, f(err)
		}
		if readable := o.Readable; readable != nil {
			o.Readable = func(off, n int64) error { return f(readable(off, n)) }
		}
		return o, nil
	}
}

// Failure is how a source that cannot be read is reported:
// CannotVerifyCopySource with the status a read of the source got, and
// that status and error code as details (Azure/azure-sdk-for-net#48992, a
// 401 CannotVerifyCopySource with CopySourceStatusCode 401 and
// CopySourceErrorCode NoAuthenticationInformation).
func Failure(status int, code, msg string) *azerr.Error {
	return azerr.Newf(azerr.CannotVerifyCopySource, "%s", msg).WithStatus(status).
		With("CopySourceStatusCode", strconv.Itoa(status)).
		With("CopySourceErrorCode", code)
}

// AsFailure wraps an Azure error met while reading a copy source into
// Failure; other errors, and CannotVerifyCopySource itself, pass
// unchanged.
func AsFailure(err error) error {
	ae, ok := azerr.As(err)
	if !ok || ae.Code == azerr.CannotVerifyCopySource {
		return err
	}
	return Failure(ae.Status, ae.Code, ae.Message)
}

// FailureOf is Failure for the error code's own status and message.
func FailureOf(code string) *azerr.Error {
	e := azerr.New(code)
	return Failure(e.Status, code, e.Message)
}
