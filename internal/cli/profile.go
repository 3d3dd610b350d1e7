package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// StartCPUProfile starts CPU profiling into the file at path (the --cpuprofile flag of
// the commands) and returns the function that stops it and closes the file; call it on
// the way out, or the profile stays empty. An empty path profiles nothing and returns a
// stop that does nothing.
func StartCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("start cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("write cpu profile %s: %w", path, err)
		}
		return nil
	}, nil
}

// CPUProfileUsage is the usage text of the commands' --cpuprofile flag.
const CPUProfileUsage = "write a CPU profile (runtime/pprof) of the whole run to this file"
