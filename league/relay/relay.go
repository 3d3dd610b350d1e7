// Package relay lets agents that cannot accept connections (behind NAT, in a sandbox)
// take part in a league: the League Manager gives such an agent an endpoint under its
// own address, holds the requests that arrive there, and the agent fetches them and
// sends its answers over connections it opens itself (protocol/README.md, "Outbound
// agents").
//
// Three routes, mounted beside /mcp:
//   - POST /relay/{kind}/{id}/mcp: the agent's endpoint as referees and the League
//     Manager call it. The call waits for the agent's answer until the caller gives up.
//   - GET /relay/poll?epoch=E&after=N: the agent, with its token as a Bearer, waits up
//     to PollWait for the requests with a sequence number above N.
//   - POST /relay/answer: the agent, with its token, answers one request by its number.
//     An answer to a request already answered, or given up by its caller, is "gone".
package relay

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Bounds of one agent's relay.
const (
	// MaxPending is how many requests may wait for one agent; a call beyond it is
	// answered 503, which callers retry like any unreachable endpoint.
	MaxPending = 64
	// MaxPolls is how many polls of one agent may wait at once: a reconnecting agent
	// may briefly hold an old one beside its new one.
	MaxPolls = 4
	// PollWait is how long a poll waits for a request before it returns none: well under
	// the idle timeouts of the proxies between an agent and the League Manager.
	PollWait = 25 * time.Second
)

// Agents is what the relay asks the League Manager about outbound agents.
type Agents interface {
	// OutboundByToken returns the key ("player/p01") of the registered outbound agent
	// whose token this is.
	OutboundByToken(token string) (key string, ok bool)
	// IsOutbound reports whether key names a registered outbound agent.
	IsOutbound(key string) bool
}

// Hub holds the requests of every outbound agent of one league.
type Hub struct {
	agents Agents
	log    zerolog.Logger
	// epoch names this hub: sequence numbers start again with it, so an agent that
	// polls with another epoch (the League Manager restarted) gets every pending request.
	epoch   string
	metrics hubMetrics

	mu     sync.Mutex
	queues map[string]*queue
	closed chan struct{}
	ended  bool
}

// queue is one agent's: its requests waiting for an answer, by number.
type queue struct {
	next    uint64
	pending map[uint64]*request
	// wake is closed, and replaced, when a request is added.
	wake  chan struct{}
	polls int
}

// request is one call waiting for the agent's answer.
type request struct {
	seq       uint64
	body      string
	added     time.Time
	delivered bool
	answer    chan protocol.RelayAnswer // buffered: the answer never waits for the caller
}

type hubMetrics struct {
	// calls by outcome: answered, gone (the caller gave up), full, closed.
	calls *prometheus.CounterVec
	// delivery is the time from a call's arrival to the first poll that takes it; answer
	// the time to its answer (the agent's thinking and its connections included).
	delivery, answer prometheus.Histogram
	polls            prometheus.Counter
}

// NewHub is the relay of one league; its metrics go to reg.
func NewHub(agents Agents, reg prometheus.Registerer, log zerolog.Logger) *Hub {
	h := &Hub{agents: agents, log: log.With().Str("component", "relay").Logger(), epoch: uuid.NewString()[:8],
		queues: map[string]*queue{}, closed: make(chan struct{})}
	buckets := prometheus.ExponentialBuckets(0.0001, 2, 20)
	h.metrics = hubMetrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "league_relay_calls_total", Help: "Calls to outbound agents through the relay, by outcome (answered, gone, full, closed).",
		}, []string{"outcome"}),
		delivery: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "league_relay_delivery_seconds", Help: "Time from a call's arrival at the relay to the poll that hands it to its agent.", Buckets: buckets,
		}),
		answer: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "league_relay_answer_seconds", Help: "Time from a call's arrival at the relay to its agent's answer.", Buckets: buckets,
		}),
		polls: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "league_relay_polls_total", Help: "Polls answered by the relay.",
		}),
	}
	reg.MustRegister(h.metrics.calls, h.metrics.delivery, h.metrics.answer, h.metrics.polls)
	return h
}

// Register mounts the relay's routes on mux.
func (h *Hub) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST /relay/{kind}/{id}/mcp", h.serveCall)
	mux.HandleFunc("GET /relay/poll", h.servePoll)
	mux.HandleFunc("POST /relay/answer", h.serveAnswer)
}

// Endpoint is the relay endpoint of agent kind/id under the League Manager's base URL
// (its /mcp endpoint without /mcp).
func Endpoint(base, kind, id string) string {
	return strings.TrimSuffix(base, "/") + "/relay/" + kind + "/" + id + "/mcp"
}

// Close ends the relay: waiting calls are answered 503 and polls 410, and every later
// request is refused. The League Manager closes it once its last notices are out.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.ended {
		h.ended = true
		close(h.closed)
	}
}

// queue returns key's queue, made on first use. Callers hold h.mu.
func (h *Hub) queue(key string) *queue {
	q := h.queues[key]
	if q == nil {
		q = &queue{next: 1, pending: map[uint64]*request{}, wake: make(chan struct{})}
		h.queues[key] = q
	}
	return q
}

// serveCall takes a call to an outbound agent and waits for its answer.
func (h *Hub) serveCall(w http.ResponseWriter, r *http.Request) {
	kind, id := r.PathValue("kind"), r.PathValue("id")
	key := kind + "/" + id
	if (kind != "player" && kind != "referee") || !h.agents.IsOutbound(key) {
		http.Error(w, "no outbound agent at this endpoint", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, protocol.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "request body could not be read", http.StatusBadRequest)
		return
	}
	req := &request{body: string(body), added: time.Now(), answer: make(chan protocol.RelayAnswer, 1)}
	h.mu.Lock()
	if h.ended {
		h.mu.Unlock()
		h.metrics.calls.WithLabelValues("closed").Inc()
		http.Error(w, "the relay is closed", http.StatusServiceUnavailable)
		return
	}
	q := h.queue(key)
	if len(q.pending) >= MaxPending {
		h.mu.Unlock()
		h.metrics.calls.WithLabelValues("full").Inc()
		w.Header().Set("Retry-After", "1")
		http.Error(w, "too many requests wait for this agent", http.StatusServiceUnavailable)
		return
	}
	req.seq = q.next
	q.next++
	q.pending[req.seq] = req
	close(q.wake)
	q.wake = make(chan struct{})
	h.mu.Unlock()

	// The agent may think for as long as the caller allows (minutes, for a model): the
	// server's write timeout would cut the answer.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	select {
	case ans := <-req.answer:
		h.metrics.calls.WithLabelValues("answered").Inc()
		h.metrics.answer.Observe(time.Since(req.added).Seconds())
		status := ans.Status
		if status == 0 {
			status = http.StatusOK
		}
		if ans.Body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, ans.Body)
		return
	case <-r.Context().Done():
		h.drop(q, req.seq)
		h.metrics.calls.WithLabelValues("gone").Inc()
	case <-h.closed:
		h.drop(q, req.seq)
		h.metrics.calls.WithLabelValues("closed").Inc()
		http.Error(w, "the relay is closed", http.StatusServiceUnavailable)
	}
}

// drop forgets a request whose caller is gone: a later answer to it is "gone".
func (h *Hub) drop(q *queue, seq uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(q.pending, seq)
}

// agentOf authenticates the Bearer token of r as an outbound agent, or answers 401.
func (h *Hub) agentOf(w http.ResponseWriter, r *http.Request) (string, bool) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if ok {
		if key, found := h.agents.OutboundByToken(token); found {
			return key, true
		}
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="relay"`)
	http.Error(w, "the relay needs the token of a registered outbound agent", http.StatusUnauthorized)
	return "", false
}

// servePoll hands an agent the requests numbered above ?after, waiting up to PollWait
// for one.
func (h *Hub) servePoll(w http.ResponseWriter, r *http.Request) {
	key, ok := h.agentOf(w, r)
	if !ok {
		return
	}
	var after uint64
	if r.URL.Query().Get("epoch") == h.epoch {
		if n, err := strconv.ParseUint(r.URL.Query().Get("after"), 10, 64); err == nil {
			after = n
		}
	}
	h.mu.Lock()
	if h.ended {
		h.mu.Unlock()
		http.Error(w, "the relay is closed: the league is over", http.StatusGone)
		return
	}
	q := h.queue(key)
	if q.polls >= MaxPolls {
		h.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		http.Error(w, "too many polls wait for this agent", http.StatusTooManyRequests)
		return
	}
	q.polls++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		q.polls--
		h.mu.Unlock()
	}()
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(PollWait + 10*time.Second))
	wait := time.NewTimer(PollWait)
	defer wait.Stop()
	for {
		h.mu.Lock()
		batch := h.batch(q, after)
		wake := q.wake
		h.mu.Unlock()
		if len(batch) > 0 {
			h.reply(w, batch)
			return
		}
		select {
		case <-wake:
		case <-wait.C:
			h.reply(w, nil)
			return
		case <-r.Context().Done():
			return
		case <-h.closed:
			http.Error(w, "the relay is closed: the league is over", http.StatusGone)
			return
		}
	}
}

// batch is the first protocol.MaxRelayBatch pending requests of q numbered above after, marked
// delivered. Callers hold h.mu.
func (h *Hub) batch(q *queue, after uint64) []protocol.RelayRequest {
	var seqs []uint64
	for seq := range q.pending {
		if seq > after {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	if len(seqs) > protocol.MaxRelayBatch {
		seqs = seqs[:protocol.MaxRelayBatch]
	}
	out := make([]protocol.RelayRequest, 0, len(seqs))
	for _, seq := range seqs {
		req := q.pending[seq]
		if !req.delivered {
			req.delivered = true
			h.metrics.delivery.Observe(time.Since(req.added).Seconds())
		}
		out = append(out, protocol.RelayRequest{Seq: seq, Body: req.body})
	}
	return out
}

func (h *Hub) reply(w http.ResponseWriter, batch []protocol.RelayRequest) {
	h.metrics.polls.Inc()
	if batch == nil {
		batch = []protocol.RelayRequest{}
	}
	httpserve.WriteJSON(w, http.StatusOK, protocol.RelayPoll{Epoch: h.epoch, Requests: batch})
}

// serveAnswer hands an agent's answer to the call waiting for it.
func (h *Hub) serveAnswer(w http.ResponseWriter, r *http.Request) {
	key, ok := h.agentOf(w, r)
	if !ok {
		return
	}
	var ans protocol.RelayAnswer
	// The answer's body is escaped inside a JSON string: room for twice the limit.
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 2*protocol.MaxBodyBytes+1024))
	if err := dec.Decode(&ans); err != nil || ans.Seq == 0 || (ans.Status != 0 && (ans.Status < 200 || ans.Status > 599)) {
		http.Error(w, `the answer must be {"seq": N, "body": "...", "status": 200}`, http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	q := h.queue(key)
	req := q.pending[ans.Seq]
	delete(q.pending, ans.Seq)
	h.mu.Unlock()
	status := protocol.RelayGone
	if req != nil {
		req.answer <- ans
		status = protocol.RelayDelivered
	}
	httpserve.WriteJSON(w, http.StatusOK, protocol.RelayAnswerStatus{Status: status})
}
