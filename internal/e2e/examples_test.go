package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

// nodeExample returns the node interpreter and the path of a script in examples/node.
// The test fails without node: .ci/deps.sh installs it.
func nodeExample(t *testing.T, script string) (string, string) {
	t.Helper()
	return interpreter(t, "node"), filepath.Join(moduleRoot(), "examples", "node", script)
}

// The example players of examples/ (Python and Node) play a whole league against our
// players under our referees: every match ends normally, no violation names anyone (so
// the examples joined every match, answered every move in time with a legal move and
// with a credential the referee accepted), the standings agree with a recount, and the
// examples leave by themselves on LEAGUE_SHUTDOWN.
func TestExamplePlayersPlayALeague(t *testing.T) {
	py, pyScript := pythonExample(t, "python/tic_tac_toe_player.py")
	node, jsScript := nodeExample(t, "tic_tac_toe_player.js")
	examples := map[string]*proc{}
	run := runLeague(t, leagueOpts{players: 3, referees: 2, seed: 12, extraPlayers: func(t *testing.T, lmURL string) int {
		examples["py1"] = startProc(t, "py1", nil, py, pyScript, "--id", "py1", "--league", lmURL)
		examples["js1"] = startProc(t, "js1", nil, node, jsScript, "--id", "js1", "--league", lmURL)
		return len(examples)
	}})
	run.checkLeague(t, 1)

	checkCleanLeague(t, run, 10, 4, "", examples)
	// Graceful shutdown: each example acknowledges LEAGUE_SHUTDOWN and exits 0 unasked.
	checkLeftOnShutdown(t, run, examples, func(string) []string { return nil })
}

// auditShutdownAcks names the agents (player:py1) whose LEAGUE_SHUTDOWN_ACK the League
// Manager's audit log holds.
func auditShutdownAcks(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var e struct {
			Direction string `json:"direction"`
			Source    string `json:"source"`
			Message   struct {
				Result *protocol.Message `json:"result"`
			} `json:"message"`
		}
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("audit line: %v", err)
		}
		if e.Direction == "response" && e.Message.Result != nil && e.Message.Result.Envelope.MessageType == protocol.LeagueShutdownAck {
			acked[e.Source] = true
		}
	}
	return acked
}

// checkCleanLeague checks the results of run: want of them, each ended by play with no
// violation (refereed by referee, when it is not ""), and every agent of agents played
// perPlayer matches.
func checkCleanLeague(t *testing.T, run *leagueRun, want, perPlayer int, referee string, agents map[string]*proc) {
	t.Helper()
	played := map[string]int{}
	rs := results(t, run)
	for _, r := range rs {
		for _, p := range r.players {
			played[p]++
		}
		if (referee != "" && r.referee != referee) || r.termination != "normal" || r.forfeit != "" {
			t.Errorf("match %v refereed by %q ended %q (loser %q, forfeit %q), want normal", r.players, r.referee, r.termination, r.loser, r.forfeit)
		}
		if vs, _ := r.metadata["violations"].([]any); len(vs) > 0 {
			t.Errorf("match %v has violations %v, want none", r.players, vs)
		}
	}
	if len(rs) != want {
		t.Errorf("%d results, want %d", len(rs), want)
	}
	for id := range agents {
		if played[id] != perPlayer {
			t.Errorf("%s played %d matches, want %d", id, played[id], perPlayer)
		}
	}
}

// checkLeftOnShutdown stops run's League Manager and checks that each of agents leaves by
// itself on LEAGUE_SHUTDOWN: exit code 0, each of logged(id) in its output, and its
// LEAGUE_SHUTDOWN_ACK in the audit log.
func checkLeftOnShutdown(t *testing.T, run *leagueRun, agents map[string]*proc, logged func(id string) []string) {
	t.Helper()
	if code := run.lm.stop(t); code != 0 {
		t.Errorf("league manager exited %d on SIGTERM, want 0", code)
	}
	for id, p := range agents {
		select {
		case <-p.done:
			out := p.out.String()
			if code := p.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("%s exited %d, want 0; output:\n%s", id, code, out)
			}
			for _, want := range logged(id) {
				if !strings.Contains(out, want) {
					t.Errorf("%s did not log %q; output:\n%s", id, want, out)
				}
			}
		case <-time.After(15 * time.Second):
			t.Errorf("%s did not leave on LEAGUE_SHUTDOWN", id)
		}
	}
	acked := auditShutdownAcks(t, run.audit)
	for id := range agents {
		if !acked["player:"+id] {
			t.Errorf("the audit log has no LEAGUE_SHUTDOWN_ACK from %s", id)
		}
	}
}

// fakeLeague is a League Manager that only registers one player, for driving an example
// player message by message.
type fakeLeague struct {
	url        string
	token      string
	registered chan registration // the registration, once its AGENT_READY_REQUEST arrived
}

type registration struct {
	PlayerID    string   `json:"player_id"`
	EndpointURL string   `json:"endpoint_url"`
	GameTypes   []string `json:"game_types"`
}

func startFakeLeague(t *testing.T, v *protocol.Validator) *fakeLeague {
	t.Helper()
	f := &fakeLeague{token: uuid.NewString(), registered: make(chan registration, 1)}
	var reg registration
	h := protocol.HandlerFunc(func(ctx context.Context, m *protocol.Message) (*protocol.Message, error) {
		switch m.Envelope.MessageType {
		case protocol.RegisterPlayerRequest:
			if err := m.Decode(&reg); err != nil {
				return nil, err
			}
			ans, err := m.Reply(protocol.RegisterPlayerResponse, protocol.SenderLeagueManager, map[string]any{
				"status": "registered", "auth_token": f.token, "league_id": "fake-league", "player_id": reg.PlayerID,
				"features": []string{protocol.FeatureSignedAssignments, protocol.FeatureMatchCredentials}})
			if ans != nil {
				ans.Envelope.LeagueID = "fake-league"
			}
			return ans, err
		case protocol.AgentReadyRequest:
			if m.Envelope.AuthToken != f.token {
				return nil, protocol.Errorf(protocol.ReasonUnauthorized, "AGENT_READY_REQUEST without the player's token")
			}
			f.registered <- reg
			return m.Reply(protocol.AgentReadyResponse, protocol.SenderLeagueManager, map[string]any{
				"status": "acknowledged", "agent_id": reg.PlayerID, "agent_type": "player", "agent_state": "ACTIVE"})
		}
		return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "fake league takes no %s", m.Envelope.MessageType)
	})
	srv := httptest.NewServer(protocol.NewServer(h, v, nil, zerolog.Nop()))
	t.Cleanup(srv.Close)
	f.url = srv.URL + "/mcp"
	return f
}

// Each example player, driven message by message by a fake League Manager and referee:
// it registers for tic-tac-toe and says it is ready with its token, joins with the match
// credential and refuses a wrong one, wins when it can and blocks otherwise, echoes the
// step and the conversation, and leaves on LEAGUE_SHUTDOWN carrying its own token only.
// Every answer must satisfy its schema (the client checks).
func TestExamplePlayersProtocol(t *testing.T) {
	py, pyScript := pythonExample(t, "python/tic_tac_toe_player.py")
	node, jsScript := nodeExample(t, "tic_tac_toe_player.js")
	for _, ex := range []struct{ name, bin, script string }{{"python", py, pyScript}, {"node", node, jsScript}} {
		t.Run(ex.name, func(t *testing.T) {
			v, err := protocol.NewValidator()
			if err != nil {
				t.Fatal(err)
			}
			lm := startFakeLeague(t, v)
			// The fake League Manager has no relay: the example listens (--port 0).
			p := startProc(t, ex.name, nil, ex.bin, ex.script, "--id", "ex1", "--port", "0", "--league", lm.url)
			var reg registration
			select {
			case reg = <-lm.registered:
			case <-p.done:
				t.Fatalf("the example exited before registering; stderr:\n%s", p.out.String())
			case <-time.After(20 * time.Second):
				t.Fatal("the example did not register")
			}
			if reg.PlayerID != "ex1" || reg.EndpointURL != p.url || !slices.Contains(reg.GameTypes, "tic_tac_toe") {
				t.Errorf("registration %+v, want player ex1 at %s for tic_tac_toe", reg, p.url)
			}
			c := protocol.NewClient(v, nil)
			defer c.Close()
			matchID := "r01-m01"
			credential := protocol.MatchCredential(lm.token, matchID)
			send := func(messageType, sender, token string, payload any) (*protocol.Message, error) {
				t.Helper()
				m, err := protocol.NewMessage(messageType, sender, payload)
				if err != nil {
					t.Fatal(err)
				}
				m.Envelope.AuthToken = token
				if sender != protocol.SenderLeagueManager {
					m.Envelope.MatchID, m.Envelope.GameType = matchID, "tic_tac_toe"
				}
				ans, err := c.Call(context.Background(), p.url, m, protocol.CallOptions{Timeout: 5 * time.Second, Retry: protocol.RetryPolicy{Attempts: 1}})
				if ans != nil && ans.Envelope.Sender != "player:ex1" {
					t.Errorf("%s answered by %q, want player:ex1", messageType, ans.Envelope.Sender)
				}
				return ans, err
			}
			// answered checks a successful answer of the given type, showing the credential.
			answered := func(what string, ans *protocol.Message, err error, messageType string) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if ans.Envelope.MessageType != messageType || ans.Envelope.MatchID != matchID || ans.Envelope.AuthToken != credential {
					t.Errorf("%s: answered %s for match %q with auth_token %q, want %s for %s with the match credential",
						what, ans.Envelope.MessageType, ans.Envelope.MatchID, ans.Envelope.AuthToken, messageType, matchID)
				}
			}
			refused := func(what string, err error, want protocol.Reason) {
				t.Helper()
				if got := protocol.ReasonOf(err); got != want {
					t.Errorf("%s: got %v (reason %q), want %s", what, err, got, want)
				}
			}
			referee := protocol.RefereeSender("ref1")
			invitation := map[string]any{"match_id": matchID, "game_type": "tic_tac_toe", "opponents": []string{"p02"}}

			_, err = send(protocol.GameInvitation, referee, strings.Repeat("0", 64), invitation)
			refused("invitation with a wrong credential", err, protocol.ReasonUnauthorized)
			ans, err := send(protocol.GameInvitation, referee, credential, invitation)
			answered("invitation", ans, err, protocol.GameJoinAck)
			var ack struct {
				Status string `json:"status"`
			}
			if ans != nil && (ans.Decode(&ack) != nil || ack.Status != "accepted") {
				t.Errorf("GAME_JOIN_ACK %s, want accepted", ans.Payload)
			}

			for _, tc := range []struct {
				name, mark string
				board      [3][3]string
				row, col   int
			}{
				{"empty board: the centre", "X", [3][3]string{}, 1, 1},
				{"win in the top row", "X", [3][3]string{{"X", "X", ""}, {"O", "O", ""}, {"", "", ""}}, 0, 2},
				{"block the top row", "O", [3][3]string{{"X", "X", ""}, {"", "O", ""}, {"", "", ""}}, 0, 2},
				{"win beats blocking", "O", [3][3]string{{"X", "X", ""}, {"O", "O", ""}, {"X", "", ""}}, 1, 2},
				{"a corner after the centre", "O", [3][3]string{{"", "", ""}, {"", "X", ""}, {"", "", ""}}, 0, 0},
			} {
				marks := 0
				for _, row := range tc.board {
					for _, cell := range row {
						if cell != "" {
							marks++
						}
					}
				}
				step := marks + 1
				ans, err := send(protocol.RequestMove, referee, credential, map[string]any{"step_number": step, "deadline_ms": 30000,
					"step_context": map[string]any{"board": tc.board, "your_mark": tc.mark, "move_number": step}})
				answered(tc.name, ans, err, protocol.MoveResponse)
				var mv struct {
					MovePayload struct {
						Row *int `json:"row"`
						Col *int `json:"col"`
					} `json:"move_payload"`
					StepNumber *int `json:"step_number"`
				}
				if ans == nil || ans.Decode(&mv) != nil || mv.MovePayload.Row == nil || mv.MovePayload.Col == nil {
					t.Errorf("%s: MOVE_RESPONSE without a {row, col} move", tc.name)
					continue
				}
				if *mv.MovePayload.Row != tc.row || *mv.MovePayload.Col != tc.col || mv.StepNumber == nil || *mv.StepNumber != step {
					t.Errorf("%s: played (%d, %d) at step %v, want (%d, %d) at step %d", tc.name, *mv.MovePayload.Row, *mv.MovePayload.Col, mv.StepNumber, tc.row, tc.col, step)
				}
			}

			ans, err = send(protocol.GameOver, referee, credential, map[string]any{"outcome": "win", "final_state": map[string]any{}})
			answered("GAME_OVER", ans, err, protocol.GameOverAck)
			_, err = send(protocol.MatchAssignment, protocol.SenderLeagueManager, lm.token, map[string]any{"match_id": matchID, "round_id": "r01",
				"game_type": "tic_tac_toe", "players": []string{"ex1", "p02"}})
			refused("MATCH_ASSIGNMENT to a player", err, protocol.ReasonUnsupportedMessage)
			_, err = send(protocol.LeagueShutdown, protocol.SenderLeagueManager, uuid.NewString(), map[string]any{"reason": "test"})
			refused("LEAGUE_SHUTDOWN with another token", err, protocol.ReasonUnauthorized)
			select {
			case <-p.done:
				t.Fatal("the example left on a LEAGUE_SHUTDOWN that did not carry its token")
			default:
			}
			ans, err = send(protocol.LeagueShutdown, protocol.SenderLeagueManager, lm.token, map[string]any{"reason": "test"})
			if err != nil || ans.Envelope.MessageType != protocol.LeagueShutdownAck {
				t.Fatalf("LEAGUE_SHUTDOWN: %v, want LEAGUE_SHUTDOWN_ACK", err)
			}
			select {
			case <-p.done:
				if code := p.cmd.ProcessState.ExitCode(); code != 0 {
					t.Errorf("exited %d after LEAGUE_SHUTDOWN, want 0; stderr:\n%s", code, p.out.String())
				}
			case <-time.After(15 * time.Second):
				t.Error("still running after LEAGUE_SHUTDOWN")
			}
		})
	}
}
