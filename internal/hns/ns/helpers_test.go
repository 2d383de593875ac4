package ns

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
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
	"github.com/cerulean-storage/cerulean/internal/testenv"
)

// backends opens every kv backend this package runs on: the embedded
// bbolt store and the in-memory store, and the in-memory store under
// kv.Twice (every Update function run twice, the first run discarded),
// which catches state changed outside the transaction; and PostgreSQL,
// whose serializable transactions conflict and retry for real, when
// $CERULEAN_TEST_POSTGRES names a database (scripts/with-postgres.sh).
func backends(t testing.TB) map[string]func(testing.TB) kv.Store {
	m := map[string]func(testing.TB) kv.Store{
		"bolt": func(t testing.TB) kv.Store {
			s, err := bolt.Open(filepath.Join(t.TempDir(), "meta.db"), bolt.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"mem": func(t testing.TB) kv.Store {
			s := mem.New()
			t.Cleanup(func() { s.Close() })
			return s
		},
		"mem-twice": func(t testing.TB) kv.Store {
			s := mem.New()
			t.Cleanup(func() { s.Close() })
			return kv.Twice(s)
		},
	}
	if os.Getenv(pgtest.EnvVar) != "" {
		m["postgres"] = func(t testing.TB) kv.Store {
			dsn, _ := pgtest.Schema(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, err := postgres.Open(ctx, dsn, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
	}
	return m
}

// env is one test's store, namespace, fake clock and filesystem.
type env struct {
	t     testing.TB
	store kv.Store
	ns    *Namespace
	clk   *clock.Fake
	fs    FS
}

// eachBackend runs fn once per backend with a fresh store holding one
// filesystem.
func eachBackend(t *testing.T, fn func(t *testing.T, e *env)) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, open(t))
			fn(t, e)
		})
	}
}

func newEnv(t testing.TB, s kv.Store) *env {
	clk := clock.NewFake(testenv.Epoch)
	e := &env{t: t, store: s, ns: New(clk), clk: clk, fs: FS{"devstoreaccount1", "fs1"}}
	e.update(func(tx kv.Tx) error {
		_, err := e.ns.CreateFilesystem(tx, e.fs, FilesystemInput{})
		return err
	})
	return e
}

func (e *env) update(fn func(tx kv.Tx) error) {
	e.t.Helper()
	if err := e.store.Update(context.Background(), fn); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) try(fn func(tx kv.Tx) error) error {
	return e.store.Update(context.Background(), fn)
}

func (e *env) view(fn func(tx kv.Tx) error) {
	e.t.Helper()
	if err := e.store.View(context.Background(), fn); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) mkdir(p string) *Node {
	e.t.Helper()
	var n *Node
	e.update(func(tx kv.Tx) error {
		out, err := e.ns.Create(tx, e.fs, CreateInput{Path: p, Dir: true, MakeParents: true})
		if err == nil {
			n = out.Node
		}
		return err
	})
	return n
}

func (e *env) mkfile(p string, ref string) *Node {
	e.t.Helper()
	var n *Node
	e.update(func(tx kv.Tx) error {
		out, err := e.ns.Create(tx, e.fs, CreateInput{Path: p, MakeParents: true, Ref: []byte(ref), Size: int64(len(ref))})
		if err == nil {
			n = out.Node
		}
		return err
	})
	return n
}

func (e *env) lookup(p string) (*Node, error) {
	var n *Node
	err := e.store.View(context.Background(), func(tx kv.Tx) error {
		var err error
		n, err = e.ns.Lookup(tx, e.fs, p, nil)
		return err
	})
	return n, err
}

func (e *env) exists(p string) bool {
	e.t.Helper()
	_, err := e.lookup(p)
	if err != nil && !errors.Is(err, ErrPathNotFound) {
		e.t.Fatal(err)
	}
	return err == nil
}

// listAll lists dir recursively in pages of max.
func (e *env) listAll(dir string, recursive bool, max int) []string {
	e.t.Helper()
	var out []string
	tok := ""
	for {
		var page *ListOutput
		e.view(func(tx kv.Tx) error {
			var err error
			page, err = e.ns.List(tx, e.fs, ListInput{Dir: dir, Recursive: recursive, MaxResults: max, Continuation: tok})
			return err
		})
		for _, p := range page.Paths {
			out = append(out, p.Path)
		}
		if page.Continuation == "" {
			return out
		}
		tok = page.Continuation
	}
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := Code(err); got != code {
		t.Fatalf("error %v: code %q, want %q", err, got, code)
	}
}

// reclaimTx is a Reclaim that counts each reference in the transaction
// itself, as the Blob layer releases content: a count kept outside tx
// would be wrong whenever the store runs an Update function twice.
func reclaimTx(tx kv.Tx, ref []byte) error {
	k := kv.Key("test-reclaimed", string(ref))
	n := 0
	if _, err := kv.GetJSON(tx, k, &n); err != nil {
		return err
	}
	return kv.PutJSON(tx, k, n+1)
}

// reclaimed returns the counts reclaimTx recorded.
func (e *env) reclaimed() map[string]int {
	e.t.Helper()
	out := map[string]int{}
	e.view(func(tx kv.Tx) error {
		p := kv.Key("test-reclaimed")
		var derr error
		err := tx.Scan(p, kv.PrefixEnd(p), 0, false, func(k, v []byte) bool {
			parts, _ := kv.Split(k)
			n := 0
			derr = kv.DecodeJSON(k, v, &n)
			out[parts[1]] = n
			return derr == nil
		})
		if err == nil {
			err = derr
		}
		return err
	})
	return out
}

// countKeys counts the keys under the prefix of component first.
func (e *env) countKeys(first string) int {
	n := 0
	e.view(func(tx kv.Tx) error {
		p := kv.Key(first)
		return tx.Scan(p, kv.PrefixEnd(p), 0, false, func(_, _ []byte) bool { n++; return true })
	})
	return n
}

// noKeys fails the test for every key left under the given first
// components (garbage, soft-deleted records, nodes...).
func (e *env) noKeys(t *testing.T, firsts ...string) {
	t.Helper()
	for _, f := range firsts {
		if n := e.countKeys(f); n != 0 {
			t.Errorf("%d %s keys left", n, f)
		}
	}
}
