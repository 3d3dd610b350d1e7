package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

const self = "league_manager"

// open opens the log at path as the League Manager.
func open(t *testing.T, path string) *Log {
	t.Helper()
	a, err := Open(path, self)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func closeLog(t *testing.T, a *Log) {
	t.Helper()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

// sampleLog writes a log of registrations (request and response lines) and two events,
// 26 lines, and returns its lines without newlines.
func sampleLog(t *testing.T) [][]byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := open(t, path)
	for i := 1; i <= 12; i++ {
		conv := fmt.Sprintf("c-%d", i)
		req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"league.handle","params":{"envelope":{"message_type":"REGISTER_PLAYER_REQUEST","sender":"player:p%d"},"payload":{"player_id":"p%d"}}}`, i, i, i)
		resp := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"envelope":{"message_type":"REGISTER_PLAYER_RESPONSE"},"payload":{"auth_token":"tok-%d"}}}`, i, i)
		if err := a.Record(protocol.Exchange{Peer: fmt.Sprintf("player:p%d", i), Inbound: true, ConversationID: conv, Request: []byte(req), Response: []byte(resp)}); err != nil {
			t.Fatal(err)
		}
		if i == 6 {
			if err := a.Note(EventSchedule, map[string]any{"rounds": []int{1, 2}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := a.Note(EventLeagueShutdown, map[string]any{"reason": "done"}); err != nil {
		t.Fatal(err)
	}
	closeLog(t, a)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ls := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	if len(ls) != 26 {
		t.Fatalf("sample log has %d lines, want 26", len(ls))
	}
	return ls
}

func join(ls [][]byte) []byte { return append(bytes.Join(ls, []byte("\n")), '\n') }

// rechain rewrites every prev_hash so the chain is valid again, as a forger who
// understands the format would.
func rechain(t *testing.T, ls [][]byte) [][]byte {
	t.Helper()
	prev := ""
	out := make([][]byte, len(ls))
	for i, l := range ls {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatal(err)
		}
		m["prev_hash"], _ = json.Marshal(prev)
		out[i], _ = json.Marshal(m)
		h := sha256.Sum256(out[i])
		prev = hex.EncodeToString(h[:])
	}
	return out
}

func lineOf(err error) int {
	var le *LineError
	if errors.As(err, &le) {
		return le.Line
	}
	return -1
}

// varying are the fields that differ from run to run.
var varying = regexp.MustCompile(`"(log_id|timestamp|prev_hash)":"[^"]*"`)

// The lines written are the file format old logs have: fields in this order, messages
// compacted, secrets redacted (in JSON and in bodies that are not), non-objects wrapped,
// events as {"body","type"}, a torn line cut and a recovery line written.
func TestFormatIsUnchanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := open(t, path)
	credential := strings.Repeat("ab", 32)
	for _, ex := range []protocol.Exchange{
		{Peer: "player:p1", Inbound: true, ConversationID: "c1", Request: []byte(`{"jsonrpc":"2.0","params":{"auth_token":"abc","x":[1, 2]}}`), Response: []byte("{\n \"result\": {\"token\":\"zz\"}}")},
		{Peer: "referee:r1", ConversationID: "c2", Request: []byte(`{"bad": json auth_token: "q1234" ` + credential)},
		{Inbound: true, Request: []byte(`[1,{"secret":"s"}]`), Response: []byte(`"\u0061"`)},
	} {
		if err := a.Record(ex); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Note(EventSchedule, map[string]any{"rounds": []int{1, 2}, "password": "p"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Note(EventMatchAbandoned, nil); err != nil {
		t.Fatal(err)
	}
	closeLog(t, a)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"torn`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	closeLog(t, open(t, path))

	want := []string{
		`{"log_id":"","timestamp":"","direction":"request","source":"player:p1","destination":"league_manager","conversation_id":"c1","message":{"jsonrpc":"2.0","params":{"auth_token":"[REDACTED]","x":[1,2]}},"prev_hash":""}`,
		`{"log_id":"","timestamp":"","direction":"response","source":"league_manager","destination":"player:p1","conversation_id":"c1","message":{"result":{"token":"[REDACTED]"}},"prev_hash":""}`,
		`{"log_id":"","timestamp":"","direction":"request","source":"league_manager","destination":"referee:r1","conversation_id":"c2","message":{"unparsed":"{\"bad\": json auth_token: \"[REDACTED]\" [REDACTED]"},"prev_hash":""}`,
		`{"log_id":"","timestamp":"","direction":"request","source":"unknown","destination":"league_manager","conversation_id":"","message":{"value":[1,{"secret":"[REDACTED]"}]},"prev_hash":""}`,
		`{"log_id":"","timestamp":"","direction":"response","source":"league_manager","destination":"unknown","conversation_id":"","message":{"value":"a"},"prev_hash":""}`,
		`{"log_id":"","timestamp":"","direction":"event","source":"league_manager","destination":"league_manager","conversation_id":"","message":{"body":{"password":"[REDACTED]","rounds":[1,2]},"type":"SCHEDULE"},"prev_hash":""}`,
		`{"log_id":"","timestamp":"","direction":"event","source":"league_manager","destination":"league_manager","conversation_id":"","message":{"body":null,"type":"MATCH_ABANDONED"},"prev_hash":""}`,
		`{"log_id":"","timestamp":"","direction":"recovery","source":"league_manager","destination":"league_manager","conversation_id":"","message":{"torn_bytes_removed":6,"type":"AUDIT_RECOVERY"},"prev_hash":""}`,
	}
	entries, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckChain(entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(want) {
		t.Fatalf("%d lines, want %d", len(entries), len(want))
	}
	for i, e := range entries {
		if _, err := protocol.ParseTime(e.Timestamp); err != nil {
			t.Errorf("line %d: %v", i+1, err)
		}
		if got := varying.ReplaceAllString(string(e.Raw), `"$1":""`); got != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, got, want[i])
		}
	}
}

// What the writer writes, the reader reads back: every line, chained, and the mark the
// database would record is the log's last line.
func TestWrittenLogReadsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "audit.jsonl")
	a := open(t, path)
	if n, h := a.Mark(); n != 0 || h != "" {
		t.Errorf("mark of an empty log %d %q, want 0 \"\"", n, h)
	}
	if err := a.Record(protocol.Exchange{Peer: "referee:r1", ConversationID: "c1", Request: []byte(`{"id":1}`)}); err != nil {
		t.Fatal(err)
	}
	if err := a.Record(protocol.Exchange{Peer: "player:p1", Inbound: true, ConversationID: "c2", Request: []byte(`{"id":2}`), Response: []byte(`{"id":2}`)}); err != nil {
		t.Fatal(err)
	}
	if err := a.Note(EventRefereeLost, map[string]string{"referee_id": "r1"}); err != nil {
		t.Fatal(err)
	}
	lines, hash := a.Mark()
	live, err := a.Entries()
	if err != nil {
		t.Fatal(err)
	}
	// Reading back does not move the end: the next line follows the last.
	if err := a.Note(EventRefereeBack, map[string]string{"referee_id": "r1"}); err != nil {
		t.Fatal(err)
	}
	closeLog(t, a)

	entries, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 4 || len(entries) != 5 || string(live[3].Raw) != string(entries[3].Raw) {
		t.Fatalf("Entries read %d lines while open, the file has %d afterwards; want 4, then 5 with the same first four", len(live), len(entries))
	}
	entries = entries[:4]
	if err := CheckChain(entries); err != nil {
		t.Fatal(err)
	}
	if lines != 4 || len(entries) != 4 {
		t.Fatalf("mark %d lines, read %d, want 4", lines, len(entries))
	}
	if err := CheckMark(entries, lines, hash); err != nil {
		t.Errorf("mark of the writer: %v", err)
	}
	type line struct {
		dir      Direction
		src, dst string
		conv     string
	}
	want := []line{
		{DirRequest, self, "referee:r1", "c1"},
		{DirRequest, "player:p1", self, "c2"},
		{DirResponse, self, "player:p1", "c2"},
		{DirEvent, self, self, ""},
	}
	for i, e := range entries {
		if e.Line != i+1 {
			t.Errorf("entry %d has line %d", i, e.Line)
		}
		if got := (line{e.Direction, e.Source, e.Destination, e.ConversationID}); got != want[i] {
			t.Errorf("line %d: %+v, want %+v", i+1, got, want[i])
		}
	}
	var ev struct {
		Type Event `json:"type"`
		Body struct {
			RefereeID string `json:"referee_id"`
		} `json:"body"`
	}
	if err := json.Unmarshal(entries[3].Message, &ev); err != nil || ev.Type != EventRefereeLost || ev.Body.RefereeID != "r1" {
		t.Errorf("event %s (%v), want REFEREE_LOST of r1", entries[3].Message, err)
	}
}

// A torn last line is cut, a recovery line says so, and the chain and the mark continue
// from the last complete line, across reopenings.
func TestOpenRecoversTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := open(t, path)
	if err := a.Note(EventSchedule, nil); err != nil {
		t.Fatal(err)
	}
	closeLog(t, a)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	torn := `{"log_id":"x","direction":"requ`
	if err := os.WriteFile(path, append(bytes.Clone(before), torn...), 0o600); err != nil {
		t.Fatal(err)
	}

	a = open(t, path)
	if n, _ := a.Mark(); n != 2 {
		t.Errorf("mark after recovery: %d lines, want 2", n)
	}
	if err := a.Note(EventLeagueResumed, nil); err != nil {
		t.Fatal(err)
	}
	closeLog(t, a)
	a = open(t, path) // nothing torn: no second recovery
	lines, hash := a.Mark()
	closeLog(t, a)

	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(after, before) {
		t.Fatal("the recovery changed the complete lines")
	}
	entries, err := Parse(bytes.NewReader(after))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckChain(entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 || lines != 3 {
		t.Fatalf("%d lines, mark %d, want 3", len(entries), lines)
	}
	if err := CheckMark(entries, lines, hash); err != nil {
		t.Error(err)
	}
	rec := entries[1]
	var msg map[string]any
	_ = json.Unmarshal(rec.Message, &msg)
	if rec.Direction != DirRecovery || msg["type"] != string(EventAuditRecovery) || msg["torn_bytes_removed"] != float64(len(torn)) {
		t.Errorf("line after the torn one %s, want a recovery of %d bytes", rec.Raw, len(torn))
	}
}

func TestTamperingIsFoundWithItsLine(t *testing.T) {
	orig := sampleLog(t)
	edit := func(i int) [][]byte {
		ls := append([][]byte(nil), orig...)
		ls[i] = bytes.Replace(ls[i], []byte(`"direction":"`), []byte(`"direction":"x`), 1)
		return ls
	}
	remove := func(i int) [][]byte {
		return append(append([][]byte(nil), orig[:i]...), orig[i+1:]...)
	}
	swap := func(i int) [][]byte {
		ls := append([][]byte(nil), orig...)
		ls[i], ls[i+1] = ls[i+1], ls[i]
		return ls
	}
	cases := []struct {
		name string
		log  [][]byte
		line int
	}{
		{"edited line 10", edit(9), 11},
		{"removed line 10", remove(9), 10},
		{"removed first line", remove(0), 1},
		{"lines 20 and 21 swapped", swap(19), 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			entries, err := Parse(bytes.NewReader(join(tc.log)))
			if err != nil {
				t.Fatal(err)
			}
			err = CheckChain(entries)
			if got := lineOf(err); got != tc.line {
				t.Errorf("got %v (line %d), want line %d", err, got, tc.line)
			}
		})
	}
}

func TestCutAndTornLogsAreFound(t *testing.T) {
	orig := sampleLog(t)
	full, err := Parse(bytes.NewReader(join(orig)))
	if err != nil {
		t.Fatal(err)
	}
	markLines, markHash := len(full), full[len(full)-1].Hash()
	if err := CheckMark(full, markLines, markHash); err != nil {
		t.Fatalf("intact log: %v", err)
	}
	cut, err := Parse(bytes.NewReader(join(orig[:len(orig)-3])))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckChain(cut); err != nil {
		t.Fatalf("a cut log still chains: %v", err)
	}
	if err := CheckMark(cut, markLines, markHash); lineOf(err) != len(orig)-3 {
		t.Errorf("cut log: got %v, want the last line named", err)
	}
	rewritten := rechain(t, append(append([][]byte(nil), orig[:len(orig)-1]...), []byte(`{"log_id":"x","timestamp":"t","direction":"event","message":{"type":"NOTE"},"prev_hash":""}`)))
	rw, err := Parse(bytes.NewReader(join(rewritten)))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckMark(rw, markLines, markHash); lineOf(err) != markLines {
		t.Errorf("rewritten log: got %v, want line %d", err, markLines)
	}
	torn := append(join(orig), []byte(`{"log_id":"half`)...)
	if _, err := Parse(bytes.NewReader(torn)); lineOf(err) != len(orig)+1 {
		t.Errorf("torn line: got %v, want line %d", err, len(orig)+1)
	}
}

func TestRedactKeepsLinesWholeAndFindsEscapedKeys(t *testing.T) {
	cases := []struct {
		name, raw, want string
	}{
		{"no secret, indented", "{\n  \"a\": 1,\n  \"b\": [1, 2]\n}", `{"a":1,"b":[1,2]}`},
		{"plain secret", `{"x":{"auth_token":"s3cret"}}`, `{"x":{"auth_token":"[REDACTED]"}}`},
		{"escaped key", `{"auth\u005ftoken":"s3cret"}`, `{"auth_token":"[REDACTED]"}`},
		{"not an object", `[1,{"token":"s3cret"}]`, `{"value":[1,{"token":"[REDACTED]"}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(redact([]byte(tc.raw))); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// The file format is encoding/json's: a line as Log writes it is byte for byte what
// encoding/json writes for its entry, HTML escapes and compacted messages included.
func TestLineBytesAreEncodingJSONs(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(filepath.Join(dir, "audit.jsonl"), "league_manager")
	if err != nil {
		t.Fatal(err)
	}
	msgs := []string{
		`{"a": 1, "b": "<script>&</script>", "c": [1, 2.50, 1e3], "d": "\u2028é\ud83d\ude00"}`,
		`{"type":"X","body":{"nested":{"k":"v"},"n":null,"t":true}}`,
		`"just a string"`,
	}
	for _, m := range msgs {
		if err := l.Record(protocol.Exchange{Inbound: true, Peer: "player:p1", Request: []byte(m)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := Read(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < len(msgs) {
		t.Fatalf("%d lines, want at least %d", len(entries), len(msgs))
	}
	for _, e := range entries {
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e.Raw, want) {
			t.Errorf("line %d:\n got %s\nwant %s", e.Line, e.Raw, want)
		}
	}
}
