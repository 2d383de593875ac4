// Package pgtest gives tests a fresh PostgreSQL schema of their own in the
// database named by $CERULEAN_TEST_POSTGRES (scripts/with-postgres.sh
// starts a private server and sets it).
//
// When the variable is unset, tests that need the database skip with a
// message saying how to run them. When it is set but the database cannot
// be reached, they fail: a CI run that meant to test PostgreSQL must not
// pass by skipping.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvVar names the environment variable holding the test database's DSN.
const EnvVar = "CERULEAN_TEST_POSTGRES"

// BaseDSN returns $CERULEAN_TEST_POSTGRES, or skips the test when it is
// unset.
func BaseDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(EnvVar)
	if dsn == "" {
		t.Skipf("%s is not set; run: bash scripts/with-postgres.sh go test ./internal/kv/postgres/... ./internal/chunk/sqlchunk/", EnvVar)
	}
	return dsn
}

// Admin returns a connection to the test database, closed at cleanup. It
// fails the test if the database cannot be reached.
func Admin(t testing.TB) *pgx.Conn {
	t.Helper()
	dsn := BaseDSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("%s is set but the database is unreachable: %v", EnvVar, err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// Schema creates an empty schema with a random name, dropped (with all its
// tables) at cleanup, and returns its name and a DSN whose connections use
// it as search_path and as application_name (so that a test can find the
// backends of its own store in pg_stat_activity).
func Schema(t testing.TB) (dsn, schema string) {
	t.Helper()
	admin := Admin(t)
	var b [6]byte
	rand.Read(b[:])
	schema = "cerulean_test_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("creating schema: %v", err)
	}
	t.Cleanup(func() {
		// Registered after Admin's cleanup, so it runs before it.
		if _, err := admin.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	dsn, err := WithParams(BaseDSN(t), map[string]string{"search_path": schema, "application_name": schema})
	if err != nil {
		t.Fatal(err)
	}
	return dsn, schema
}

// WithParams returns dsn (a URL or key=value DSN) with params set.
func WithParams(dsn string, params map[string]string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("pgtest: parsing %s: %w", EnvVar, err)
		}
		q := u.Query()
		for k, v := range params {
			if k == "host" {
				u.Host = v
				continue
			}
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	// key=value: later settings override earlier ones.
	var sb strings.Builder
	sb.WriteString(dsn)
	for k, v := range params {
		if k == "host" {
			h, p, ok := strings.Cut(v, ":")
			fmt.Fprintf(&sb, " host=%s", h)
			if ok {
				fmt.Fprintf(&sb, " port=%s", p)
			}
			continue
		}
		fmt.Fprintf(&sb, " %s='%s'", k, strings.ReplaceAll(v, "'", `\'`))
	}
	return sb.String(), nil
}

// Terminate kills the server backends whose application_name is name (see
// Schema) and returns how many there were.
func Terminate(t testing.TB, name string) int {
	t.Helper()
	admin := Admin(t)
	var n int
	err := admin.QueryRow(context.Background(),
		"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()",
		name).Scan(&n)
	if err != nil {
		t.Fatalf("pg_terminate_backend: %v", err)
	}
	return n
}
