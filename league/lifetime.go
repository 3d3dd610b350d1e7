package league

// Match lifetime: how long the League Manager lets a match run before it takes the match
// from its referee (seed 004 §10.2, issue "Long and slow matches finish exactly once").
//
//   - A referee that announced match_progress lists in every heartbeat the progress of
//     each match it holds: {match_id, step, phase}, phase one of queued, joining, playing,
//     reporting. Heartbeats are the source of progress; move events are not (a
//     foreign referee may send none, and ours gives up on a League Manager that does
//     not answer them).
//   - queued: the match waits for a free slot at its referee. It has no deadline: the
//     referee's lease covers a referee that dies.
//   - joining (or not yet listed): it may take the join deadline plus the longest legal
//     gap between two steps (below), plus a margin.
//   - playing: the step must change within the longest legal gap plus the join deadline
//     (GAME_OVER goes out before the report), plus a margin. However long the game, a
//     match whose step keeps changing is never failed.
//   - reporting (play is over): the result must come within result_report_ms. Then a
//     RESULT_REMINDER goes to the referee (if it announced result_reminders) and it gets
//     result_report_ms again, up to retries.max_attempts reminders; then the match is
//     FAILED and the audit log records MATCH_FAILED with manual_review for an operator.
//     A reminder answered with phase unknown (the referee does not hold the match) fails
//     it at once.
//   - The longest legal gap between two steps is move_response x (move_warnings +
//     forced_moves + 1): every player to move may use its whole timeout ladder. The
//     margin is lease_ms plus 2 s, since progress is only seen at heartbeats.
//   - A referee that did not announce match_progress (a foreign one) gets one deadline
//     counted from the assignment: the longest legal match (join, MaxSteps of the game x
//     the longest gap, GAME_OVER, margin) when that exceeds result_report_ms, else
//     result_report_ms.
//   - A failed match is assigned again under the same match_id. Failures caused by the
//     referee (lost lease, no progress, no result) count; after retries.max_match_attempts
//     of them the match is ABANDONED: no result, no points, its round completes without
//     it, GET /status and the dashboard list it, and the audit log records
//     MATCH_ABANDONED. Failures caused by a League Manager restart or shutdown do not
//     count.
//   - Before a failed match goes to another referee, the referee that had it is told to
//     stop (MATCH_CANCELLED, if it announced match_cancellation); the match is assigned
//     again once that notice is answered or has failed. A heartbeat that lists a match
//     the referee no longer holds is answered the same way.

import (
	"fmt"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/protocol"
)

// lifetime computes how long a match may run from the league's timeouts and the longest
// legal match of its game.
type lifetime struct {
	cfg      *config.Config
	maxSteps int // of the league's game: bounds a legal match's duration
}

// stepGap is the longest legal time between two steps: every player to move may use its
// whole timeout ladder, or under a clock its whole clock.
func (l lifetime) stepGap() time.Duration {
	if tc := l.cfg.Clock(); tc != nil {
		return l.clockBudget(*tc)
	}
	ml := l.cfg.Timeouts.MatchLevel
	return l.cfg.MoveTimeout() * time.Duration(ml.MoveWarnings+ml.ForcedMoves+1)
}

// clockBudget is the most time one player may use in a match under tc: its base time for
// every period the game's moves can reach, every increment, its bank, and the network
// credit a game may get (at most the base time).
func (l lifetime) clockBudget(tc protocol.TimeControl) time.Duration {
	periods := 1
	if tc.MovesPerPeriod > 0 {
		periods += l.maxSteps / tc.MovesPerPeriod
	}
	ms := time.Millisecond
	return time.Duration(tc.BaseMS*(periods+1)+tc.BankMS)*ms + time.Duration(l.maxSteps)*time.Duration(tc.IncrementMS)*ms
}

// margin covers what the League Manager cannot see between two heartbeats.
func (l lifetime) margin() time.Duration { return l.cfg.LeaseDuration() + 2*time.Second }

// longestMatch is the longest a legal match of the league's game may last at a referee:
// under a clock, both players' whole clocks.
func (l lifetime) longestMatch() time.Duration {
	join := l.cfg.MatchJoinAckTimeout()
	if tc := l.cfg.Clock(); tc != nil {
		return join + 2*l.clockBudget(*tc) + join + l.margin()
	}
	return join + time.Duration(l.maxSteps)*l.stepGap() + join + l.margin()
}

// deadline is when a match in flight is due, from what its referee ref (nil when unknown)
// said of it; zero for a queued match.
func (l lifetime) deadline(mt *match, ref *agent) time.Time {
	report := l.cfg.ResultReportTimeout()
	if ref == nil || !ref.has(protocol.FeatureMatchProgress) {
		return mt.progress.since.Add(max(report, l.longestMatch()))
	}
	join := l.cfg.MatchJoinAckTimeout()
	switch mt.progress.phase {
	case protocol.PhaseQueued:
		return time.Time{}
	case protocol.PhaseReporting:
		return mt.progress.since.Add(report)
	case protocol.PhasePlaying:
		return mt.progress.since.Add(l.stepGap() + join + l.margin())
	}
	return mt.progress.since.Add(join + l.stepGap() + l.margin())
}

// dueReason says why a match whose deadline passed is failed.
func (l lifetime) dueReason(mt *match, ref *agent) string {
	switch {
	case ref == nil || !ref.has(protocol.FeatureMatchProgress):
		return fmt.Sprintf("no result within %s of the assignment (the longest legal match, or result_report_ms)", max(l.cfg.ResultReportTimeout(), l.longestMatch()))
	case mt.progress.phase == protocol.PhaseReporting:
		return fmt.Sprintf("no result %d reminder(s) after play ended", mt.reminders)
	}
	phase := mt.progress.phase
	if phase == "" {
		phase = "assigned"
	}
	return fmt.Sprintf("no progress since step %d (%s)", mt.progress.step, phase)
}
