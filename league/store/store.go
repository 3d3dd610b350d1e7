// Package store is the League Manager's SQLite database: all of its SQL. Each write is
// one named operation in one immediate transaction, so a change lands whole or not at
// all; the readers serve the League Manager's start, its standings snapshots and match
// views, and the export and replay tools.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/mattn/go-sqlite3" // also registers the sqlite3 driver
)

// SchemaVersion must equal PRAGMA user_version set by sql/schema.sql.
const SchemaVersion = 5

//go:embed sql/*.sql
var sqlFiles embed.FS

// migrations upgrade a database of the version they are keyed by to the next one.
var migrations = map[int]string{2: "sql/migrate_3.sql", 3: "sql/migrate_4.sql", 4: "sql/migrate_5.sql"}

// ErrSchemaMismatch refuses a database written by another schema version.
var ErrSchemaMismatch = errors.New("database schema version mismatch")

// ErrUnavailable marks a write the database could not make: the disk is full, an I/O
// failed, the file cannot be opened or written. The transaction was rolled back.
var ErrUnavailable = errors.New("database unavailable")

// unavailable tells a storage failure, which a later try may get past, from a bug in a
// statement, which it will not.
func unavailable(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrFull, sqlite3.ErrIoErr, sqlite3.ErrCantOpen, sqlite3.ErrReadonly, sqlite3.ErrBusy,
			sqlite3.ErrLocked, sqlite3.ErrNomem, sqlite3.ErrProtocol, sqlite3.ErrNotADB, sqlite3.ErrCorrupt:
			return true
		}
		return false
	}
	var pe *os.PathError
	return errors.As(err, &pe)
}

// Marker tells how far the audit log has got: its line count and the hash of its last
// line.
type Marker interface {
	Mark() (int, string)
}

// Store is the League Manager's SQLite database: one writer connection, WAL.
type Store struct {
	db    *sql.DB
	audit Marker
	health
	// schema is the schema version of a database opened read-only, which a tool reads
	// without migrating it; SchemaVersion otherwise.
	schema int
}

// health owns the Store's storage-failure bookkeeping: how many transactions a storage
// failure rolled back, and the failure of the last transaction.
type health struct {
	failures atomic.Int64
	lastErr  atomic.Pointer[error] // the last transaction's storage failure, nil after a commit
}

// Open opens (creating if needed) the database at path, upgrades it from an older
// schema version it knows, and refuses any other version.
func Open(path string) (*Store, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create database folder: %w", err)
		}
	}
	// The statement cache keeps the few statements a match runs prepared: SQLite parsing
	// them again for every match cost a tenth of the League Manager's time in a league.
	dsn := "file:" + path + "?_journal_mode=WAL&_busy_timeout=5000&_txlock=immediate&_synchronous=NORMAL&_foreign_keys=on&_stmt_cache_size=64"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	// One writer: SQLite serialises writes anyway, and one connection keeps them ordered.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, schema: SchemaVersion}
	if err := s.init(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) init() error {
	version, err := s.version()
	if err != nil {
		return err
	}
	var tables int
	if err := s.db.QueryRow("SELECT count(*) FROM sqlite_master WHERE type = 'table'").Scan(&tables); err != nil {
		return fmt.Errorf("inspect database: %w", err)
	}
	if tables > 0 {
		for version != SchemaVersion && migrations[version] != "" {
			if err := s.exec(migrations[version]); err != nil {
				return err
			}
			if version, err = s.version(); err != nil {
				return err
			}
		}
		if version != SchemaVersion {
			return fmt.Errorf("%w: database has user_version %d, this League Manager needs %d; use a new database file", ErrSchemaMismatch, version, SchemaVersion)
		}
	}
	for _, name := range []string{"sql/pragmas.sql", "sql/schema.sql", "sql/indexes.sql"} {
		if err := s.exec(name); err != nil {
			return err
		}
	}
	if version, err = s.version(); err != nil {
		return err
	}
	if version != SchemaVersion {
		return fmt.Errorf("%w: schema.sql sets %d, code expects %d", ErrSchemaMismatch, version, SchemaVersion)
	}
	return nil
}

func (s *Store) version() (int, error) {
	var v int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// exec runs one embedded .sql file.
func (s *Store) exec(name string) error {
	b, err := sqlFiles.ReadFile(name)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if _, err := s.db.Exec(string(b)); err != nil {
		return fmt.Errorf("apply %s: %w", name, err)
	}
	return nil
}

// TrackAudit makes every transaction record how far the audit log has got, so a
// verifier can tell when lines were cut from its end.
func (s *Store) TrackAudit(m Marker) { s.audit = m }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// DB is the handle for read-only inspection by tests and tools.
func (s *Store) DB() *sql.DB { return s.db }

// SaveMark records the audit log's current position on its own, e.g. at shutdown.
func (s *Store) SaveMark() error {
	if s.audit == nil {
		return nil
	}
	return s.tx(func(*sql.Tx) error { return nil })
}

// Health is nil while the last transaction committed, else the storage failure that
// rolled it back.
func (h *health) Health() error {
	if p := h.lastErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Failures counts the transactions a storage failure rolled back.
func (h *health) Failures() int64 { return h.failures.Load() }

// record notes how a transaction ended (err): a commit clears the failure, a storage
// failure is wrapped in ErrUnavailable, counted and kept for Health.
func (h *health) record(err error) error {
	switch {
	case err == nil:
		h.lastErr.Store(nil)
	case unavailable(err):
		err = fmt.Errorf("%w: %w", ErrUnavailable, err)
		h.failures.Add(1)
		h.lastErr.Store(&err)
	}
	return err
}

// Probe makes a small write of its own, so a League Manager that has nothing else to
// write learns whether the database takes writes again.
func (s *Store) Probe() error {
	return s.tx(func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT OR REPLACE INTO meta (key, value) VALUES ('storage_checked_at', ?)`, time.Now().UTC().Format(time.RFC3339Nano))
		return err
	})
}

// tx runs fn in one immediate transaction, with the audit mark: all of its writes land
// or none. A storage failure is wrapped in ErrUnavailable and kept for Health.
func (s *Store) tx(fn func(tx *sql.Tx) error) error {
	return s.health.record(s.tx1(fn))
}

func (s *Store) tx1(fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(context.Background(), nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if s.audit != nil {
		lines, hash := s.audit.Mark()
		if _, err := tx.Exec(`INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?), (?, ?)`, audit.MetaLines, strconv.Itoa(lines), audit.MetaLastHash, hash); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("record audit mark: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// AuditMark returns the audit line count and last hash the database recorded (0, "" when
// none was recorded).
func (s *Store) AuditMark() (int, string, error) {
	var lines, hash string
	err := s.db.QueryRow(`SELECT value FROM meta WHERE key = ?`, audit.MetaLines).Scan(&lines)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("read audit mark: %w", err)
	}
	if err := s.db.QueryRow(`SELECT value FROM meta WHERE key = ?`, audit.MetaLastHash).Scan(&hash); err != nil {
		return 0, "", fmt.Errorf("read audit mark: %w", err)
	}
	n, err := strconv.Atoi(lines)
	if err != nil {
		return 0, "", fmt.Errorf("read audit mark: %w", err)
	}
	return n, hash, nil
}

// OpenReadOnly opens an existing database for the tools (replay, export) without
// changing it: no schema is applied and no version is upgraded, so it must be of a
// version this package reads.
func OpenReadOnly(path string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	s := &Store{db: db}
	v, err := s.version()
	if err != nil {
		db.Close()
		return nil, err
	}
	if v != SchemaVersion && migrations[v] == "" {
		db.Close()
		return nil, fmt.Errorf("%w: database has user_version %d, this tool reads %d", ErrSchemaMismatch, v, SchemaVersion)
	}
	s.schema = v
	return s, nil
}
