package export

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentleague/agentleague/league/store"
)

// LoadFile loads the export of the League Manager database at dbPath, opened read-only.
func LoadFile(dbPath string) (*Data, error) {
	db, err := store.OpenReadOnly(dbPath)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return Load(db)
}

// Formats are the formats Write writes.
var Formats = []string{"csv", "json", "pgn"}

// Write writes d to w in format, one of Formats.
func Write(w io.Writer, format string, d *Data) error {
	switch format {
	case "csv":
		return WriteCSV(w, d)
	case "json":
		return WriteJSON(w, d)
	case "pgn":
		return WritePGN(w, d)
	}
	return fmt.Errorf("unknown format %q: want one of %v", format, Formats)
}

// WriteFile writes d to path in format through a temporary file beside it, renamed over
// path only once written and closed: a failed export leaves no partial file.
func WriteFile(path, format string, d *Data) error {
	return writeFileAtomic(path, func(w io.Writer) error { return Write(w, format, d) })
}

// writeFileAtomic is WriteFile with write writing the file.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("create output: %w", err)
	}
	err = f.Chmod(0o644) // CreateTemp's 0600 would hide an export from its readers
	if err == nil {
		err = write(f)
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close output: %w", cerr)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
