package server

import (
	"time"
)

// Resource limits of the HTTP listeners (docs/security.md lists them with
// the flags that change them). A connection is held by a client for as
// long as it sends; these bound how long a client that sends nothing, or
// next to nothing, can hold one, and how many connections all clients
// together can hold.
const (
	// DefaultMaxConns is the default cap on open connections across all
	// the HTTP listeners of a server (Blob, Queue, Table, File, dfs).
	DefaultMaxConns = 4096
	// DefaultHeaderTimeout bounds the time to read a request's headers.
	DefaultHeaderTimeout = 30 * time.Second
	// DefaultBodyWindow and DefaultBodyMinBytes are the progress rule of
	// request bodies: while a handler waits for body bytes, every window
	// of DefaultBodyWindow spent waiting must bring DefaultBodyMinBytes,
	// or the request fails with 500 OperationTimedOut and the connection
	// is closed. Azure allows writes "10 minutes per megabyte" on average
	// (Setting timeouts for Blob service operations), about 1.7 KiB/s;
	// 64 KiB per minute is about 1.1 KiB/s, so no body Azure accepts is
	// cut here, while one trickled at a few bytes a second is.
	DefaultBodyWindow   = time.Minute
	DefaultBodyMinBytes = 64 << 10
	// maxRefusing bounds the goroutines answering refused connections
	// (each lingers at most refuseLinger); past it a refused connection
	// gets the answer written at once, without the linger, and is closed.
	maxRefusing = 1024
	// refuseLinger is how long a refused connection is drained after its
	// answer, so the client's unread request does not turn the close into
	// a reset that loses the answer.
	refuseLinger = time.Second
)

// Limits are the resource limits of the HTTP listeners. Zero values take
// the defaults above; a negative MaxConns or BodyWindow turns that limit
// off.
type Limits struct {
	// MaxConns caps the open connections across all listeners of the
	// Server. Past it a new connection is accepted, answered 503
	// ServerBusy and closed, instead of waiting in the kernel's backlog.
	MaxConns int
	// HeaderTimeout bounds the reading of a request line and headers
	// (http.Server.ReadHeaderTimeout).
	HeaderTimeout time.Duration
	// BodyWindow and BodyMinBytes are the progress rule of request
	// bodies (see DefaultBodyWindow).
	BodyWindow   time.Duration
	BodyMinBytes int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxConns == 0 {
		l.MaxConns = DefaultMaxConns
	}
	if l.HeaderTimeout <= 0 {
		l.HeaderTimeout = DefaultHeaderTimeout
	}
	if l.BodyWindow == 0 {
		l.BodyWindow = DefaultBodyWindow
	}
	if l.BodyMinBytes <= 0 {
		l.BodyMinBytes = DefaultBodyMinBytes
	}
	return l
}
