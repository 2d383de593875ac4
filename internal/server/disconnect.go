package server

import (
	"context"
	"errors"
	"net"
	"syscall"
)

// clientGone reports whether err, returned by a handler, means the
// client went away: the request's context is canceled (net/http cancels
// it when the connection fails, a write to it included), or the error is
// a failed write to the connection (a reset or a broken pipe, caught
// before the cancellation is seen). Such a request is logged as a
// disconnect and not answered: an error rendered after a 200 and part of
// its body were sent would reach nobody, and is no fault of the server.
// A body that broke the progress rule (limits.go) is not a disconnect:
// the read deadline that cut it also makes net/http cancel the context,
// and the client, still there, is answered 500 OperationTimedOut.
// Before the answer has started (started false) a reset or broken pipe
// is not taken for the client's: it may be the store's own connection
// (PostgreSQL stopping under a request), and the client, still there,
// must get the 503 rather than an empty 200.
func clientGone(ctx context.Context, err error, started bool) bool {
	if errors.Is(err, errBodyStalled) {
		return false
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return true
	}
	if !started {
		return false
	}
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "write"
}
