package uci

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/testtools"
	"github.com/agentleague/agentleague/player/strategy"
)

// stockfishPath is Debian's Stockfish (make deps installs it), or one on PATH.
func stockfishPath(t *testing.T) string {
	t.Helper()
	p, err := testtools.DebianTool("stockfish")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStockfish has the real engine find mates in one, from a FEN and from a match's moves,
// and play a short game against itself at two strengths, every move legal.
func TestStockfish(t *testing.T) {
	cfg := Config{Path: stockfishPath(t), Nodes: 20000, Options: []Option{{"Threads", "1"}, {"Hash", "16"}}}
	name, err := Probe(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("engine: %s", name)

	s := newStrategy(t, cfg)
	for _, tt := range []struct {
		name string
		req  strategy.Request
		want string
	}{
		{"back-rank mate from a FEN", fenRequest(t, "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", answeredMS), "a1a8"},
		{"scholar's mate from the moves", chessRequest(t, answeredMS, "e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6"), "h5f7"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			move, meta, err := s.MoveWithMetadata(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			wantMove(t, move, tt.want)
			var note struct {
				Engine struct {
					Name      string `json:"name"`
					ScoreMate *int   `json:"score_mate"`
				} `json:"engine"`
			}
			if err := json.Unmarshal(meta, &note); err != nil || note.Engine.Name != name || note.Engine.ScoreMate == nil || *note.Engine.ScoreMate != 1 {
				t.Errorf("got metadata %s, want %s announcing mate in 1", meta, name)
			}
		})
	}

	// One engine per colour, as in a match between two uci players.
	players := []*Strategy{newStrategy(t, cfg), newStrategy(t, Config{Path: cfg.Path, Depth: 6, Options: []Option{{"Skill Level", "3"}}})}
	g, err := game.Default().New(game.TypeChess, map[string]any{"max_plies": 40})
	if err != nil {
		t.Fatal(err)
	}
	state := g.NewState(0)
	for ply := 1; !state.Terminal(); ply++ {
		i := state.ToMove()[0]
		ctx, err := json.Marshal(state.Context(i))
		if err != nil {
			t.Fatal(err)
		}
		move, err := players[i].Move(strategy.Request{MatchID: "m1", GameType: game.TypeChess, StepNumber: ply, Context: ctx, DeadlineMS: answeredMS})
		if err != nil {
			t.Fatalf("ply %d: %v", ply, err)
		}
		parsed, err := state.ParseMove(i, move)
		if err != nil {
			t.Fatalf("ply %d: %s is not legal: %v", ply, move, err)
		}
		if state, err = state.Apply([]json.RawMessage{parsed}); err != nil {
			t.Fatal(err)
		}
	}
	final := state.Final()
	t.Logf("%s after %d plies: %s", final["termination"], len(final["moves_uci"].([]string)), final["pgn"])
	for _, p := range append(players, s) {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}
}
