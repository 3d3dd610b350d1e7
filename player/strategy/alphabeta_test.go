package strategy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
)

// c4Context is a connect_four step_context with rows given top first, '.' for empty.
func c4Context(t *testing.T, rows ...string) json.RawMessage {
	t.Helper()
	var board game.ConnectFourBoard
	discs := map[rune]int{}
	for r, row := range rows {
		for c, ch := range row {
			if ch != '.' {
				board[r][c] = string(ch)
				discs[ch]++
			}
		}
	}
	color := "R"
	if discs['R'] > discs['Y'] {
		color = "Y"
	}
	raw, err := json.Marshal(map[string]any{"board": board, "your_color": color, "move_number": discs['R'] + discs['Y'] + 1})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestAlphaBetaConnectFourTactics checks wins in one and forced blocks, under several seeds
// since the seed orders the root moves.
func TestAlphaBetaConnectFourTactics(t *testing.T) {
	g := mustGame(t, game.TypeConnectFour, nil)
	tests := []struct {
		name string
		rows []string
		want int
	}{
		{"wins horizontally", []string{".......", ".......", ".......", ".......", ".Y.....", "YRRR.Y."}, 4},
		{"wins horizontally in the gap", []string{".......", ".......", ".......", ".......", "..Y.Y..", ".RR.RY."}, 3},
		{"wins vertically", []string{".......", ".......", ".......", "R......", "R.Y....", "R.YY..."}, 0},
		{"wins on a rising diagonal", []string{".......", ".......", ".......", "..RY...", ".RYY...", "RYYR..R"}, 3},
		{"wins on a falling diagonal", []string{".......", ".......", ".......", "YR.....", "RYR....", "YYYR..R"}, 0},
		{"blocks a horizontal three", []string{".......", ".......", ".......", ".......", "R......", "RYYY..R"}, 4},
		{"blocks a vertical three", []string{".......", ".......", ".......", "......Y", "R.....Y", "R.R...Y"}, 6},
		{"blocks a diagonal", []string{".......", ".......", ".......", "..YR...", ".YRR...", "YRRY..Y"}, 3},
		{"wins rather than blocks", []string{".......", ".......", ".......", "Y......", "Y...R..", "YYRRR.."}, 5},
	}
	for _, tt := range tests {
		ctx := c4Context(t, tt.rows...)
		for seed := range int64(4) {
			t.Run(fmt.Sprintf("%s seed %d", tt.name, seed), func(t *testing.T) {
				got, err := mustStrategy(t, "alphabeta", g, seed, "m").Move(Request{MatchID: "m", GameType: game.TypeConnectFour, Context: ctx})
				if err != nil {
					t.Fatal(err)
				}
				if want := fmt.Sprintf(`{"column":%d}`, tt.want); string(got) != want {
					t.Errorf("got %s, want %s", got, want)
				}
			})
		}
	}
}

func TestAlphaBetaChessTactics(t *testing.T) {
	g := mustGame(t, game.TypeChess, nil)
	tests := []struct {
		name string
		fen  string
		want []string // any of these
	}{
		{"mates on the back rank", "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", []string{"a1a8"}},
		{"mates with the queen", "k7/8/1K6/8/8/8/8/6Q1 w - - 0 1", []string{"g1g8"}},
		{"takes a hanging queen", "4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1", []string{"d2d5"}},
		{"takes back with the pawn", "4k3/8/8/8/4p3/3Q1P2/8/4K3 b - - 0 1", []string{"e4d3"}},
		{"promotes", "8/P6k/8/8/8/8/8/4K3 w - - 0 1", []string{"a7a8q"}},
		{"mates rather than stalemates", "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", []string{"f1f8"}},
		{"keeps a pawn rather than a dead draw", "4k3/8/8/8/8/2p5/1B6/4K3 w - - 0 1", []string{"b2a1", "b2a3", "b2c1", "e1d1", "e1e2", "e1f1", "e1f2", "e1d2"}},
		{"escapes a mate in one", "6k1/5ppp/8/8/8/8/R7/6K1 b - - 0 1", []string{"g8f8", "f7f6", "g7g6", "h7h6", "f7f5", "g7g5", "h7h5"}},
	}
	for _, tt := range tests {
		for seed := range int64(3) {
			t.Run(fmt.Sprintf("%s seed %d", tt.name, seed), func(t *testing.T) {
				got, err := mustStrategy(t, "alphabeta", g, seed, "m").Move(Request{MatchID: "m", GameType: game.TypeChess, Context: fenContext(t, tt.fen)})
				if err != nil {
					t.Fatal(err)
				}
				var move struct{ UCI string }
				if err := json.Unmarshal(got, &move); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(" "+strings.Join(tt.want, " ")+" ", " "+move.UCI+" ") {
					t.Errorf("got %s, want one of %v", got, tt.want)
				}
			})
		}
	}
}

// alphaBetaVersusRandom plays n seeded games of alphabeta against random through the real
// game state, alternating seats, and returns alphabeta's results, its slowest and mean time
// per move, and its number of moves.
func alphaBetaVersusRandom(t *testing.T, g game.Game, n int) (map[protocol.Outcome]int, time.Duration, time.Duration, int) {
	t.Helper()
	results := map[protocol.Outcome]int{}
	var slowest, total time.Duration
	var moves int
	for k := range n {
		seat := k % 2
		matchID := fmt.Sprintf("match-%d", k)
		s := g.NewState(int64(k))
		var players [2]Strategy
		players[seat] = mustStrategy(t, "alphabeta", g, int64(k), matchID)
		players[1-seat] = mustStrategy(t, "random", g, int64(1000+k), matchID)
		for step := 1; !s.Terminal(); step++ {
			i := s.ToMove()[0]
			start := time.Now()
			raw, err := players[i].Move(Request{MatchID: matchID, GameType: g.Type(), StepNumber: step, Context: contextJSON(t, s, i)})
			if i == seat {
				elapsed := time.Since(start)
				slowest, total, moves = max(slowest, elapsed), total+elapsed, moves+1
			}
			if err != nil {
				t.Fatalf("game %d step %d: %v", k, step, err)
			}
			move, err := s.ParseMove(i, raw)
			if err != nil {
				t.Fatalf("game %d step %d: %s refused: %v", k, step, raw, err)
			}
			if s, err = s.Apply([]json.RawMessage{move}); err != nil {
				t.Fatal(err)
			}
		}
		results[s.Outcomes()[seat]]++
		if o := s.Outcomes()[seat]; o != protocol.Win {
			t.Logf("game %d, alphabeta in seat %d: %s, %v", k, seat, o, s.Final()["termination"])
		}
	}
	return results, slowest, total / time.Duration(max(moves, 1)), moves
}

func TestAlphaBetaBeatsRandomAtConnectFour(t *testing.T) {
	results, slowest, mean, moves := alphaBetaVersusRandom(t, mustGame(t, game.TypeConnectFour, nil), 100)
	t.Logf("100 games: %v; %d moves, %v a move on average, %v at most", results, moves, mean, slowest)
	if results[protocol.Win] < 95 {
		t.Errorf("won %d of 100 games, want at least 95", results[protocol.Win])
	}
}

// TestAlphaBetaBeatsRandomAtChess plays 10 games under the default move cap; the 100 games
// take over a minute with the race detector, so TestLongAlphaBetaBeatsRandomAtChess plays them
// under the long build tag (make test-long).
func TestAlphaBetaBeatsRandomAtChess(t *testing.T) {
	chessVersusRandom(t, 10)
}

// chessVersusRandom requires alphabeta to win 95% of n games against random and lose none.
func chessVersusRandom(t *testing.T, n int) {
	results, slowest, mean, moves := alphaBetaVersusRandom(t, mustGame(t, game.TypeChess, nil), n)
	t.Logf("%d games: %v; %d moves, %v a move on average, %v at most", n, results, moves, mean, slowest)
	if want := (n*95 + 99) / 100; results[protocol.Win] < want || results[protocol.Loss] > 0 {
		t.Errorf("won %d and lost %d of %d games, want at least %d won and none lost", results[protocol.Win], results[protocol.Loss], n, want)
	}
}

func BenchmarkAlphaBetaChessMove(b *testing.B) {
	g := mustGame(b, game.TypeChess, nil)
	// A middlegame: the Kiwipete position.
	ctx := fenContext(b, "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
	for b.Loop() {
		// A new match each time: a strategy remembers the positions of its match.
		if _, err := mustStrategy(b, "alphabeta", g, 0, "m").Move(Request{MatchID: "m", GameType: game.TypeChess, Context: ctx}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAlphaBetaConnectFourMove(b *testing.B) {
	g := mustGame(b, game.TypeConnectFour, nil)
	strat := mustStrategy(b, "alphabeta", g, 0, "m")
	// The empty board, where the search has the most moves to look at.
	ctx := contextJSON(b, g.NewState(0), 0)
	for b.Loop() {
		if _, err := strat.Move(Request{MatchID: "m", GameType: game.TypeConnectFour, Context: ctx}); err != nil {
			b.Fatal(err)
		}
	}
}
