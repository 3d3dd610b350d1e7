package player

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/player/llm"
	"github.com/agentleague/agentleague/protocol"
)

// A player of strategy llm answers REQUEST_MOVE with the move its model names and the
// model's note beside it.
func TestLLMStrategy(t *testing.T) {
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant",`+
			`"content":"{\"reasoning\":\"take the centre\",\"move\":\"1,1\"}"}}],"usage":{"prompt_tokens":7,"completion_tokens":3}}`)
	}))
	defer model.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	prof, err := llm.ParseProfile("agent.yaml", []byte("name: A\npersonality: calm\nmodel_name: m\nsystem_prompt: Play well.\nbase_url: "+model.URL+"/v1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{ID: "p01", Addr: "127.0.0.1:0", LeagueURL: "http://127.0.0.1:1/mcp", Strategy: StrategyLLM}, testLogger(t)); err == nil ||
		!strings.Contains(err.Error(), "needs an agent profile") {
		t.Errorf("strategy llm without a profile: %v, want it refused", err)
	}
	lg := startLeague(t, &fakeLeague{})
	r := startPlayer(t, lg, Config{ID: "p01", Strategy: StrategyLLM, LLM: llm.NewClient(prof, "", &http.Client{Transport: tr})}, nil)
	r.waitState(t, StateActive)
	s := newSender(t)
	board := json.RawMessage(`{"board":[["X","",""],["","",""],["","",""]],"your_mark":"O","move_number":2}`)
	ans, err := s.send(r.url, protocol.RequestMove, envelope{matchID: "M1", gameType: game.TypeTicTacToe},
		map[string]any{"step_number": 2, "step_context": board, "deadline_ms": 5000})
	if err != nil {
		t.Fatalf("REQUEST_MOVE: %v", err)
	}
	mv := decode[protocol.MoveAnswer](t, ans)
	var meta struct {
		LLM struct {
			Model     string `json:"model"`
			TokensIn  int    `json:"tokens_in"`
			TokensOut int    `json:"tokens_out"`
			Reasoning string `json:"reasoning"`
		} `json:"llm"`
	}
	if err := json.Unmarshal(mv.Metadata, &meta); err != nil {
		t.Fatalf("metadata %s: %v", mv.Metadata, err)
	}
	if string(mv.MovePayload) != `{"row":1,"col":1}` || meta.LLM.Model != "m" || meta.LLM.TokensIn != 7 || meta.LLM.TokensOut != 3 || meta.LLM.Reasoning != "take the centre" {
		t.Errorf("move %s with metadata %s, want the centre and the model's note", mv.MovePayload, mv.Metadata)
	}
}
