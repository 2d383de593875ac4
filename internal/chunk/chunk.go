// Package chunk stores immutable byte chunks: the bodies of blob blocks,
// pages, append blocks and file ranges too large to live inline in a kv
// record.
//
// A chunk is written once and never modified. The write order that keeps
// metadata consistent is: Create, Write, Commit (the chunk is durable), then
// commit the kv transaction that references the chunk id. Chunks that no
// record references are deleted later by Sweep, never inside a request.
//
// Backends live beside this file (fs.go: one file per chunk on a local
// filesystem) and must pass the conformance suite in chunk/chunktest.
package chunk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// ErrNotFound is returned by Store.Open when the chunk does not exist (or is
// not committed yet). Callers test it with errors.Is.
var ErrNotFound = errors.New("chunk: not found")

// ErrClosed is returned by Writer methods after Commit or Abort.
var ErrClosed = errors.New("chunk: writer already committed or aborted")

// FullError is returned (possibly wrapped) by Writer.Write when a store
// with a size limit (the in-memory store of --in-memory mode) has no room
// for the bytes: they are not written, and the caller aborts the chunk.
type FullError struct {
	Limit int64 // the store's limit in bytes
}

func (e *FullError) Error() string {
	return fmt.Sprintf("chunk: size limit of %d bytes would be exceeded", e.Limit)
}

// Store holds immutable chunks addressed by opaque ids it generates itself.
// A Store is safe for concurrent use.
type Store interface {
	// Create starts a new chunk with a fresh random id. Write to it, then
	// Commit (durable: data and directory entry synced) or Abort (removes
	// it). The chunk is not visible to Open until committed, but Walk
	// reports it, so an abandoned chunk is eventually swept.
	Create(ctx context.Context) (Writer, error)
	// Open opens a committed chunk for reading. It returns an error
	// wrapping ErrNotFound if the chunk does not exist. Whether a Reader
	// keeps working after its chunk is removed is backend-specific (FS:
	// it does), so open a chunk before its reference can be dropped.
	Open(ctx context.Context, id string) (Reader, error)
	// Remove deletes a chunk, committed or not. Removing a missing chunk is
	// not an error. A Writer still open on a removed chunk fails to Commit.
	Remove(ctx context.Context, id string) error
	// Walk calls fn for every chunk, committed or not, with the time of its
	// last write, in no particular order. If fn returns an error Walk stops
	// and returns it. Chunks created or removed during the walk may or may
	// not be reported.
	Walk(ctx context.Context, fn func(id string, modTime time.Time) error) error
}

// Writer writes one new chunk. It is not safe for concurrent use. Exactly
// one of Commit or Abort ends it; Abort after a Commit (successful or not)
// is a no-op, so `defer w.Abort()` is the usual pattern.
type Writer interface {
	io.Writer
	// ID is the chunk's id, valid from Create on.
	ID() string
	// Size is the number of bytes written so far.
	Size() int64
	// Commit makes the chunk durable and visible to Open. On error the
	// chunk is removed (best effort) and must not be referenced.
	Commit() error
	// Abort discards the chunk.
	Abort() error
}

// Reader reads a committed chunk. ReadAt may be called concurrently.
type Reader interface {
	io.ReaderAt
	io.Closer
	// Size is the chunk's length in bytes.
	Size() int64
}
