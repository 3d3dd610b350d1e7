package referee

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// Move events are best effort: they feed the League Manager's live view and never slow
// or fail a match. They go only to a League Manager that announced move_events. Each
// applied move becomes one MOVE_EVENT in a bounded queue per match (a full queue drops
// the event), drained by one goroutine that sends each event once with a short
// deadline; an error answer, whatever its reason, only counts as a failed event.
const (
	moveEventQueue   = 64
	moveEventTimeout = time.Second
)

// moveEvents sends the MOVE_EVENTs of one match.
type moveEvents struct {
	r         *Referee
	a         protocol.Assignment
	token     string
	leagueID  string
	log       zerolog.Logger
	queue     chan *protocol.Message
	closeOnce sync.Once
	cancel    context.CancelFunc
	done      chan struct{}
}

// startMoveEvents starts the sender of a match's move events. Its goroutine ends once
// finish was called and the queue is sent, or at stop, or when ctx (the match's) ends.
func (r *Referee) startMoveEvents(ctx context.Context, a protocol.Assignment, log zerolog.Logger) *moveEvents {
	r.mu.Lock()
	token, leagueID := r.token, r.leagueID
	r.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	ev := &moveEvents{r: r, a: a, token: token, leagueID: leagueID, log: log,
		queue: make(chan *protocol.Message, moveEventQueue), cancel: cancel, done: make(chan struct{})}
	go ev.run(ctx)
	return ev
}

// add queues the event of one applied move (MatchRunner.OnMove). It never blocks.
func (ev *moveEvents) add(rec protocol.MoveRecord, state game.State) {
	view, err := json.Marshal(state.Final())
	if err != nil {
		ev.log.Debug().Err(err).Msg("move event not built")
		return
	}
	msg, err := protocol.NewMessage(protocol.MoveEvent, protocol.RefereeSender(ev.r.cfg.ID), protocol.MoveNotice{
		StepNumber: rec.Step, PlayerID: rec.Player, Move: rec.Move, Outcome: rec.Outcome, State: view,
	})
	if err != nil {
		ev.log.Debug().Err(err).Msg("move event not built")
		return
	}
	e := &msg.Envelope
	e.AuthToken, e.LeagueID, e.RoundID, e.MatchID, e.GameType = ev.token, ev.leagueID, ev.a.RoundID, ev.a.MatchID, ev.a.GameType
	select {
	case ev.queue <- msg:
	default:
		ev.r.metrics.moveEvents.WithLabelValues("dropped").Inc()
	}
}

// finish says no event follows; those queued are still sent.
func (ev *moveEvents) finish() { ev.closeOnce.Do(func() { close(ev.queue) }) }

// stop abandons the events not sent yet and waits for the sender.
func (ev *moveEvents) stop() {
	ev.cancel()
	<-ev.done
}

func (ev *moveEvents) run(ctx context.Context) {
	defer close(ev.done)
	for {
		select {
		case <-ctx.Done():
			return
		case msg, ok := <-ev.queue:
			if !ok {
				return
			}
			ev.send(ctx, msg)
		}
	}
}

// send makes one attempt at one event.
func (ev *moveEvents) send(ctx context.Context, msg *protocol.Message) {
	_, err := ev.r.league.Call(ctx, ev.r.cfg.LeagueURL, msg, protocol.CallOptions{
		Timeout: moveEventTimeout, Retry: protocol.RetryPolicy{Attempts: 1}, Peer: protocol.SenderLeagueManager,
	})
	switch {
	case err == nil:
		ev.r.metrics.moveEvents.WithLabelValues("sent").Inc()
	default:
		ev.r.metrics.moveEvents.WithLabelValues("failed").Inc()
		ev.log.Debug().Err(err).Str("conversation_id", msg.Envelope.ConversationID).Msg("move event not delivered")
	}
}
