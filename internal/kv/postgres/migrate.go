package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// migration is one versioned SQL file.
type migration struct {
	version int64
	name    string
	sql     string
}

// loadMigrations reads the files NNNN_name.sql of the first directory of
// fsys (migrations/ for the embedded ones), ordered by version.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	files, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		if files, err = fs.Glob(fsys, "*/*.sql"); err != nil {
			return nil, err
		}
	}
	var ms []migration
	for _, f := range files {
		base := path.Base(f)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.ParseInt(num, 10, 64)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("kv/postgres: migration %s: name must be NNNN_name.sql", f)
		}
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return int(a.version - b.version) })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("kv/postgres: migrations %s and %s share a version", ms[i-1].name, ms[i].name)
		}
	}
	return ms, nil
}

const sqlCreateSchemaVersion = `CREATE TABLE IF NOT EXISTS schema_version (
    component text PRIMARY KEY,
    version   bigint NOT NULL
)`

// Migrate brings component's tables up to the newest migration in fsys:
// files NNNN_name.sql (at the root of fsys or in its one directory), each
// applied once, in order. The versions applied are recorded per component
// in the table schema_version(component text primary key, version bigint).
//
// The pending migrations and the version bump run in one SERIALIZABLE
// transaction that reads the version row FOR UPDATE. When several
// processes start at once, all but one fail with a serialization failure
// or a duplicate object/key error and retry; the retry finds the work done.
// Migration files must only use IF NOT EXISTS style statements, so that a
// database which runs DDL outside the transaction (older YugabyteDB) can
// re-run them harmlessly. A database newer than fsys is an error.
func (db *DB) Migrate(ctx context.Context, component string, fsys fs.FS) error {
	ms, err := loadMigrations(fsys)
	if err != nil {
		return err
	}
	if len(ms) == 0 {
		return nil
	}
	latest := ms[len(ms)-1].version
	err = db.Do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		if _, err := c.Exec(ctx, sqlCreateSchemaVersion); err != nil {
			return retryDuplicate(err)
		}
		tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		var cur int64
		err = tx.QueryRow(ctx, "SELECT version FROM schema_version WHERE component = $1 FOR UPDATE", component).Scan(&cur)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if cur > latest {
			return fmt.Errorf("kv/postgres: the database's %s schema is version %d, newer than this program knows (%d)", component, cur, latest)
		}
		if cur == latest {
			return tx.Commit(ctx)
		}
		for _, m := range ms {
			if m.version <= cur {
				continue
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return retryDuplicate(fmt.Errorf("migration %s: %w", m.name, err))
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO schema_version (component, version) VALUES ($1, $2)
ON CONFLICT (component) DO UPDATE SET version = excluded.version`, component, latest)
		if err != nil {
			return retryDuplicate(err)
		}
		return retryDuplicate(tx.Commit(ctx))
	})
	if err != nil {
		return fmt.Errorf("kv/postgres: migrating %s schema: %w", component, err)
	}
	return nil
}

// retryDuplicate marks the errors of a concurrent creation of the same
// objects (unique_violation on the catalog or schema_version,
// duplicate_table, duplicate_object) as retryable.
func retryDuplicate(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505", "42P07", "42710":
			return errRetry{err}
		}
	}
	return err
}
