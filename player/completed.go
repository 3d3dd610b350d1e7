package player

import (
	"context"

	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// leagueCompleted acknowledges LEAGUE_COMPLETED (feature league_completed): every result
// is in. It logs the player's final rank and points (the table at DEBUG), keeps them for
// Status, and tells Config.OnLeagueCompleted. The player keeps serving: the League
// Manager may still answer standings until it shuts down.
func (p *Player) leagueCompleted(ctx context.Context, msg *protocol.Message) (*protocol.Message, error) {
	if err := p.link.fromLeague(&msg.Envelope); err != nil {
		return nil, err
	}
	var lc protocol.LeagueCompletion
	if err := msg.Decode(&lc); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "invalid LEAGUE_COMPLETED payload")
	}
	out, err := p.reply(msg, protocol.LeagueCompletedAck, protocol.Ack{Status: protocol.StatusAcknowledged})
	if err != nil {
		return nil, err
	}
	first := p.link.completed(lc)
	log := zerolog.Ctx(ctx) // the server's, with the conversation id
	ev := log.Info().Str("league_id", lc.LeagueID).Int("rounds", lc.Rounds).Int("players", len(lc.Standings)).Bool("repeated", !first)
	if row, ok := rowOf(lc.Standings, p.cfg.ID); ok {
		ev = ev.Int("rank", row.Rank).Int("points", row.Points).Int("wins", row.Wins).Int("draws", row.Draws).Int("losses", row.Losses)
	}
	ev.Msg("league completed: final standings")
	log.Debug().Interface("standings", lc.Standings).Msg("final standings table")
	if first && p.cfg.OnLeagueCompleted != nil {
		p.cfg.OnLeagueCompleted(lc)
	}
	return out, nil
}

// rowOf is the row of player id in rows.
func rowOf(rows []protocol.StandingsRow, id string) (protocol.StandingsRow, bool) {
	for _, r := range rows {
		if r.PlayerID == id {
			return r, true
		}
	}
	return protocol.StandingsRow{}, false
}

// completed keeps the final standings; it reports whether they are new (a notice sent
// again changes nothing).
func (l *leagueLink) completed(lc protocol.LeagueCompletion) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.final != nil {
		return false
	}
	l.final = &lc
	l.matchesLeft = new(0)
	return true
}
