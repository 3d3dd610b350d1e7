package player

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Test helpers that run Debian's chess tools.

// debianTool is the executable name to run: the one on PATH, else where Debian's package
// installs it (/usr/games, a directory root's PATH lacks). make deps installs them.
func debianTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := filepath.Join("/usr/games", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s is not installed (make deps installs it: apt-get install -y %s): %w", name, name, err)
	}
	return p, nil
}
