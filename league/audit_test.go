package league

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/protocol"
)

// auditLine is one decoded line of audit.jsonl with its raw bytes.
type auditLine struct {
	raw   []byte
	entry audit.Entry
}

// readAudit reads the audit log and checks that every line is a complete entry and that
// each prev_hash is the SHA-256 of the previous line's bytes (empty for the first line).
func readAudit(t *testing.T, path string) []auditLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("audit log does not end with a newline")
	}
	var out []auditLine
	prev := ""
	for i, raw := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if len(raw) == 0 {
			break
		}
		var e audit.Entry
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("audit line %d is not an entry: %v: %s", i+1, err, raw)
		}
		if e.PrevHash != prev {
			t.Fatalf("audit line %d: prev_hash %q, want %q (hash of line %d)", i+1, e.PrevHash, prev, i)
		}
		if e.LogID == "" || e.Timestamp == "" || e.Direction == "" || e.Source == "" || e.Destination == "" || len(e.Message) == 0 {
			t.Errorf("audit line %d lacks a field: %s", i+1, raw)
		}
		if _, err := protocol.ParseTime(e.Timestamp); err != nil {
			t.Errorf("audit line %d: %v", i+1, err)
		}
		sum := sha256.Sum256(raw)
		prev = hex.EncodeToString(sum[:])
		out = append(out, auditLine{raw: raw, entry: e})
	}
	return out
}

// Every exchange, inbound or outbound, accepted or refused, is a request line and a
// response line; the lines form a hash chain; no token or credential is written.
func TestAuditLogRecordsEveryExchange(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	type sent struct{ conv, sender string }
	var inbound []sent
	send := func(msg *protocol.Message, wantOK bool) {
		t.Helper()
		inbound = append(inbound, sent{msg.Envelope.ConversationID, msg.Envelope.Sender})
		if _, perr := h.call(msg); (perr == nil) != wantOK {
			t.Fatalf("%s: error %v, want ok=%v", msg.Envelope.MessageType, perr, wantOK)
		}
	}
	f := newFakeReferee(t, "ref1")
	refMsg := refereeRegistration(t, "ref1", f.url(), nil)
	send(playerRegistration(t, "p1"), false) // NO_REFEREE_REGISTERED
	send(refMsg, true)
	refToken := h.registrationToken(h.ok(refMsg)) // the retry is audited too
	inbound = append(inbound, sent{refMsg.Envelope.ConversationID, refMsg.Envelope.Sender})
	tokens := map[string]string{}
	for _, id := range []string{"p1", "p2"} {
		m := playerRegistration(t, id)
		inbound = append(inbound, sent{m.Envelope.ConversationID, m.Envelope.Sender})
		tokens[id] = h.registrationToken(h.ok(m))
	}
	send(adminStart(t, "wrong-admin-token"), false)
	send(adminStart(t, testAdminToken), true)
	h.settle()
	_, ms := h.round()
	a := f.assignment(t, ms[0].ID)
	for _, p := range ms[0].Players {
		h.addSecret(protocol.MatchCredential(tokens[p], ms[0].ID))
	}
	send(h.report("ref1", refToken, ms[0], decided(ms[0], 0)), true)
	send(standingsQuery(t, "player:p1", tokens["p1"], ""), true)
	send(standingsQuery(t, "player:p1", tokens["p2"], ""), false) // SENDER_MISMATCH
	bad := standingsQuery(t, "player:p2", tokens["p2"], "")
	bad.Envelope.Protocol = "league.v1"
	send(bad, false)
	// A body that is not JSON has no sender or conversation.
	if resp, _ := h.process([]byte(`{"jsonrpc": "2.0", "method": `)); resp.Error == nil {
		t.Fatal("bad JSON accepted")
	}
	h.stop()

	lines := readAudit(t, h.auditPath())
	for _, s := range h.secretList() {
		for i, l := range lines {
			if bytes.Contains(l.raw, []byte(s)) {
				t.Errorf("audit line %d holds secret %q: %s", i+1, s, l.raw)
			}
		}
	}
	// Registration answers carry the token, redacted in the log.
	redactedTokens := 0
	for _, l := range lines {
		if bytes.Contains(l.raw, []byte(`"auth_token":"[REDACTED]"`)) {
			redactedTokens++
		}
	}
	if redactedTokens < 5 {
		t.Errorf("%d audit lines hold a redacted auth_token, want at least 5", redactedTokens)
	}

	// pair finds the request line of conv from src to dst and checks the response follows.
	pair := func(conv, src, dst string) {
		t.Helper()
		for i, l := range lines {
			e := l.entry
			if e.ConversationID != conv || e.Direction != "request" || e.Source != src || e.Destination != dst {
				continue
			}
			if i+1 >= len(lines) {
				break
			}
			r := lines[i+1].entry
			if r.Direction != "response" || r.ConversationID != conv || r.Source != dst || r.Destination != src {
				t.Errorf("line after request %s %s->%s is %+v, want its response", conv, src, dst, r)
			}
			var req, resp struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(e.Message, &req)
			_ = json.Unmarshal(r.Message, &resp)
			if string(req.ID) != string(resp.ID) {
				t.Errorf("conversation %s: response id %s, request id %s", conv, resp.ID, req.ID)
			}
			return
		}
		t.Errorf("no audited exchange %s %s -> %s", conv, src, dst)
	}
	for _, s := range inbound {
		pair(s.conv, s.sender, protocol.SenderLeagueManager)
	}
	// The outbound MATCH_ASSIGNMENT and the referee's answer.
	pair(a.Envelope.ConversationID, protocol.SenderLeagueManager, "referee:ref1")
	// The bad JSON: source unknown, body kept (as text) for forensics.
	last := lines[len(lines)-2]
	if last.entry.Source != "unknown" || !bytes.Contains(last.entry.Message, []byte("unparsed")) {
		t.Errorf("bad JSON request line %s, want source unknown and the unparsed body", last.raw)
	}
	var schedules int
	for _, l := range lines {
		if l.entry.Direction == "event" && bytes.Contains(l.entry.Message, []byte(`"type":"SCHEDULE"`)) {
			schedules++
		}
	}
	if schedules != 1 {
		t.Errorf("%d SCHEDULE events, want 1", schedules)
	}
}

// A body that is not JSON is logged as text; a token in it must still not reach the log.
func TestAuditLogRedactsTokensInUnparsedBodies(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, []string{"p1"})
	tok := l.playerTokens["p1"]
	q := requestBody(t, standingsQuery(t, "player:p1", tok, ""))
	for _, body := range [][]byte{
		append(bytes.Clone(q[:len(q)-1]), ",}"...),                               // trailing comma
		bytes.ReplaceAll(q, []byte(`"auth_token":"`), []byte(`"auth_token": "`)), // still JSON, control
		append([]byte("garbage "), q...),
		q[:len(q)/2+40],
		bytes.ReplaceAll(q, []byte(`"auth_token":`), []byte(`'auth_token' :`)),
	} {
		h.process(body)
	}
	h.stop()
	data, err := os.ReadFile(h.auditPath())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), tok) {
		t.Errorf("audit log holds the player's token %s", tok)
	}
	// The rest of a bad body is still there for forensics.
	unparsed := 0
	for _, l := range readAudit(t, h.auditPath()) {
		if bytes.Contains(l.entry.Message, []byte("unparsed")) && bytes.Contains(l.entry.Message, []byte("QUERY_STANDINGS")) {
			unparsed++
		}
	}
	if unparsed != 4 {
		t.Errorf("%d unparsed QUERY_STANDINGS bodies in the audit log, want 4", unparsed)
	}
}

// A torn last line (a crash mid-write) is cut, an AUDIT_RECOVERY entry says so, and the
// chain continues from the last complete line, across restarts.
func TestAuditLogRecoversTornLine(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.register([]string{"ref1"}, nil, []string{"p1"})
	h.stop()
	before := readAudit(t, h.auditPath())
	f, err := os.OpenFile(h.auditPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	torn := `{"log_id":"x","direction":"requ`
	if _, err := f.WriteString(torn); err != nil {
		t.Fatal(err)
	}
	f.Close()

	h.start()
	h.register([]string{"ref2"}, nil, nil)
	h.restart()
	h.register([]string{"ref3"}, nil, nil)
	h.stop()
	after := readAudit(t, h.auditPath())
	if len(after) <= len(before)+1 {
		t.Fatalf("audit log has %d lines after recovery, want more than %d", len(after), len(before)+1)
	}
	for i := range before {
		if !bytes.Equal(after[i].raw, before[i].raw) {
			t.Fatalf("line %d changed by the recovery", i+1)
		}
	}
	rec := after[len(before)].entry
	var msg map[string]any
	_ = json.Unmarshal(rec.Message, &msg)
	if rec.Direction != "recovery" || msg["type"] != "AUDIT_RECOVERY" || msg["torn_bytes_removed"] != float64(len(torn)) {
		t.Errorf("first line after the torn one %+v %v, want an AUDIT_RECOVERY of %d bytes", rec, msg, len(torn))
	}
}
