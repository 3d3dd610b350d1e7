package lbm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/player/strategy"
)

// gridRequest is a play request for tic-tac-toe or connect four whose board is drawn one
// string per row, "." for an empty cell.
func gridRequest(gameID, current string, rows ...string) string {
	board := make([][]string, len(rows))
	for r, row := range rows {
		board[r] = []string{}
		for _, c := range row {
			cell := string(c)
			if cell == "." {
				cell = ""
			}
			board[r] = append(board[r], cell)
		}
	}
	b, _ := json.Marshal(map[string]any{"game_id": gameID, "time_limit_ms": 5000,
		"game_state": map[string]any{"board": board, "current_player": current, "turn": 1, "winner": nil}})
	return string(b)
}

func chessRequest(fen, current string) string {
	b, _ := json.Marshal(map[string]any{"game_id": "chess", "time_limit_ms": 5000,
		"game_state": map[string]any{"fen": fen, "current_player": current, "turn": 1}})
	return string(b)
}

// withState changes one member of a request's game_state (deletes it for nil).
func withState(t *testing.T, body, field string, value any) string {
	t.Helper()
	return withMember(t, body, value, "game_state", field)
}

// withMember changes the member of a request at path (deletes it for nil).
func withMember(t *testing.T, body string, value any, path ...string) string {
	t.Helper()
	var req map[string]any
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	obj := req
	for _, k := range path[:len(path)-1] {
		obj = obj[k].(map[string]any)
	}
	if last := path[len(path)-1]; value == nil {
		delete(obj, last)
	} else {
		obj[last] = value
	}
	b, _ := json.Marshal(req)
	return string(b)
}

// checkErrorBody wants the seed's standard error body and nothing else: error, code,
// details (an object) and a UTC RFC 3339 timestamp.
func checkErrorBody(t *testing.T, out map[string]any, code string) {
	t.Helper()
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"code", "details", "error", "timestamp"}; !slices.Equal(keys, want) {
		t.Errorf("got error body members %v, want %v", keys, want)
	}
	if out["code"] != code {
		t.Errorf("got code %v, want %s", out["code"], code)
	}
	if msg, _ := out["error"].(string); msg == "" {
		t.Errorf("got error %v, want a message", out["error"])
	}
	if _, ok := out["details"].(map[string]any); !ok {
		t.Errorf("got details %v, want an object", out["details"])
	}
	ts, _ := out["timestamp"].(string)
	if at, err := time.Parse(time.RFC3339, ts); err != nil || !strings.HasSuffix(ts, "Z") || at.IsZero() {
		t.Errorf("got timestamp %q, want UTC RFC 3339", ts)
	}
}

func TestServeModelRefusesImpossibleAndFinishedPositions(t *testing.T) {
	const (
		ttt = "tic-tac-toe"
		c4  = "connect-four"
	)
	// c4Rows tops the given bottom rows up to a full board with empty rows.
	c4Rows := func(bottom ...string) []string {
		return append(slices.Repeat([]string{"......."}, 6-len(bottom)), bottom...)
	}
	start := "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
	tttOpen := gridRequest(ttt, "X", "...", "X..", "..O")
	bad, over := http.StatusBadRequest, http.StatusUnprocessableEntity
	cases := []struct {
		name, body string
		status     int
		// problem is part of the details the answer must carry.
		problem string
	}{
		// Tic-tac-toe: impossible or malformed.
		{"ttt two X more than O", gridRequest(ttt, "O", "XX.", "...", "..."), bad, "board has 2 X and 0 O"},
		{"ttt bad cell", gridRequest(ttt, "O", "Z..", "...", "..."), bad, `board[0][0] must be \"X\", \"O\" or \"\"`},
		{"ttt null cell", strings.Replace(tttOpen, `""`, `null`, 1), bad, "board[0][0]"},
		{"ttt short row", gridRequest(ttt, "X", "...", "..", "..."), bad, "board must be 3 rows of 3 cells"},
		{"ttt four rows", gridRequest(ttt, "X", "...", "...", "...", "..."), bad, "board must be 3 rows of 3 cells"},
		{"ttt no board", withState(t, tttOpen, "board", nil), bad, "board must be"},
		{"ttt both have a line", gridRequest(ttt, "X", "XXX", "OOO", "..."), bad, "both X and O have 3 in a row"},
		{"ttt loser moved after the win", gridRequest(ttt, "X", "XXX", "OO.", "OO."), bad, "X has 3 in a row, yet O moved after it"},
		{"ttt mover has moved more", gridRequest(ttt, "X", "X..", "...", "..."), bad, "current_player is X, but X has moved more often than O"},
		{"ttt unknown player", withState(t, tttOpen, "current_player", "Z"), bad, `current_player must be one of \"X\", \"O\"`},
		{"ttt no player", withState(t, tttOpen, "current_player", nil), bad, "current_player must be"},
		{"ttt turn out of range", withState(t, tttOpen, "turn", 11), bad, "turn must be an integer from 0 to 10"},
		{"ttt negative turn", withState(t, tttOpen, "turn", -1), bad, "turn must be an integer"},
		{"ttt turn not a number", withState(t, tttOpen, "turn", "3"), bad, "turn must be an integer"},
		{"ttt fractional turn", withState(t, tttOpen, "turn", 3.5), bad, "turn must be an integer"},
		{"ttt unknown winner", withState(t, tttOpen, "winner", "Z"), bad, "winner must be null or one of"},
		// Tic-tac-toe: finished.
		{"ttt X has won", gridRequest(ttt, "O", "XXX", "OO.", "..."), over, "X has 3 in a row"},
		{"ttt O has won", gridRequest(ttt, "X", "OOO", "XX.", "X.."), over, "O has 3 in a row"},
		{"ttt won on the last cell", gridRequest(ttt, "O", "XXX", "OOX", "XOO"), over, "X has 3 in a row"},
		{"ttt full board", gridRequest(ttt, "O", "XOX", "XOO", "OXX"), over, "the board is full"},
		// Connect four: impossible or malformed.
		{"c4 floating disc", gridRequest(c4, "Y", c4Rows("R......", ".......")...), bad, "board[4][0] floats over an empty cell"},
		{"c4 two R more than Y", gridRequest(c4, "Y", c4Rows("RR.....")...), bad, "board has 2 R and 0 Y"},
		{"c4 both have four", gridRequest(c4, "R", c4Rows("YYYY...", "RRRR...")...), bad, "both R and Y have 4 in a row"},
		{"c4 loser moved after the win", gridRequest(c4, "Y", c4Rows("RR.....", "YYYYRRR")...), bad, "Y has 4 in a row, yet R moved after it"},
		{"c4 two fours apart", gridRequest(c4, "R", ".......", "....R..", "....R..", "....R..", "YYY.RYY", "RRRRYYY"), bad, "no single last move made"},
		{"c4 bad cell", gridRequest(c4, "Y", c4Rows("X......")...), bad, `board[5][0] must be \"R\", \"Y\" or \"\"`},
		{"c4 seven rows", gridRequest(c4, "R", append(c4Rows("......."), ".......")...), bad, "board must be 6 rows of 7 cells"},
		{"c4 six columns", gridRequest(c4, "R", "......", "......", "......", "......", "......", "......"), bad, "board must be 6 rows of 7 cells"},
		{"c4 turn out of range", withState(t, gridRequest(c4, "R", c4Rows(".......")...), "turn", 44), bad, "turn must be an integer from 0 to 43"},
		// Connect four: finished.
		{"c4 R has won across", gridRequest(c4, "Y", c4Rows("RRRRYYY")...), over, "R has 4 in a row"},
		{"c4 Y has won upwards", gridRequest(c4, "R", c4Rows("Y......", "Y......", "YR.....", "YRRR...")...), over, "Y has 4 in a row"},
		{"c4 full board", gridRequest(c4, "R", "RYYYRRR", "RYRYRYY", "YRYYYRY", "YYYRRRY", "RRRYRYR", "RRYRYRY"), over, "the board is full"},
		// Chess: impossible or malformed.
		{"chess not a fen", chessRequest("not a fen", "white"), bad, "fen must have 6 fields"},
		{"chess bad placement", chessRequest("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "white"), bad, `field \"fen\"`},
		{"chess other king in check", chessRequest("4k3/4R3/8/8/8/8/8/4K3 w - - 0 1", "white"), bad, "the side not to move is in check"},
		{"chess two white kings", chessRequest("4k3/8/8/8/8/8/8/3KK3 w - - 0 1", "white"), bad, "2 white and 1 black kings"},
		{"chess en passant for the other side", chessRequest("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1", "white"), bad, "en passant square e3"},
		{"chess unknown player", chessRequest(start, "w"), bad, `current_player must be one of \"white\", \"black\"`},
		{"chess negative halfmove clock", withState(t, chessRequest(start, "white"), "halfmove_clock", -1), bad, "halfmove_clock must be an integer"},
		{"chess castling rights not a string", withState(t, chessRequest(start, "white"), "castling_rights", 4), bad, "castling_rights must be null or a string"},
		// Chess: finished.
		{"chess checkmate", chessRequest("R5k1/5ppp/8/8/8/8/8/6K1 b - - 1 1", "black"), over, "checkmate"},
		{"chess stalemate", chessRequest("7k/5Q2/6K1/8/8/8/8/8 b - - 1 1", "black"), over, "stalemate"},
		{"chess dead position", chessRequest("4k3/8/8/8/8/8/8/3NK3 b - - 1 1", "black"), over, "insufficient_material"},
		// The request itself.
		{"state not an object", `{"game_id":"tic-tac-toe","game_state":[1,2]}`, bad, "game_state must be an object"},
		{"no state", `{"game_id":"tic-tac-toe"}`, bad, "game_state must be an object"},
		{"string time limit", withMember(t, tttOpen, "5000", "time_limit_ms"), bad, `"expected":"integer","field":"time_limit_ms","received":"string"`},
		{"negative time limit", withMember(t, tttOpen, -1, "time_limit_ms"), bad, `"received":-1`},
		{"valid moves not a list", withMember(t, tttOpen, map[string]any{}, "valid_moves"), bad, `"field":"valid_moves"`},
		{"body not an object", `[1]`, bad, "body is not a JSON object"},
	}
	srv := serve(t, &Server{Strategy: "random"})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out := post(t, srv.URL, "", tc.body)
			if status != tc.status {
				t.Fatalf("got %d %v, want %d", status, out, tc.status)
			}
			code := CodeInvalidGameState
			if tc.status == over {
				code = CodeNoValidMoves
			}
			checkErrorBody(t, out, code)
			if details, _ := json.Marshal(out["details"]); !strings.Contains(string(details), tc.problem) {
				t.Errorf("got details %s, want them to contain %s", details, tc.problem)
			}
		})
	}
}

// stopper is a ContextStrategy that thinks until its context ends, then reports how it was
// stopped on ended and answers a move all the same, which the server must drop.
type stopper struct{ ended chan<- error }

func (stopper) Move(strategy.Request) (json.RawMessage, error) {
	return nil, errors.New("Move called on a ContextStrategy")
}

func (s stopper) MoveContext(ctx context.Context, _ strategy.Request) (json.RawMessage, error) {
	<-ctx.Done()
	s.ended <- ctx.Err()
	return json.RawMessage(`{"row":0,"col":0}`), nil
}

// sleeper knows nothing of contexts: it thinks for its duration, reports on ended, answers.
type sleeper struct {
	think time.Duration
	ended chan<- error
}

func (s sleeper) Move(strategy.Request) (json.RawMessage, error) {
	time.Sleep(s.think)
	s.ended <- nil
	return json.RawMessage(`{"row":0,"col":0}`), nil
}

// panicker is a strategy that panics.
type panicker struct{}

func (panicker) Move(strategy.Request) (json.RawMessage, error) { panic("boom") }

func TestServeModelSurvivesAPanickingStrategy(t *testing.T) {
	srv := serve(t, &Server{Strategy: "stub", NewStrategy: func(game.Game, string) (strategy.Strategy, error) { return panicker{}, nil }})
	for range 2 {
		status, out := post(t, srv.URL, "", gridRequest("tic-tac-toe", "X", "...", "...", "..."))
		if status != http.StatusInternalServerError {
			t.Fatalf("got %d %v, want 500", status, out)
		}
		checkErrorBody(t, out, CodeModelUnavailable)
		if details, _ := json.Marshal(out); strings.Contains(string(details), "boom") {
			t.Errorf("got %s: the panic's value reached the caller", details)
		}
	}
}

// TestServeModelAnswersTimeoutAtTheDeadline runs on fake time: the handler must answer 408 the
// moment time_limit_ms (at most the arena's 30 s) has passed, and the strategy's goroutine
// must end, cancelled if it takes a context, else when its own work is done.
func TestServeModelAnswersTimeoutAtTheDeadline(t *testing.T) {
	open := gridRequest("tic-tac-toe", "X", "...", "...", "...")
	cases := []struct {
		name string
		// limit is the request's time_limit_ms (nil for none).
		limit any
		// think is how long the strategy takes; 0 means until its context ends.
		think      time.Duration
		status     int
		answeredIn time.Duration
	}{
		{"answers within the limit", 1000, 900 * time.Millisecond, http.StatusOK, 900 * time.Millisecond},
		{"overruns and is cancelled", 1000, 0, http.StatusRequestTimeout, time.Second},
		{"overruns and ignores contexts", 1000, 10 * time.Second, http.StatusRequestTimeout, time.Second},
		{"no limit: the arena's 30 s", nil, 0, http.StatusRequestTimeout, 30 * time.Second},
		{"limit beyond the arena's 30 s", 60000, 0, http.StatusRequestTimeout, 30 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				body := withMember(t, open, tc.limit, "time_limit_ms")
				ended := make(chan error, 1)
				var st strategy.Strategy = stopper{ended}
				if tc.think > 0 {
					st = sleeper{tc.think, ended}
				}
				s := &Server{Strategy: "stub", Registry: game.Default(),
					NewStrategy: func(game.Game, string) (strategy.Strategy, error) { return st, nil }}
				start := time.Now()
				rec := httptest.NewRecorder()
				s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/model/play", strings.NewReader(body)))
				if got := time.Since(start); got != tc.answeredIn {
					t.Errorf("answered after %v, want %v", got, tc.answeredIn)
				}
				var out map[string]any
				if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || rec.Code != tc.status {
					t.Fatalf("got %d %s, want %d", rec.Code, rec.Body, tc.status)
				}
				switch tc.status {
				case http.StatusOK:
					if out["thinking_time_ms"] != float64(tc.answeredIn.Milliseconds()) {
						t.Errorf("got thinking_time_ms %v, want %d", out["thinking_time_ms"], tc.answeredIn.Milliseconds())
					}
				case http.StatusRequestTimeout:
					checkErrorBody(t, out, CodeTimeout)
					if d, _ := out["details"].(map[string]any); d["time_limit_ms"] != float64(tc.answeredIn.Milliseconds()) {
						t.Errorf("got details %v, want time_limit_ms %d", d, tc.answeredIn.Milliseconds())
					}
				}
				// The strategy's goroutine has a known end: at the deadline, told by its
				// context, or when its own thinking is over; its late move went nowhere.
				err := <-ended
				stoppedAt := time.Since(start)
				if tc.think > 0 && (err != nil || stoppedAt != tc.think) {
					t.Errorf("strategy ended after %v with %v, want %v with nil", stoppedAt, err, tc.think)
				}
				if tc.think == 0 && (!errors.Is(err, context.DeadlineExceeded) || stoppedAt != tc.answeredIn) {
					t.Errorf("strategy ended after %v with %v, want %v with the deadline", stoppedAt, err, tc.answeredIn)
				}
				// synctest.Test fails if any goroutine of the handler is still blocked.
			})
		})
	}
}
