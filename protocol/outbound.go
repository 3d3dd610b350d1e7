package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentleague/agentleague/internal/netsec"
	"github.com/rs/zerolog"
)

// The relay's wire (protocol/README.md, "Outbound agents").

// RelayRequest is one request a poll hands an outbound agent: its number, and the body
// of the HTTP request its caller sent to the agent's relay endpoint.
type RelayRequest struct {
	Seq  uint64 `json:"seq"`
	Body string `json:"body"`
}

// RelayPoll is the answer to GET /relay/poll: the relay's epoch and the requests waiting,
// numbered above the poll's after, oldest first; none when the poll waited in vain.
type RelayPoll struct {
	Epoch    string         `json:"epoch"`
	Requests []RelayRequest `json:"requests"`
}

// RelayAnswer is the body of POST /relay/answer: the agent's HTTP answer to request Seq,
// its status (200 when 0) and its body.
type RelayAnswer struct {
	Seq    uint64 `json:"seq"`
	Status int    `json:"status,omitempty"`
	Body   string `json:"body"`
}

// RelayAnswerStatus is the relay's answer to POST /relay/answer.
type RelayAnswerStatus struct {
	Status string `json:"status"`
}

// Statuses of RelayAnswerStatus.
const (
	// RelayDelivered: the answer went to its caller.
	RelayDelivered = "delivered"
	// RelayGone: the request was answered already, or its caller gave up; the answer
	// changes nothing.
	RelayGone = "gone"
)

// Outbound pacing: a failed poll or answer is tried again after a backoff doubling up to
// relayMaxBackoff; an answer is tried for relayAnswerFor at most.
const (
	relayBackoff    = 100 * time.Millisecond
	relayMaxBackoff = 5 * time.Second
	relayAnswerFor  = 30 * time.Second
	// relayPollFor bounds one poll: the relay answers within its PollWait (25 s).
	relayPollFor = 40 * time.Second
)

// ErrRelayClosed is Outbound's end when the League Manager closed its relay: the league
// is over.
var ErrRelayClosed = errors.New("the League Manager closed its relay")

// Outbound serves an agent that accepts no connections: it fetches the requests the
// League Manager's relay holds for the agent, runs each through handler in a goroutine
// of its own, and sends the answers back, all over connections it opens itself.
type Outbound struct {
	// LeagueURL is the League Manager's JSON-RPC endpoint; the relay is beside it.
	LeagueURL string
	// Token is the agent's auth_token, shown to the relay as a Bearer token.
	Token string
	// Handler serves each request as if it had come over HTTP to POST /mcp.
	Handler http.Handler
	// Grace is how long requests in progress may take to finish once ctx ends (5 s when
	// 0): a LEAGUE_SHUTDOWN_ACK still goes out.
	Grace time.Duration
	Log   zerolog.Logger
}

// ServeOutbound runs o with c's connections until ctx ends or the relay closes
// (ErrRelayClosed). A dropped connection is retried with a backoff, and the polls that
// follow pick up whatever is still pending. It returns once every request it started has
// been answered or has given up.
func (c *Client) ServeOutbound(ctx context.Context, o Outbound) error {
	base, ok := strings.CutSuffix(o.LeagueURL, "/mcp")
	if !ok {
		return fmt.Errorf("outbound: the League Manager's URL %s does not end in /mcp", o.LeagueURL)
	}
	if !c.insecure {
		if err := netsec.CheckURL(o.LeagueURL); err != nil {
			return fmt.Errorf("outbound: refuse to poll %s: %w (plain http off loopback needs --insecure)", o.LeagueURL, err)
		}
	}
	grace := o.Grace
	if grace <= 0 {
		grace = 5 * time.Second
	}
	// Requests run on hctx: past ctx, for the grace, so that answers in progress go out.
	hctx, stopHandlers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopHandlers()
	var running sync.WaitGroup
	var epoch string
	var after uint64
	wait := relayBackoff
	var err error
	for ctx.Err() == nil {
		var p RelayPoll
		p, err = c.relayPoll(ctx, base, o.Token, epoch, after)
		if errors.Is(err, ErrRelayClosed) || errors.Is(err, errRelayUnauthorized) {
			break
		}
		if err != nil && ctx.Err() != nil {
			break
		}
		if err != nil {
			o.Log.Warn().Err(err).Dur("retry_in", wait).Msg("relay poll failed")
			if sleep(ctx, wait) != nil {
				break
			}
			wait = min(2*wait, relayMaxBackoff)
			continue
		}
		wait = relayBackoff
		if p.Epoch != epoch {
			// A new relay numbers from 1 again, and sent every request pending.
			epoch, after = p.Epoch, 0
		}
		for _, rq := range p.Requests {
			after = max(after, rq.Seq)
			running.Go(func() { c.relayServe(hctx, base, o, rq) })
		}
	}
	if ctx.Err() != nil {
		err = nil
	}
	finished := make(chan struct{})
	go func() {
		running.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(grace):
		stopHandlers()
		<-finished
	}
	return err
}

var errRelayUnauthorized = errors.New("the relay refused the agent's token")

// relayPoll asks the relay for the requests numbered above after.
func (c *Client) relayPoll(ctx context.Context, base, token, epoch string, after uint64) (RelayPoll, error) {
	ctx, cancel := context.WithTimeout(ctx, relayPollFor)
	defer cancel()
	q := url.Values{"epoch": {epoch}, "after": {strconv.FormatUint(after, 10)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/relay/poll?"+q.Encode(), nil)
	if err != nil {
		return RelayPoll{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	var p RelayPoll
	if err := c.relayDo(req, &p); err != nil {
		return RelayPoll{}, fmt.Errorf("relay poll: %w", err)
	}
	return p, nil
}

// relayServe runs one request through o.Handler and sends its answer, trying again on
// failures until the relay takes it or relayAnswerFor has passed.
func (c *Client) relayServe(ctx context.Context, base string, o Outbound, rq RelayRequest) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "/mcp", strings.NewReader(rq.Body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr = "relay"
	rec := &recorder{header: http.Header{}}
	o.Handler.ServeHTTP(rec, req)
	ans, err := json.Marshal(RelayAnswer{Seq: rq.Seq, Status: rec.status(), Body: rec.body.String()})
	if err != nil {
		return
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), relayAnswerFor)
	defer cancel()
	for wait := relayBackoff; ; wait = min(2*wait, relayMaxBackoff) {
		req, err := http.NewRequestWithContext(actx, http.MethodPost, base+"/relay/answer", bytes.NewReader(ans))
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+o.Token)
		req.Header.Set("Content-Type", "application/json")
		var st RelayAnswerStatus
		err = c.relayDo(req, &st)
		if err == nil || errors.Is(err, ErrRelayClosed) || errors.Is(err, errRelayUnauthorized) {
			return
		}
		o.Log.Warn().Err(err).Uint64("seq", rq.Seq).Msg("relay answer failed")
		if sleep(actx, wait) != nil {
			return
		}
	}
}

// relayDo sends req and decodes a 200 answer into v.
func (c *Client) relayDo(req *http.Request, v any) error {
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 2*MaxBodyBytes*MaxRelayBatch))
	if err != nil {
		return err
	}
	switch res.StatusCode {
	case http.StatusOK:
		return json.Unmarshal(raw, v)
	case http.StatusGone:
		return ErrRelayClosed
	case http.StatusUnauthorized:
		return errRelayUnauthorized
	}
	return fmt.Errorf("HTTP %d: %s", res.StatusCode, bytes.TrimSpace(raw[:min(len(raw), 200)]))
}

// MaxRelayBatch is the most requests one poll returns.
const MaxRelayBatch = 16

// recorder is the http.ResponseWriter a relayed request is served into.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

func (r *recorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}
