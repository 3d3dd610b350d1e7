package strategy

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/game"
)

func mustGame(t testing.TB, gameType string, params map[string]any) game.Game {
	t.Helper()
	g, err := game.Default().New(gameType, params)
	if err != nil {
		t.Fatalf("new %s: %v", gameType, err)
	}
	return g
}

func mustStrategy(t testing.TB, name string, g game.Game, seed int64, matchID string) Strategy {
	t.Helper()
	s, err := New(name, g, seed, matchID)
	if err != nil {
		t.Fatalf("new %s: %v", name, err)
	}
	return s
}

func contextJSON(t testing.TB, s game.State, i int) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(s.Context(i))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// playMatch plays one match between two strategies through the real game state, checking every
// move with ParseMove, and returns the final state and the moves in order.
func playMatch(t testing.TB, g game.Game, seed int64, matchID string, players [2]Strategy) (game.State, []string) {
	t.Helper()
	s := g.NewState(seed)
	var played []string
	for step := 1; !s.Terminal(); step++ {
		var moves []json.RawMessage
		for _, i := range s.ToMove() {
			raw, err := players[i].Move(Request{MatchID: matchID, GameType: g.Type(), StepNumber: step, Context: contextJSON(t, s, i)})
			if err != nil {
				t.Fatalf("step %d player %d: %v", step, i, err)
			}
			move, err := s.ParseMove(i, raw)
			if err != nil {
				t.Fatalf("step %d player %d played %s: %v", step, i, raw, err)
			}
			moves = append(moves, move)
			played = append(played, string(move))
		}
		next, err := s.Apply(moves)
		if err != nil {
			t.Fatal(err)
		}
		s = next
	}
	return s, played
}

func TestNames(t *testing.T) {
	want := []string{"adaptive", "alphabeta", "first", "perfect", "random", "seeded"}
	if got := Names(); !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		name     string
		strategy string
		g        game.Game
		want     string
	}{
		{"unknown", "greedy", mustGame(t, game.TypeTicTacToe, nil), `unknown strategy "greedy"`},
		{"nil game", "random", nil, `strategy "random": nil game`},
		{"perfect rps", "perfect", mustGame(t, game.TypeRockPaperScissors, nil), `strategy "perfect" does not play rock_paper_scissors`},
		{"perfect even_odd", "perfect", mustGame(t, game.TypeEvenOdd, nil), `strategy "perfect" does not play even_odd`},
		{"adaptive ttt", "adaptive", mustGame(t, game.TypeTicTacToe, nil), `strategy "adaptive" does not play tic_tac_toe`},
		{"seeded rps", "seeded", mustGame(t, game.TypeRockPaperScissors, nil), `strategy "seeded" does not play rock_paper_scissors`},
		{"alphabeta ttt", "alphabeta", mustGame(t, game.TypeTicTacToe, nil), `strategy "alphabeta" does not play tic_tac_toe`},
		{"perfect connect_four", "perfect", mustGame(t, game.TypeConnectFour, nil), `strategy "perfect" does not play connect_four`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.strategy, tt.g, 1, "m")
			if err == nil || err.Error() != tt.want {
				t.Errorf("got %v, %v; want error %q", s, err, tt.want)
			}
		})
	}
}

// TestStrategiesPlayFullMatches plays every strategy on every game it supports, in both seats,
// against "first" and "random", and requires every move to be accepted by the referee's rules.
func TestStrategiesPlayFullMatches(t *testing.T) {
	every := game.Default().Types()
	supports := map[string][]string{
		"random":    every,
		"first":     every,
		"seeded":    {game.TypeEvenOdd},
		"perfect":   {game.TypeTicTacToe},
		"adaptive":  {game.TypeRockPaperScissors},
		"alphabeta": {game.TypeConnectFour, game.TypeChess},
	}
	if got := slices.Sorted(maps.Keys(supports)); !slices.Equal(got, Names()) {
		t.Fatalf("test covers %v, want every strategy %v", got, Names())
	}
	for name, gameTypes := range supports {
		for _, gameType := range gameTypes {
			for _, opponent := range []string{"first", "random"} {
				for seat := range 2 {
					t.Run(fmt.Sprintf("%s %s vs %s seat %d", name, gameType, opponent, seat), func(t *testing.T) {
						g := mustGame(t, gameType, map[string]any{})
						const matchID = "match-1"
						var players [2]Strategy
						players[seat] = mustStrategy(t, name, g, 7, matchID)
						players[1-seat] = mustStrategy(t, opponent, g, 8, matchID)
						s, played := playMatch(t, g, 9, matchID, players)
						if len(played) == 0 {
							t.Fatal("match ended without a move")
						}
						if s.Outcomes()[seat] == "" {
							t.Errorf("got no outcome after %d moves", len(played))
						}
					})
				}
			}
		}
	}
}

func TestRandomIsSeededPerMatch(t *testing.T) {
	long := map[string]any{"rounds": 30}
	tests := []struct {
		strategy, gameType string
		params             map[string]any
	}{
		{"random", game.TypeRockPaperScissors, long},
		{"random", game.TypeTicTacToe, nil},
		{"random", game.TypeEvenOdd, long},
		{"random", game.TypeConnectFour, nil},
		{"random", game.TypeChess, nil},
		{"seeded", game.TypeEvenOdd, long},
		{"adaptive", game.TypeRockPaperScissors, long},
	}
	for _, tt := range tests {
		t.Run(tt.strategy+" "+tt.gameType, func(t *testing.T) {
			g := mustGame(t, tt.gameType, tt.params)
			// Several matches, since one short tic-tac-toe match can repeat by chance.
			moves := func(seed int64, matchID string) string {
				var all []string
				for k := range 4 {
					id := fmt.Sprintf("%s-%d", matchID, k)
					_, played := playMatch(t, g, 1, id, [2]Strategy{
						mustStrategy(t, tt.strategy, g, seed, id),
						mustStrategy(t, "first", g, seed, id),
					})
					all = append(all, played...)
				}
				return strings.Join(all, " ")
			}
			base := moves(1, "match-a")
			if again := moves(1, "match-a"); again != base {
				t.Errorf("same seed and match played %s, then %s; want the same", base, again)
			}
			if other := moves(1, "match-b"); other == base {
				t.Errorf("matches a and b played the same moves %s, want them to differ", base)
			}
			if other := moves(2, "match-a"); other == base {
				t.Errorf("seeds 1 and 2 played the same moves %s, want them to differ", base)
			}
		})
	}
}

func TestFirstPlaysTheForcedMove(t *testing.T) {
	for _, gameType := range game.Default().Types() {
		t.Run(gameType, func(t *testing.T) {
			g := mustGame(t, gameType, nil)
			strat := mustStrategy(t, "first", g, 0, "m")
			s := g.NewState(0)
			for step := 1; !s.Terminal(); step++ {
				var moves []json.RawMessage
				for _, i := range s.ToMove() {
					got, err := strat.Move(Request{MatchID: "m", GameType: gameType, StepNumber: step, Context: contextJSON(t, s, i)})
					if err != nil {
						t.Fatal(err)
					}
					if want := s.ForcedMove(i); string(got) != string(want) {
						t.Fatalf("step %d: got %s, want the forced move %s", step, got, want)
					}
					moves = append(moves, got)
				}
				next, err := s.Apply(moves)
				if err != nil {
					t.Fatal(err)
				}
				s = next
			}
		})
	}
}

func TestMoveRefusesRequest(t *testing.T) {
	ttt := mustGame(t, game.TypeTicTacToe, nil)
	rps := mustGame(t, game.TypeRockPaperScissors, nil)
	c4 := mustGame(t, game.TypeConnectFour, nil)
	chess := mustGame(t, game.TypeChess, nil)
	tttCtx := contextJSON(t, ttt.NewState(0), 0)
	rpsCtx := contextJSON(t, rps.NewState(0), 0)
	c4Ctx := contextJSON(t, c4.NewState(0), 0)
	chessCtx := contextJSON(t, chess.NewState(0), 0)
	tests := []struct {
		strategy string
		g        game.Game
		req      Request
		want     string
	}{
		{"random", ttt, Request{MatchID: "other", GameType: game.TypeTicTacToe, Context: tttCtx}, `move: request for match "other" sent to the strategy of match "m"`},
		{"random", ttt, Request{MatchID: "m", GameType: game.TypeEvenOdd, Context: tttCtx}, `move: request for game type "even_odd" sent to a tic_tac_toe strategy`},
		{"random", ttt, Request{MatchID: "m", GameType: game.TypeTicTacToe, Context: rpsCtx}, "move: parse tic_tac_toe context: "},
		{"first", rps, Request{MatchID: "m", GameType: game.TypeRockPaperScissors, Context: tttCtx}, "move: parse rock_paper_scissors context: "},
		{"perfect", ttt, Request{MatchID: "m", GameType: game.TypeTicTacToe, Context: json.RawMessage(`{}`)}, "move: parse tic_tac_toe context: "},
		{"adaptive", rps, Request{MatchID: "m", GameType: game.TypeRockPaperScissors, Context: json.RawMessage(`null`)}, "move: parse rock_paper_scissors context: "},
		{"alphabeta", c4, Request{MatchID: "m", GameType: game.TypeConnectFour, Context: chessCtx}, "move: parse connect_four context: "},
		{"alphabeta", chess, Request{MatchID: "m", GameType: game.TypeChess, Context: c4Ctx}, "move: parse chess context: "},
		{"random", chess, Request{MatchID: "m", GameType: game.TypeChess, Context: json.RawMessage(`{}`)}, "move: parse chess context: "},
	}
	for _, tt := range tests {
		t.Run(tt.strategy+" "+tt.want, func(t *testing.T) {
			got, err := mustStrategy(t, tt.strategy, tt.g, 0, "m").Move(tt.req)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("got %s, %v; want error starting %q", got, err, tt.want)
			}
		})
	}
}

// noMoves is a game whose contexts offer nothing to play.
type noMoves struct{ game.Game }

func (noMoves) Type() string { return "no_moves" }

func (noMoves) LegalMoves(json.RawMessage) ([]json.RawMessage, error) { return nil, nil }

func TestMoveWithoutLegalMoves(t *testing.T) {
	for _, name := range []string{"random", "first"} {
		t.Run(name, func(t *testing.T) {
			got, err := mustStrategy(t, name, noMoves{}, 0, "m").Move(Request{MatchID: "m", GameType: "no_moves", Context: json.RawMessage(`{}`)})
			if err == nil || err.Error() != "move: no legal move" {
				t.Errorf("got %s, %v; want error %q", got, err, "move: no legal move")
			}
		})
	}
}
