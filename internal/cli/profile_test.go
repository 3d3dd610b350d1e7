package cli

import (
	"os"
	"path/filepath"
	"testing"
)

func TestStartCPUProfile(t *testing.T) {
	t.Run("no path", func(t *testing.T) {
		stop, err := StartCPUProfile("")
		if err != nil {
			t.Fatalf("got error %v, want none", err)
		}
		if err := stop(); err != nil {
			t.Errorf("stop: got error %v, want none", err)
		}
	})
	t.Run("writes a profile", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "cpu.pprof")
		stop, err := StartCPUProfile(path)
		if err != nil {
			t.Fatalf("got error %v, want none", err)
		}
		if err := stop(); err != nil {
			t.Fatalf("stop: got error %v, want none", err)
		}
		// Even an idle profile has its gzip header and sample types.
		if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
			t.Errorf("got profile %v (error %v), want a non-empty file", fi, err)
		}
	})
	t.Run("folder missing", func(t *testing.T) {
		if _, err := StartCPUProfile(filepath.Join(t.TempDir(), "no", "cpu.pprof")); err == nil {
			t.Error("got no error for a file that cannot be created")
		}
	})
	t.Run("already profiling", func(t *testing.T) {
		stop, err := StartCPUProfile(filepath.Join(t.TempDir(), "a.pprof"))
		if err != nil {
			t.Fatalf("got error %v, want none", err)
		}
		defer stop()
		if _, err := StartCPUProfile(filepath.Join(t.TempDir(), "b.pprof")); err == nil {
			t.Error("got no error for a second profile at once")
		}
	})
}
