package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
	"github.com/cerulean-storage/cerulean/internal/testenv"
)

// backendEnv selects the in-memory backend for the end-to-end tests:
// CERULEAN_TEST_BACKEND=memory (the switch of testenv too).
const backendEnv = testenv.BackendEnv

// backendConfig returns the store part of an app.Config: the embedded
// store in a temporary directory, or — when CERULEAN_TEST_POSTGRES is set —
// PostgreSQL in a fresh schema of that database, or — when
// CERULEAN_TEST_BACKEND=memory — the in-memory stores of --in-memory, so
// every end-to-end test runs unchanged on all three backends.
func backendConfig(t testing.TB) app.Config {
	t.Helper()
	switch b := os.Getenv(backendEnv); b {
	case "", "embedded", "postgres":
	case "memory":
		if os.Getenv(pgtest.EnvVar) != "" {
			t.Fatalf("%s=memory and %s exclude each other", backendEnv, pgtest.EnvVar)
		}
		return app.Config{InMemory: true}
	default:
		t.Fatalf("%s=%q: want memory, embedded or postgres", backendEnv, b)
	}
	cfg := app.Config{DataDir: t.TempDir(), NoSync: true}
	if os.Getenv(pgtest.EnvVar) != "" {
		dsn, _ := pgtest.Schema(t)
		cfg.Postgres = dsn
		cfg.PostgresMaxConns = 8
	}
	return cfg
}

// sharedStore reports whether the tests run on PostgreSQL, a store other
// processes may share: there the collector keeps a grace period, while on
// the embedded and in-memory stores it frees data at once
// (extent.TrackViews).
func sharedStore() bool { return os.Getenv(pgtest.EnvVar) != "" }

// startApp starts a server on backendConfig with the given service ports
// (0: a free port, -1: off) and a fake clock set to the real time (the
// SDKs sign with the real time and the server rejects more than 15
// minutes of skew), and closes it when the test ends.
func startApp(t testing.TB, blob, queue, table int) (*app.App, *clock.Fake) {
	t.Helper()
	return startApp4(t, blob, queue, table, -1)
}

// startApp4 is startApp with the File service port too.
func startApp4(t testing.TB, blob, queue, table, file int) (*app.App, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(time.Now())
	cfg := backendConfig(t)
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort = blob, queue, table, file
	cfg.Clock, cfg.GCEvery = clk, time.Hour
	a, err := app.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return a, clk
}
