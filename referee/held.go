package referee

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// A match is held from its assignment until its report ends (acknowledged or refused),
// the League Manager cancels it, or the referee stops. Its phase is queued (waiting for
// a slot), joining (invitations out), playing (moves being asked) or reporting (play is
// over, the result is being reported). A slot is taken from joining to the end of play.

// recentResults is how many acknowledged results the referee remembers, so that a
// RESULT_REMINDER about a result whose acknowledgement the League Manager lost can still
// be answered with the same report.
const recentResults = 32

// heldMatch is one match the referee holds. Its mutable fields are guarded by Referee.mu.
type heldMatch struct {
	a    protocol.Assignment
	game game.Game
	log  zerolog.Logger

	phase string // protocol.Phase*
	step  int    // steps completed so far
	// ctx ends the match and its report: cancelled by MATCH_CANCELLED or when the
	// referee stops. Set when the match leaves the queue.
	ctx    context.Context
	cancel context.CancelFunc
	// report is the MATCH_RESULT_REPORT once play is over; every attempt sends it as is.
	report *protocol.Message
	// wake asks the report loop for an attempt now (RESULT_REMINDER).
	wake chan struct{}
}

// reportedResult is a result the League Manager acknowledged.
type reportedResult struct {
	report *protocol.Message
	// resending is set while a reminder's resend is under way, so reminders never pile up
	// sends of one result.
	resending bool
}

// startLocked gives hm a slot and runs it under matches in a goroutine that ends when its
// report ends or its context is cancelled. Callers hold mu and have checked r.closed.
func (r *Referee) startLocked(matches context.Context, hm *heldMatch) {
	hm.phase = protocol.PhaseJoining
	hm.ctx, hm.cancel = context.WithCancel(matches)
	hm.wake = make(chan struct{}, 1)
	r.playing++
	r.matches.Add(1)
	go func() {
		defer r.matches.Done()
		defer hm.cancel()
		r.play(matches, hm)
	}()
}

// startQueuedLocked starts queued matches under matches, oldest first, while slots are
// free. Callers hold mu.
func (r *Referee) startQueuedLocked(matches context.Context) {
	for !r.closed && len(r.queue) > 0 && r.playing < r.cfg.MaxMatches {
		hm := r.queue[0]
		r.queue = r.queue[1:]
		r.startLocked(matches, hm)
		hm.log.Info().Msg("queued match leaves the queue")
	}
}

// setProgress records where hm stands (MatchRunner.Progress).
func (r *Referee) setProgress(hm *heldMatch, phase string, step int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	hm.phase, hm.step = phase, step
}

// play runs hm, then reports its result unless it was cancelled meanwhile; the queued
// match its slot goes to runs under matches.
func (r *Referee) play(matches context.Context, hm *heldMatch) {
	a, log := hm.a, hm.log
	// DEBUG: a busy league plays thousands of matches; "match finished" says it at INFO.
	log.Debug().Strs("players", a.Players).Msg("match started")
	runner := &MatchRunner{
		RefereeID: r.cfg.ID, LeagueID: r.leagueIDOf(), Game: hm.game, A: a, Caller: r.players, Log: log,
		JoinTimeout: r.cfg.JoinTimeout, MoveTimeout: r.cfg.MoveTimeout, Policy: r.cfg.Policy, Penalties: r.cfg.Penalties,
		Progress: func(phase string, step int) { r.setProgress(hm, phase, step) },
	}
	var ev *moveEvents
	if r.leagueHas(protocol.FeatureMoveEvents) {
		ev = r.startMoveEvents(hm.ctx, a, log)
		// A match that ends without a report (cancelled, abandoned) abandons its events;
		// stop is idempotent, so it also waits for a sender already flushed.
		defer ev.stop()
	}
	runner.OnMove = func(rec protocol.MoveRecord, st game.State) {
		r.metrics.moveLatency.Observe(float64(rec.ElapsedMS) / 1000)
		if ev != nil {
			ev.add(rec, st)
		}
	}
	start := time.Now()
	rep, err := runner.Run(hm.ctx)
	var msg *protocol.Message
	if err == nil {
		msg, err = r.resultMessage(a, rep)
	}
	// The slot is free once the game is over: the League Manager may assign the next
	// match as soon as it has the result, possibly before the report call returns.
	r.mu.Lock()
	r.playing--
	mine := r.held[a.MatchID] == hm
	switch {
	case !mine:
		// Cancelled: the League Manager wants nothing more about this match.
	case err != nil:
		delete(r.held, a.MatchID)
	default:
		hm.phase, hm.report = protocol.PhaseReporting, msg
		r.completed++
	}
	r.startQueuedLocked(matches)
	r.mu.Unlock()
	switch {
	case !mine:
		log.Info().Msg("cancelled match stopped; nothing is reported")
		return
	case err != nil:
		log.Warn().Err(err).Msg("match abandoned")
		return
	}
	r.metrics.completed.Inc()
	r.metrics.duration.Observe(time.Since(start).Seconds())
	r.metrics.countViolations(rep.Metadata.Violations)
	log.Info().Strs("players", a.Players).Str("termination", string(rep.Metadata.Termination)).Interface("outcome", rep.Outcome).Msg("match finished")

	if ev != nil {
		// The moves go before the result, or with it to a League Manager that takes them
		// from the result, so the live view has them all when the match ends.
		ev.end()
	}
	err = r.report(hm.ctx, msg, hm.wake)
	r.mu.Lock()
	mine = r.held[a.MatchID] == hm
	if mine {
		delete(r.held, a.MatchID)
		if err == nil {
			r.reported++
			r.rememberLocked(a.MatchID, msg)
		}
	}
	r.mu.Unlock()
	switch reason := protocol.ReasonOf(err); {
	case !mine:
		log.Info().Msg("match cancelled while its result was reported")
	case err == nil:
	case reason == protocol.ReasonStaleAssignment || reason == protocol.ReasonNotAssignedReferee:
		log.Info().Err(err).Msg("the match is no longer this referee's: forgotten")
	default:
		log.Error().Err(err).Msg("result not acknowledged")
	}
}

// resultMessage builds the MATCH_RESULT_REPORT of a match; every attempt and every
// resend sends this one message, so the League Manager recognises a retry.
func (r *Referee) resultMessage(a protocol.Assignment, rep *Report) (*protocol.Message, error) {
	meta, err := json.Marshal(rep.Metadata)
	if err != nil {
		return nil, fmt.Errorf("encode game_metadata: %w", err)
	}
	msg, err := protocol.NewMessage(protocol.MatchResultReport, protocol.RefereeSender(r.cfg.ID), protocol.ResultReport{
		GameType: a.GameType, Players: a.Players, Outcome: rep.Outcome, Points: rep.Points,
		GameMetadata: meta, MatchID: a.MatchID, RoundID: a.RoundID,
	})
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	token, leagueID := r.token, r.leagueID
	r.mu.Unlock()
	e := &msg.Envelope
	e.AuthToken, e.LeagueID, e.RoundID, e.MatchID, e.GameType = token, leagueID, a.RoundID, a.MatchID, a.GameType
	return msg, nil
}

// report sends msg until the League Manager acknowledges it, refuses it, or ctx ends
// (the match is cancelled or the referee stops): a result is never dropped while the
// League Manager cannot take it. Each attempt has cfg.ReportTimeout; failed attempts (no
// answer, a malformed one, or a transient refusal: INTERNAL, STORAGE_UNAVAILABLE,
// RATE_LIMITED, see judged) are retried with a doubling, capped, jittered backoff, cut
// short by a signal on wake (a RESULT_REMINDER). Every attempt sends the same message
// (same conversation id and bytes), which the League Manager acknowledges again.
func (r *Referee) report(ctx context.Context, msg *protocol.Message, wake <-chan struct{}) error {
	matchID := msg.Envelope.MatchID
	wait := reportBackoff
	for attempt := 1; ; attempt++ {
		err := r.sendReport(ctx, msg)
		if err == nil || judged(err) || ctx.Err() != nil {
			return err
		}
		// Jitter in [wait/2, wait] keeps referees that failed together from retrying together.
		d := wait/2 + rand.N(wait/2+1)
		r.log.Warn().Err(err).Int("attempt", attempt).Dur("retry_in", d).Str("match_id", matchID).
			Str("conversation_id", msg.Envelope.ConversationID).Msg("result report failed; retrying")
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-wake:
			t.Stop()
			r.log.Info().Str("match_id", matchID).Str("conversation_id", msg.Envelope.ConversationID).Msg("result reminder: report sent again now")
		case <-t.C:
		}
		wait = min(2*wait, reportMaxBackoff)
	}
}

// sendReport makes one attempt at a MATCH_RESULT_REPORT.
func (r *Referee) sendReport(ctx context.Context, msg *protocol.Message) error {
	_, err := r.league.Call(ctx, r.cfg.LeagueURL, msg, protocol.CallOptions{
		Timeout: r.cfg.ReportTimeout, Retry: protocol.RetryPolicy{Attempts: 1}, Peer: protocol.SenderLeagueManager,
	})
	return err
}

// judged says the League Manager answered a report in a way that sending the same
// bytes again cannot change: a refusal with a reason other than the transient ones
// (protocol.Transient: INTERNAL, STORAGE_UNAVAILABLE, RATE_LIMITED), an error of a
// League Manager's own without a reason (one written from the seeds) unless its code is
// the JSON-RPC internal error, or an HTTP 4xx other than 429 (e.g. 413, too large).
func judged(err error) bool {
	var perr *protocol.Error
	if errors.As(err, &perr) {
		switch reason := protocol.ReasonOf(perr); {
		case reason == "":
			return perr.Code != protocol.CodeInternalError
		default:
			return !slices.Contains(protocol.Transient(), reason)
		}
	}
	var status *protocol.StatusError
	return errors.As(err, &status) && status.Code >= 400 && status.Code < 500 && status.Code != http.StatusTooManyRequests
}

// rememberLocked keeps an acknowledged result among the last recentResults. Callers hold mu.
func (r *Referee) rememberLocked(matchID string, msg *protocol.Message) {
	r.forgetLocked(matchID)
	if len(r.recent) >= recentResults {
		oldest := r.recentOrder[0]
		r.recentOrder = r.recentOrder[1:]
		delete(r.recent, oldest)
	}
	r.recent[matchID] = &reportedResult{report: msg}
	r.recentOrder = append(r.recentOrder, matchID)
}

// forgetLocked drops a remembered result. Callers hold mu.
func (r *Referee) forgetLocked(matchID string) {
	if _, ok := r.recent[matchID]; !ok {
		return
	}
	delete(r.recent, matchID)
	r.recentOrder = slices.DeleteFunc(r.recentOrder, func(id string) bool { return id == matchID })
}

// remind answers a RESULT_REMINDER about matchID: where the match stands and whether
// its report is being sent again. A match being reported is retried at once; a result
// acknowledged recently (the acknowledgement may have been lost) is sent again once, in
// a goroutine that ends with the attempt or when matches (Run's) ends.
func (r *Referee) remind(matches context.Context, matchID string) (phase string, resent bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if hm, ok := r.held[matchID]; ok {
		if hm.phase != protocol.PhaseReporting {
			return hm.phase, false
		}
		select {
		case hm.wake <- struct{}{}:
		default: // an attempt is already due
		}
		return protocol.PhaseReporting, true
	}
	rr, ok := r.recent[matchID]
	if !ok {
		return protocol.PhaseUnknown, false
	}
	if r.closed {
		// Stopping: no new goroutine may start.
		return protocol.PhaseReporting, false
	}
	if !rr.resending {
		rr.resending = true
		r.matches.Add(1)
		go func() {
			defer r.matches.Done()
			r.resend(matches, matchID, rr)
		}()
	}
	return protocol.PhaseReporting, true
}

// resend makes one attempt at a remembered report; the League Manager reminds again if
// it still lacks the result (a transient refusal included: its reminders are the retries).
func (r *Referee) resend(ctx context.Context, matchID string, rr *reportedResult) {
	err := r.sendReport(ctx, rr.report)
	reason := protocol.ReasonOf(err)
	r.mu.Lock()
	rr.resending = false
	if reason == protocol.ReasonStaleAssignment || reason == protocol.ReasonNotAssignedReferee {
		r.forgetLocked(matchID)
	}
	r.mu.Unlock()
	log := r.log.With().Str("match_id", matchID).Str("conversation_id", rr.report.Envelope.ConversationID).Logger()
	if err != nil {
		log.Warn().Err(err).Msg("result sent again on a reminder: not acknowledged")
		return
	}
	log.Info().Msg("result sent again on a reminder: acknowledged")
}

// cancelMatch stops matchID at once (MATCH_CANCELLED): a queued match is dropped, a
// running one has its context cancelled, so no further request goes out and nothing is
// reported. It returns the phase the match had, or unknown.
func (r *Referee) cancelMatch(matchID string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.forgetLocked(matchID)
	hm, ok := r.held[matchID]
	if !ok {
		return protocol.PhaseUnknown
	}
	delete(r.held, matchID)
	if hm.phase == protocol.PhaseQueued {
		r.queue = slices.DeleteFunc(r.queue, func(q *heldMatch) bool { return q == hm })
	} else {
		hm.cancel()
	}
	return hm.phase
}

// dropQueuedLocked forgets every queued match (shutdown). Callers hold mu.
func (r *Referee) dropQueuedLocked() []string {
	var ids []string
	for _, hm := range r.queue {
		delete(r.held, hm.a.MatchID)
		ids = append(ids, hm.a.MatchID)
	}
	r.queue = nil
	return ids
}

// phaseRank orders match_progress: matches holding a slot first, then those being
// reported, then the queue, so a bounded list keeps the ones whose progress matters.
var phaseRank = map[string]int{
	protocol.PhaseJoining: 0, protocol.PhasePlaying: 0, protocol.PhaseReporting: 1, protocol.PhaseQueued: 2,
}

// progressLocked lists every held match, slots first, then by match id. Callers hold mu.
func (r *Referee) progressLocked() []protocol.MatchProgress {
	out := make([]protocol.MatchProgress, 0, len(r.held))
	for id, hm := range r.held {
		out = append(out, protocol.MatchProgress{MatchID: id, Step: hm.step, Phase: hm.phase})
	}
	slices.SortFunc(out, func(x, y protocol.MatchProgress) int {
		return cmp.Or(cmp.Compare(phaseRank[x.Phase], phaseRank[y.Phase]), cmp.Compare(x.MatchID, y.MatchID))
	})
	return out
}
