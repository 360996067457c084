package store

import (
	"context"
	"embed"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations are loaded once from the embedded files and must be numbered
// 1..N without gaps: a gap would mean a lost step in somebody's upgrade.
var migrations = loadMigrations()

func loadMigrations() []migration {
	entries, err := migrationFS.ReadDir("migrations")
	if err != nil {
		panic(err)
	}
	var ms []migration
	for _, e := range entries {
		num, rest, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			panic("store: migration file name must be NNNN_name.sql: " + e.Name())
		}
		b, err := migrationFS.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			panic(err)
		}
		ms = append(ms, migration{version: v, name: strings.TrimSuffix(rest, ".sql"), sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			panic(fmt.Sprintf("store: migrations must be numbered 1..N without gaps; found %d at position %d", m.version, i+1))
		}
	}
	return ms
}

// LatestVersion is the schema version this build of Hark writes.
func LatestVersion() int { return len(migrations) }

// migrate applies every migration above the database's user_version, each
// in its own transaction together with the version bump, so a crash leaves
// the database at a whole version.
func (db *DB) migrate(ctx context.Context, target int) error {
	cur, err := db.Version()
	if err != nil {
		return classify(err)
	}
	if cur > len(migrations) {
		return fmt.Errorf("%w (schema version %d, this Hark knows up to %d)", ErrTooNew, cur, len(migrations))
	}
	for _, m := range migrations[cur:target] {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return classify(err)
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %04d_%s: %w", m.version, m.name, classify(err))
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %04d_%s: %w", m.version, m.name, classify(err))
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %04d_%s: %w", m.version, m.name, classify(err))
		}
	}
	return nil
}
