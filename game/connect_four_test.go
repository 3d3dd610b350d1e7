package game

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

func column(c int) string { return fmt.Sprintf(`{"column":%d}`, c) }

// c4Play drops discs into cols in turn, R first.
func c4Play(t *testing.T, cols ...int) State {
	t.Helper()
	s := mustGame(t, TypeConnectFour, nil).NewState(0)
	for _, c := range cols {
		s = play(t, s, []string{column(c)})
	}
	return s
}

// c4Draw fills the board without four in a row.
var c4Draw = []int{3, 4, 4, 6, 0, 3, 5, 2, 6, 5, 0, 6, 5, 0, 3, 6, 5, 6, 1, 3, 1, 3, 6, 5, 2, 0, 5, 3, 4, 4, 0, 1, 1, 1, 0, 1, 4, 2, 4, 2, 2, 2}

func TestConnectFourLines(t *testing.T) {
	tests := []struct {
		name   string
		cols   []int // the last completes the line
		winner string
	}{
		{"horizontal", []int{0, 0, 1, 1, 2, 2, 3}, "R"},
		{"horizontal filled in the middle", []int{0, 0, 2, 2, 3, 3, 1}, "R"},
		{"horizontal on a higher row", []int{0, 2, 1, 0, 3, 1, 4, 2, 6, 3}, "Y"},
		{"vertical", []int{0, 1, 0, 1, 2, 1, 3, 1}, "Y"},
		{"vertical at the top", []int{6, 0, 6, 6, 1, 6, 1, 6, 2, 6}, "Y"},
		{"rising diagonal", []int{0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3}, "R"},
		{"falling diagonal", []int{6, 5, 5, 4, 4, 3, 4, 3, 3, 0, 3}, "R"},
		{"rising diagonal of Y", []int{6, 0, 1, 1, 2, 2, 3, 2, 3, 3, 5, 3}, "Y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := c4Play(t, tt.cols[:len(tt.cols)-1]...)
			if before.Terminal() {
				t.Fatalf("terminal one disc before the line: %v", before.Final())
			}
			s := c4Play(t, tt.cols...)
			if !s.Terminal() || s.ToMove() != nil {
				t.Fatalf("got terminal %v, to move %v after the line, want over", s.Terminal(), s.ToMove())
			}
			want := [2]protocol.Outcome{protocol.Win, protocol.Loss}
			if tt.winner == "Y" {
				want = [2]protocol.Outcome{protocol.Loss, protocol.Win}
			}
			if got := s.Outcomes(); got != want {
				t.Errorf("got outcomes %v, want %v", got, want)
			}
			f := s.Final()
			if f["winner"] != tt.winner || f["outcome"] != tt.winner+"_WINS" || f["move_count"] != len(tt.cols) {
				t.Errorf("got final %v, want winner %s, outcome %s_WINS, move_count %d", f, tt.winner, tt.winner, len(tt.cols))
			}
			if got := s.ForcedMove(0); got != nil {
				t.Errorf("got forced move %s after the end, want nil", got)
			}
			if got := s.Context(0)["valid_moves"]; !slices.Equal(got.([]int), []int{}) {
				t.Errorf("got valid_moves %v after the end, want none", got)
			}
		})
	}
}

func TestConnectFourGravity(t *testing.T) {
	s := c4Play(t, 3, 3, 3, 4)
	var want ConnectFourBoard
	want[5][3], want[4][3], want[3][3], want[5][4] = "R", "Y", "R", "Y"
	if got := s.Context(0)["board"]; got != want {
		t.Errorf("got board %v, want %v", got, want)
	}
}

func TestConnectFourFullColumn(t *testing.T) {
	g := mustGame(t, TypeConnectFour, nil)
	s := c4Play(t, 0, 0, 0, 0, 0, 0)
	if _, err := s.ParseMove(0, json.RawMessage(column(0))); errKind(err) != "illegal" || !strings.Contains(err.Error(), "column 0 is full") {
		t.Errorf("got error %v for a full column, want an illegal move", err)
	}
	if got, want := s.Context(0)["valid_moves"], []int{1, 2, 3, 4, 5, 6}; !slices.Equal(got.([]int), want) {
		t.Errorf("got valid_moves %v, want %v", got, want)
	}
	legal, err := g.LegalMoves(contextJSON(t, s, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rawStrings(legal), []string{column(1), column(2), column(3), column(4), column(5), column(6)}; !slices.Equal(got, want) {
		t.Errorf("got legal moves %v, want %v", got, want)
	}
	if got, want := string(s.ForcedMove(0)), column(1); got != want {
		t.Errorf("got forced move %s, want %s", got, want)
	}
}

func TestConnectFourDraw(t *testing.T) {
	if s := c4Play(t, c4Draw[:41]...); s.Terminal() {
		t.Fatal("terminal with one cell empty and no line")
	}
	s := c4Play(t, c4Draw...)
	if !s.Terminal() {
		t.Fatal("full board is not terminal")
	}
	if got, want := s.Outcomes(), [2]protocol.Outcome{protocol.Draw, protocol.Draw}; got != want {
		t.Errorf("got outcomes %v, want %v", got, want)
	}
	got := mustMarshal(t, s.Final())
	want := `{"board":[["R","Y","Y","Y","R","R","R"],["R","Y","R","Y","R","Y","Y"],["Y","R","Y","Y","Y","R","Y"],` +
		`["Y","Y","Y","R","R","R","Y"],["R","R","R","Y","R","Y","R"],["R","R","Y","R","Y","R","Y"]],"move_count":42,"outcome":"DRAW","winner":""}`
	if got != want {
		t.Errorf("got final %s, want %s", got, want)
	}
}

func TestConnectFourInProgress(t *testing.T) {
	s := c4Play(t, 3)
	if got := s.Outcomes(); got != ([2]protocol.Outcome{}) {
		t.Errorf("got outcomes %v before the end, want zero", got)
	}
	if got := s.Final()["outcome"]; got != "IN_PROGRESS" {
		t.Errorf("got outcome %v, want IN_PROGRESS", got)
	}
	if got := s.ToMove(); !slices.Equal(got, []int{1}) {
		t.Errorf("got to move %v, want [1]", got)
	}
	if got, want := string(s.ForcedMove(1)), column(0); got != want {
		t.Errorf("got forced move %s, want %s", got, want)
	}
}

func TestConnectFourParseMove(t *testing.T) {
	// R holds (5,3); Y (player 1) is to move.
	s := c4Play(t, 3)
	over := c4Play(t, 0, 1, 0, 1, 0, 1, 0)
	tests := []struct {
		name   string
		state  State
		player int
		raw    string
		want   string // canonical move, or the error kind
	}{
		{"plain", s, 1, `{"column":3}`, column(3)},
		{"spaces and extra field", s, 1, ` { "note": [1], "column": 6 } `, column(6)},
		{"column 0", s, 1, `{"column":0}`, column(0)},
		{"null", s, 1, `null`, "malformed"},
		{"empty", s, 1, ``, "malformed"},
		{"bare number", s, 1, `3`, "malformed"},
		{"array", s, 1, `[3]`, "malformed"},
		{"truncated", s, 1, `{"column":3`, "malformed"},
		{"missing column", s, 1, `{"col":3}`, "malformed"},
		{"float", s, 1, `{"column":2.5}`, "malformed"},
		{"integral float", s, 1, `{"column":2.0}`, "malformed"},
		{"string column", s, 1, `{"column":"2"}`, "malformed"},
		{"null column", s, 1, `{"column":null}`, "malformed"},
		{"overflowing column", s, 1, `{"column":100000000000000000000}`, "malformed"},
		{"oversized", s, 1, `{"column":1,"pad":"` + strings.Repeat("x", maxMoveSize) + `"}`, "malformed"},
		{"column 7", s, 1, `{"column":7}`, "illegal"},
		{"column -1", s, 1, `{"column":-1}`, "illegal"},
		{"not your turn", s, 0, `{"column":1}`, "illegal"},
		{"no such player", s, 2, `{"column":1}`, "illegal"},
		{"match over", over, 1, `{"column":2}`, "illegal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkParseMove(t, tt.state, tt.player, tt.raw, tt.want)
		})
	}
}

func TestConnectFourApplyRefuses(t *testing.T) {
	s := c4Play(t, 0, 0, 0, 0, 0, 0)
	tests := []struct {
		name  string
		moves []json.RawMessage
		want  string
	}{
		{"no move", nil, "apply: want 1 move, got 0"},
		{"two moves", []json.RawMessage{json.RawMessage(column(1)), json.RawMessage(column(2))}, "apply: want 1 move, got 2"},
		{"full column", []json.RawMessage{json.RawMessage(column(0))}, "apply: illegal move: column 0 is full"},
		{"malformed", []json.RawMessage{json.RawMessage(`{}`)}, `apply: malformed move: missing field "column"`},
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

// c4Context renders a step_context with rows given top first, '.' for an empty cell.
func c4Context(color string, moveNumber int, rows ...string) string {
	cells := make([]string, len(rows))
	for r, row := range rows {
		var quoted []string
		for _, ch := range row {
			if ch == '.' {
				quoted = append(quoted, `""`)
			} else {
				quoted = append(quoted, `"`+string(ch)+`"`)
			}
		}
		cells[r] = "[" + strings.Join(quoted, ",") + "]"
	}
	return fmt.Sprintf(`{"board":[%s],"your_color":%q,"move_number":%d}`, strings.Join(cells, ","), color, moveNumber)
}

// TestConnectFourSeedExample accepts the LBM Arena game_state example as our context.
func TestConnectFourSeedExample(t *testing.T) {
	ctx := c4Context("R", 9, ".......", ".......", ".......", "...R...", "..YR...", "YRYRY..")
	legal, err := mustGame(t, TypeConnectFour, nil).LegalMoves(json.RawMessage(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if len(legal) != ConnectFourCols {
		t.Errorf("got legal moves %s, want every column", legal)
	}
	// Red's fourth disc on column 3 wins there.
	s := c4Play(t, 1, 0, 3, 2, 3, 4, 3, 2)
	if got := mustMarshal(t, s.Context(0)["board"]); !strings.Contains(ctx, got) {
		t.Errorf("replayed board %s is not the example's", got)
	}
	if got := play(t, s, []string{column(3)}).Final()["winner"]; got != "R" {
		t.Errorf("got winner %v, want R", got)
	}
}

func TestConnectFourLegalMovesRefusesContext(t *testing.T) {
	g := mustGame(t, TypeConnectFour, nil)
	empty := []string{".......", ".......", ".......", ".......", ".......", "......."}
	tests := []struct {
		name string
		ctx  string
		want string
	}{
		{"not an object", `[]`, "not a JSON object"},
		{"no board", `{"your_color":"R","move_number":1}`, "must be 6 rows of 7 cells"},
		{"five rows", c4Context("R", 1, empty[:5]...), "must be 6 rows of 7 cells"},
		{"short row", c4Context("R", 1, ".......", "......", ".......", ".......", ".......", "......."), "must be 6 rows of 7 cells"},
		{"bad cell", c4Context("Y", 2, ".......", ".......", ".......", ".......", ".......", "X......"), `board[5][0] must be "R", "Y" or ""`},
		{"lower-case disc", c4Context("Y", 2, ".......", ".......", ".......", ".......", ".......", "r......"), `board[5][0] must be`},
		{"null cell", strings.Replace(c4Context("R", 1, empty...), `""`, `null`, 1), `board[0][0] must be`},
		{"floating disc", c4Context("Y", 2, ".......", ".......", ".......", ".......", "R......", "......."), "board[4][0] floats over an empty cell"},
		{"empty rows", `{"board":[[],[],[],[],[],[]],"your_color":"R","move_number":1}`, "must be 6 rows of 7 cells"},
		{"missing colour", strings.Replace(c4Context("R", 1, empty...), `"your_color":"R",`, "", 1), `missing field "your_color"`},
		{"float move number", strings.Replace(c4Context("R", 1, empty...), `"move_number":1`, `"move_number":1.5`, 1), `field "move_number" must be an integer`},
		{"wrong colour", c4Context("Y", 1, empty...), `your_color "Y" but R is to move`},
		{"wrong move number", c4Context("R", 2, empty...), "move_number 2 with 0 discs on the board"},
		{"too many R", c4Context("Y", 3, ".......", ".......", ".......", ".......", ".......", "RR....."), "board has 2 R and 0 Y"},
		{"won", c4Context("Y", 8, ".......", ".......", ".......", ".......", ".......", "RRRRYYY"), "match is over"},
		{"full", c4Context("R", 43, "RYYYRRR", "RYRYRYY", "YRYYYRY", "YYYRRRY", "RRRYRYR", "RRYRYRY"), "match is over"},
		{"wrong valid moves", strings.Replace(c4Context("R", 1, empty...), `}`, `,"valid_moves":[0,1]}`, 1), "valid_moves [0,1], want the open columns [0 1 2 3 4 5 6]"},
		{"null valid moves", strings.Replace(c4Context("R", 1, empty...), `}`, `,"valid_moves":null}`, 1), "valid_moves null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := g.LegalMoves(json.RawMessage(tt.ctx))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "parse connect_four context: ") {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
			if over := strings.Contains(tt.want, "match is over"); errors.Is(err, ErrMatchOver) != over {
				t.Errorf("got errors.Is(err, ErrMatchOver) = %t, want %t", !over, over)
			}
		})
	}
}

func TestConnectFourContextForBothPlayers(t *testing.T) {
	g := mustGame(t, TypeConnectFour, nil)
	s := c4Play(t, 3)
	if _, err := g.LegalMoves(contextJSON(t, s, 1)); err != nil {
		t.Errorf("got error %v for the mover's context, want none", err)
	}
	if _, err := g.LegalMoves(contextJSON(t, s, 0)); err == nil {
		t.Error("got no error for the waiting player's context, want one")
	}
	row := `["","","","","","",""]`
	want := `{"board":[` + strings.Repeat(row+",", 5) + `["","","","R","","",""]],"move_number":2,"valid_moves":[0,1,2,3,4,5,6],"your_color":"Y"}`
	if got := string(contextJSON(t, s, 1)); got != want {
		t.Errorf("got context %s, want %s", got, want)
	}
}
