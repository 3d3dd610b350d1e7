package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/player/strategy"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/rs/zerolog"
)

// Bounds of the calls to the model server.
const (
	// maxBodyBytes bounds an answer's HTTP body.
	maxBodyBytes = 1 << 20
	// maxCallRetries bounds the retries of failed calls (429, 5xx, no connection) in one move.
	maxCallRetries = 3
	// firstBackoff is the wait before the first retry of a call whose answer says no
	// Retry-After; it doubles with each retry.
	firstBackoff = 250 * time.Millisecond
)

// Client asks one OpenAI-compatible server (Chat Completions) for the moves of one agent
// profile. It is safe for concurrent use by the matches of a player.
type Client struct {
	profile *Profile
	// key is only ever given to the library and scrubbed from anything that leaves.
	key  string
	chat openai.ChatCompletionService
	// plainJSON is set once the server refused structured output (response_format
	// json_schema): later calls ask for the JSON shape in the prompt alone.
	plainJSON atomic.Bool
}

// NewClient builds the client of profile p, sending key (none when "") over hc (a new
// http.Client when nil). The library's own retries are off: Call retries within the
// move's deadline. It reads no environment (OPENAI_API_KEY and the like), so a key meant
// for one server never reaches another.
func NewClient(p *Profile, key string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{}
	}
	opts := []option.RequestOption{
		option.WithBaseURL(strings.TrimSuffix(p.BaseURL, "/") + "/"),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithMiddleware(limitBody),
	}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	return &Client{profile: p, key: key, chat: openai.NewChatCompletionService(opts...)}
}

// limitBody fails the reading of an answer larger than maxBodyBytes.
func limitBody(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if res != nil && res.Body != nil {
		res.Body = &limitedBody{ReadCloser: res.Body, left: maxBodyBytes}
	}
	return res, err
}

// errBodyTooLarge ends the reading of an answer body past maxBodyBytes.
var errBodyTooLarge = fmt.Errorf("answer body larger than %d bytes", maxBodyBytes)

// limitedBody reads at most left bytes more, then fails.
type limitedBody struct {
	io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errBodyTooLarge
	}
	// One byte past the bound tells a body that ends there from a longer one.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, errBodyTooLarge
	}
	return n, err
}

// Profile is the client's agent profile.
func (c *Client) Profile() *Profile { return c.profile }

// Strategy returns the strategy of a match of g, or an error for a game it cannot
// describe to a model. Moves keep nothing between them: each is a conversation of its own.
func (c *Client) Strategy(g game.Game) (strategy.Strategy, error) {
	for _, t := range Games() {
		if t == g.Type() {
			return &mover{c: c, g: g}, nil
		}
	}
	return nil, fmt.Errorf("the llm strategy does not play %s", g.Type())
}

// scrub removes the key from text that may leave the process (logs, errors, metadata):
// a server could echo it in an error body, a model in its answer.
func (c *Client) scrub(s string) string {
	if c.key == "" {
		return s
	}
	return strings.ReplaceAll(s, c.key, "[REDACTED]")
}

// reply is one answer of the model.
type reply struct {
	content string
	// truncated: the model stopped at max_tokens.
	truncated bool
}

// tally counts what one move cost.
type tally struct {
	tokensIn, tokensOut int64
	// retries counts calls that failed and were made again; rethinks answers refused and
	// asked again, of them unreadable those that could not be read and illegal those read
	// as a move the rules refuse.
	retries, rethinks   int
	unreadable, illegal int
}

// errServer marks a call that failed for a reason of the server's, not the model's answer.
var errServer = errors.New("model server failed")

// call asks for one completion, retrying 429, 5xx and failed connections while the
// deadline of ctx leaves time: Retry-After (or Retry-After-Ms) when the server sends it,
// else a doubling backoff with jitter. A retry that cannot end before the deadline is not
// started. A server that refuses structured output is asked again without it.
func (c *Client) call(ctx context.Context, log *zerolog.Logger, params openai.ChatCompletionNewParams, t *tally) (reply, error) {
	for attempt := 0; ; attempt++ {
		p := params
		if c.plainJSON.Load() {
			p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{}
		}
		res, err := c.chat.New(ctx, p)
		if err == nil {
			t.tokensIn += res.Usage.PromptTokens
			t.tokensOut += res.Usage.CompletionTokens
			if len(res.Choices) == 0 {
				return reply{}, nil
			}
			ch := res.Choices[0]
			// Scrubbed whole, before any excerpt could cut the key out of reach of scrub.
			return reply{content: c.scrub(ch.Message.Content), truncated: ch.FinishReason == "length"}, nil
		}
		if ctx.Err() != nil {
			return reply{}, fmt.Errorf("%w: no answer within the move's time: %w", errServer, context.Cause(ctx))
		}
		var apiErr *openai.Error
		status := 0
		var header http.Header
		if errors.As(err, &apiErr) {
			status = apiErr.StatusCode
			if apiErr.Response != nil {
				header = apiErr.Response.Header
			}
		}
		failure := c.scrub(err.Error())
		if (status == http.StatusBadRequest || status == http.StatusUnprocessableEntity) && p.ResponseFormat.OfJSONSchema != nil {
			// Not every OpenAI-compatible server takes json_schema; the prompt asks for the shape too.
			c.plainJSON.Store(true)
			log.Warn().Int("status", status).Msg("the model server refused structured output; asking for JSON in the prompt alone")
			t.retries++
			continue
		}
		var netErr *url.Error
		if retryable := status == http.StatusTooManyRequests || status >= 500 || (status == 0 && errors.As(err, &netErr)); !retryable {
			return reply{}, fmt.Errorf("%w: %s", errServer, failure)
		}
		if attempt >= maxCallRetries {
			return reply{}, fmt.Errorf("%w: %s, after %d retries", errServer, failure, attempt)
		}
		wait, fromServer := retryAfter(header, time.Now())
		if !fromServer {
			backoff := firstBackoff << attempt
			wait = backoff + rand.N(backoff/4+1)
		}
		if deadline, ok := ctx.Deadline(); ok && time.Now().Add(wait).After(deadline) {
			return reply{}, fmt.Errorf("%w: %s; a retry after %v would miss the move's deadline", errServer, failure, wait.Round(time.Millisecond))
		}
		log.Warn().Int("status", status).Str("error", failure).Int64("retry_in_ms", wait.Milliseconds()).Bool("retry_after", fromServer).Msg("model call failed; retrying")
		t.retries++
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return reply{}, fmt.Errorf("%w: no answer within the move's time: %w", errServer, context.Cause(ctx))
		case <-timer.C:
		}
	}
}

// retryAfter reads how long the server asks to wait: Retry-After-Ms, else Retry-After in
// seconds or as an HTTP date. Waits beyond an hour are an hour: far past any move.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	seconds := func(v string, unit float64) (time.Duration, bool) {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || f < 0 {
			return 0, false
		}
		return time.Duration(min(f*unit, float64(time.Hour))), true
	}
	if d, ok := seconds(h.Get("Retry-After-Ms"), float64(time.Millisecond)); ok {
		return d, true
	}
	v := h.Get("Retry-After")
	if d, ok := seconds(v, float64(time.Second)); ok {
		return d, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), time.Hour), true
	}
	return 0, false
}
