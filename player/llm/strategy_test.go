package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/player/strategy"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// emptyBoard is the first tic-tac-toe context of X.
var emptyBoard = json.RawMessage(`{"board":[["","",""],["","",""],["","",""]],"your_mark":"X","move_number":1}`)

func testProfile(baseURL string) *Profile {
	return &Profile{
		Name: "Test Agent", Personality: "aggressive", ModelName: "scripted-model", SystemPrompt: "You play to win.",
		Temperature: 0.3, MaxTokens: 256, TimeoutSeconds: 30, Rethinks: 2, BaseURL: baseURL, APIKeyEnv: "TEST_LLM_KEY", File: "test.yaml",
	}
}

// played is one move asked of a scripted server, with everything it left behind.
type played struct {
	move    json.RawMessage
	meta    json.RawMessage
	note    note
	err     error
	elapsed time.Duration
	calls   []call
	log     *logBuffer
}

// playMove asks the llm strategy for one tic-tac-toe move (emptyBoard unless stepContext is
// set) from a server running steps. Call it inside a synctest bubble: elapsed is fake time.
func playMove(t *testing.T, steps []step, deadlineMS int, change func(*Profile)) played {
	t.Helper()
	return playRequest(t, steps, strategy.Request{MatchID: "M1", GameType: game.TypeTicTacToe, StepNumber: 1, Context: emptyBoard, DeadlineMS: deadlineMS}, change)
}

// playRequest is playMove with the request given.
func playRequest(t *testing.T, steps []step, req strategy.Request, change func(*Profile)) played {
	t.Helper()
	s := &script{steps: steps}
	url, hc := serve(t, s)
	p := testProfile(url)
	if change != nil {
		change(p)
	}
	c := NewClient(p, testKey, hc)
	g, err := game.Default().New(game.TypeTicTacToe, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Strategy(g)
	if err != nil {
		t.Fatal(err)
	}
	out := played{log: &logBuffer{}}
	log := zerolog.New(out.log).With().Str("component", "player").Str("conversation_id", "conv-7").Logger()
	start := time.Now()
	out.move, out.meta, out.err = st.(strategy.ContextExplainer).MoveContext(log.WithContext(context.Background()), req)
	out.elapsed = time.Since(start)
	out.calls = s.recorded()
	if out.meta != nil {
		var m map[string]note
		if err := json.Unmarshal(out.meta, &m); err != nil {
			t.Fatalf("metadata %s: %v", out.meta, err)
		}
		out.note = m["llm"]
	}
	checkNoKey(t, out)
	return out
}

// checkNoKey fails when the key shows anywhere but in the Authorization header, and checks
// that every log line carries the component and the request's conversation_id.
func checkNoKey(t *testing.T, out played) {
	t.Helper()
	// A part of the key is a leak too: an excerpt must not cut it out of the scrubbing's reach.
	part := testKey[:12]
	if strings.Contains(out.log.String(), part) {
		t.Errorf("the key is in the log:\n%s", out.log)
	}
	if out.err != nil && strings.Contains(out.err.Error(), part) {
		t.Errorf("the key is in the error: %v", out.err)
	}
	if strings.Contains(string(out.meta), part) {
		t.Errorf("the key is in the metadata: %s", out.meta)
	}
	for _, l := range out.log.lines(t) {
		if l["component"] != "player" || l["conversation_id"] != "conv-7" {
			t.Errorf("log line %v lacks the component or the conversation_id", l)
		}
	}
	for _, c := range out.calls {
		if c.auth != "Bearer "+testKey {
			t.Errorf("Authorization header %q, want the key as Bearer", c.auth)
		}
	}
}

const centre = `{"reasoning":"The centre is strongest.","move":"1,1"}`

func TestLLMMoves(t *testing.T) {
	tests := []struct {
		name       string
		steps      []step
		deadlineMS int
		change     func(*Profile)
		wantMove   string // "" when the move is given up
		wantErr    string
		wantCalls  int
		wantNote   note // Model and LatencyMS are not compared
		check      func(t *testing.T, out played)
	}{
		{
			name: "good answer", steps: []step{completion("Here is my move:\n```json\n" + centre + "\n```")}, deadlineMS: 5000,
			wantMove: `{"row":1,"col":1}`, wantCalls: 1, wantNote: note{TokensIn: 10, TokensOut: 5, Reasoning: "The centre is strongest."},
			check: func(t *testing.T, out played) {
				req := out.calls[0].body
				if req.Model != "scripted-model" || req.Temperature != 0.3 || req.MaxTokens != 256 {
					t.Errorf("model %q, temperature %v, max_tokens %d; want the profile's", req.Model, req.Temperature, req.MaxTokens)
				}
				if !strings.Contains(string(req.ResponseFormat), `"json_schema"`) || !strings.Contains(string(req.ResponseFormat), `"enum":["0,0","0,1","0,2","1,0","1,1","1,2","2,0","2,1","2,2"]`) {
					t.Errorf("response_format %s, want a json_schema whose move is one of the legal moves", req.ResponseFormat)
				}
				if len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[1].Role != "user" {
					t.Fatalf("messages %+v, want system and user", req.Messages)
				}
				for _, want := range []string{"You play to win.", "Test Agent", "aggressive", "Tic-tac-toe", `"move"`} {
					if !strings.Contains(req.Messages[0].Content, want) {
						t.Errorf("system message lacks %q:\n%s", want, req.Messages[0].Content)
					}
				}
				for _, want := range []string{"You play X", "Legal moves: 0,0, 0,1, 0,2, 1,0, 1,1, 1,2, 2,0, 2,1, 2,2.", "about 4.5 seconds"} {
					if !strings.Contains(req.Messages[1].Content, want) {
						t.Errorf("prompt lacks %q:\n%s", want, req.Messages[1].Content)
					}
				}
			},
		},
		{
			name: "illegal then legal", steps: []step{completion(`{"reasoning":"far corner","move":"3,3"}`), completion(centre)},
			wantMove: `{"row":1,"col":1}`, wantCalls: 2, wantNote: note{TokensIn: 20, TokensOut: 10, Rethinks: 1, Illegal: 1, Reasoning: "The centre is strongest."},
			check: func(t *testing.T, out played) {
				msgs := out.calls[1].body.Messages
				if len(msgs) != 4 || msgs[2].Role != "assistant" || msgs[2].Content != `{"reasoning":"far corner","move":"3,3"}` {
					t.Fatalf("rethink messages %+v, want the refused answer as the assistant's", msgs)
				}
				if !strings.Contains(msgs[3].Content, `"3,3" is not one of the legal moves`) {
					t.Errorf("the reason was not sent back: %s", msgs[3].Content)
				}
			},
		},
		{
			name: "garbage", steps: []step{completion("I would rather not say.")},
			wantErr: "answer refused after 2 rethinks: no JSON object was found in the answer", wantCalls: 3,
			check: func(t *testing.T, out played) {
				for _, c := range out.calls[1:] {
					if last := c.body.Messages[len(c.body.Messages)-1].Content; !strings.Contains(last, "no JSON object was found") {
						t.Errorf("rethink without the reason: %s", last)
					}
				}
			},
		},
		{
			name: "garbage without rethinks", steps: []step{completion(`{"move": ["1,1"]}`)}, change: func(p *Profile) { p.Rethinks = 0 },
			wantErr: `answer refused after 0 rethinks: "move" must be a string naming one of the legal moves`, wantCalls: 1,
		},
		{
			name: "slower than the deadline", steps: []step{stall}, deadlineMS: 2000,
			wantErr: "no answer within the move's time", wantCalls: 1,
			check: func(t *testing.T, out played) {
				// 2000 ms less the travel margin (a tenth).
				if out.elapsed != 1800*time.Millisecond {
					t.Errorf("gave up after %v, want 1.8s", out.elapsed)
				}
				if !errors.Is(out.err, context.DeadlineExceeded) {
					t.Errorf("error %v, want a deadline", out.err)
				}
			},
		},
		{
			name: "profile timeout shorter than the deadline", steps: []step{stall}, deadlineMS: 30000, change: func(p *Profile) { p.TimeoutSeconds = 1.5 },
			wantErr: "no answer within the move's time", wantCalls: 1,
			check: func(t *testing.T, out played) {
				if out.elapsed != 1500*time.Millisecond {
					t.Errorf("gave up after %v, want the profile's 1.5s", out.elapsed)
				}
			},
		},
		{
			name: "429 with Retry-After", steps: []step{failure(http.StatusTooManyRequests, "Retry-After", "2"), completion(centre)}, deadlineMS: 5000,
			wantMove: `{"row":1,"col":1}`, wantCalls: 2, wantNote: note{TokensIn: 10, TokensOut: 5, CallRetries: 1, Reasoning: "The centre is strongest."},
			check: func(t *testing.T, out played) {
				if gap := out.calls[1].at.Sub(out.calls[0].at); gap != 2*time.Second {
					t.Errorf("retried after %v, want Retry-After's 2s", gap)
				}
			},
		},
		{
			name: "429 with Retry-After-Ms", steps: []step{failure(http.StatusTooManyRequests, "Retry-After-Ms", "700", "Retry-After", "9"), completion(centre)}, deadlineMS: 5000,
			wantMove: `{"row":1,"col":1}`, wantCalls: 2, wantNote: note{TokensIn: 10, TokensOut: 5, CallRetries: 1, Reasoning: "The centre is strongest."},
			check: func(t *testing.T, out played) {
				if gap := out.calls[1].at.Sub(out.calls[0].at); gap != 700*time.Millisecond {
					t.Errorf("retried after %v, want Retry-After-Ms's 700ms", gap)
				}
			},
		},
		{
			name: "429 with Retry-After past the deadline", steps: []step{failure(http.StatusTooManyRequests, "Retry-After", "60"), completion(centre)}, deadlineMS: 5000,
			wantErr: "OpenAI API error: 429 Too Many Requests; a retry after 1m0s would miss the move's deadline", wantCalls: 1,
			check: func(t *testing.T, out played) {
				if out.elapsed != 0 {
					t.Errorf("gave up after %v, want at once", out.elapsed)
				}
			},
		},
		{
			name: "500 then an answer", steps: []step{failure(http.StatusInternalServerError), completion(centre)},
			wantMove: `{"row":1,"col":1}`, wantCalls: 2, wantNote: note{TokensIn: 10, TokensOut: 5, CallRetries: 1, Reasoning: "The centre is strongest."},
			check: func(t *testing.T, out played) {
				if gap := out.calls[1].at.Sub(out.calls[0].at); gap < firstBackoff || gap > firstBackoff*5/4 {
					t.Errorf("retried after %v, want the first backoff %v and up to a quarter of jitter", gap, firstBackoff)
				}
			},
		},
		{
			name: "connection lost then an answer", steps: []step{func(w http.ResponseWriter, _ *http.Request) {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close()
				}
			}, completion(centre)},
			wantMove: `{"row":1,"col":1}`, wantCalls: 2, wantNote: note{TokensIn: 10, TokensOut: 5, CallRetries: 1, Reasoning: "The centre is strongest."},
		},
		{
			name: "500 every time", steps: []step{failure(http.StatusBadGateway)},
			wantErr: "OpenAI API error: 502 Bad Gateway, after 3 retries", wantCalls: 4,
		},
		{
			name: "401 is not retried", steps: []step{failure(http.StatusUnauthorized)},
			wantErr: "OpenAI API error: 401 Unauthorized", wantCalls: 1,
		},
		{
			name: "answer cut at max_tokens", steps: []step{completionWith(`{"reasoning":"Let me think about every line`, "length")}, change: func(p *Profile) { p.Rethinks = 0 },
			wantErr: "no JSON object was found in the answer: the answer stopped at max_tokens, answer shorter", wantCalls: 1,
		},
		{
			name: "no choices", steps: []step{func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"id":"x","object":"chat.completion","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":0}}`))
			}, completion(centre)},
			wantMove: `{"row":1,"col":1}`, wantCalls: 2, wantNote: note{TokensIn: 13, TokensOut: 5, Rethinks: 1, Unreadable: 1, Reasoning: "The centre is strongest."},
		},
		{
			name: "answer larger than the bound", steps: []step{func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"choices":[{"message":{"content":"` + strings.Repeat("a", maxBodyBytes) + `"}}]}`))
			}},
			wantErr: "model server failed: error reading response body: answer body larger than 1048576 bytes", wantCalls: 1,
		},
		{
			name: "illegal move that holds the key", steps: []step{completion(`{"move":"` + strings.Repeat("x", 30) + testKey + `"}`)},
			change:  func(p *Profile) { p.Rethinks = 0 },
			wantErr: `"` + strings.Repeat("x", 30) + `[REDACTED]" is not one of the legal moves`, wantCalls: 1,
		},
		{
			name: "move as the payload and a reasoning that holds the key", steps: []step{completion(`{"reasoning":"my key is ` + testKey + `","move":{"row":2,"col":0}}`)},
			wantMove: `{"row":2,"col":0}`, wantCalls: 1, wantNote: note{TokensIn: 10, TokensOut: 5, Reasoning: "my key is [REDACTED]"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				out := playMove(t, tt.steps, tt.deadlineMS, tt.change)
				if len(out.calls) != tt.wantCalls {
					t.Errorf("%d calls, want %d", len(out.calls), tt.wantCalls)
				}
				if tt.wantMove == "" {
					if !errors.Is(out.err, strategy.ErrNoMove) || !strings.Contains(out.err.Error(), tt.wantErr) {
						t.Errorf("error %v, want ErrNoMove with %q", out.err, tt.wantErr)
					}
					if out.move != nil || out.meta != nil {
						t.Errorf("gave up with move %s and metadata %s, want none", out.move, out.meta)
					}
				} else {
					if out.err != nil || string(out.move) != tt.wantMove {
						t.Fatalf("move %s, error %v; want %s", out.move, out.err, tt.wantMove)
					}
					got := out.note
					if got.Model != "scripted-model" {
						t.Errorf("metadata model %q, want the profile's", got.Model)
					}
					got.Model, got.LatencyMS = "", 0
					if got != tt.wantNote {
						t.Errorf("metadata %+v, want %+v", got, tt.wantNote)
					}
				}
				if tt.check != nil {
					tt.check(t, out)
				}
			})
		})
	}
}

// The latency in the metadata is the move's time, retries included.
func TestLLMLatencyCountsRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		out := playMove(t, []step{failure(http.StatusServiceUnavailable, "Retry-After", "1"), completion(centre)}, 0, nil)
		if out.err != nil || out.note.LatencyMS != 1000 {
			t.Errorf("latency %d ms (error %v), want 1000", out.note.LatencyMS, out.err)
		}
	})
}

// A server that refuses structured output is asked again without it, and never again with it.
func TestLLMStructuredOutputRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []step{failure(http.StatusBadRequest), completion(centre)}}
		url, hc := serve(t, s)
		c := NewClient(testProfile(url), testKey, hc)
		g, _ := game.Default().New(game.TypeTicTacToe, nil)
		st, _ := c.Strategy(g)
		for range 2 {
			if _, _, err := st.(strategy.ContextExplainer).MoveContext(context.Background(), strategy.Request{MatchID: "M1", Context: emptyBoard}); err != nil {
				t.Fatal(err)
			}
		}
		calls := s.recorded()
		if len(calls) != 3 {
			t.Fatalf("%d calls, want 3", len(calls))
		}
		if len(calls[0].body.ResponseFormat) == 0 {
			t.Error("the first call did not ask for structured output")
		}
		for k, c := range calls[1:] {
			if len(c.body.ResponseFormat) != 0 {
				t.Errorf("call %d asked for %s after the server refused it", k+2, c.body.ResponseFormat)
			}
		}
	})
}

// A profile without api_key_env sends no key, not even OPENAI_API_KEY from the environment.
func TestLLMNoKeyWithoutAPIKeyEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", testKey)
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []step{completion(centre)}}
		url, hc := serve(t, s)
		p := testProfile(url)
		p.APIKeyEnv = ""
		g, _ := game.Default().New(game.TypeTicTacToe, nil)
		st, _ := NewClient(p, "", hc).Strategy(g)
		if _, err := st.Move(strategy.Request{MatchID: "M1", Context: emptyBoard}); err != nil {
			t.Fatal(err)
		}
		if calls := s.recorded(); len(calls) != 1 || calls[0].auth != "" {
			t.Errorf("calls %+v, want one without Authorization", calls)
		}
	})
}

// The referee ending its request ends the move at once.
func TestLLMRequestCancelledEndsTheMove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []step{stall}}
		url, hc := serve(t, s)
		g, _ := game.Default().New(game.TypeTicTacToe, nil)
		st, _ := NewClient(testProfile(url), testKey, hc).Strategy(g)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(300*time.Millisecond, cancel)
		start := time.Now()
		_, _, err := st.(strategy.ContextExplainer).MoveContext(ctx, strategy.Request{MatchID: "M1", Context: emptyBoard, DeadlineMS: 10000})
		if !errors.Is(err, strategy.ErrNoMove) || !errors.Is(err, context.Canceled) || time.Since(start) != 300*time.Millisecond {
			t.Errorf("error %v after %v, want ErrNoMove at the cancellation (300ms)", err, time.Since(start))
		}
	})
}

func TestLLMRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		header []string
		want   time.Duration
		ok     bool
	}{
		{nil, 0, false},
		{[]string{"Retry-After", "3"}, 3 * time.Second, true},
		{[]string{"Retry-After", "0.5"}, 500 * time.Millisecond, true},
		{[]string{"Retry-After-Ms", "250", "Retry-After", "3"}, 250 * time.Millisecond, true},
		{[]string{"Retry-After", now.Add(4 * time.Second).Format(http.TimeFormat)}, 4 * time.Second, true},
		{[]string{"Retry-After", now.Add(-time.Minute).Format(http.TimeFormat)}, 0, true},
		{[]string{"Retry-After", "99999999999999999999"}, time.Hour, true},
		{[]string{"Retry-After", "Inf"}, time.Hour, true},
		{[]string{"Retry-After", "NaN"}, 0, false},
		{[]string{"Retry-After", "-1"}, 0, false},
		{[]string{"Retry-After", "soon"}, 0, false},
	} {
		h := http.Header{}
		for i := 0; i+1 < len(tt.header); i += 2 {
			h.Set(tt.header[i], tt.header[i+1])
		}
		if got, ok := retryAfter(h, now); got != tt.want || ok != tt.ok {
			t.Errorf("%v: %v %v, want %v %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
}

// The metadata stays under the referee's bound however the reasoning escapes.
func TestLLMMetadataIsBounded(t *testing.T) {
	n := note{Model: strings.Repeat("m", maxModelNameRunes), LatencyMS: 1 << 40, TokensIn: 1 << 40, TokensOut: 1 << 40,
		Reasoning: excerpt(strings.Repeat(`"<&>\`, 100), maxReasoningRunes)}
	b := n.metadata()
	if len(b) > maxNoteBytes {
		t.Errorf("metadata of %d bytes, want at most %d", len(b), maxNoteBytes)
	}
	var m map[string]note
	if err := json.Unmarshal(b, &m); err != nil || m["llm"].Reasoning == "" || m["llm"].Model != n.Model {
		t.Errorf("metadata %s (%v), want the note with a shortened reasoning", b, err)
	}
}

// Under a clock the model is told both clocks, and its time to answer is the clock's
// budget (protocol.TimeControl.Budget: (20 s + 5 s of bank)/30 + 3/4 of 2 s, 2.33 s), not
// the referee's deadline, which is the whole clock; a model that does not answer by then
// gives the move up.
func TestLLMUnderAClock(t *testing.T) {
	clocks := &protocol.Clocks{You: protocol.Clock{RemainingMS: 20000, BankMS: 5000}, Opponent: protocol.Clock{RemainingMS: 31000}, IncrementMS: 2000}
	req := strategy.Request{MatchID: "M1", GameType: game.TypeTicTacToe, StepNumber: 1, Context: emptyBoard, DeadlineMS: 25100, Clocks: clocks}
	synctest.Test(t, func(t *testing.T) {
		out := playRequest(t, []step{completion(centre)}, req, nil)
		if out.err != nil || string(out.move) != `{"row":1,"col":1}` {
			t.Fatalf("got %s, %v; want the centre", out.move, out.err)
		}
		prompt := out.calls[0].body.Messages[1].Content
		for _, want := range []string{"Your clock: 20.0 seconds left and a time bank of 5.0 seconds; your opponent's: 31.0 seconds; each move adds 2.0 seconds.",
			"Out of time loses the game.", "You have about 2.3 seconds to answer."} {
			if !strings.Contains(prompt, want) {
				t.Errorf("prompt lacks %q:\n%s", want, prompt)
			}
		}
	})
	synctest.Test(t, func(t *testing.T) {
		out := playRequest(t, []step{stall}, req, nil)
		if !errors.Is(out.err, strategy.ErrNoMove) {
			t.Errorf("got %v, want the move given up", out.err)
		}
		if want := strategy.ClockBudget(*clocks); out.elapsed != want {
			t.Errorf("gave up after %v, want the clock's budget %v", out.elapsed, want)
		}
	})
	// Without a clock, no clock in the prompt.
	if got := clockText(nil); got != "" {
		t.Errorf("clockText(nil) = %q", got)
	}
}
