package league

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
)

// secretFields are redacted wherever they appear in an audited message.
var secretFields = map[string]bool{
	"auth_token": true, "token": true, "admin_token": true, "credential": true,
	"match_credentials": true, "password": true, "secret": true,
}

const redacted = "[REDACTED]"

// AuditEntry is one line of audit.jsonl.
type AuditEntry struct {
	LogID          string          `json:"log_id"`
	Timestamp      string          `json:"timestamp"`
	Direction      string          `json:"direction"` // request | response | recovery
	Source         string          `json:"source"`
	Destination    string          `json:"destination"`
	ConversationID string          `json:"conversation_id"`
	Message        json.RawMessage `json:"message"`
	PrevHash       string          `json:"prev_hash"`
}

// AuditLog is the append-only JSON Lines log of every exchange. Each line carries the
// SHA-256 of the previous line's bytes, so edits, cuts and reorderings are detectable.
// An exchange (request and response lines) is made durable with one fsync before the
// answer leaves.
type AuditLog struct {
	mu       sync.Mutex
	f        *os.File
	prevHash string
	lines    int
	self     string
	now      func() time.Time
}

// OpenAuditLog opens path for appending. A torn last line (a crash mid-write) is cut
// and an AUDIT_RECOVERY record says so.
func OpenAuditLog(path, self string) (*AuditLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create audit folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	a := &AuditLog{f: f, self: self, now: time.Now}
	torn, err := a.recover()
	if err != nil {
		f.Close()
		return nil, err
	}
	if torn > 0 {
		msg, _ := json.Marshal(map[string]any{"type": "AUDIT_RECOVERY", "torn_bytes_removed": torn})
		if err := a.write([]AuditEntry{{Direction: "recovery", Source: self, Destination: self, Message: msg}}); err != nil {
			f.Close()
			return nil, err
		}
	}
	return a, nil
}

// recover positions the file after its last complete line and returns the number of
// torn bytes it removed.
func (a *AuditLog) recover() (int64, error) {
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

func lineHash(line []byte) string {
	h := sha256.Sum256(line)
	return hex.EncodeToString(h[:])
}

// LastHash is the hash of the last line written.
func (a *AuditLog) LastHash() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.prevHash
}

// Record implements protocol.Recorder.
func (a *AuditLog) Record(ex protocol.Exchange) error {
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
	entries := []AuditEntry{{Direction: "request", Source: reqSrc, Destination: reqDst, ConversationID: ex.ConversationID, Message: auditMessage(ex.Request)}}
	if ex.Response != nil {
		entries = append(entries, AuditEntry{Direction: "response", Source: reqDst, Destination: reqSrc, ConversationID: ex.ConversationID, Message: auditMessage(ex.Response)})
	}
	return a.write(entries)
}

// Note appends a League Manager event that is not a message exchange (e.g. a schedule).
func (a *AuditLog) Note(kind string, body any) error {
	msg, err := json.Marshal(map[string]any{"type": kind, "body": body})
	if err != nil {
		return fmt.Errorf("encode audit note: %w", err)
	}
	return a.write([]AuditEntry{{Direction: "event", Source: a.self, Destination: a.self, Message: redact(msg)}})
}

func (a *AuditLog) write(entries []AuditEntry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var buf bytes.Buffer
	prev := a.prevHash
	for _, e := range entries {
		e.LogID = uuid.NewString()
		e.Timestamp = protocol.Now(a.now())
		e.PrevHash = prev
		line, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("encode audit entry: %w", err)
		}
		prev = lineHash(line)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if _, err := a.f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("append audit log: %w", err)
	}
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("sync audit log: %w", err)
	}
	a.prevHash = prev
	a.lines += len(entries)
	return nil
}

// Mark is the number of lines written and the hash of the last one.
func (a *AuditLog) Mark() (int, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lines, a.prevHash
}

// Close flushes and closes the log.
func (a *AuditLog) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.f.Sync(); err != nil {
		a.f.Close()
		return fmt.Errorf("sync audit log: %w", err)
	}
	return a.f.Close()
}

// secretInText is a secret field and its value in a body that is not JSON (torn or
// malformed), quoted or not, possibly cut short; credentialInText is a match credential.
var (
	secretInText     = regexp.MustCompile(`(?i)([a-z_]*(?:token|credentials?|password|secret)["']?\s*[:=]\s*)("(?:[^"\\]|\\.)*"?|'[^']*'?|\{[^}]*\}?|[^\s,;}\]]*)`)
	credentialInText = regexp.MustCompile(`[0-9a-fA-F]{64}`)
)

// auditMessage makes a wire message safe to log: secrets redacted, non-JSON wrapped.
func auditMessage(raw []byte) json.RawMessage {
	if !json.Valid(raw) {
		// Redacted before it is cut, so that no secret survives in part.
		s := secretInText.ReplaceAllString(string(raw), `${1}"`+redacted+`"`)
		s = credentialInText.ReplaceAllString(s, redacted)
		if len(s) > 1024 {
			s = s[:1024]
		}
		b, _ := json.Marshal(map[string]string{"unparsed": strings.ToValidUTF8(s, "?")})
		return b
	}
	return redact(raw)
}

// redact replaces the values of secret fields anywhere in a JSON document.
func redact(raw []byte) json.RawMessage {
	if !mayHoldSecret(raw) {
		// Nothing to redact: compacting keeps the line a single line without the cost
		// of decoding and re-encoding large answers.
		var buf bytes.Buffer
		if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 && trimmed[0] == '{' && json.Compact(&buf, trimmed) == nil {
			return buf.Bytes()
		}
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return raw
	}
	if _, isObj := v.(map[string]any); !isObj {
		wrapped, _ := json.Marshal(map[string]any{"value": redactValue(v)})
		return wrapped
	}
	out, err := json.Marshal(redactValue(v))
	if err != nil {
		return raw
	}
	return out
}

func redactValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if secretFields[k] {
				x[k] = redacted
			} else {
				x[k] = redactValue(e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = redactValue(e)
		}
	}
	return v
}

// mayHoldSecret reports whether raw could carry a secret field: a secret key name in
// plain text, or any \u escape that could spell one.
func mayHoldSecret(raw []byte) bool {
	if bytes.Contains(raw, []byte(`\u`)) {
		return true
	}
	for name := range secretFields {
		if bytes.Contains(raw, []byte(`"`+name+`"`)) {
			return true
		}
	}
	return false
}
