package league

import (
	"github.com/agentleague/agentleague/protocol"
)

// matchInfo is the MATCH_INFO payload. RefereeID is nil when no referee holds the match.
type matchInfo struct {
	MatchID   string    `json:"match_id"`
	RoundID   string    `json:"round_id"`
	Players   [2]string `json:"players"`
	RefereeID *string   `json:"referee_id"`
	Status    string    `json:"status"`
}

// queryMatch answers QUERY_MATCH: a player confirms which referee holds one of its
// matches before it trusts an invitation that shows no match credential. Only the
// match's own players learn anything about it.
func (m *Manager) queryMatch(msg *protocol.Message) (*protocol.Message, error) {
	env := &msg.Envelope
	var p struct {
		MatchID string `json:"match_id"`
	}
	if err := msg.Decode(&p); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "invalid QUERY_MATCH payload")
	}
	if env.MatchID != "" && env.MatchID != p.MatchID {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "envelope match_id %q differs from payload match_id %q", env.MatchID, p.MatchID)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// The schema admits only player senders, so the agent found is a player.
	pl, err := m.authenticate(env)
	if err != nil {
		return nil, m.refusedAuth(limitMatchQueries, env.Sender, err)
	}
	if err := m.rateLimit(limitMatchQueries, env.Sender, true); err != nil {
		return nil, err
	}
	mt := m.matches[p.MatchID]
	if mt == nil {
		return nil, protocol.Errorf(protocol.ReasonUnknownMatch, "match %q is not in the schedule", p.MatchID)
	}
	if mt.players[0] != pl.id && mt.players[1] != pl.id {
		return nil, protocol.Errorf(protocol.ReasonUnauthorized, "%s is not a player of match %s", env.Sender, mt.id)
	}
	info := matchInfo{MatchID: mt.id, RoundID: mt.roundID, Players: mt.players, Status: mt.status}
	// A referee holds the match only while it is assigned: a match sent back to the pool
	// keeps its former referee in mt.referee.
	if mt.inFlight() {
		ref := mt.referee
		info.RefereeID = &ref
	}
	m.log.Debug().Str("conversation_id", env.ConversationID).Str("match_id", mt.id).Str("player_id", pl.id).
		Str("status", mt.status).Msg("match query answered")
	out, err := m.reply(msg, protocol.MatchInfo, info)
	if err != nil {
		return nil, err
	}
	out.Envelope.MatchID, out.Envelope.RoundID = mt.id, mt.roundID
	return out, nil
}
