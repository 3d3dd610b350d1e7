package server_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/league/replay"
	"github.com/agentleague/agentleague/protocol"
)

// A log torn at the result's exchange leaves the database ahead of it (the result
// committed, its exchange torn): verify with the database and replay against it say so
// and fail, though the torn line is last. Once the League Manager has started again (it
// cuts the line and writes what the log lacks), both pass.
func TestLogTornAtTheResultAgreesWithTheDatabaseAfterARestart(t *testing.T) {
	dir := t.TempDir()
	lm, w, ref := inFlight(t, dir, newFakeClock(), 0, nil)
	var a struct {
		MatchID  string    `json:"match_id"`
		RoundID  string    `json:"round_id"`
		GameType string    `json:"game_type"`
		Players  [2]string `json:"players"`
	}
	ref.mu.Lock()
	assignment := ref.got[0]
	ref.mu.Unlock()
	if err := assignment.Decode(&a); err != nil {
		t.Fatal(err)
	}
	win, loss := a.Players[0], a.Players[1]
	report := msgOf(t, protocol.MatchResultReport, protocol.RefereeSender("ref1"), map[string]any{
		"game_type": a.GameType, "players": a.Players, "match_id": a.MatchID, "round_id": a.RoundID,
		"outcome": map[string]string{win: "win", loss: "loss"}, "points": map[string]int{win: 3, loss: 0},
	})
	e := &report.Envelope
	e.AuthToken, e.MatchID, e.RoundID, e.GameType = assignment.Envelope.AuthToken, a.MatchID, a.RoundID, a.GameType
	if ack := w.ok(report); ack.Envelope.MessageType != protocol.MatchResultAck {
		t.Fatalf("result answered %s", ack.Envelope.MessageType)
	}
	lm.waitStatus(t, "the match completed", func(s map[string]any) bool { return matchesIn(s, "COMPLETED") == 1 })
	lm.stop()

	auditPath, dbPath := filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "league.db")
	data, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(data, []byte(`"message_type":"MATCH_RESULT_REPORT"`))
	if at < 0 {
		t.Fatal("no result report in the audit log")
	}
	torn := data[:at] // the report's line cut mid-write, the lines after it lost
	if err := os.WriteFile(auditPath, torn, 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error, wants ...string) {
		t.Helper()
		var tornTail replay.TornTailError
		if errors.As(err, &tornTail) {
			t.Errorf("%s: %v, want a failure, not only a torn tail", what, err)
		}
		for _, want := range wants {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want it to say %q", what, err, want)
			}
		}
	}
	stops := fmt.Sprintf("and the log stops at line %d: torn last line", bytes.Count(torn, []byte("\n"))+1)
	check("VerifyLog", replay.VerifyLog(&bytes.Buffer{}, auditPath, dbPath), "lines were cut from the end", stops)
	check("ReplayLog", replay.ReplayLog(&bytes.Buffer{}, auditPath, replay.ReplayOptions{CheckDB: dbPath}), "log and database differ", "the log's last line is torn", stops)

	startLM(t, dir).stop()
	if err := replay.VerifyLog(&bytes.Buffer{}, auditPath, dbPath); err != nil {
		t.Errorf("VerifyLog after the restart: %v", err)
	}
	if err := replay.ReplayLog(&bytes.Buffer{}, auditPath, replay.ReplayOptions{CheckDB: dbPath}); err != nil {
		t.Errorf("ReplayLog after the restart: %v", err)
	}
}
