package referee

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// Move events feed the League Manager's live view and never slow or fail a match. They go
// only to a League Manager that announced move_events. Each applied move joins the
// match's pending list, which never drops a move (maxPendingMoves is only a safety bound:
// a match has far fewer moves), and one goroutine per match sends the list in order.
//
// To a League Manager that also announced move_batches, each MOVE_EVENT carries every
// pending move (up to protocol.MaxMoveBatch and moveBatchBytes), so the moves that pile
// up while a send is in flight go together in the next one. Such a League Manager ignores
// the moves it already has, so a batch that got no answer (or a transient refusal:
// INTERNAL, STORAGE_UNAVAILABLE, RATE_LIMITED) stays pending and goes again after
// moveEventBackoff, with whatever joined it, up to moveEventAttempts times: move events
// are best effort, and the result carries every move. A League Manager without
// move_batches gets one MOVE_EVENT per move, sent once: sending one again could show the
// move twice.
//
// To such a League Manager a batch also waits moveEventLinger after its first move for
// the moves that follow, unless play ends first: a fast match then needs a MOVE_EVENT or
// two instead of one per move or two, each of which the League Manager audits and
// fsyncs, and the live view is late by at most that much, which nobody watching sees.
//
// When play is over the referee flushes the pending moves before it reports the result,
// for at most moveEventFlush, so a League Manager that does not answer never holds the
// result long; the League Manager fills any gap in its live view from the result's moves.
// A League Manager that announced result_moves promises to, so it gets no flush: the
// moves still pending go with the result (counted with_result), which spares a fast
// match its only MOVE_EVENT, with its audit line and fsync.
const (
	moveEventTimeout  = time.Second
	moveEventBackoff  = 250 * time.Millisecond
	moveEventAttempts = 3
	moveEventFlush    = time.Second
	moveEventLinger   = 100 * time.Millisecond
	// moveBatchBytes bounds the moves and states of one batch, far below the 1 MiB body
	// limit: a chess state carries the whole game, so late moves are large.
	moveBatchBytes = 256 << 10
	// maxPendingMoves is the League Manager's bound on the moves it keeps for one match.
	maxPendingMoves = 5000
)

// moveEvents sends the MOVE_EVENTs of one match.
type moveEvents struct {
	r        *Referee
	a        protocol.Assignment
	token    string
	leagueID string
	batches  bool // the League Manager announced move_batches
	// withResult: the League Manager announced result_moves, so the moves pending when
	// play ends go with the result.
	withResult bool
	log        zerolog.Logger
	// wake tells the sender that a move was added or play is over.
	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	pending  []pendingMove // not yet acknowledged, oldest first
	finished bool          // no move follows
}

// pendingMove is an applied move waiting for its MOVE_EVENT. Its state is encoded only
// when it is sent: to a League Manager that announced result_moves, a fast match's moves
// go with the result and never need it.
type pendingMove struct {
	notice protocol.MoveNotice // without its State
	state  game.State
}

// startMoveEvents starts the sender of a match's move events. Its goroutine ends once
// finish was called and nothing is pending, or at stop, or when ctx (the match's) ends.
func (r *Referee) startMoveEvents(ctx context.Context, a protocol.Assignment, log zerolog.Logger) *moveEvents {
	r.mu.Lock()
	token, leagueID := r.token, r.leagueID
	batches := slices.Contains(r.leagueFeatures, protocol.FeatureMoveBatches)
	withResult := slices.Contains(r.leagueFeatures, protocol.FeatureResultMoves)
	r.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	ev := &moveEvents{r: r, a: a, token: token, leagueID: leagueID, batches: batches, withResult: withResult, log: log,
		wake: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go ev.run(ctx)
	return ev
}

// add makes one applied move pending (MatchRunner.OnMove). It never blocks on the sender.
func (ev *moveEvents) add(rec protocol.MoveRecord, state game.State) {
	ev.mu.Lock()
	full := len(ev.pending) >= maxPendingMoves
	if !full {
		ev.pending = append(ev.pending, pendingMove{notice: protocol.MoveNotice{
			StepNumber: rec.Step, PlayerID: rec.Player, Move: rec.Move, Outcome: rec.Outcome, ClockMS: rec.ClockMS,
		}, state: state})
	}
	ev.mu.Unlock()
	if full {
		ev.r.metrics.moveEvents.WithLabelValues("dropped").Inc()
		return
	}
	ev.signal()
}

func (ev *moveEvents) signal() {
	select {
	case ev.wake <- struct{}{}:
	default: // the sender is already due to look
	}
}

// finish says no move follows; those pending are still sent.
func (ev *moveEvents) finish() {
	ev.mu.Lock()
	ev.finished = true
	ev.mu.Unlock()
	ev.signal()
}

// flush says no move follows and waits until the pending moves are sent, at most d;
// then it stops the sender.
func (ev *moveEvents) flush(d time.Duration) {
	ev.finish()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ev.done:
	case <-t.C:
		ev.log.Debug().Dur("waited", d).Msg("move events not flushed in time: the result goes first")
	}
	ev.stop()
}

// stop abandons the moves not sent yet and waits for the sender.
func (ev *moveEvents) stop() {
	ev.cancel()
	<-ev.done
}

// end is the end of play: the pending moves are flushed, or, to a League Manager that
// announced result_moves, left to the result.
func (ev *moveEvents) end() {
	if !ev.withResult {
		ev.flush(moveEventFlush)
		return
	}
	// Not finish: that would wake the sender to send them.
	ev.mu.Lock()
	ev.finished = true
	ev.mu.Unlock()
	ev.stop()
}

func (ev *moveEvents) run(ctx context.Context) {
	defer close(ev.done)
	defer ev.abandon()
	failures := 0
	lingered := false // the pending batch has had its linger
	for {
		if ev.batches && !lingered && ev.open() {
			lingered = true
			if !ev.linger(ctx) {
				return
			}
		}
		msg, n, finished := ev.next()
		if n == 0 {
			if finished {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-ev.wake:
			}
			continue
		}
		if msg == nil {
			ev.giveUp(n) // cannot be built: nothing to send again
			lingered = false
			continue
		}
		err := ev.send(ctx, msg)
		if err == nil {
			// Delivered, even if play ended meanwhile: these are not the result's.
			ev.take(n)
			ev.r.metrics.moveEvents.WithLabelValues("sent").Add(float64(n))
			failures, lingered = 0, false
		}
		if ctx.Err() != nil {
			return // stopped: abandon counts what is left
		}
		switch {
		case err == nil:
		case !ev.batches || judged(err) || failures+1 >= moveEventAttempts:
			ev.log.Debug().Err(err).Str("conversation_id", msg.Envelope.ConversationID).Int("moves", n).Msg("move events not delivered")
			ev.giveUp(n)
			failures, lingered = 0, false
		default:
			failures++
			ev.log.Debug().Err(err).Str("conversation_id", msg.Envelope.ConversationID).Int("moves", n).Int("attempt", failures).
				Msg("move events not delivered; sent again with the next batch")
			t := time.NewTimer(moveEventBackoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

// open reports whether moves are pending and more may join them.
func (ev *moveEvents) open() bool {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return len(ev.pending) > 0 && !ev.finished
}

// linger waits moveEventLinger for more moves to join the pending batch, or until play
// is over; false when ctx ended.
func (ev *moveEvents) linger(ctx context.Context) bool {
	t := time.NewTimer(moveEventLinger)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		case <-ev.wake:
			if !ev.open() {
				return true
			}
		}
	}
}

// next builds the message of the oldest pending moves: one, or a batch to a League
// Manager that announced move_batches. n is how many moves it carries (0: nothing is
// pending, or play is over and they go with the result; finished says whether more may
// come); msg is nil if it cannot be built, n then being the one move whose state cannot
// be encoded.
func (ev *moveEvents) next() (msg *protocol.Message, n int, finished bool) {
	ev.mu.Lock()
	// Play is over and the League Manager takes what is pending from the result: a sender
	// that only now gets to run must not send it all in a MOVE_EVENT racing the result.
	if len(ev.pending) == 0 || (ev.withResult && ev.finished) {
		defer ev.mu.Unlock()
		return nil, 0, ev.finished
	}
	limit := 1
	if ev.batches {
		limit = min(len(ev.pending), protocol.MaxMoveBatch)
	}
	taken := slices.Clone(ev.pending[:limit])
	ev.mu.Unlock()

	moves, err := encodeBatch(taken)
	if err != nil {
		ev.log.Debug().Err(err).Msg("move event not built")
		return nil, 1, false
	}
	n = len(moves)
	var payload any = moves[0]
	if ev.batches {
		payload = protocol.MoveBatch{Moves: moves}
	}
	msg, err = protocol.NewMessage(protocol.MoveEvent, protocol.RefereeSender(ev.r.cfg.ID), payload)
	if err != nil {
		ev.log.Debug().Err(err).Msg("move event not built")
		return nil, n, false
	}
	e := &msg.Envelope
	e.AuthToken, e.LeagueID, e.RoundID, e.MatchID, e.GameType = ev.token, ev.leagueID, ev.a.RoundID, ev.a.MatchID, ev.a.GameType
	return msg, n, false
}

// encodeBatch encodes the states of the oldest pending moves for one batch: at least
// one, and no more than moveBatchBytes of moves and states. It stops before a later move
// whose state cannot be encoded (that one is then the first of the next batch) and fails
// only on the first.
func encodeBatch(pending []pendingMove) ([]protocol.MoveNotice, error) {
	out := make([]protocol.MoveNotice, 0, len(pending))
	size := 0
	for i, mv := range pending {
		view, err := json.Marshal(mv.state.Final())
		if err != nil {
			if i == 0 {
				return nil, fmt.Errorf("encode the state after step %d: %w", mv.notice.StepNumber, err)
			}
			break
		}
		// 128 covers the field names, the step, the outcome and the punctuation.
		size += len(mv.notice.Move) + len(view) + len(mv.notice.PlayerID) + 128
		if i > 0 && size > moveBatchBytes {
			break
		}
		n := mv.notice
		n.State = view
		out = append(out, n)
	}
	return out, nil
}

// take forgets the n oldest pending moves: they were sent.
func (ev *moveEvents) take(n int) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	clear(ev.pending[:n]) // their states are not held until the slice grows again
	ev.pending = ev.pending[n:]
}

// giveUp forgets the n oldest pending moves without sending them again.
func (ev *moveEvents) giveUp(n int) {
	ev.take(n)
	ev.r.metrics.moveEvents.WithLabelValues("failed").Add(float64(n))
}

// abandon counts the moves still pending when the sender stops: failed, or with_result
// when play ended and the League Manager takes them from the result.
func (ev *moveEvents) abandon() {
	ev.mu.Lock()
	n := len(ev.pending)
	result := "failed"
	if ev.withResult && ev.finished {
		result = "with_result"
	}
	ev.pending = nil
	ev.mu.Unlock()
	if n > 0 {
		ev.r.metrics.moveEvents.WithLabelValues(result).Add(float64(n))
	}
}

// send makes one attempt at one MOVE_EVENT.
func (ev *moveEvents) send(ctx context.Context, msg *protocol.Message) error {
	_, err := ev.r.league.Call(ctx, ev.r.cfg.LeagueURL, msg, protocol.CallOptions{
		Timeout: moveEventTimeout, Retry: protocol.RetryPolicy{Attempts: 1}, Peer: protocol.SenderLeagueManager,
	})
	return err
}
