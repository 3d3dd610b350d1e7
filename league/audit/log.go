package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentleague/agentleague/protocol"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/google/uuid"
)

// Log is the append-only JSON Lines log of every exchange. Each line carries the
// SHA-256 of the previous line's bytes, so edits, cuts and reorderings are detectable.
// An exchange (request and response lines) is made durable with an fsync before the
// answer leaves. Exchanges recorded at the same time share one (group commit): a writer
// appends under mu, then waits for an fsync that started after its append.
type Log struct {
	mu       sync.Mutex // the file's end: appends, prevHash, lines
	f        *os.File
	prevHash string
	lines    int
	self     string
	now      func() time.Time

	syncMu sync.Mutex // one fsync at a time
	synced int        // lines known durable; guarded by syncMu
	sync   func() error
}

var _ protocol.Recorder = (*Log)(nil)

// Open opens the log at path for appending, self being the sender name of the League
// Manager. A torn last line (a crash mid-write) is cut and a DirRecovery line says so.
func Open(path, self string) (*Log, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create audit folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	a := &Log{f: f, self: self, now: time.Now, sync: f.Sync}
	torn, err := a.recover()
	if err != nil {
		f.Close()
		return nil, err
	}
	if torn > 0 {
		msg, _ := json.Marshal(map[string]any{"type": EventAuditRecovery, "torn_bytes_removed": torn})
		if err := a.write([]Entry{{Direction: DirRecovery, Source: self, Destination: self, Message: msg}}); err != nil {
			f.Close()
			return nil, err
		}
	}
	return a, nil
}

// recover positions the file after its last complete line and returns the number of
// torn bytes it removed.
func (a *Log) recover() (int64, error) {
	data, err := io.ReadAll(a.f)
	if err != nil {
		return 0, fmt.Errorf("read audit log: %w", err)
	}
	keep := bytes.LastIndexByte(data, '\n') + 1
	torn := int64(len(data) - keep)
	if torn > 0 {
		if err := a.f.Truncate(int64(keep)); err != nil {
			return 0, fmt.Errorf("cut torn audit line: %w", err)
		}
	}
	if _, err := a.f.Seek(int64(keep), io.SeekStart); err != nil {
		return 0, fmt.Errorf("seek audit log: %w", err)
	}
	if keep > 0 {
		prev := bytes.LastIndexByte(data[:keep-1], '\n') + 1
		a.prevHash = lineHash(data[prev : keep-1])
		a.lines = bytes.Count(data[:keep], []byte("\n"))
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
	entries := []Entry{{Direction: DirRequest, Source: reqSrc, Destination: reqDst, ConversationID: ex.ConversationID, Message: wireMessage(ex.Request)}}
	if ex.Response != nil {
		entries = append(entries, Entry{Direction: DirResponse, Source: reqDst, Destination: reqSrc, ConversationID: ex.ConversationID, Message: wireMessage(ex.Response)})
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

// write appends entries and returns once they are durable.
func (a *Log) write(entries []Entry) error {
	end, err := a.append(entries)
	if err != nil {
		return err
	}
	return a.syncTo(end)
}

// append writes entries at the end of the file and returns the line count after them.
func (a *Log) append(entries []Entry) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var buf bytes.Buffer
	prev := a.prevHash
	for _, e := range entries {
		e.LogID = uuid.NewString()
		e.Timestamp = protocol.Now(a.now())
		e.PrevHash = prev
		line, err := jsonv1.Marshal(e)
		if err != nil {
			return 0, fmt.Errorf("encode audit entry: %w", err)
		}
		prev = lineHash(line)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if _, err := a.f.Write(buf.Bytes()); err != nil {
		return 0, fmt.Errorf("append audit log: %w", err)
	}
	a.prevHash = prev
	a.lines += len(entries)
	return a.lines, nil
}

// syncTo returns once the first end lines are durable: at once when an fsync that began
// after they were written has succeeded, else after its own fsync, which covers every
// line appended until it starts.
func (a *Log) syncTo(end int) error {
	a.syncMu.Lock()
	defer a.syncMu.Unlock()
	if a.synced >= end {
		return nil
	}
	a.mu.Lock()
	upto := a.lines
	a.mu.Unlock()
	if err := a.sync(); err != nil {
		return fmt.Errorf("sync audit log: %w", err)
	}
	a.synced = upto
	return nil
}

// Entries parses every line written so far, for a League Manager that compares the log
// with its database when it starts.
func (a *Log) Entries() ([]Entry, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	end, err := a.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	return Parse(io.NewSectionReader(a.f, 0, end))
}

// Mark is the number of lines written and the hash of the last one, for CheckMark.
func (a *Log) Mark() (int, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lines, a.prevHash
}

// Close flushes and closes the log.
func (a *Log) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.f.Sync(); err != nil {
		a.f.Close()
		return fmt.Errorf("sync audit log: %w", err)
	}
	return a.f.Close()
}
