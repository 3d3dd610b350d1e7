package doccheck

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// The commands the README and the docs show that CI can run, run as written from the
// repository root after `make build`: a small `make demo` (its database and logs moved
// to a temporary folder, so a developer's own are left alone) and the `league conform`
// example against the Python example player.
func TestDocCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs make and real processes")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	run(t, root, "make build", 5*time.Minute)

	t.Run("readme demo", func(t *testing.T) {
		line := shownLine(t, filepath.Join(root, "README.md"), "make demo PLAYERS=4 REFEREES=2")
		dir := t.TempDir()
		out := run(t, root, line+" DEMO_FLAGS='--data "+dir+" --log-dir "+dir+"'", 5*time.Minute)
		for _, want := range []string{"Final standings (tic_tac_toe, 4 players, 6 matches)", "2 referees and 4 players left on LEAGUE_SHUTDOWN; 0 killed"} {
			if !strings.Contains(out, want) {
				t.Errorf("make demo did not print %q:\n%s", want, out)
			}
		}
	})

	t.Run("conform the python example", func(t *testing.T) {
		block := shownBlock(t, filepath.Join(root, "docs", "agents.md"), "examples/python/tic_tac_toe_player.py", "bin/league conform player")
		out := run(t, root, block, 3*time.Minute)
		if !strings.Contains(out, "CONFORMS: every required check passed") {
			t.Errorf("the conform example did not conform:\n%s", out)
		}
	})
}

// run runs script with bash in dir as its own process group, and fails the test unless it
// exits 0 within limit. Whatever the script left in the background is killed at the end.
func run(t *testing.T, dir, script string, limit time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", script)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out.String())
	}
	return out.String()
}

// shownLine is the line of a sh code block of file that starts with prefix.
func shownLine(t *testing.T, file, prefix string) string {
	t.Helper()
	for _, b := range shBlocks(t, file) {
		for l := range strings.Lines(b) {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, prefix) {
				return l
			}
		}
	}
	t.Fatalf("%s shows no command %q", file, prefix)
	return ""
}

// shownBlock is the first sh code block of file that contains every one of parts.
func shownBlock(t *testing.T, file string, parts ...string) string {
	t.Helper()
next:
	for _, b := range shBlocks(t, file) {
		for _, p := range parts {
			if !strings.Contains(b, p) {
				continue next
			}
		}
		return b
	}
	t.Fatalf("%s shows no sh block with %q", file, parts)
	return ""
}

// shBlocks are the contents of the fenced code blocks of file marked sh.
func shBlocks(t *testing.T, file string) []string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	doc := goldmark.New().Parser().Parse(text.NewReader(src))
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if b, ok := n.(*ast.FencedCodeBlock); ok && entering && string(b.Language(src)) == "sh" {
			var s strings.Builder
			for i := 0; i < b.Lines().Len(); i++ {
				seg := b.Lines().At(i)
				s.Write(seg.Value(src))
			}
			blocks = append(blocks, s.String())
		}
		return ast.WalkContinue, nil
	})
	return blocks
}
