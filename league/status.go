package league

import (
	"net/http"
	"sort"

	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/league/web"
	"github.com/agentleague/agentleague/protocol"
)

// Status is the GET /status document.
type Status struct {
	State           string         `json:"state"`
	LeagueID        string         `json:"league_id"`
	GameType        string         `json:"game_type"`
	CurrentRound    int            `json:"current_round"`
	TotalRounds     int            `json:"total_rounds"`
	Referees        int            `json:"referees"`
	Players         int            `json:"players"`
	MatchesTotal    int            `json:"matches_total"`
	MatchesByStatus map[string]int `json:"matches_by_status"`
	Agents          []AgentStatus  `json:"agents"`
	// ShuttingDown is set from the start of a graceful shutdown.
	ShuttingDown bool `json:"shutting_down,omitempty"`
	// Abandoned lists the matches that failed retries.max_match_attempts times.
	Abandoned []AbandonedMatch `json:"abandoned"`
	// Exchanges counts the JSON-RPC requests the League Manager's endpoint has handled;
	// only GET /status, which owns the endpoint, fills it in.
	Exchanges int64 `json:"exchanges"`
	// Storage says whether the database and the audit log take writes.
	Storage StorageStatus `json:"storage"`
}

// AbandonedMatch is an abandoned match as /status shows it.
type AbandonedMatch struct {
	MatchID  string    `json:"match_id"`
	RoundID  string    `json:"round_id"`
	Players  [2]string `json:"players"`
	Referee  string    `json:"last_referee_id"`
	Failures int       `json:"failures"`
}

// AgentStatus is one agent as /status shows it (never its token).
type AgentStatus struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Status   string `json:"status"` // SUSPENDED while suspended
	Endpoint string `json:"endpoint_url"`
	// Violations counts toward suspend_after_violations.
	Violations     int    `json:"violations"`
	SuspendedUntil string `json:"suspended_until,omitempty"`
	// Lost is set on a referee whose lease ran out, until its next heartbeat.
	Lost           bool   `json:"lost,omitempty"`
	LeaseExpiresAt string `json:"lease_expires_at,omitempty"`
	// Stats are a player's statistics (league/stats.go); referees have none.
	Stats *PlayerStats `json:"stats,omitempty"`
	// AgentCard is the card a player registered with, and CardHash its hash.
	AgentCard *protocol.AgentCard `json:"agent_card,omitempty"`
	CardHash  string              `json:"card_hash,omitempty"`
}

// Status reports the league's state.
func (m *Manager) Status() Status {
	m.e.mu.Lock()
	defer m.e.mu.Unlock()
	e := m.e
	s := Status{
		State: e.state, LeagueID: m.leagueID, GameType: e.gameType, CurrentRound: e.fx.activeNumber(),
		TotalRounds: len(e.fx.rounds), Referees: len(e.agents.referees), Players: len(e.agents.players),
		MatchesTotal: len(e.fx.matches), MatchesByStatus: e.fx.counts(), Agents: []AgentStatus{},
		ShuttingDown: e.stop.stopping, Abandoned: []AbandonedMatch{}, Storage: e.outage.status(),
	}
	for _, mt := range e.fx.where(isAbandoned) {
		s.Abandoned = append(s.Abandoned, AbandonedMatch{MatchID: mt.id, RoundID: mt.roundID, Players: mt.players, Referee: mt.referee, Failures: mt.failures})
	}
	for _, a := range e.agents.all() {
		as := AgentStatus{ID: a.id, Kind: a.kind, Status: a.status, Endpoint: a.endpoint, Violations: a.violations, Lost: a.lost, AgentCard: a.card}
		if a.card != nil {
			as.CardHash = a.card.Hash()
		}
		if a.status == AgentSuspended && !a.suspendedUntil.IsZero() {
			as.SuspendedUntil = protocol.Now(a.suspendedUntil)
		}
		if !a.leaseUntil.IsZero() {
			as.LeaseExpiresAt = protocol.Now(a.leaseUntil)
		}
		if a.kind == store.KindPlayer {
			as.Stats = &PlayerStats{Violations: map[string]int{}}
			if st := e.stats[a.id]; st != nil {
				as.Stats = st.clone()
			}
		}
		s.Agents = append(s.Agents, as)
	}
	sort.Slice(s.Agents, func(i, j int) bool {
		if s.Agents[i].Kind != s.Agents[j].Kind {
			return s.Agents[i].Kind > s.Agents[j].Kind
		}
		return s.Agents[i].ID < s.Agents[j].ID
	})
	return s
}

// Health is the GET /health document: status "ok", or "degraded" with the storage
// failure while the database or the audit log fails to take writes. It is answered 200
// either way: the process is alive and serving, and a supervisor restarting it would
// not bring the disk back.
type Health struct {
	Status  string         `json:"status"`
	Storage *StorageStatus `json:"storage,omitempty"`
}

// Health reports whether the League Manager can write.
func (m *Manager) Health() Health {
	m.e.mu.Lock()
	defer m.e.mu.Unlock()
	st := m.e.outage.status()
	if !st.Degraded {
		return Health{Status: "ok"}
	}
	return Health{Status: "degraded", Storage: &st}
}

// Routes serves POST /mcp, GET /health, GET /status, GET /metrics (Prometheus text
// format) and the read-only live view of league/web: the dashboard at GET /, the match
// page, its JSON API and the event streams.
func Routes(m *Manager, rpc *protocol.Server) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", rpc)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		httpserve.WriteJSON(w, http.StatusOK, m.Health())
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		s := m.Status()
		s.Exchanges = rpc.Exchanges()
		httpserve.WriteJSON(w, http.StatusOK, s)
	})
	mux.Handle("GET /metrics", m.metrics.handler())
	web.Register(mux, m, m.hub)
	m.relay.Register(mux)
	return mux
}

func isAbandoned(mt *match) bool { return mt.status == protocol.MatchStateAbandoned }
