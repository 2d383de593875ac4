package handle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/bolt"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
)

var bg = context.Background()

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// forEachStore runs fn on the embedded store and, when
// CERULEAN_TEST_POSTGRES is set, on PostgreSQL in a fresh schema.
func forEachStore(t *testing.T, fn func(t *testing.T, db kv.Store)) {
	t.Helper()
	t.Run("bolt", func(t *testing.T) {
		db, err := bolt.Open(filepath.Join(t.TempDir(), "meta.db"), bolt.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		fn(t, db)
	})
	if os.Getenv(pgtest.EnvVar) == "" {
		return
	}
	t.Run("postgres", func(t *testing.T) {
		dsn, _ := pgtest.Schema(t)
		ctx, cancel := context.WithTimeout(bg, 30*time.Second)
		defer cancel()
		db, err := postgres.Open(ctx, dsn, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		fn(t, db)
	})
}

// env bundles a store, a fake clock and helpers for one test.
type env struct {
	t   *testing.T
	db  kv.Store
	clk *clock.Fake
}

func newEnv(t *testing.T, db kv.Store) *env {
	return &env{t: t, db: db, clk: clock.NewFake(t0)}
}

func (e *env) now() time.Time { return e.clk.Now() }

// update runs fn in an Update and returns its error.
func (e *env) update(fn func(tx kv.Tx) error) error {
	return e.db.Update(bg, fn)
}

// must runs fn in an Update and fails the test on error.
func (e *env) must(fn func(tx kv.Tx) error) {
	e.t.Helper()
	if err := e.update(fn); err != nil {
		e.t.Fatal(err)
	}
}

// view runs fn in a View and fails the test on a store error.
func (e *env) view(fn func(tx kv.Tx) error) {
	e.t.Helper()
	if err := e.db.View(bg, fn); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) heartbeat(owner string, d time.Duration) {
	e.t.Helper()
	e.must(func(tx kv.Tx) error { return Heartbeat(tx, e.now(), owner, e.now().Add(d)) })
}

// open opens a handle and returns it or the error.
func (e *env) open(req OpenRequest) (Handle, error) {
	if req.Account == "" {
		req.Account = "acct"
	}
	if req.Share == "" {
		req.Share = "share"
	}
	if req.Owner == "" {
		req.Owner = "fe1"
	}
	if req.Path == "" {
		req.Path = "dir/" + req.FileID
	}
	var h Handle
	err := e.update(func(tx kv.Tx) error {
		var err error
		h, err = Open(tx, e.now(), req)
		return err
	})
	return h, err
}

func (e *env) mustOpen(req OpenRequest) Handle {
	e.t.Helper()
	h, err := e.open(req)
	if err != nil {
		e.t.Fatalf("open %+v: %v", req, err)
	}
	return h
}

func (e *env) close(fileID, handleID string) Result {
	e.t.Helper()
	var r Result
	e.must(func(tx kv.Tx) error {
		var err error
		r, err = Close(tx, e.now(), "acct", "share", fileID, handleID)
		return err
	})
	return r
}

func (e *env) checkREST(fileID, op string) error {
	e.t.Helper()
	var res error
	e.view(func(tx kv.Tx) error {
		res = CheckRESTOp(tx, e.now(), "acct", "share", fileID, op)
		if errors.Is(res, ErrInvalid) {
			e.t.Fatalf("CheckRESTOp(%s): %v", op, res)
		}
		return nil
	})
	return res
}

func (e *env) hasOpen(fileID string) bool {
	e.t.Helper()
	var ok bool
	e.view(func(tx kv.Tx) error {
		var err error
		ok, err = HasOpen(tx, e.now(), "acct", "share", fileID)
		return err
	})
	return ok
}

func (e *env) deletePending(fileID string) bool {
	e.t.Helper()
	var ok bool
	e.view(func(tx kv.Tx) error {
		var err error
		if ok, err = IsDeletePending(tx, "acct", "share", fileID); err != nil {
			return err
		}
		// The share's pending index, which listings read, agrees.
		set, err := DeletePendingIn(tx, "acct", "share")
		if err == nil && set[fileID] != ok {
			e.t.Errorf("pending index holds %s: %v; IsDeletePending: %v", fileID, set[fileID], ok)
		}
		return err
	})
	return ok
}

// listAll returns the live handles of the share, or of one file.
func (e *env) listAll(fileID string) []Handle {
	e.t.Helper()
	var out []Handle
	e.view(func(tx kv.Tx) error {
		keep := func(h Handle) bool { out = append(out, h); return true }
		if fileID != "" {
			return ListFile(tx, e.now(), "acct", "share", fileID, "", keep)
		}
		return List(tx, e.now(), "acct", "share", Position{}, keep)
	})
	return out
}

// countKeys counts the keys under a prefix tuple (for leak checks).
func (e *env) countKeys(parts ...string) int {
	e.t.Helper()
	n := 0
	p := kv.Key(parts...)
	e.view(func(tx kv.Tx) error {
		return tx.Scan(p, kv.PrefixEnd(p), 0, false, func(_, _ []byte) bool { n++; return true })
	})
	return n
}

// assertNoLeftovers checks that no handle, index or file state is left.
func (e *env) assertNoLeftovers() {
	e.t.Helper()
	for _, p := range []string{pfxHandle, pfxFile, pfxPending, pfxSession, pfxOwnerIx} {
		if n := e.countKeys(p); n != 0 {
			e.t.Errorf("%d keys left under %q", n, p)
		}
	}
}

func deletedIDs(r Result) []string {
	var out []string
	for _, f := range r.Delete {
		out = append(out, f.FileID)
	}
	return out
}

func handleIDs(hs []Handle) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.HandleID)
	}
	return out
}
