package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/protocol"
)

// syntheticLog writes a complete, chained audit log of a tic-tac-toe league of n
// players in which every match is played with first legal moves through the rules.
func syntheticLog(tb testing.TB, n int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	prev := ""
	line := 0
	write := func(direction audit.Direction, conv string, msg any) {
		line++
		m, _ := json.Marshal(msg)
		b, _ := json.Marshal(map[string]any{
			"log_id": fmt.Sprintf("00000000-0000-4000-8000-%012d", line), "timestamp": "2026-01-01T00:00:00Z",
			"direction": direction, "source": "s", "destination": "d", "conversation_id": conv, "message": json.RawMessage(m), "prev_hash": prev,
		})
		h := sha256.Sum256(b)
		prev = hex.EncodeToString(h[:])
		buf.Write(b)
		buf.WriteByte('\n')
	}
	exchange := func(typ, ansType, sender string, env map[string]any, payload any) {
		conv := fmt.Sprintf("c-%d", line)
		e := map[string]any{"message_type": typ, "sender": sender}
		for k, v := range env {
			e[k] = v
		}
		write(audit.DirRequest, conv, map[string]any{"params": map[string]any{"envelope": e, "payload": payload}})
		write(audit.DirResponse, conv, map[string]any{"result": map[string]any{"envelope": map[string]any{"message_type": ansType, "league_id": "bench"}, "payload": map[string]any{}}})
	}
	var ids []string
	for i := 1; i <= n; i++ {
		ids = append(ids, fmt.Sprintf("p%03d", i))
	}
	exchange("REGISTER_REFEREE_REQUEST", "REGISTER_REFEREE_RESPONSE", "referee:ref1", nil, map[string]any{"referee_id": "ref1"})
	for _, id := range ids {
		exchange("REGISTER_PLAYER_REQUEST", "REGISTER_PLAYER_RESPONSE", "player:"+id, nil, map[string]any{"player_id": id})
	}
	s, err := schedule.Build(ids, 1, 1)
	if err != nil {
		tb.Fatal(err)
	}
	var rounds []Round
	for _, r := range s.Rounds {
		rr := Round{ID: r.ID, Number: r.Number, Cycle: r.Cycle, Bye: r.Bye}
		for _, m := range r.Matches {
			rr.Matches = append(rr.Matches, Match{ID: m.ID, Players: m.Players, Seed: m.Seed})
		}
		rounds = append(rounds, rr)
	}
	write(audit.DirEvent, "", map[string]any{"type": audit.EventSchedule, "body": map[string]any{"league_id": "bench", "game_type": "tic_tac_toe", "seed": 1, "players": ids, "rounds": rounds}})
	g, _ := game.Default().New(game.TypeTicTacToe, nil)
	for _, r := range s.Rounds {
		for _, m := range r.Matches {
			env := map[string]any{"match_id": m.ID, "round_id": r.ID}
			exchange("MATCH_ASSIGNMENT", "MATCH_ASSIGNMENT_ACK", "league_manager", env, map[string]any{"scoring": protocol.Scoring{Win: 3, Draw: 1, Loss: 0}})
			state := g.NewState(m.Seed)
			var moves []protocol.MoveRecord
			for step := 1; !state.Terminal(); step++ {
				i := state.ToMove()[0]
				mv := state.ForcedMove(i)
				moves = append(moves, protocol.MoveRecord{Step: step, Player: m.Players[i], Move: mv, Outcome: "SUCCESS"})
				state, _ = state.Apply([]json.RawMessage{mv})
			}
			o := state.Outcomes()
			pts := map[string]int{}
			for i, id := range m.Players {
				pts[id] = map[string]int{"win": 3, "draw": 1, "loss": 0}[string(o[i])]
			}
			exchange("MATCH_RESULT_REPORT", "MATCH_RESULT_ACK", "referee:ref1", env, map[string]any{
				"game_type": "tic_tac_toe", "players": m.Players,
				"outcome": map[string]string{m.Players[0]: string(o[0]), m.Players[1]: string(o[1])}, "points": pts,
				"game_metadata": map[string]any{"match_seed": m.Seed, "moves": moves, "final_state": state.Final(), "termination": "normal"},
			})
		}
	}
	return buf.Bytes()
}

func TestSyntheticLogVerifies(t *testing.T) {
	entries, err := audit.Parse(bytes.NewReader(syntheticLog(t, 7)))
	if err != nil {
		t.Fatal(err)
	}
	if err := audit.CheckChain(entries); err != nil {
		t.Fatal(err)
	}
	l, err := Rebuild(entries)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Results) != 21 {
		t.Fatalf("got %d results, want 21", len(l.Results))
	}
	if p := l.VerifyMatches(game.Default()); len(p) > 0 {
		t.Fatal(p)
	}
}

// BenchmarkReplayAndVerify1225 reads, chains, rebuilds and re-plays a 50-player,
// 1225-match log.
func BenchmarkReplayAndVerify1225(b *testing.B) {
	log := syntheticLog(b, 50)
	b.SetBytes(int64(len(log)))
	b.ResetTimer()
	for b.Loop() {
		entries, err := audit.Parse(bytes.NewReader(log))
		if err != nil {
			b.Fatal(err)
		}
		if err := audit.CheckChain(entries); err != nil {
			b.Fatal(err)
		}
		l, err := Rebuild(entries)
		if err != nil {
			b.Fatal(err)
		}
		if len(l.Results) != 1225 {
			b.Fatalf("got %d results", len(l.Results))
		}
		if _, err := l.Final(); err != nil {
			b.Fatal(err)
		}
		if p := l.VerifyMatches(game.Default()); len(p) > 0 {
			b.Fatal(p[0])
		}
	}
}
