// Open, on top: a DB over a pool, with the schema migrated.

package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/jackc/pgx/v5"
)

// Open connects to the database named by dsn (a postgres:// URL or
// key=value DSN, as libpq/pgx accept) and creates or migrates the schema.
// Errors reaching the server wrap kv.ErrUnavailable.
func Open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("kv/postgres: %w", err)
	}
	maxConns := opts.MaxConns
	if s, ok := cfg.RuntimeParams["pool_max_conns"]; ok {
		// Accepted for compatibility with pgxpool DSNs; not a server setting.
		delete(cfg.RuntimeParams, "pool_max_conns")
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("kv/postgres: invalid pool_max_conns %q", s)
		}
		if maxConns <= 0 {
			maxConns = n
		}
	}
	if maxConns <= 0 {
		maxConns = DefaultMaxConns()
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "cerulean"
	}
	db := &DB{
		pool:        newPool(cfg, maxConns),
		maxAttempts: opts.MaxAttempts,
	}
	if db.maxAttempts <= 0 {
		db.maxAttempts = DefaultMaxAttempts
	}
	db.gate = kv.NewGate()
	if err := db.Migrate(ctx, "kv", migrations); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}
