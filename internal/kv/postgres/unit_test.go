package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Tests that need no database.

func TestClassify(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("ctx: %w", &pgconn.PgError{Code: code}) }
	cases := []struct {
		err   error
		dead  bool
		class errClass
	}{
		{pg("40001"), false, classConflict},
		{pg("40P01"), false, classConflict},
		{errRetry{pg("23505")}, false, classConflict},
		{pg("57P01"), true, classConn},
		{pg("08006"), false, classConn},
		{pg("53300"), false, classUnavailable},
		{pg("58030"), false, classUnavailable},
		{pg("54000"), false, classOther},
		{pg("42P01"), false, classOther},
		{pg("XX000"), true, classConn}, // any FATAL closes the connection
		{io.ErrUnexpectedEOF, false, classConn},
		{&net.OpError{Op: "read", Err: errors.New("reset")}, false, classConn},
		{errors.New("some client-side error"), false, classOther},
		{errors.New("some client-side error"), true, classConn},
	}
	for _, c := range cases {
		if got := classify(c.err, c.dead); got != c.class {
			t.Errorf("classify(%v, dead=%v) = %d, want %d", c.err, c.dead, got, c.class)
		}
	}
}

func TestWrap(t *testing.T) {
	cause := &pgconn.PgError{Code: "40001"}
	if err := wrap(context.Background(), cause, classConflict); !errors.Is(err, kv.ErrUnavailable) || !errors.As(err, new(*pgconn.PgError)) {
		t.Errorf("wrap(conflict) = %v", err)
	}
	if err := wrap(context.Background(), cause, classOther); errors.Is(err, kv.ErrUnavailable) {
		t.Errorf("wrap(other) = %v, must not be kv.ErrUnavailable", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := wrap(ctx, cause, classConn); !errors.Is(err, context.Canceled) || errors.Is(err, kv.ErrUnavailable) {
		t.Errorf("wrap with a done ctx = %v, want context.Canceled", err)
	}
}

func TestBackoff(t *testing.T) {
	for attempt := 1; attempt < 100; attempt++ {
		limit := min(retryBase<<min(attempt-1, 30), retryMax)
		for range 100 {
			if d := backoff(attempt); d <= 0 || d > limit {
				t.Fatalf("backoff(%d) = %v, want in (0, %v]", attempt, d, limit)
			}
		}
	}
}

func TestLoadMigrations(t *testing.T) {
	ms, err := loadMigrations(migrations)
	if err != nil || len(ms) == 0 || ms[0].version != 1 {
		t.Fatalf("embedded migrations: %v, %v", ms, err)
	}
	ms, err = loadMigrations(fstest.MapFS{
		"m/0010_c.sql": {Data: []byte("c")},
		"m/0002_b.sql": {Data: []byte("b")},
		"m/0001_a.sql": {Data: []byte("a")},
	})
	if err != nil || len(ms) != 3 || ms[0].sql != "a" || ms[1].version != 2 || ms[2].version != 10 {
		t.Fatalf("ordering: %+v, %v", ms, err)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"no number": {"x.sql": {}},
		"zero":      {"0000_x.sql": {}},
		"duplicate": {"1_a.sql": {}, "01_b.sql": {}},
	} {
		if _, err := loadMigrations(fsys); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestOpenUnreachable(t *testing.T) {
	// Open fails fast, wrapping kv.ErrUnavailable, when nothing listens.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := Open(ctx, "postgres://x@"+addr+"/x?sslmode=disable", Options{}); !errors.Is(err, kv.ErrUnavailable) {
		t.Fatalf("Open: %v, want kv.ErrUnavailable", err)
	}
	if _, err := Open(ctx, "postgres://x@"+addr+"/x?pool_max_conns=zero", Options{}); err == nil {
		t.Fatal("Open accepted pool_max_conns=zero")
	}
}
