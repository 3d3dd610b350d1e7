package uci

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// Bounds of what an engine's output may cost the player.
const (
	// maxLineBytes bounds one line of output; a longer line is dropped whole, so no prefix
	// of it can pass for a command.
	maxLineBytes = 8 << 10
	// maxAnnounced bounds the option names kept from the handshake.
	maxAnnounced = 1024
	// maxNameBytes bounds the engine name kept from "id name".
	maxNameBytes = 64
	// stderrTail is how much of the engine's stderr an error quotes.
	stderrTail = 512
)

// errDied, errTimeout and errAborted say why a wait for the engine ended without its answer.
var (
	errDied    = errors.New("engine output ended (it died or closed it)")
	errTimeout = errors.New("engine did not answer in time")
	errAborted = errors.New("engine strategy closed")
)

// engine is one engine process. One goroutine at a time talks to it; close may come from
// any, once the talking is over. Its two goroutines end by close: the reader when the
// output ends or close tells it to stop, the reaper when the process is gone, which close
// ensures by killing it.
type engine struct {
	path   string
	cmd    *exec.Cmd
	stdin  *os.File // our end of the engine's stdin
	stdout *os.File // our end of the engine's stdout, read by the reader
	stderr *tailWriter
	// lines carries the engine's output, a line at a time; the reader closes it when the
	// output ends.
	lines chan string
	// stop tells the reader to deliver no more; closed by close.
	stop       chan struct{}
	readerDone chan struct{}
	// exited is closed once the process is reaped.
	exited    chan struct{}
	closeOnce sync.Once
	closeErr  error

	// name is the engine's "id name"; options holds the option names it announced, lower
	// case (UCI option names are case-insensitive).
	name    string
	options map[string]bool
}

// startProcess runs the engine at path with pipes of our own on stdin and stdout: deadlines
// bound every write, and no Wait closes the output under the reader.
func startProcess(path string) (*engine, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	e := &engine{
		path: path, stdin: inW, stdout: outR, stderr: &tailWriter{max: stderrTail},
		lines: make(chan string), stop: make(chan struct{}), readerDone: make(chan struct{}), exited: make(chan struct{}),
		options: map[string]bool{},
	}
	e.cmd = exec.Command(path)
	e.cmd.Stdin, e.cmd.Stdout, e.cmd.Stderr = inR, outW, e.stderr
	e.cmd.SysProcAttr = procAttr()
	// exec copies stderr in a goroutine of its own that Wait waits for; an engine's child
	// holding the pipe must not hold Wait up for longer than this.
	e.cmd.WaitDelay = time.Second
	err = e.cmd.Start()
	// The engine has its own copies of these ends; ours would keep its pipes open after it died.
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("start: %w", err)
	}
	go e.read()
	go func() {
		_ = e.cmd.Wait()
		close(e.exited)
	}()
	return e, nil
}

// read delivers the engine's output line by line until it ends or stop is closed.
func (e *engine) read() {
	defer close(e.readerDone)
	defer close(e.lines)
	r := bufio.NewReaderSize(e.stdout, maxLineBytes)
	long := false // within a line too long to keep
	for {
		chunk, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = true
			continue
		}
		if err != nil {
			return // the end of the output; an unfinished last line is no command
		}
		if long {
			long = false
			continue
		}
		select {
		case e.lines <- string(bytes.TrimRight(chunk, "\r\n")):
		case <-e.stop:
			return
		}
	}
}

// send writes one command, giving up at deadline: an engine that reads nothing must not
// block the player once the pipe is full.
func (e *engine) send(cmd string, deadline time.Time) error {
	if err := e.stdin.SetWriteDeadline(deadline); err != nil {
		return fmt.Errorf("send %s: %w", firstWord(cmd), err)
	}
	if _, err := io.WriteString(e.stdin, cmd+"\n"); err != nil {
		if errors.Is(err, syscall.EPIPE) {
			// Nobody reads the engine's input any more: it is gone.
			return fmt.Errorf("send %s: %w: %w", firstWord(cmd), errDied, err)
		}
		return fmt.Errorf("send %s: %w", firstWord(cmd), err)
	}
	return nil
}

// await reads lines until handle reports the one awaited, the output ends, deadline
// passes, or abort is closed. handle gets each line split into words; blank lines are
// skipped.
func (e *engine) await(deadline time.Time, abort <-chan struct{}, handle func(words []string) bool) error {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		select {
		case line, ok := <-e.lines:
			if !ok {
				return errDied
			}
			if words := strings.Fields(line); len(words) > 0 && handle(words) {
				return nil
			}
		case <-timer.C:
			return errTimeout
		case <-abort:
			return errAborted
		}
	}
}

// handshake sends uci and reads the engine's name and options up to uciok.
func (e *engine) handshake(deadline time.Time, abort <-chan struct{}) error {
	if err := e.send("uci", deadline); err != nil {
		return err
	}
	err := e.await(deadline, abort, func(w []string) bool {
		switch {
		case w[0] == "uciok":
			return true
		case w[0] == "id" && len(w) > 2 && w[1] == "name":
			e.name = clipName(strings.Join(w[2:], " "))
		case w[0] == "option" && len(w) > 2 && w[1] == "name" && len(e.options) < maxAnnounced:
			e.options[strings.ToLower(optionName(w[2:]))] = true
		}
		return false
	})
	if err != nil {
		return fmt.Errorf("uci: no uciok: %w", err)
	}
	return nil
}

// optionName is the name in the words after "option name": up to the word "type".
func optionName(words []string) string {
	for k, w := range words {
		if w == "type" {
			return strings.Join(words[:k], " ")
		}
	}
	return strings.Join(words, " ")
}

// sync sends isready and skips everything up to readyok, so that nothing the engine said
// before (a late bestmove, say) is taken for an answer to what follows.
func (e *engine) sync(deadline time.Time, abort <-chan struct{}) error {
	if err := e.send("isready", deadline); err != nil {
		return err
	}
	if err := e.await(deadline, abort, func(w []string) bool { return w[0] == "readyok" }); err != nil {
		return fmt.Errorf("isready: no readyok: %w", err)
	}
	return nil
}

// close ends the engine: quit, then, if it is still running grace later (at once when grace
// is 0), SIGKILL to its process group, which also ends whatever it started. It returns when the process is reaped and the reader
// has ended, with an error when the engine had to be killed.
func (e *engine) close(grace time.Duration) error {
	e.closeOnce.Do(func() {
		if grace > 0 {
			_ = e.send("quit", time.Now().Add(grace))
			// End of input is the other way to tell an engine to go.
			_ = e.stdin.Close()
			timer := time.NewTimer(grace)
			select {
			case <-e.exited:
			case <-timer.C:
				e.closeErr = fmt.Errorf("engine %s did not quit within %v; killed", e.path, grace)
			}
			timer.Stop()
		}
		select {
		case <-e.exited:
			// Gone by itself: its group is not signalled, since once reaped its id may be reused.
		default:
			killGroup(e.cmd)
			<-e.exited
		}
		_ = e.stdin.Close()
		close(e.stop)
		// Unblocks the reader when a child of the engine still holds the pipe.
		_ = e.stdout.Close()
		<-e.readerDone
	})
	return e.closeErr
}

// stderrExcerpt is the end of what the engine wrote to stderr, for an error message.
func (e *engine) stderrExcerpt() string {
	s := strings.TrimSpace(e.stderr.String())
	if s == "" {
		return ""
	}
	return " (stderr: " + s + ")"
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	max int
	mu  sync.Mutex
	buf []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String is the tail as valid UTF-8 without control characters.
func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return printable(string(t.buf))
}

// clipName bounds a name from the engine and makes it printable.
func clipName(s string) string {
	s = printable(s)
	for len(s) > maxNameBytes {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// printable replaces invalid UTF-8 and control characters with spaces.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, " "))
}

// firstWord is a command's name, for errors.
func firstWord(cmd string) string {
	w, _, _ := strings.Cut(cmd, " ")
	return w
}
