package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// llmKey is a distinctive fake API key: no log, audit line or database row may hold it.
const llmKey = "sk-e2e-9c2f71d0-llm-key-never-logged"

// scriptedModel is an OpenAI-compatible Chat Completions server that plays the first legal
// move its prompt lists, except that every third conversation first gets an illegal answer,
// so the rethinks are played too.
type scriptedModel struct {
	mu            sync.Mutex
	conversations int
	calls         int
	badAuth       int
}

func (s *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) < 2 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.calls++
	if r.Header.Get("Authorization") != "Bearer "+llmKey {
		s.badAuth++
	}
	first := len(req.Messages) == 2
	if first {
		s.conversations++
	}
	// Every third conversation opens with an illegal move, every fifth with prose.
	illegal := first && s.conversations%3 == 0
	prose := first && !illegal && s.conversations%5 == 0
	n := s.calls
	s.mu.Unlock()
	// The first user message lists the legal moves: "Legal moves: a, b, c."
	prompt := req.Messages[1].Content
	_, list, _ := strings.Cut(prompt, "Legal moves: ")
	list, _, _ = strings.Cut(list, ".\n")
	move := strings.Split(list, ", ")[0]
	if illegal {
		move = "9,9"
	}
	content, _ := json.Marshal(map[string]string{"reasoning": "the first move listed", "move": move})
	if prose {
		content = []byte("I would play " + move + ", since it is the first move listed.")
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "model": "scripted",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": string(content)}}},
		"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 12, "total_tokens": 112},
	})
}

// A tic-tac-toe league in which two players are llm players served by a scripted model:
// the league completes, they make their moves (rethinks included) with no technical loss,
// their notes reach the statistics, and the key appears in no log, audit line or row.
func TestLLMPlayersLeague(t *testing.T) {
	model := &scriptedModel{}
	srv := httptest.NewServer(model)
	defer srv.Close()
	dir := t.TempDir()
	profile := func(name string) string {
		path := filepath.Join(dir, name+".yaml")
		body := fmt.Sprintf("name: %q\npersonality: scripted\nmodel_name: scripted-model\nsystem_prompt: Play the first legal move.\n"+
			"base_url: %s/v1\napi_key_env: AL_E2E_LLM_KEY\ntimeout_seconds: 10\n", name, srv.URL)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	env := []string{"AL_E2E_LLM_KEY=" + llmKey}
	run := runLeague(t, leagueOpts{players: 4, referees: 2, seed: 13,
		playerArgs: map[string][]string{
			"p01": {"--strategy", "llm", "--profile", profile("Model One")},
			"p02": {"--strategy", "llm", "--profile", profile("Model Two")},
		},
		playerEnv: map[string][]string{"p01": env, "p02": env},
	})
	run.checkLeague(t, 1)

	db := run.openDB(t)
	rows, err := db.Query(`SELECT match_id, game_metadata FROM match_results`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	llmPlayers := map[string]bool{"p01": true, "p02": true}
	moves := map[string]int{}
	for rows.Next() {
		var id string
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			t.Fatal(err)
		}
		var md struct {
			Moves []struct {
				Player   string `json:"player"`
				Outcome  string `json:"outcome"`
				Metadata struct {
					LLM *struct {
						TokensIn int `json:"tokens_in"`
					} `json:"llm"`
				} `json:"metadata"`
			} `json:"moves"`
			Violations []struct {
				Player string `json:"player"`
				Kind   string `json:"kind"`
			} `json:"violations"`
		}
		if err := json.Unmarshal(raw, &md); err != nil {
			t.Fatalf("%s: game_metadata: %v", id, err)
		}
		for _, v := range md.Violations {
			if llmPlayers[v.Player] {
				t.Errorf("%s: %s has a %s violation", id, v.Player, v.Kind)
			}
		}
		for _, m := range md.Moves {
			if !llmPlayers[m.Player] {
				continue
			}
			moves[m.Player]++
			if m.Outcome != "SUCCESS" || m.Metadata.LLM == nil || m.Metadata.LLM.TokensIn < 100 {
				t.Errorf("%s: a move of %s is %s with note %+v, want played with the model's note", id, m.Player, m.Outcome, m.Metadata.LLM)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if moves["p01"] == 0 || moves["p02"] == 0 {
		t.Errorf("moves of the llm players %v, want some of each", moves)
	}
	model.mu.Lock()
	calls, badAuth, conversations := model.calls, model.badAuth, model.conversations
	model.mu.Unlock()
	t.Logf("model server: %d calls in %d conversations; moves of the llm players %v", calls, conversations, moves)
	if badAuth != 0 || conversations < 3 || calls <= conversations {
		t.Errorf("model server: %d calls (%d without the key) in %d conversations; want the key on every call and some rethinks", calls, badAuth, conversations)
	}

	res, err := http.Get(run.lm.base() + "/status")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Agents []struct {
			ID        string `json:"id"`
			AgentCard *struct {
				Model      string `json:"model"`
				Provider   string `json:"provider"`
				PromptHash string `json:"prompt_hash"`
			} `json:"agent_card"`
			Stats *struct {
				LLM *struct {
					Notes       int `json:"notes"`
					TokensIn    int `json:"tokens_in"`
					TokensOut   int `json:"tokens_out"`
					Rethinks    int `json:"rethinks"`
					Unreadable  int `json:"unreadable"`
					Illegal     int `json:"illegal"`
					CallRetries int `json:"call_retries"`
				} `json:"llm"`
			} `json:"stats"`
		} `json:"agents"`
	}
	err = json.NewDecoder(res.Body).Decode(&st)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	errs, unreadable, illegal := 0, 0, 0
	for _, a := range st.Agents {
		// An llm player registers with the card of its profile; the others with none.
		if c := a.AgentCard; llmPlayers[a.ID] != (c != nil) || (c != nil && (c.Model != "scripted-model" || !strings.HasPrefix(c.PromptHash, "sha256:") || c.Provider == "")) {
			t.Errorf("agent card of %s: %+v", a.ID, c)
		}
		if a.Stats == nil {
			continue // a referee
		}
		switch l := a.Stats.LLM; {
		case llmPlayers[a.ID] && (l == nil || l.TokensIn < 100*moves[a.ID] || l.TokensOut < 12*moves[a.ID] || l.Notes != moves[a.ID]):
			t.Errorf("llm statistics of %s %+v, want the notes and tokens of its %d moves", a.ID, l, moves[a.ID])
		case llmPlayers[a.ID]:
			errs += l.Rethinks + l.CallRetries
			// Every refused answer was either unreadable or illegal: legality apart.
			if l.Unreadable+l.Illegal != l.Rethinks {
				t.Errorf("llm statistics of %s %+v: unreadable and illegal answers do not add up to the rethinks", a.ID, l)
			}
			unreadable, illegal = unreadable+l.Unreadable, illegal+l.Illegal
		case l != nil:
			t.Errorf("statistics of %s %+v, want no llm figures", a.ID, l)
		}
	}
	if unreadable == 0 || illegal == 0 {
		t.Errorf("the statistics count %d unreadable and %d illegal answers, want some of each (the model answered in prose and with illegal moves)", unreadable, illegal)
	}
	if errs != calls-conversations {
		t.Errorf("%d llm errors in the statistics, want the %d refused answers", errs, calls-conversations)
	}

	// The dashboard's leaderboard of the language models, in a real browser: both llm
	// players with their legality and cost; the ratings name each one's model (its card).
	ctx := browser(t)
	do(t, ctx, "open the dashboard", chromedp.Navigate(run.lm.base()+"/"), chromedp.WaitVisible(chromedp.CSS("#llm-box")))
	poll(t, ctx, "both language models on the leaderboard and their models beside their ratings",
		`document.querySelectorAll("#llm tbody tr").length === 2 && [...document.querySelectorAll("#ratings td.player")].filter((td) => td.textContent.includes("scripted-model")).length === 2`, 10*time.Second)
	screenshot(t, ctx, artifactDir(t), "llm-board.png")

	// Every file the league left (logs, audit log, database) and every process's output,
	// read once the processes have ended.
	var outputs bytes.Buffer
	for _, p := range append(append(run.players, run.refs...), run.lm) {
		p.stop(t)
		outputs.WriteString(p.out.String())
	}
	if bytes.Contains(outputs.Bytes(), []byte(llmKey)) {
		t.Error("the key is in a process's output")
	}
	err = filepath.WalkDir(run.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(llmKey)) {
			t.Errorf("the key is in %s", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
