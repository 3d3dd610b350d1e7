package league

import (
	"slices"

	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/protocol"
)

// The end of a league reaches every agent that announced league_completed: when the last
// result is in, each gets LEAGUE_COMPLETED with the final standings (protocol/README.md,
// "League completed"); an agent that announced nothing never sees it. A player that asks
// for the standings learns, in matches_left, how many of its matches are not finished,
// when the schedule fixes them.

// completed sends LEAGUE_COMPLETED with the final standings rows to every agent of as
// that announced league_completed, each in the background: one attempt, the notice
// timeout, any answer accepted, like MATCH_CANCELLED to a player. The client records each
// exchange in the audit log. It runs under the engine's mu, when the league completes.
func (n *notifier) completed(as []*agent, rows []protocol.StandingsRow, rounds int, at string) {
	p := protocol.LeagueCompletion{LeagueID: n.leagueID, CompletedAt: at, Rounds: rounds, Standings: rows}
	if p.Standings == nil {
		p.Standings = []protocol.StandingsRow{}
	}
	told := 0
	for _, a := range as {
		if !a.has(protocol.FeatureLeagueCompleted) {
			continue
		}
		msg, err := n.message(a, nil, protocol.LeagueCompleted, p)
		if err != nil {
			n.log.Error().Err(err).Str("to", a.sender()).Msg("build LEAGUE_COMPLETED")
			continue
		}
		n.goSend(a, msg, nil)
		told++
	}
	n.log.Info().Int("agents", told).Int("rounds", rounds).Msg("league completed: final standings sent to the agents that announced league_completed")
}

// matchesLeft counts the matches of player not finished yet, when they are known: the
// league is complete (none), or active with a format whose schedule is fixed at the
// start (round robin, gauntlet). A Swiss or knockout league pairs its next round only
// when the last one is over, so its count is not known before the end.
func matchesLeft(fx *fixtures, f schedule.Format, state, player string) (int, bool) {
	switch {
	case state == StateCompleted:
		return 0, true
	case state != StateActive || (f.Algorithm != schedule.RoundRobin && f.Algorithm != schedule.Gauntlet):
		return 0, false
	}
	left := fx.where(func(mt *match) bool { return !mt.finished() && slices.Contains(mt.players[:], player) })
	return len(left), true
}
