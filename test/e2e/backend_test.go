package e2e

import (
	"os"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
)

// backendConfig returns the store part of an app.Config: the embedded
// store in a temporary directory, or — when CERULEAN_TEST_POSTGRES is set —
// PostgreSQL in a fresh schema of that database, so every end-to-end test
// runs unchanged on both backends.
func backendConfig(t testing.TB) app.Config {
	t.Helper()
	cfg := app.Config{DataDir: t.TempDir(), NoSync: true}
	if os.Getenv(pgtest.EnvVar) != "" {
		dsn, _ := pgtest.Schema(t)
		cfg.Postgres = dsn
		cfg.PostgresMaxConns = 8
	}
	return cfg
}
