package cli

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// OneProcessor sets one processor unless GOMAXPROCS is set, and TuneGC its goal unless
// GOGC is.
func TestRuntimeDefaultsYieldToTheEnvironment(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	t.Setenv("GOMAXPROCS", "")
	runtime.GOMAXPROCS(2)
	OneProcessor()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("without GOMAXPROCS: %d processors, want 1", got)
	}
	t.Setenv("GOMAXPROCS", "2")
	runtime.GOMAXPROCS(2)
	OneProcessor()
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Errorf("with GOMAXPROCS=2: %d processors, want 2", got)
	}

	t.Setenv("GOGC", "")
	debug.SetGCPercent(100)
	TuneGC()
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("without GOGC: goal %d, want %d", got, gcPercent)
	}
	t.Setenv("GOGC", "50")
	debug.SetGCPercent(50)
	TuneGC()
	if got := debug.SetGCPercent(50); got != 50 {
		t.Errorf("with GOGC=50: goal %d, want 50", got)
	}
}
