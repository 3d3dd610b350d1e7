package export

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// An export is written whole or not at all: a failed write keeps the old file and
// leaves no temporary file behind.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "results.csv")
	if err := writeFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "first\n"); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	err := writeFileAtomic(path, func(w io.Writer) error {
		_, _ = io.WriteString(w, "half of the sec")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("failed write returned %v, want %v", err, boom)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "first\n" {
		t.Errorf("after a failed write the file holds %q (%v), want the first export", data, err)
	}
	if st, err := os.Stat(path); err != nil {
		t.Error(err)
	} else if st.Mode().Perm() != 0o644 {
		t.Errorf("export mode %v, want 0644", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the export", len(entries))
	}
	if err := writeFileAtomic(filepath.Join(dir, "missing", "x.csv"), func(io.Writer) error { return nil }); err == nil {
		t.Error("export into a missing directory succeeded")
	}
	if err := WriteFile(path, "xml", &Data{}); err == nil {
		t.Error("an export in an unknown format succeeded")
	}
	if data, _ := os.ReadFile(path); string(data) != "first\n" {
		t.Errorf("an export in an unknown format changed the file: %q", data)
	}
}
