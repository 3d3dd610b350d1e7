package strategy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
)

// TestPerfectNeverLoses plays perfect as X and as O against every possible line of the
// opponent, through the real rules, and fails on any lost game.
func TestPerfectNeverLoses(t *testing.T) {
	g := mustGame(t, game.TypeTicTacToe, nil)
	for seat, mark := range []string{"X", "O"} {
		t.Run("perfect as "+mark, func(t *testing.T) {
			strat := mustStrategy(t, "perfect", g, 0, "m")
			results := map[protocol.Outcome]int{}
			var explore func(s game.State, line []string)
			explore = func(s game.State, line []string) {
				if s.Terminal() {
					o := s.Outcomes()[seat]
					if o == protocol.Loss {
						t.Fatalf("perfect as %s lost after %s", mark, strings.Join(line, " "))
					}
					results[o]++
					return
				}
				i := s.ToMove()[0]
				ctx := contextJSON(t, s, i)
				var moves []json.RawMessage
				if i == seat {
					raw, err := strat.Move(Request{MatchID: "m", GameType: game.TypeTicTacToe, StepNumber: len(line) + 1, Context: ctx})
					if err != nil {
						t.Fatalf("after %s: %v", strings.Join(line, " "), err)
					}
					moves = []json.RawMessage{raw}
				} else {
					legal, err := g.LegalMoves(ctx)
					if err != nil {
						t.Fatal(err)
					}
					moves = legal
				}
				for _, m := range moves {
					next, err := s.Apply([]json.RawMessage{m})
					if err != nil {
						t.Fatalf("after %s, move %s: %v", strings.Join(line, " "), m, err)
					}
					explore(next, append(line[:len(line):len(line)], string(m)))
				}
			}
			explore(g.NewState(0), nil)
			// Against every line the opponent also blunders, so perfect must win some.
			if results[protocol.Win] == 0 || results[protocol.Loss] != 0 {
				t.Errorf("got results %v, want wins and no losses", results)
			}
			t.Logf("perfect as %s: %v over all opponent lines", mark, results)
		})
	}
}

func TestPerfectTactics(t *testing.T) {
	tests := []struct {
		name  string
		board string // rows separated by '/', '.' for empty
		mark  string
		want  string
	}{
		{"takes the win", "XX./OO./...", "X", `{"row":0,"col":2}`},
		{"wins rather than blocks", "OO./XX./X..", "O", `{"row":0,"col":2}`},
		{"blocks", "XX./O../...", "O", `{"row":0,"col":2}`},
		{"blocks a diagonal", "X../.X./O..", "O", `{"row":2,"col":2}`},
		{"answers a corner with the centre", "X../.../...", "O", `{"row":1,"col":1}`},
		{"avoids a fork", "X../.O./..X", "O", `{"row":0,"col":1}`},
		{"last cell", "XOX/XOO/OX.", "X", `{"row":2,"col":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var board [3][3]string
			marks := 0
			for r, row := range strings.Split(tt.board, "/") {
				for c, ch := range row {
					if ch != '.' {
						board[r][c] = string(ch)
						marks++
					}
				}
			}
			ctx, err := json.Marshal(map[string]any{"board": board, "your_mark": tt.mark, "move_number": marks + 1})
			if err != nil {
				t.Fatal(err)
			}
			got, err := mustStrategy(t, "perfect", mustGame(t, game.TypeTicTacToe, nil), 0, "m").
				Move(Request{MatchID: "m", GameType: game.TypeTicTacToe, Context: ctx})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func BenchmarkPerfectMove(b *testing.B) {
	g := mustGame(b, game.TypeTicTacToe, nil)
	strat := mustStrategy(b, "perfect", g, 0, "m")
	ctx := contextJSON(b, g.NewState(0), 0)
	for b.Loop() {
		if _, err := strat.Move(Request{MatchID: "m", GameType: game.TypeTicTacToe, Context: ctx}); err != nil {
			b.Fatal(err)
		}
	}
}
