package league

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/agentleague/agentleague/league/audit"
	_ "github.com/mattn/go-sqlite3" // registers the sqlite3 driver
)

// schemaVersion must equal PRAGMA user_version set by sql/schema.sql.
const schemaVersion = 2

//go:embed sql/*.sql
var sqlFiles embed.FS

// ErrSchemaMismatch refuses a database written by another schema version.
var ErrSchemaMismatch = errors.New("database schema version mismatch")

// Store is the League Manager's SQLite database: one writer connection, WAL.
type Store struct {
	db    *sql.DB
	audit *audit.Log
}

// TrackAudit makes every transaction record how far the audit log has got (its line
// count and last hash), so a verifier can tell when lines were cut from its end.
func (s *Store) TrackAudit(a *audit.Log) { s.audit = a }

// OpenStore opens (creating if needed) the database at path and checks its version.
func OpenStore(path string) (*Store, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create database folder: %w", err)
		}
	}
	dsn := "file:" + path + "?_journal_mode=WAL&_busy_timeout=5000&_txlock=immediate&_synchronous=NORMAL&_foreign_keys=on"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	// One writer: SQLite serialises writes anyway, and one connection keeps them ordered.
	db.SetMaxOpenConns(1)
	s := &Store{db: db}
	if err := s.init(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) init() error {
	var version int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	var tables int
	if err := s.db.QueryRow("SELECT count(*) FROM sqlite_master WHERE type = 'table'").Scan(&tables); err != nil {
		return fmt.Errorf("inspect database: %w", err)
	}
	if tables > 0 && version != schemaVersion {
		return fmt.Errorf("%w: database has user_version %d, this League Manager needs %d; use a new database file", ErrSchemaMismatch, version, schemaVersion)
	}
	for _, name := range []string{"sql/pragmas.sql", "sql/schema.sql", "sql/indexes.sql"} {
		b, err := sqlFiles.ReadFile(name)
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		if _, err := s.db.Exec(string(b)); err != nil {
			return fmt.Errorf("apply %s: %w", name, err)
		}
	}
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if version != schemaVersion {
		return fmt.Errorf("%w: schema.sql sets %d, code expects %d", ErrSchemaMismatch, version, schemaVersion)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Tx runs fn in one immediate transaction: all of its writes land or none.
func (s *Store) Tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if s.audit != nil {
		if err := saveMark(tx, s.audit); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("record audit mark: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// DB exposes the handle for read-only queries (tools, tests).
func (s *Store) DB() *sql.DB { return s.db }

// SaveMark records the audit log's current position on its own, e.g. at shutdown.
func (s *Store) SaveMark() error {
	if s.audit == nil {
		return nil
	}
	return s.Tx(context.Background(), func(*sql.Tx) error { return nil })
}

func saveMark(tx *sql.Tx, a *audit.Log) error {
	lines, hash := a.Mark()
	if _, err := tx.Exec(`INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?), (?, ?)`, audit.MetaLines, strconv.Itoa(lines), audit.MetaLastHash, hash); err != nil {
		return err
	}
	return nil
}
