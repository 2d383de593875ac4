package handle

import (
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// List calls fn with the live handles of a share in key order (fileID,
// then handleID, bytewise), starting strictly after the position after
// (the zero Position: from the first); fn returns false to stop.
//
// For REST List Handles with maxresults n, a caller stops when fn is
// called for the (n+1)th handle it keeps, and returns the Position of the
// nth as NextMarker (EncodeMarker); the next page lists after it. Handles
// of other files can be skipped inside fn (a directory listing keeps the
// fileIDs under the directory).
func List(tx kv.Tx, now time.Time, acct, share string, after Position, fn func(Handle) bool) error {
	prefix := kv.Key(pfxHandle, acct, share)
	start := prefix
	if after != (Position{}) {
		start = resumeKey(acct, share, after.FileID, after.HandleID)
	}
	return listHandles(tx, now, start, kv.PrefixEnd(prefix), fn)
}

// ListFile is List restricted to one file, starting after the handle id
// afterHandleID ("": from the first).
func ListFile(tx kv.Tx, now time.Time, acct, share, fileID, afterHandleID string, fn func(Handle) bool) error {
	prefix := filePrefix(acct, share, fileID)
	start := prefix
	if afterHandleID != "" {
		start = resumeKey(acct, share, fileID, afterHandleID)
	}
	return listHandles(tx, now, start, kv.PrefixEnd(prefix), fn)
}

// resumeKey is the first key after the handle key of (fileID, handleID);
// with handleID "", the first key of fileID's handles.
func resumeKey(acct, share, fileID, handleID string) []byte {
	return after(handleKey(acct, share, fileID, handleID))
}

func listHandles(tx kv.Tx, now time.Time, start, end []byte, fn func(Handle) bool) error {
	lv := newLiveness(tx, now)
	return scanRange(tx, start, end, func(k, v []byte) (bool, error) {
		s, err := decodeHandle(k, v)
		if err != nil {
			return false, err
		}
		ok, err := lv.alive(s)
		if err != nil || !ok {
			return err == nil, err
		}
		return fn(s.Handle), nil
	})
}

// ErrBadMarker is returned (wrapped) by DecodeMarker.
var ErrBadMarker = errors.New("handle: invalid marker")

// EncodeMarker renders a listing position as an opaque URL-safe marker
// (List Handles NextMarker).
func EncodeMarker(p Position) string {
	return base64.RawURLEncoding.EncodeToString(kv.Key(p.FileID, p.HandleID))
}

// DecodeMarker parses a marker made by EncodeMarker; "" is the zero
// Position. Anything else is an error wrapping ErrBadMarker (400
// OutOfRangeInput / InvalidQueryParameterValue for the REST service).
func DecodeMarker(s string) (Position, error) {
	if s == "" {
		return Position{}, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Position{}, fmt.Errorf("%w: %v", ErrBadMarker, err)
	}
	parts, ok := kv.Split(b)
	if !ok || len(parts) != 2 || parts[0] == "" {
		return Position{}, fmt.Errorf("%w: %q", ErrBadMarker, s)
	}
	return Position{FileID: parts[0], HandleID: parts[1]}, nil
}
