package game

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

func cell(r, c int) string { return fmt.Sprintf(`{"row":%d,"col":%d}`, r, c) }

// tttPlay applies alternating cell moves, X first.
func tttPlay(t *testing.T, cells ...[2]int) State {
	t.Helper()
	s := mustGame(t, TypeTicTacToe, nil).NewState(0)
	for _, c := range cells {
		s = play(t, s, []string{cell(c[0], c[1])})
	}
	return s
}

// TestTicTacToeInteropCapture replays the Python peer's captured step 5 and checks that our
// step_context is the one it sent and that its player's answer is accepted.
func TestTicTacToeInteropCapture(t *testing.T) {
	raw, err := os.ReadFile("testdata/interop/request_move.wire.json")
	if err != nil {
		t.Fatal(err)
	}
	var capture struct {
		Request struct {
			Params struct {
				Payload struct {
					StepNumber  int             `json:"step_number"`
					StepContext json.RawMessage `json:"step_context"`
				} `json:"payload"`
			} `json:"params"`
		} `json:"request"`
		Response struct {
			Result struct {
				Payload struct {
					MovePayload json.RawMessage `json:"move_payload"`
				} `json:"payload"`
			} `json:"result"`
		} `json:"response"`
	}
	if err := json.Unmarshal(raw, &capture); err != nil {
		t.Fatal(err)
	}
	want := capture.Request.Params.Payload.StepContext
	// X (2,0), O (2,1), X (2,2), O (1,2) gives the captured board with X to move.
	s := tttPlay(t, [2]int{2, 0}, [2]int{2, 1}, [2]int{2, 2}, [2]int{1, 2})
	got := contextJSON(t, s, 0)
	var gotV, wantV any
	if err := json.Unmarshal(got, &gotV); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &wantV); err != nil {
		t.Fatal(err)
	}
	if gotJSON, wantJSON := mustMarshal(t, gotV), mustMarshal(t, wantV); gotJSON != wantJSON {
		t.Errorf("got context %s, want %s", gotJSON, wantJSON)
	}
	if sn := capture.Request.Params.Payload.StepNumber; sn != 5 || s.Context(0)["move_number"] != sn {
		t.Errorf("got move_number %v at captured step %d, want equal", s.Context(0)["move_number"], sn)
	}
	move, err := s.ParseMove(0, capture.Response.Result.Payload.MovePayload)
	if err != nil {
		t.Fatalf("parse captured move: %v", err)
	}
	if string(move) != cell(1, 0) {
		t.Errorf("got move %s, want %s", move, cell(1, 0))
	}
	legal, err := mustGame(t, TypeTicTacToe, nil).LegalMoves(want)
	if err != nil {
		t.Fatalf("legal moves of the captured context: %v", err)
	}
	wantLegal := []string{cell(0, 0), cell(0, 1), cell(0, 2), cell(1, 0), cell(1, 1)}
	if got := rawStrings(legal); !slices.Equal(got, wantLegal) {
		t.Errorf("got legal moves %v, want %v", got, wantLegal)
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func rawStrings(moves []json.RawMessage) []string {
	out := make([]string, len(moves))
	for k, m := range moves {
		out[k] = string(m)
	}
	return out
}

// offLineCells picks n cells off line l, row-major, whose marks cannot make a line either.
func offLineCells(l [3][2]int, n int) [][2]int {
	var off [][2]int
	for r := range 3 {
		for c := range 3 {
			if !slices.Contains(l[:], [2]int{r, c}) {
				off = append(off, [2]int{r, c})
			}
		}
	}
	for a := range off {
		for b := a + 1; b < len(off); b++ {
			if n == 2 {
				return [][2]int{off[a], off[b]}
			}
			for c := b + 1; c < len(off); c++ {
				var board Board
				for _, p := range [][2]int{off[a], off[b], off[c]} {
					board[p[0]][p[1]] = "X"
				}
				if board.Winner() == "" {
					return [][2]int{off[a], off[b], off[c]}
				}
			}
		}
	}
	panic("no cells off the line")
}

func TestTicTacToeLines(t *testing.T) {
	for k, l := range lines {
		for _, winner := range []string{"X", "O"} {
			t.Run(fmt.Sprintf("line %d %s", k, winner), func(t *testing.T) {
				var seq [][2]int
				if winner == "X" {
					others := offLineCells(l, 2)
					seq = [][2]int{l[0], others[0], l[1], others[1], l[2]}
				} else {
					others := offLineCells(l, 3)
					seq = [][2]int{others[0], l[0], others[1], l[1], others[2], l[2]}
				}
				before := tttPlay(t, seq[:len(seq)-1]...)
				if before.Terminal() {
					t.Fatalf("terminal one move before completing line %v", l)
				}
				s := tttPlay(t, seq...)
				if !s.Terminal() {
					t.Fatalf("not terminal after %s completes line %v", winner, l)
				}
				if got := s.ToMove(); got != nil {
					t.Errorf("got to move %v, want none", got)
				}
				want := [2]protocol.Outcome{protocol.Win, protocol.Loss}
				if winner == "O" {
					want = [2]protocol.Outcome{protocol.Loss, protocol.Win}
				}
				if got := s.Outcomes(); got != want {
					t.Errorf("got outcomes %v, want %v", got, want)
				}
				f := s.Final()
				if f["winner"] != winner || f["outcome"] != winner+"_WINS" || f["move_count"] != len(seq) {
					t.Errorf("got final %v, want winner %s, outcome %s_WINS, move_count %d", f, winner, winner, len(seq))
				}
				if got := s.ForcedMove(0); got != nil {
					t.Errorf("got forced move %s after the end, want nil", got)
				}
			})
		}
	}
}

func TestTicTacToeDraw(t *testing.T) {
	seq := [][2]int{{0, 0}, {1, 1}, {2, 2}, {0, 2}, {2, 0}, {1, 0}, {1, 2}, {2, 1}, {0, 1}}
	if s := tttPlay(t, seq[:8]...); s.Terminal() {
		t.Fatal("terminal with one empty cell and no line")
	}
	s := tttPlay(t, seq...)
	if !s.Terminal() {
		t.Fatal("full board is not terminal")
	}
	if got, want := s.Outcomes(), [2]protocol.Outcome{protocol.Draw, protocol.Draw}; got != want {
		t.Errorf("got outcomes %v, want %v", got, want)
	}
	got := mustMarshal(t, s.Final())
	want := `{"board":[["X","X","O"],["O","O","X"],["X","O","X"]],"move_count":9,"outcome":"DRAW","winner":""}`
	if got != want {
		t.Errorf("got final %s, want %s", got, want)
	}
}

func TestTicTacToeInProgress(t *testing.T) {
	s := tttPlay(t, [2]int{0, 0})
	if got := s.Outcomes(); got != ([2]protocol.Outcome{}) {
		t.Errorf("got outcomes %v before the end, want zero", got)
	}
	if got := s.Final()["outcome"]; got != "IN_PROGRESS" {
		t.Errorf("got outcome %v, want IN_PROGRESS", got)
	}
	if got := s.ToMove(); !slices.Equal(got, []int{1}) {
		t.Errorf("got to move %v, want [1]", got)
	}
	if got, want := string(s.ForcedMove(1)), cell(0, 1); got != want {
		t.Errorf("got forced move %s, want %s", got, want)
	}
	if got, want := string(mustGame(t, TypeTicTacToe, nil).NewState(0).ForcedMove(0)), cell(0, 0); got != want {
		t.Errorf("got first forced move %s, want %s", got, want)
	}
}

func TestTicTacToeParseMove(t *testing.T) {
	// X holds (0,0); O (player 1) is to move.
	s := tttPlay(t, [2]int{0, 0})
	over := tttPlay(t, [2]int{0, 0}, [2]int{1, 0}, [2]int{0, 1}, [2]int{1, 1}, [2]int{0, 2})
	tests := []struct {
		name   string
		state  State
		player int
		raw    string
		want   string // canonical move, or the error kind
	}{
		{"plain", s, 1, `{"row":1,"col":1}`, cell(1, 1)},
		{"spaces, order, extra field", s, 1, ` { "col": 2, "row": 0, "note": [1] } `, cell(0, 2)},
		{"negative zero", s, 1, `{"row":-0,"col":2}`, cell(0, 2)},
		{"null", s, 1, `null`, "malformed"},
		{"empty", s, 1, ``, "malformed"},
		{"array", s, 1, `[1,1]`, "malformed"},
		{"string", s, 1, `"1,1"`, "malformed"},
		{"truncated", s, 1, `{"row":1,"col":1`, "malformed"},
		{"trailing data", s, 1, `{"row":1,"col":1} {}`, "malformed"},
		{"missing col", s, 1, `{"row":1}`, "malformed"},
		{"missing row", s, 1, `{"col":1}`, "malformed"},
		{"float", s, 1, `{"row":1.5,"col":1}`, "malformed"},
		{"integral float", s, 1, `{"row":1.0,"col":1}`, "malformed"},
		{"exponent", s, 1, `{"row":1e0,"col":1}`, "malformed"},
		{"string row", s, 1, `{"row":"1","col":1}`, "malformed"},
		{"null col", s, 1, `{"row":1,"col":null}`, "malformed"},
		{"bool col", s, 1, `{"row":1,"col":true}`, "malformed"},
		{"overflowing row", s, 1, `{"row":100000000000000000000,"col":1}`, "malformed"},
		{"oversized", s, 1, `{"row":1,"col":1,"pad":"` + strings.Repeat("x", maxMoveSize) + `"}`, "malformed"},
		{"row 3", s, 1, `{"row":3,"col":0}`, "illegal"},
		{"col -1", s, 1, `{"row":0,"col":-1}`, "illegal"},
		{"occupied", s, 1, `{"row":0,"col":0}`, "illegal"},
		{"not your turn", s, 0, `{"row":1,"col":1}`, "illegal"},
		{"no such player", s, 2, `{"row":1,"col":1}`, "illegal"},
		{"match over", over, 1, `{"row":2,"col":2}`, "illegal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkParseMove(t, tt.state, tt.player, tt.raw, tt.want)
		})
	}
}

func TestTicTacToeApplyRefuses(t *testing.T) {
	s := tttPlay(t, [2]int{0, 0})
	tests := []struct {
		name  string
		moves []json.RawMessage
		want  string
	}{
		{"no move", nil, "apply: want 1 move, got 0"},
		{"two moves", []json.RawMessage{json.RawMessage(cell(1, 1)), json.RawMessage(cell(2, 2))}, "apply: want 1 move, got 2"},
		{"occupied", []json.RawMessage{json.RawMessage(cell(0, 0))}, "apply: illegal move: cell (0, 0) holds X"},
		{"malformed", []json.RawMessage{json.RawMessage(`{}`)}, `apply: malformed move: missing field "row"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Apply(tt.moves)
			if err == nil || err.Error() != tt.want {
				t.Errorf("got error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestTicTacToeLegalMovesRefusesContext(t *testing.T) {
	g := mustGame(t, TypeTicTacToe, nil)
	empty := `[["","",""],["","",""],["","",""]]`
	tests := []struct {
		name string
		ctx  string
		want string
	}{
		{"not an object", `[]`, "not a JSON object"},
		{"null", `null`, "not a JSON object"},
		{"no board", `{"your_mark":"X","move_number":1}`, "must be 3 rows of 3 cells"},
		{"two rows", `{"board":[["","",""],["","",""]],"your_mark":"X","move_number":1}`, "must be 3 rows of 3 cells"},
		{"short row", `{"board":[["","",""],["",""],["","",""]],"your_mark":"X","move_number":1}`, "must be 3 rows of 3 cells"},
		{"bad cell", `{"board":[["Z","",""],["","",""],["","",""]],"your_mark":"O","move_number":2}`, `board[0][0] must be "X", "O" or ""`},
		{"null cell", `{"board":[["","",null],["","",""],["","",""]],"your_mark":"X","move_number":1}`, `board[0][2] must be`},
		{"lower-case mark", `{"board":[["x","",""],["","",""],["","",""]],"your_mark":"O","move_number":2}`, `board[0][0] must be`},
		{"no mark", `{"board":` + empty + `,"move_number":1}`, `missing field "your_mark"`},
		{"no move number", `{"board":` + empty + `,"your_mark":"X"}`, `missing field "move_number"`},
		{"float move number", `{"board":` + empty + `,"your_mark":"X","move_number":1.5}`, `field "move_number" must be an integer`},
		{"wrong mark", `{"board":` + empty + `,"your_mark":"O","move_number":1}`, `your_mark "O" but X is to move`},
		{"wrong move number", `{"board":` + empty + `,"your_mark":"X","move_number":2}`, "move_number 2 with 0 marks on the board"},
		{"too many X", `{"board":[["X","X",""],["","",""],["","",""]],"your_mark":"O","move_number":3}`, "board has 2 X and 0 O"},
		{"won", `{"board":[["X","X","X"],["O","O",""],["","",""]],"your_mark":"O","move_number":6}`, "match is over"},
		{"full", `{"board":[["X","X","O"],["O","O","X"],["X","O","X"]],"your_mark":"O","move_number":10}`, "match is over"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := g.LegalMoves(json.RawMessage(tt.ctx))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "parse tic_tac_toe context: ") {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
			if over := strings.Contains(tt.want, "match is over"); errors.Is(err, ErrMatchOver) != over {
				t.Errorf("got errors.Is(err, ErrMatchOver) = %t, want %t", !over, over)
			}
		})
	}
}

func TestTicTacToeContextForBothPlayers(t *testing.T) {
	g := mustGame(t, TypeTicTacToe, nil)
	s := tttPlay(t, [2]int{1, 1})
	if _, err := g.LegalMoves(contextJSON(t, s, 1)); err != nil {
		t.Errorf("got error %v for the mover's context, want none", err)
	}
	// The player not to move is never asked, and its context is not one it could be asked with.
	if _, err := g.LegalMoves(contextJSON(t, s, 0)); err == nil {
		t.Error("got no error for the waiting player's context, want one")
	}
	if got, want := contextJSON(t, s, 1), `{"board":[["","",""],["","X",""],["","",""]],"move_number":2,"your_mark":"O"}`; !bytes.Equal(got, []byte(want)) {
		t.Errorf("got context %s, want %s", got, want)
	}
}

// TestTicTacToeCanWin: a player can still win while a line holds none of the opponent's
// marks and it has moves enough left to fill it.
func TestTicTacToeCanWin(t *testing.T) {
	cell := func(r, c int) []string { return []string{fmt.Sprintf(`{"row":%d,"col":%d}`, r, c)} }
	s := ticTacToe{}.NewState(1)
	if !CanWin(s, 0) || !CanWin(s, 1) {
		t.Fatal("at the start both can win")
	}
	// X e, O a, X c, O g, X d, O f, X h: every line holds an X; O to move.
	s = play(t, s, cell(1, 1), cell(0, 0), cell(0, 2), cell(2, 0), cell(1, 0), cell(1, 2), cell(2, 1))
	if CanWin(s, 1) {
		t.Error("O can win with an X on every line")
	}
	if !CanWin(s, 0) {
		t.Error("X can win: the middle column lacks only (0,1)")
	}
	// O blocks: X's only open line is gone, and O still has none.
	s = play(t, s, cell(0, 1))
	if CanWin(s, 0) || CanWin(s, 1) {
		t.Errorf("with one cell left and no open line, neither can win: X %v, O %v", CanWin(s, 0), CanWin(s, 1))
	}
	// Moves left count: one cell, (0,2), is left and X is to move. O lacks only it for the
	// top row, but gets no move; X lacks only it for the right column.
	s = play(t, ticTacToe{}.NewState(1), cell(1, 0), cell(0, 0), cell(1, 2), cell(0, 1), cell(2, 1), cell(1, 1), cell(2, 2), cell(2, 0))
	if CanWin(s, 1) || !CanWin(s, 0) {
		t.Errorf("with (0,2) left to X: X can win %v (want true), O %v (want false)", CanWin(s, 0), CanWin(s, 1))
	}
}
