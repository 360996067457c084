// Package store is Hark's SQLite database: one file in the data dir holding
// settings, the model library index, conversations and transcripts. It runs
// in WAL mode with foreign keys and a busy timeout, and its schema evolves
// through numbered migrations (migrations/NNNN_name.sql) tracked in
// PRAGMA user_version, so any earlier database upgrades in place.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/mattn/go-sqlite3"
)

// DB is an open Hark database.
type DB struct {
	*sql.DB
	path string
}

// Path is the database file.
func (db *DB) Path() string { return db.path }

// ErrCorrupt means the file exists but SQLite cannot read it as a database.
var ErrCorrupt = errors.New("database file is corrupt or not a SQLite database")

// ErrTooNew means the database was written by a newer Hark.
var ErrTooNew = errors.New("database was created by a newer version of Hark")

// ErrInUse means another process holds a lock on the database for longer
// than the busy timeout.
var ErrInUse = errors.New("database is locked by another process")

// OpenError explains why the database at Path could not be opened and what
// the user can do about it. Nothing is ever deleted on their behalf.
type OpenError struct {
	Path string
	Err  error
}

func (e *OpenError) Error() string {
	hint := ""
	switch {
	case errors.Is(e.Err, ErrCorrupt):
		hint = fmt.Sprintf("; move it aside (for example: mv %q %q) and Hark will start with a fresh database; nothing has been deleted", e.Path, e.Path+".bad")
	case errors.Is(e.Err, ErrInUse):
		hint = "; close the other Hark (or program) using it and try again"
	case errors.Is(e.Err, fs.ErrPermission):
		hint = "; check the file's permissions"
	}
	return fmt.Sprintf("cannot open database %s: %v%s", e.Path, e.Err, hint)
}

func (e *OpenError) Unwrap() error { return e.Err }

// busyTimeoutMS is how long a writer waits for another connection's lock.
const busyTimeoutMS = 5000

// Open opens (creating if needed) the database at path and migrates it to
// the latest schema.
func Open(path string) (*DB, error) {
	return openTo(path, len(migrations))
}

// openTo migrates only up to version target; tests use it to build every
// earlier schema.
func openTo(path string, target int) (*DB, error) {
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return nil, &OpenError{Path: path, Err: errors.New("is a directory")}
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return nil, &OpenError{Path: path, Err: err}
		}
		f.Close()
	}
	dsn := "file:" + path + "?_journal_mode=WAL&_foreign_keys=on&_synchronous=NORMAL&_busy_timeout=" + fmt.Sprint(busyTimeoutMS) + "&_txlock=immediate"
	sqldb, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, &OpenError{Path: path, Err: err}
	}
	db := &DB{DB: sqldb, path: path}
	if err := db.check(); err != nil {
		sqldb.Close()
		return nil, &OpenError{Path: path, Err: err}
	}
	if err := db.migrate(context.Background(), target); err != nil {
		sqldb.Close()
		return nil, &OpenError{Path: path, Err: err}
	}
	return db, nil
}

// check reads the schema, which is where a damaged or foreign file shows,
// then runs PRAGMA quick_check: damage in the middle of the file would
// otherwise surface later as failing requests that do not name the file.
func (db *DB) check() error {
	var n int
	err := db.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&n)
	if err == nil {
		var mode string
		err = db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	}
	if err != nil {
		return classify(err)
	}
	return classify(db.quickCheck())
}

// quickCheck returns nil when PRAGMA quick_check says "ok", else an
// ErrCorrupt listing its first findings.
func (db *DB) quickCheck() error {
	rows, err := db.Query(`PRAGMA quick_check(5)`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return err
		}
		if line != "ok" {
			found = append(found, line)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(found) > 0 {
		return fmt.Errorf("%w (quick_check: %s)", ErrCorrupt, strings.Join(found, "; "))
	}
	return nil
}

// classify maps SQLite's error codes to the errors this package promises.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrNotADB, sqlite3.ErrCorrupt:
			return fmt.Errorf("%w (%v)", ErrCorrupt, err)
		case sqlite3.ErrBusy, sqlite3.ErrLocked:
			return fmt.Errorf("%w (%v)", ErrInUse, err)
		case sqlite3.ErrPerm, sqlite3.ErrCantOpen, sqlite3.ErrReadonly, sqlite3.ErrAuth:
			return fmt.Errorf("%w (%v)", fs.ErrPermission, err)
		case sqlite3.ErrFull:
			return fmt.Errorf("disk is full: %v", err)
		}
	}
	if strings.Contains(err.Error(), "not a database") {
		return fmt.Errorf("%w (%v)", ErrCorrupt, err)
	}
	return err
}

// Version is the schema version of the open database.
func (db *DB) Version() (int, error) {
	var v int
	err := db.QueryRow(`PRAGMA user_version`).Scan(&v)
	return v, err
}
