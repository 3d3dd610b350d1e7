package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
)

// ErrUnavailable marks a write the log could not make durable: a failed write, cut back,
// or a failed fsync, after which the log takes no line until it has reopened its file.
var ErrUnavailable = errors.New("audit log unavailable")

// file is what Log needs of its file; tests inject one whose writes fail.
type file interface {
	io.ReaderAt
	io.WriterAt
	Truncate(size int64) error
	Sync() error
	Close() error
}

// position is a point in the file between two lines: after the first lines lines, the
// last of which starts at lastStart and hashes to hash.
type position struct {
	lines     int
	end       int64
	lastStart int64
	hash      string
}

// Log is the append-only JSON Lines log of every exchange. Each line carries the
// SHA-256 of the previous line's bytes, so edits, cuts and reorderings are detectable.
// An exchange (request and response lines) is made durable with an fsync before Record
// returns. Exchanges recorded at the same time share one fsync (group commit): a writer
// appends under mu, then waits for an fsync that started after its append.
//
// Every append is all or nothing: a write that fails is cut back, so the file ends
// where it ended before and the chain goes on from its last line. A failed fsync leaves
// the page cache untrustworthy, so the log then refuses every line until it has
// reopened the file, cut it back to the last line known durable and checked that
// line's hash (each append tries that first).
type Log struct {
	path string
	open func(path string) (file, error)
	self string
	now  func() time.Time

	mu  sync.Mutex // the file's end and state
	f   file
	at  position // after the last line appended
	bad error    // a failed fsync or cut: set until reopen succeeds

	syncMu  sync.Mutex // one fsync at a time
	durable position   // after the last line known durable; written under syncMu and dmu
	dmu     sync.Mutex // guards durable for readers that do not hold syncMu

	failures  atomic.Int64
	lastErr   atomic.Pointer[error] // the last failure, nil after a durable append
	onFailure atomic.Pointer[func()]
}

var _ protocol.Recorder = (*Log)(nil)

func openOS(path string) (file, error) { return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600) }

// Open opens the log at path for appending, self being the sender name of the League
// Manager. A torn last line (a crash mid-write) is cut and a DirRecovery line says so.
func Open(path, self string) (*Log, error) { return openWith(path, self, openOS) }

func openWith(path, self string, open func(string) (file, error)) (*Log, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create audit folder: %w", err)
	}
	f, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	a := &Log{path: path, open: open, self: self, now: time.Now, f: f}
	torn, err := a.recover()
	if err != nil {
		f.Close()
		return nil, err
	}
	a.durable = a.at
	if torn > 0 {
		msg, _ := json.Marshal(map[string]any{"type": EventAuditRecovery, "torn_bytes_removed": torn})
		if err := a.write([]Entry{{Direction: DirRecovery, Source: self, Destination: self, Message: msg}}); err != nil {
			f.Close()
			return nil, err
		}
	}
	return a, nil
}

// recover reads the file, cuts a torn last line (as Parse tells one: without its
// newline, or with JSON cut short) and returns how many bytes it removed. A bad line
// that is not torn is left for verify to name. What remains is made durable before the
// log takes a line.
func (a *Log) recover() (int64, error) {
	data, err := io.ReadAll(io.NewSectionReader(a.f, 0, 1<<62))
	if err != nil {
		return 0, fmt.Errorf("read audit log: %w", err)
	}
	keep := bytes.LastIndexByte(data, '\n') + 1
	var le *LineError
	if _, err := Parse(bytes.NewReader(data)); errors.As(err, &le) && le.Torn {
		keep = int(le.Offset)
	}
	torn := int64(len(data) - keep)
	if torn > 0 {
		if err := a.f.Truncate(int64(keep)); err != nil {
			return 0, fmt.Errorf("cut torn audit line: %w", err)
		}
	}
	if err := a.f.Sync(); err != nil {
		return 0, fmt.Errorf("sync audit log: %w", err)
	}
	a.at = position{end: int64(keep)}
	if keep > 0 {
		prev := bytes.LastIndexByte(data[:keep-1], '\n') + 1
		a.at = position{lines: bytes.Count(data[:keep], []byte("\n")), end: int64(keep), lastStart: int64(prev), hash: lineHash(data[prev : keep-1])}
	}
	return torn, nil
}

// Record implements protocol.Recorder: a request line and, if there was an answer, a
// response line, secrets redacted.
func (a *Log) Record(ex protocol.Exchange) error {
	reqSrc, reqDst := ex.Peer, a.self
	if !ex.Inbound {
		reqSrc, reqDst = a.self, ex.Peer
	}
	if reqSrc == "" {
		reqSrc = "unknown"
	}
	if reqDst == "" {
		reqDst = "unknown"
	}
	entries := []Entry{{Direction: DirRequest, Source: reqSrc, Destination: reqDst, ConversationID: ex.ConversationID, Message: redact(ex.Request)}}
	if ex.Response != nil {
		entries = append(entries, Entry{Direction: DirResponse, Source: reqDst, Destination: reqSrc, ConversationID: ex.ConversationID, Message: redact(ex.Response)})
	}
	return a.write(entries)
}

// Note appends a League Manager event that is not a message exchange (e.g. a schedule).
func (a *Log) Note(kind Event, body any) error {
	msg, err := json.Marshal(map[string]any{"type": kind, "body": body})
	if err != nil {
		return fmt.Errorf("encode audit note: %w", err)
	}
	return a.write([]Entry{{Direction: DirEvent, Source: a.self, Destination: a.self, Message: redact(msg)}})
}

// write appends entries and returns once they are durable, or returns why they are not
// in the file.
func (a *Log) write(entries []Entry) error {
	err := a.Probe()
	end := 0
	if err == nil {
		end, err = a.append(entries)
	}
	if err == nil {
		err = a.syncTo(end)
	}
	if err != nil {
		a.failures.Add(1)
		a.lastErr.Store(&err)
		if f := a.onFailure.Load(); f != nil {
			(*f)()
		}
		return err
	}
	a.lastErr.Store(nil)
	return nil
}

// append writes entries at the end of the file and returns the line count after them.
// A write that fails is cut back, so the file ends where it did before.
func (a *Log) append(entries []Entry) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.bad != nil {
		return 0, a.bad
	}
	var buf bytes.Buffer
	at := a.at
	for _, e := range entries {
		e.LogID = uuid.NewString()
		e.Timestamp = protocol.Now(a.now())
		e.PrevHash = at.hash
		line, err := json.Marshal(e)
		if err != nil {
			return 0, fmt.Errorf("encode audit entry: %w", err)
		}
		at.lastStart = a.at.end + int64(buf.Len())
		at.hash = lineHash(line)
		at.lines++
		buf.Write(line)
		buf.WriteByte('\n')
	}
	at.end = a.at.end + int64(buf.Len())
	if _, err := a.f.WriteAt(buf.Bytes(), a.at.end); err != nil {
		werr := fmt.Errorf("%w: append: %w", ErrUnavailable, err)
		if terr := a.f.Truncate(a.at.end); terr != nil {
			a.bad = fmt.Errorf("%w; cut back: %w", werr, terr)
		}
		return 0, werr
	}
	a.at = at
	return at.lines, nil
}

// syncTo returns once the first end lines are durable: at once when an fsync that began
// after they were written has succeeded, else after its own fsync, which covers every
// line appended until it starts. After a failed fsync no line past the last durable one
// is trusted: every writer waiting on it fails, and the file is cut back when reopened.
func (a *Log) syncTo(end int) error {
	a.syncMu.Lock()
	defer a.syncMu.Unlock()
	if a.durablePos().lines >= end {
		return nil
	}
	a.mu.Lock()
	upto, bad := a.at, a.bad
	a.mu.Unlock()
	if bad != nil {
		return bad
	}
	if err := a.f.Sync(); err != nil {
		serr := fmt.Errorf("%w: sync: %w", ErrUnavailable, err)
		a.mu.Lock()
		if a.bad == nil {
			a.bad = serr
		}
		a.mu.Unlock()
		return serr
	}
	a.dmu.Lock()
	a.durable = upto
	a.dmu.Unlock()
	return nil
}

func (a *Log) durablePos() position {
	a.dmu.Lock()
	defer a.dmu.Unlock()
	return a.durable
}

// reopen replaces the file descriptor after a failed fsync or cut: the file is opened
// again, must still hold the last durable line with its hash, and is cut back to it and
// synced. It runs with syncMu and mu held, so no fsync of the old descriptor can mark
// lines durable that it cuts.
func (a *Log) reopen() error {
	_ = a.f.Close()
	f, err := a.open(a.path)
	if err != nil {
		return fmt.Errorf("%w: reopen: %w", ErrUnavailable, err)
	}
	d := a.durablePos()
	if err := checkLast(f, d); err != nil {
		f.Close()
		return err
	}
	if err := f.Truncate(d.end); err != nil {
		f.Close()
		return fmt.Errorf("%w: cut back to line %d: %w", ErrUnavailable, d.lines, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("%w: sync after reopen: %w", ErrUnavailable, err)
	}
	a.f, a.at, a.bad = f, d, nil
	return nil
}

// checkLast reads the last durable line back and compares its hash.
func checkLast(f file, d position) error {
	if d.lines == 0 {
		return nil
	}
	line := make([]byte, d.end-d.lastStart)
	if _, err := f.ReadAt(line, d.lastStart); err != nil {
		return fmt.Errorf("%w: read line %d back: %w", ErrUnavailable, d.lines, err)
	}
	if line[len(line)-1] != '\n' || lineHash(line[:len(line)-1]) != d.hash {
		return fmt.Errorf("%w: line %d changed on disk since it was written", ErrUnavailable, d.lines)
	}
	return nil
}

// Health is nil while the last append was made durable, else its failure. A log whose
// fsync failed stays unhealthy until Probe or an append has reopened it.
func (a *Log) Health() error {
	if p := a.lastErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Probe reopens a log whose fsync failed and reports whether it takes lines again.
// It writes no line: a log whose last append was only cut back is healthy to it.
func (a *Log) Probe() error {
	a.mu.Lock()
	bad := a.bad
	a.mu.Unlock()
	if bad == nil {
		return nil
	}
	a.syncMu.Lock()
	defer a.syncMu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.bad == nil {
		return nil
	}
	return a.reopen()
}

// OnFailure makes f run after every append that failed, on the writer's goroutine,
// which may hold its own locks: f must only schedule work.
func (a *Log) OnFailure(f func()) { a.onFailure.Store(&f) }

// Failures counts the appends that failed since the log was opened.
func (a *Log) Failures() int64 { return a.failures.Load() }

// Entries parses every line written so far, for a League Manager that compares the log
// with its database.
func (a *Log) Entries() ([]Entry, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return Parse(io.NewSectionReader(a.f, 0, a.at.end))
}

// Mark is the number of lines known durable and the hash of the last of them, for
// CheckMark: a line whose fsync failed may be gone after a reopen, so it is never marked.
func (a *Log) Mark() (int, string) {
	d := a.durablePos()
	return d.lines, d.hash
}

// Close flushes and closes the log. A log whose fsync failed is first cut back to its
// last durable line, so the file holds no line whose writer was told it failed.
func (a *Log) Close() error {
	if err := a.Probe(); err != nil {
		a.mu.Lock()
		defer a.mu.Unlock()
		return errors.Join(err, a.f.Close())
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.f.Sync(); err != nil {
		a.f.Close()
		return fmt.Errorf("sync audit log: %w", err)
	}
	return a.f.Close()
}
