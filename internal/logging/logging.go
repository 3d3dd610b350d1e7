// Package logging builds the one zerolog logger each process passes down: structured
// JSON to a file, and to stderr readable lines when a person watches it (a terminal),
// the same JSON lines otherwise.
package logging

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// Open returns a logger writing JSON lines to path (created with its folder) and
// console lines to stderr (see consoleFor), with the component field set. Close the
// returned file.
func Open(component, path, level string) (zerolog.Logger, io.Closer, error) {
	return OpenTo(component, path, level, os.Stderr)
}

// timeFormat sets zerolog's global time format once: a League Manager run in-process by
// tests opens its logger while others log, and a second write would race with them.
var timeFormat sync.Once

// OpenTo is Open with the console lines written to console instead of stderr, so a
// role run in-process (tests) keeps them apart.
func OpenTo(component, path, level string, console io.Writer) (zerolog.Logger, io.Closer, error) {
	lvl, err := ParseLevel(level)
	if err != nil {
		return zerolog.Nop(), nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return zerolog.Nop(), nil, fmt.Errorf("create log folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return zerolog.Nop(), nil, fmt.Errorf("open log file: %w", err)
	}
	timeFormat.Do(func() { zerolog.TimeFieldFormat = time.RFC3339Nano })
	out := &conversationWriter{w: zerolog.MultiLevelWriter(f, consoleFor(console, isTerminal(console))), prefix: []byte(`{"conversation_id":"` + uuid.NewString() + `",`)}
	log := zerolog.New(out).Level(lvl).With().Timestamp().Str("component", component).Logger()
	return log, f, nil
}

// consoleFor is what writes the console lines to w: zerolog's readable lines when w is a
// terminal, where a person reads them; otherwise (a file, a pipe, a test's buffer) the
// JSON lines as the log file has them. A readable line is made by decoding the JSON line
// again, which costs twelve times as much as writing the line (BenchmarkLine), and a
// busy league logs a line for every match in each of its processes.
func consoleFor(w io.Writer, terminal bool) io.Writer {
	if terminal {
		return zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05.000", NoColor: true}
	}
	return w
}

// isTerminal says whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// conversationWriter gives every line a conversation_id: lines about a message carry
// its conversation; the others (start, stop, timers) carry the process's own, one id for
// its whole life, so they can be found together.
type conversationWriter struct {
	w      io.Writer
	prefix []byte // {"conversation_id":"<process id>",
}

func (c *conversationWriter) Write(p []byte) (int, error) {
	if len(p) == 0 || p[0] != '{' || bytes.Contains(p, []byte(`"conversation_id":`)) {
		return c.w.Write(p)
	}
	line := make([]byte, 0, len(p)+len(c.prefix))
	line = append(append(line, c.prefix...), p[1:]...)
	if _, err := c.w.Write(line); err != nil {
		return 0, err
	}
	return len(p), nil
}

// ParseLevel maps the config's level names (DEBUG, INFO, WARNING, ERROR, CRITICAL).
func ParseLevel(s string) (zerolog.Level, error) {
	switch strings.ToUpper(s) {
	case "DEBUG":
		return zerolog.DebugLevel, nil
	case "", "INFO":
		return zerolog.InfoLevel, nil
	case "WARNING", "WARN":
		return zerolog.WarnLevel, nil
	case "ERROR":
		return zerolog.ErrorLevel, nil
	case "CRITICAL":
		return zerolog.FatalLevel, nil
	}
	return zerolog.InfoLevel, fmt.Errorf("unknown log level %q", s)
}
