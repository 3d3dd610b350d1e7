package league

import (
	"encoding/json"
	"net/http"
	"sort"

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
}

// AgentStatus is one agent as /status shows it (never its token).
type AgentStatus struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Status   string `json:"status"`
	Endpoint string `json:"endpoint_url"`
}

// Status reports the league's state.
func (m *Manager) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Status{
		State: m.state, LeagueID: m.leagueID, GameType: m.cfg.League.GameType,
		TotalRounds: len(m.rounds), Referees: len(m.referees), Players: len(m.players),
		MatchesTotal: len(m.matches), MatchesByStatus: map[string]int{}, Agents: []AgentStatus{},
	}
	for _, st := range []string{MatchPending, MatchAssigned, MatchInProgress, MatchCompleted, MatchFailed, MatchCancelled} {
		s.MatchesByStatus[st] = 0
	}
	for _, mt := range m.matches {
		s.MatchesByStatus[mt.status]++
	}
	if m.current >= 0 {
		s.CurrentRound = m.rounds[m.current].number
	}
	for _, group := range []map[string]*agent{m.referees, m.players} {
		for _, a := range group {
			s.Agents = append(s.Agents, AgentStatus{ID: a.id, Kind: a.kind, Status: a.status, Endpoint: a.endpoint})
		}
	}
	sort.Slice(s.Agents, func(i, j int) bool {
		if s.Agents[i].Kind != s.Agents[j].Kind {
			return s.Agents[i].Kind > s.Agents[j].Kind
		}
		return s.Agents[i].ID < s.Agents[j].ID
	})
	return s
}

// Routes serves POST /mcp, GET /health and GET /status.
func Routes(m *Manager, rpc *protocol.Server) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", rpc)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, m.Status())
	})
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
