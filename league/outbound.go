package league

import (
	"strings"

	"github.com/agentleague/agentleague/league/relay"
	"github.com/agentleague/agentleague/protocol"
)

// relayAgents answers the relay's questions about outbound agents from the roster,
// under the engine's lock.
type relayAgents struct{ e *engine }

// OutboundByToken returns the relay key of the active outbound agent holding token.
func (r relayAgents) OutboundByToken(token string) (string, bool) {
	r.e.mu.Lock()
	defer r.e.mu.Unlock()
	a := r.e.agents.tokens[token]
	if a == nil || !a.has(protocol.FeatureOutbound) || a.status == AgentShutdown {
		return "", false
	}
	return a.kind + "/" + a.id, true
}

// IsOutbound reports whether key ("player/p01") names a registered outbound agent.
func (r relayAgents) IsOutbound(key string) bool {
	kind, id, _ := strings.Cut(key, "/")
	r.e.mu.Lock()
	defer r.e.mu.Unlock()
	group := r.e.agents.players
	if kind == "referee" {
		group = r.e.agents.referees
	}
	a := group[id]
	return a != nil && a.has(protocol.FeatureOutbound)
}

// relayEndpoint is the endpoint of an outbound agent of kind: on the League Manager's
// relay. It refuses when the League Manager has no relay.
func (m *Manager) relayEndpoint(kind, id string) (string, error) {
	if m.publicURL == nil {
		return "", refuse(errMalformed, "this League Manager has no relay for outbound agents: register with an endpoint_url")
	}
	return relay.Endpoint(strings.TrimSuffix(m.publicURL(), "/mcp"), kind, id), nil
}
