package llm

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/game"
)

// stateAfter plays moves (one JSON move per step, or two for simultaneous games) from the
// start of a match of gameType and returns the game and player i's context.
func stateAfter(t *testing.T, gameType string, params map[string]any, i int, steps ...[]string) (game.Game, json.RawMessage) {
	t.Helper()
	g, err := game.Default().New(gameType, params)
	if err != nil {
		t.Fatal(err)
	}
	s := g.NewState(3)
	for _, step := range steps {
		moves := make([]json.RawMessage, len(step))
		for k, m := range step {
			moves[k] = json.RawMessage(m)
		}
		if s, err = s.Apply(moves); err != nil {
			t.Fatalf("apply %v: %v", step, err)
		}
	}
	raw, err := json.Marshal(s.Context(i))
	if err != nil {
		t.Fatal(err)
	}
	return g, raw
}

// withField sets a field of a context (nil removes it), as a referee of another
// implementation might send it.
func withField(t *testing.T, raw json.RawMessage, name string, v any) json.RawMessage {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if v == nil {
		delete(m, name)
	} else {
		m[name] = v
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every game's prompt shows the board, whose turn it is and the legal moves, labelled from
// the game's own legal moves in their order.
func TestLLMDescribe(t *testing.T) {
	chessMoves := [][]string{{`"e2e4"`}, {`"e7e5"`}, {`"d1h5"`}, {`"b8c6"`}, {`"h5f7"`}}
	tests := []struct {
		name       string
		gameType   string
		params     map[string]any
		player     int
		steps      [][]string
		add        map[string]any
		wantLabels []string // the first labels, in order
		wantText   []string
		wantNot    []string
	}{
		{
			name: "tic-tac-toe", gameType: game.TypeTicTacToe, player: 1, steps: [][]string{{`{"row":1,"col":1}`}},
			wantLabels: []string{"0,0", "0,1", "0,2", "1,0", "1,2"},
			wantText:   []string{"row 1     . X .", "You play O", "move 2 of the game", "Three of your marks"},
		},
		{
			name: "connect four", gameType: game.TypeConnectFour, player: 0, steps: [][]string{{`{"column":3}`}, {`{"column":3}`}},
			wantLabels: []string{"0", "1", "2", "3", "4", "5", "6"},
			wantText:   []string{"column 0 1 2 3 4 5 6", "       . . . Y . . .\n       . . . R . . .\n", "You play R", "move 3", "Four of your discs"},
		},
		{
			// A referee of another implementation may send last_move alone.
			name: "chess with the last move only", gameType: game.TypeChess, params: map[string]any{"max_plies": 120}, player: 1, steps: chessMoves[:1],
			add:        map[string]any{"moves": nil},
			wantLabels: []string{"a7a5", "a7a6", "b7b5"},
			wantText: []string{"Position (FEN): rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1",
				"8  r n b q k b n r\n7  p p p p p p p p\n6  . . . . . . . .", "   a b c d e f g h", "The last move (UCI) was e2e4.",
				"You play black", "half-move 2 of at most 120", "after 120 half-moves"},
			wantNot: []string{"in check", "Moves so far"},
		},
		{
			name: "chess with every move, as the referee sends them", gameType: game.TypeChess, player: 1, steps: chessMoves[:3],
			wantLabels: []string{"a7a5", "a7a6"},
			wantText:   []string{"Moves so far (SAN): 1. e4 e5 2. Qh5"},
			wantNot:    []string{"Your king is in check."},
		},
		{
			name: "chess with a check the moves give", gameType: game.TypeChess, player: 1, steps: [][]string{{`"e2e4"`}, {`"f7f6"`}, {`"d1h5"`}},
			add:      map[string]any{"moves": []string{"e2e4", "f7f6", "d1h5"}},
			wantText: []string{"1. e4 f6 2. Qh5+", "Your king is in check."},
		},
		{
			// Well formed (three moves, the last one last_move) but not replaying to the FEN.
			name: "chess with moves that do not fit the position", gameType: game.TypeChess, player: 1, steps: chessMoves[:3],
			add:      map[string]any{"moves": []string{"d2d4", "e7e5", "d1h5"}},
			wantText: []string{"The last move (UCI) was d1h5."},
			wantNot:  []string{"Moves so far"},
		},
		{
			name: "rock-paper-scissors", gameType: game.TypeRockPaperScissors, params: map[string]any{"rounds": 5}, player: 0,
			steps:      [][]string{{`{"choice":"rock"}`, `{"choice":"paper"}`}},
			wantLabels: []string{"rock", "paper", "scissors"},
			wantText:   []string{"Round 2 of at most 5. Rounds won: you 0, your opponent 1.", "round 1: you rock, opponent paper: you lost", "best of 5 rounds"},
		},
		{
			name: "even or odd", gameType: game.TypeEvenOdd, params: map[string]any{"rounds": 3}, player: 1,
			steps:      [][]string{{`{"choice":"even"}`, `{"choice":"odd"}`}},
			wantLabels: []string{"even", "odd"},
			wantText:   []string{"round 1: you odd, opponent even, number ", "secret number from 1 to 10"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, raw := stateAfter(t, tt.gameType, tt.params, tt.player, tt.steps...)
			for name, v := range tt.add {
				raw = withField(t, raw, name, v)
			}
			pos, err := describe(g, raw)
			if err != nil {
				t.Fatal(err)
			}
			legal, err := g.LegalMoves(raw)
			if err != nil {
				t.Fatal(err)
			}
			if len(pos.choices) != len(legal) {
				t.Fatalf("%d choices for %d legal moves", len(pos.choices), len(legal))
			}
			var labels []string
			for k, c := range pos.choices {
				labels = append(labels, c.label)
				if string(c.move) != string(legal[k]) {
					t.Errorf("choice %d is %s, want the legal move %s", k, c.move, legal[k])
				}
			}
			if len(tt.wantLabels) > 0 && !slices.Equal(labels[:len(tt.wantLabels)], tt.wantLabels) {
				t.Errorf("labels %v, want them to begin %v", labels, tt.wantLabels)
			}
			text := pos.rules + "\n" + pos.board
			for _, want := range tt.wantText {
				if !strings.Contains(text, want) {
					t.Errorf("prompt lacks %q:\n%s", want, text)
				}
			}
			for _, not := range tt.wantNot {
				if strings.Contains(text, not) {
					t.Errorf("prompt has %q:\n%s", not, text)
				}
			}
		})
	}
}

// nim is a game the llm strategy cannot describe.
type nim struct{ game.Game }

func (nim) Type() string { return "nim" }

func (nim) LegalMoves(json.RawMessage) ([]json.RawMessage, error) {
	return []json.RawMessage{json.RawMessage(`{"take":1}`)}, nil
}

func TestLLMRefusesGamesItCannotDescribe(t *testing.T) {
	if _, err := NewClient(&Profile{BaseURL: "http://127.0.0.1:1/v1"}, "", nil).Strategy(nim{}); err == nil || err.Error() != "the llm strategy does not play nim" {
		t.Errorf("strategy for nim: %v, want it refused", err)
	}
	if _, err := describe(nim{}, json.RawMessage(`{}`)); err == nil || err.Error() != "the llm strategy does not play nim" {
		t.Errorf("describe nim: %v, want it refused", err)
	}
}

func TestLLMDescribeRefusesWhatTheRulesRefuse(t *testing.T) {
	g, _ := game.Default().New(game.TypeTicTacToe, nil)
	for _, raw := range []string{`{"board":"none"}`, `{"board":[["X","X","X"],["O","O",""],["","",""]],"your_mark":"O","move_number":6}`} {
		if _, err := describe(g, json.RawMessage(raw)); err == nil {
			t.Errorf("%s: described, want an error", raw)
		}
	}
}

// The answer names a legal move by its label (loosely written), its SAN in chess, or as
// the move_payload; anything else is refused with a reason for the model.
func TestLLMFind(t *testing.T) {
	ttt, tttRaw := stateAfter(t, game.TypeTicTacToe, nil, 1, []string{`{"row":1,"col":1}`})
	c4, c4Raw := stateAfter(t, game.TypeConnectFour, nil, 0)
	chessGame, chessRaw := stateAfter(t, game.TypeChess, nil, 0, []string{`"e2e4"`}, []string{`"e7e5"`}, []string{`"g1f3"`}, []string{`"b8c6"`}, []string{`"f1c4"`}, []string{`"g8f6"`})
	rps, rpsRaw := stateAfter(t, game.TypeRockPaperScissors, nil, 0)
	tests := []struct {
		g       game.Game
		raw     json.RawMessage
		move    string
		want    string // the move_payload found, or "" when refused
		wantErr string
	}{
		{ttt, tttRaw, `"0,2"`, `{"row":0,"col":2}`, ""},
		{ttt, tttRaw, `" (0, 2) "`, `{"row":0,"col":2}`, ""},
		{ttt, tttRaw, `"[2,0]"`, `{"row":2,"col":0}`, ""},
		{ttt, tttRaw, `{"row":2,"col":1,"why":"fork"}`, `{"row":2,"col":1}`, ""},
		{ttt, tttRaw, `"1,1"`, "", `"1,1" is not one of the legal moves`},
		{ttt, tttRaw, `{"row":1,"col":1}`, "", `"{\"row\":1,\"col\":1}" is not one of the legal moves`},
		{ttt, tttRaw, `12`, "", `"12" is not one of the legal moves`},
		{ttt, tttRaw, `null`, "", `"move" must be a string naming one of the legal moves, got "null"`},
		{ttt, tttRaw, `"` + strings.Repeat("x", 100) + `"`, "", `"` + strings.Repeat("x", 40) + `…" is not one of the legal moves`},
		{c4, c4Raw, `3`, `{"column":3}`, ""},
		{c4, c4Raw, `"6"`, `{"column":6}`, ""},
		{c4, c4Raw, `7`, "", `"7" is not one of the legal moves`},
		{chessGame, chessRaw, `"e1g1"`, `{"uci":"e1g1"}`, ""},
		{chessGame, chessRaw, `"O-O"`, `{"uci":"e1g1"}`, ""},
		{chessGame, chessRaw, `"Nxe5"`, `{"uci":"f3e5"}`, ""},
		{chessGame, chessRaw, `"F3-E5"`, `{"uci":"f3e5"}`, ""},
		{chessGame, chessRaw, `"Bxf7+"`, `{"uci":"c4f7"}`, ""},
		{chessGame, chessRaw, `"Bxf7"`, `{"uci":"c4f7"}`, ""},
		{chessGame, chessRaw, `{"uci":"d2d4"}`, `{"uci":"d2d4"}`, ""},
		{chessGame, chessRaw, `"e2e4"`, "", `"e2e4" is not one of the legal moves`},
		{chessGame, chessRaw, `"bxc4"`, "", `"bxc4" is not one of the legal moves`},
		{rps, rpsRaw, `"Rock"`, `{"choice":"rock"}`, ""},
		{rps, rpsRaw, `"lizard"`, "", `"lizard" is not one of the legal moves`},
	}
	for _, tt := range tests {
		pos, err := describe(tt.g, tt.raw)
		if err != nil {
			t.Fatal(err)
		}
		k, err := pos.find(json.RawMessage(tt.move))
		switch {
		case tt.want == "" && (err == nil || err.Error() != tt.wantErr):
			t.Errorf("%s %s: error %v, want %q", tt.g.Type(), tt.move, err, tt.wantErr)
		case tt.want != "" && err != nil:
			t.Errorf("%s %s: %v, want %s", tt.g.Type(), tt.move, err, tt.want)
		case tt.want != "" && string(pos.choices[k].move) != tt.want:
			t.Errorf("%s %s: found %s, want %s", tt.g.Type(), tt.move, pos.choices[k].move, tt.want)
		}
	}
}
