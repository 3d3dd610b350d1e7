// Package llm is the llm strategy: a player whose moves come from a large language model
// behind an OpenAI-compatible Chat Completions API (OpenAI, vLLM, llama.cpp's server,
// Ollama, TGI), playing as an agent profile (seed 000) describes.
//
// Each move is one conversation: the profile's system prompt and the game's rules, then
// the position, the legal moves and the time left (both clocks too, under a clock); the
// answer is asked for as one JSON object {"reasoning", "move"}, with structured output
// where the server takes it. An illegal or unreadable answer is sent back with the reason
// up to the profile's rethinks; then, or when the server fails, the move is given up
// (strategy.ErrNoMove), never played by a stand-in. The API key never leaves the process
// but in the Authorization header.
package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/player/strategy"
	"github.com/agentleague/agentleague/protocol"
	"github.com/openai/openai-go/v3"
	"github.com/rs/zerolog"
)

// Bounds of what a move keeps and sends back.
const (
	// maxReasoningRunes bounds the reasoning excerpt kept with a move.
	maxReasoningRunes = 300
	// maxNoteBytes keeps a move's note under the referee's 1 KiB bound on move metadata.
	maxNoteBytes = 900
	// maxEchoRunes bounds a refused answer shown to the model again.
	maxEchoRunes = 2000
)

// answerShape is the JSON object a model is asked to answer with.
const answerShape = `{"reasoning": "<one or two short sentences>", "move": "<one of the legal moves, written exactly as listed>"}`

// mover plays a match of g with the client's model.
type mover struct {
	c *Client
	g game.Game
}

var _ strategy.ContextExplainer = (*mover)(nil)

// Move implements strategy.Strategy for callers without a request context.
func (m *mover) Move(req strategy.Request) (json.RawMessage, error) {
	move, _, err := m.MoveContext(context.Background(), req)
	return move, err
}

// note is what a move keeps about its making, under "llm" in the move's metadata.
type note struct {
	Model     string `json:"model"`
	LatencyMS int64  `json:"latency_ms"`
	TokensIn  int64  `json:"tokens_in"`
	TokensOut int64  `json:"tokens_out"`
	// Rethinks counts answers refused and asked again: Unreadable those that could not be
	// read, Illegal those read as a move the rules refuse. CallRetries counts failed calls
	// made again.
	Rethinks    int `json:"rethinks"`
	Unreadable  int `json:"unreadable"`
	Illegal     int `json:"illegal"`
	CallRetries int `json:"call_retries"`
	// CostUSD is the move's cost at the profile's prices; absent without prices.
	CostUSD   float64 `json:"cost_usd,omitempty"`
	Reasoning string  `json:"reasoning,omitempty"`
}

// MoveContext implements strategy.ContextExplainer: it asks the model until the move's
// answer is due (strategy.MoveBudget, within the profile's timeout: under a clock, the
// clock's budget), and logs with the logger of ctx. The call is the thinking, so it runs to the answer's time, not StopAt.
func (m *mover) MoveContext(ctx context.Context, req strategy.Request) (json.RawMessage, json.RawMessage, error) {
	start := time.Now()
	p := m.c.profile
	deadline := strategy.MoveBudget(start, req, p.Timeout()).AnswerBy
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	log := zerolog.Ctx(ctx).With().Str("strategy", "llm").Str("agent", p.Name).Str("model", p.ModelName).Logger()
	var t tally
	giveUp := func(err error) (json.RawMessage, json.RawMessage, error) {
		log.Warn().Err(err).Int64("latency_ms", time.Since(start).Milliseconds()).
			Int64("tokens_in", t.tokensIn).Int64("tokens_out", t.tokensOut).Int("rethinks", t.rethinks).Int("call_retries", t.retries).
			Msg("llm gave up the move")
		// Every error made here is free of the key: call scrubs what the server sends.
		return nil, nil, fmt.Errorf("%w: llm: %w", strategy.ErrNoMove, err)
	}
	pos, err := describe(m.g, req.Context)
	if err != nil {
		return giveUp(err)
	}
	msgs := []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage(m.c.system(pos)),
		openai.UserMessage(pos.prompt(time.Until(deadline), req.Clocks)),
	}
	params := openai.ChatCompletionNewParams{
		Model: p.ModelName, Temperature: openai.Float(p.Temperature), MaxTokens: openai.Int(int64(p.MaxTokens)),
		ResponseFormat: pos.format(),
	}
	for ; ; t.rethinks++ {
		params.Messages = msgs
		r, err := m.c.call(ctx, &log, params, &t)
		if err != nil {
			return giveUp(err)
		}
		k, reasoning, refusal, unreadable := pos.read(r)
		if refusal == nil {
			n := note{Model: p.ModelName, LatencyMS: time.Since(start).Milliseconds(), TokensIn: t.tokensIn, TokensOut: t.tokensOut,
				Rethinks: t.rethinks, Unreadable: t.unreadable, Illegal: t.illegal, CallRetries: t.retries,
				CostUSD: p.Cost(t.tokensIn, t.tokensOut), Reasoning: excerpt(reasoning, maxReasoningRunes)}
			log.Info().Str("move", pos.choices[k].label).Int64("latency_ms", n.LatencyMS).Int64("tokens_in", n.TokensIn).
				Int64("tokens_out", n.TokensOut).Int("rethinks", n.Rethinks).Int("call_retries", n.CallRetries).Msg("llm move")
			return pos.choices[k].move, n.metadata(), nil
		}
		reason := refusal.Error()
		if unreadable {
			t.unreadable++
		} else {
			t.illegal++
		}
		if t.rethinks == p.Rethinks {
			return giveUp(fmt.Errorf("answer refused after %d rethinks: %s", t.rethinks, reason))
		}
		log.Warn().Str("reason", reason).Int("rethink", t.rethinks+1).Msg("model answer refused; asking again")
		msgs = append(msgs, openai.AssistantMessage(excerpt(r.content, maxEchoRunes)), openai.UserMessage(pos.rethink(reason, time.Until(deadline))))
	}
}

// system is the conversation's first message: the profile, the game's rules and the answer's shape.
func (c *Client) system(pos position) string {
	p := c.profile
	return fmt.Sprintf("%s\n\nYou are %s, playing in Agent League. Your playing style: %s.\n%s\nAnswer every request with one JSON object and nothing else: %s",
		strings.TrimSpace(p.SystemPrompt), p.Name, p.Personality, pos.rules, answerShape)
}

// prompt asks for a move in pos with left to answer, and shows both clocks when the match
// has them.
func (pos position) prompt(left time.Duration, clocks *protocol.Clocks) string {
	return fmt.Sprintf("%s\nLegal moves: %s.\n%sYou have about %.1f seconds to answer.", pos.board, pos.labels(), clockText(clocks), left.Seconds())
}

// clockText tells the model both clocks, as REQUEST_MOVE's clocks has them; "" without.
func clockText(c *protocol.Clocks) string {
	if c == nil {
		return ""
	}
	sec := func(ms int64) float64 { return float64(ms) / 1000 }
	var b strings.Builder
	fmt.Fprintf(&b, "The game is played on a clock. Your clock: %.1f seconds left", sec(c.You.RemainingMS))
	if c.You.BankMS > 0 {
		fmt.Fprintf(&b, " and a time bank of %.1f seconds", sec(c.You.BankMS))
	}
	fmt.Fprintf(&b, "; your opponent's: %.1f seconds", sec(c.Opponent.RemainingMS))
	if c.Opponent.BankMS > 0 {
		fmt.Fprintf(&b, " and a bank of %.1f seconds", sec(c.Opponent.BankMS))
	}
	if c.IncrementMS > 0 {
		fmt.Fprintf(&b, "; each move adds %.1f seconds", sec(int64(c.IncrementMS)))
	}
	if c.You.MovesToGo > 0 {
		fmt.Fprintf(&b, "; %d moves to go until the next time control", c.You.MovesToGo)
	}
	b.WriteString(". Out of time loses the game.\n")
	return b.String()
}

// rethink tells the model why its answer was refused.
func (pos position) rethink(reason string, left time.Duration) string {
	return fmt.Sprintf("Your answer was refused: %s. Choose one of the legal moves: %s. Answer with one JSON object and nothing else: %s. You have about %.1f seconds left.",
		reason, pos.labels(), answerShape, left.Seconds())
}

func (pos position) labels() string {
	labels := make([]string, len(pos.choices))
	for k, c := range pos.choices {
		labels[k] = c.label
	}
	return strings.Join(labels, ", ")
}

// format asks for structured output: the answer's shape, its move one of the labels.
func (pos position) format() openai.ChatCompletionNewParamsResponseFormatUnion {
	labels := make([]string, len(pos.choices))
	for k, c := range pos.choices {
		labels[k] = c.label
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"reasoning": map[string]any{"type": "string"},
			"move":      map[string]any{"type": "string", "enum": labels},
		},
		"required":             []string{"reasoning", "move"},
		"additionalProperties": false,
	}
	return openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{
		JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{Name: "move", Strict: openai.Bool(true), Schema: schema},
	}}
}

// read finds the legal move an answer names, with its reasoning; refusal is the reason
// the answer is refused, and unreadable says whether it could not be read at all (as
// opposed to naming a move the rules refuse).
func (pos position) read(r reply) (k int, reasoning string, refusal error, unreadable bool) {
	a, err := readAnswer(r.content)
	if err != nil {
		if r.truncated {
			err = fmt.Errorf("%w: the answer stopped at max_tokens, answer shorter", err)
		}
		return 0, "", err, true
	}
	if k, err = pos.find(a.move); err != nil {
		return 0, "", err, false
	}
	return k, a.reasoning, nil, false
}

// metadata is the move's metadata: {"llm": note}, under maxNoteBytes (the reasoning is
// cut until it fits, as escapes can make it longer than its runes).
func (n note) metadata() json.RawMessage {
	for {
		b, err := json.Marshal(map[string]note{"llm": n})
		if err != nil || len(b) <= maxNoteBytes || n.Reasoning == "" {
			return b
		}
		r := []rune(n.Reasoning)
		n.Reasoning = string(r[:len(r)/2])
	}
}
