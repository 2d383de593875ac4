package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// errClass sorts database failures by what the caller can do about them.
type errClass int

const (
	// classOther: a bug or a limit (syntax, value too large for an index
	// entry...). Returned as is, reported as 500 by the HTTP layer.
	classOther errClass = iota
	// classConflict: serialization failure or deadlock (SQLSTATE 40001,
	// 40P01). The transaction was rolled back; run it again.
	classConflict
	// classConn: the connection is gone (network error, server shutdown,
	// backend terminated). Whatever had not been committed was rolled back.
	classConn
	// classUnavailable: the server is up but cannot serve (out of
	// connections, disk full, I/O error, canceled statement).
	classUnavailable
)

// errRetry marks an error that fn of Do wants retried like a conflict.
type errRetry struct{ error }

func (e errRetry) Unwrap() error { return e.error }

// classify sorts err. dead reports whether the connection it happened on
// is closed now (pgx closes a connection on network errors and FATAL
// server errors).
func classify(err error, dead bool) errClass {
	var retry errRetry
	if errors.As(err, &retry) {
		return classConflict
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch code := pgErr.Code; {
		case code == "40001", code == "40P01":
			return classConflict
		case strings.HasPrefix(code, "08"), // connection exception
			code == "57P01", // admin_shutdown (also pg_terminate_backend)
			code == "57P02", // crash_shutdown
			code == "57P03": // cannot_connect_now (starting up)
			return classConn
		case strings.HasPrefix(code, "53"), // insufficient resources
			strings.HasPrefix(code, "57"), // operator intervention
			strings.HasPrefix(code, "58"), // system error (I/O)
			code == "40003":               // statement completion unknown (CockroachDB)
			return classUnavailable
		}
		if dead {
			return classConn // any other FATAL error
		}
		return classOther
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case dead,
		errors.As(err, &connectErr),
		errors.As(err, &netErr),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed):
		return classConn
	}
	return classOther
}

// wrap turns a database failure into the error the kv contract asks for:
// the context's error when ctx is done, kv.ErrUnavailable for faults of the
// database or the network, and err itself, annotated, for the rest.
func wrap(ctx context.Context, err error, class errClass) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("kv/postgres: %w (%v)", cerr, err)
	}
	switch class {
	case classConflict, classConn, classUnavailable:
		return fmt.Errorf("%w: postgres: %w", kv.ErrUnavailable, err)
	}
	return fmt.Errorf("kv/postgres: %w", err)
}

// isPgError reports whether the server itself reported err (as opposed to
// the network failing): then the statements after it in a pipeline were
// not executed.
func isPgError(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr)
}
