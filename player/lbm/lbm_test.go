package lbm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/player/strategy"
)

func serve(t *testing.T, s *Server) *httptest.Server {
	t.Helper()
	if s.Registry == nil {
		s.Registry = game.Default()
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv
}

func TestHealthListsWhatTheStrategyPlays(t *testing.T) {
	for _, tc := range []struct {
		strategy string
		want     []string
	}{
		{"random", []string{"tic-tac-toe", "connect-four", "chess"}},
		{"perfect", []string{"tic-tac-toe"}},
		{"alphabeta", []string{"connect-four", "chess"}},
	} {
		srv := serve(t, &Server{Strategy: tc.strategy})
		h, err := NewClient(srv.URL, "").Health(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(h.Capabilities, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.strategy, h.Capabilities, tc.want)
		}
	}
}

func post(t *testing.T, url, auth, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/model/play", strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

func TestServeModelAnswersAndRefusesWithTheArenaCodes(t *testing.T) {
	srv := serve(t, &Server{Strategy: "random", Seed: 1, Auth: "Bearer k"})
	ttt := `{"game_id":"tic-tac-toe","game_state":{"board":[["","",""],["X","",""],["","","O"]],"current_player":"X","turn":3},"valid_moves":[],"time_limit_ms":5000}`
	chessReq := `{"game_id":"chess","game_state":{"fen":"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1","current_player":"white","turn":1},"valid_moves":[],"time_limit_ms":5000}`
	cases := []struct {
		name, auth, body string
		status           int
		code             string
	}{
		{"tic-tac-toe move", "Bearer k", ttt, 200, ""},
		{"chess move", "Bearer k", chessReq, 200, ""},
		{"no token", "", ttt, 401, CodeUnauthorized},
		{"wrong token", "Bearer x", ttt, 401, CodeUnauthorized},
		{"not json", "Bearer k", "{", 400, CodeInvalidGameState},
		{"unknown game", "Bearer k", `{"game_id":"go","game_state":{}}`, 400, CodeUnsupportedGame},
		{"bad fen", "Bearer k", `{"game_id":"chess","game_state":{"fen":"not a fen"}}`, 400, CodeInvalidGameState},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out := post(t, srv.URL, tc.auth, tc.body)
			if status != tc.status {
				t.Fatalf("got %d %v, want %d", status, out, tc.status)
			}
			if tc.code != "" && out["code"] != tc.code {
				t.Errorf("got code %v, want %s", out["code"], tc.code)
			}
			if tc.status == 200 && (out["move"] == nil || out["thinking_time_ms"] == nil) {
				t.Errorf("got %v, want move and thinking_time_ms", out)
			}
		})
	}
}

func TestServeModelPassesTheSeedTestScript(t *testing.T) {
	python := ""
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import requests").Run() == nil {
			python = p
			break
		}
	}
	if python == "" {
		t.Fatal("no python3 with the requests module (make deps installs python3-requests)")
	}
	srv := serve(t, &Server{Strategy: "perfect", Auth: "Bearer secret"})
	out, err := exec.Command(python, filepath.Join("testdata", "seed_test_script.py"), srv.URL, "secret").CombinedOutput()
	if err != nil {
		t.Fatalf("seed test script: %v\n%s", err, out)
	}
}

// model is a scripted model server.
func model(t *testing.T, play http.HandlerFunc) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /model/health", func(w http.ResponseWriter, _ *http.Request) {
		httpserve.WriteJSON(w, http.StatusOK, Health{Status: "healthy", Capabilities: []string{"tic-tac-toe"}})
	})
	mux.HandleFunc("POST /model/play", play)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func tttStrategy(t *testing.T, url, auth string) strategy.Strategy {
	t.Helper()
	g, err := game.Default().New(game.TypeTicTacToe, nil)
	if err != nil {
		t.Fatal(err)
	}
	return NewClient(url, auth).Strategy(g, "m1")
}

var startCtx = json.RawMessage(`{"board":[["","",""],["","",""],["","",""]],"your_mark":"X","move_number":1}`)

func TestModelStrategyAgainstModelServers(t *testing.T) {
	var got atomic.Value
	good := model(t, func(w http.ResponseWriter, r *http.Request) {
		var req PlayRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		got.Store(req)
		httpserve.WriteJSON(w, http.StatusOK, map[string]any{"move": map[string]int{"row": 1, "col": 1}, "confidence": 0.9, "reasoning": "centre", "thinking_time_ms": 3})
	})
	slow := model(t, func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client hanging up.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	illegal := model(t, func(w http.ResponseWriter, _ *http.Request) {
		httpserve.WriteJSON(w, http.StatusOK, map[string]any{"move": map[string]int{"row": 7, "col": 7}, "thinking_time_ms": 1})
	})
	broken := model(t, func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, 500, CodeModelUnavailable, "boom", nil)
	})
	guarded := serve(t, &Server{Strategy: "random", Auth: "Bearer right"})
	req := strategy.Request{MatchID: "m1", GameType: game.TypeTicTacToe, StepNumber: 1, Context: startCtx, DeadlineMS: 300, Opponent: "p2"}

	mv, meta, err := tttStrategy(t, good.URL, "").(strategy.Explainer).MoveWithMetadata(req)
	if err != nil || !sameJSON(mv, `{"row":1,"col":1}`) || !strings.Contains(string(meta), `"reasoning":"centre"`) {
		t.Errorf("good model: got %s %s %v", mv, meta, err)
	}
	sent := got.Load().(PlayRequest)
	if sent.GameID != "tic-tac-toe" || len(sent.ValidMoves) != 9 || sent.TimeLimitMS <= 0 || sent.TimeLimitMS > 300 || sent.Opponent != "p2" {
		t.Errorf("request sent: %+v", sent)
	}
	if mv, err := tttStrategy(t, illegal.URL, "").Move(req); err != nil || !sameJSON(mv, `{"row":7,"col":7}`) {
		t.Errorf("illegal model: got %s %v; the move must reach the referee as the model chose it", mv, err)
	}
	for name, url := range map[string]string{"times out": slow.URL, "answers 500": broken.URL, "refuses our token": guarded.URL} {
		_, err := tttStrategy(t, url, "Bearer wrong").Move(req)
		if !errors.Is(err, strategy.ErrNoMove) {
			t.Errorf("model that %s: got %v, want ErrNoMove", name, err)
		}
	}
	var apiErr *APIError
	if _, err := tttStrategy(t, guarded.URL, "Bearer wrong").Move(req); !errors.As(err, &apiErr) || apiErr.Status != 401 {
		t.Errorf("got %v, want a 401 APIError", err)
	}
}

func TestArenaFormatsRoundTrip(t *testing.T) {
	g, _ := game.Default().New(game.TypeChess, nil)
	st := g.NewState(1)
	ctx, _ := json.Marshal(st.Context(0))
	legal, err := g.LegalMoves(ctx)
	if err != nil {
		t.Fatal(err)
	}
	state, valid, err := ToArena(game.TypeChess, ctx, legal)
	if err != nil || len(valid) != 20 {
		t.Fatalf("got %d valid moves, %v", len(valid), err)
	}
	back, err := FromArena(game.TypeChess, state)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.LegalMoves(back); err != nil {
		t.Errorf("arena state does not read back: %v", err)
	}
	for _, v := range valid {
		mv, err := FromArenaMove(game.TypeChess, v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.ParseMove(0, mv); err != nil {
			t.Errorf("arena move %s -> %s refused: %v", v, mv, err)
		}
	}
}

func sameJSON(a json.RawMessage, b string) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}
