package league

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// notifier owns the League Manager's outbound calls: each runs on a goroutine of its own
// that ends when the call ends or when close cancels it, and close waits for all of them.
// A call that must act on its answer takes mu to do so.
type notifier struct {
	client   *protocol.Client
	log      zerolog.Logger
	timeout  time.Duration // of a best-effort notice
	leagueID string
	gameType string
	// cfg, params and scoring are the league's terms, sent with each assignment.
	cfg     *config.Config
	params  map[string]any
	scoring protocol.Scoring
	// mu is the engine's mu (engine.mu), the league's one lock, taken to apply an answer.
	mu *sync.Mutex

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newNotifier(opt Options, terms config.GameEntry, mu *sync.Mutex) *notifier {
	ctx, cancel := context.WithCancel(context.Background())
	return &notifier{client: opt.Client, log: opt.Log, timeout: opt.NotifyTimeout, leagueID: opt.Config.League.LeagueID,
		gameType: opt.Config.League.GameType, cfg: opt.Config, params: terms.Params, scoring: terms.Scoring, mu: mu, ctx: ctx, cancel: cancel}
}

// message builds a League Manager message to agent a, signed with a's token; mt, when
// not nil, is the match it is about.
func (n *notifier) message(a *agent, mt *match, messageType string, payload any) (*protocol.Message, error) {
	msg, err := protocol.NewMessage(messageType, protocol.SenderLeagueManager, payload)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", messageType, err)
	}
	e := &msg.Envelope
	e.AuthToken, e.LeagueID = a.token, n.leagueID
	if mt != nil {
		e.RoundID, e.MatchID, e.GameType = mt.roundID, mt.id, n.gameType
	}
	return msg, nil
}

// call sends msg to a with opt and returns the answer; it ends with close.
func (n *notifier) call(ctx context.Context, a *agent, msg *protocol.Message, opt protocol.CallOptions) (*protocol.Message, error) {
	opt.Peer = a.sender()
	return n.client.Call(ctx, a.endpoint, msg, opt)
}

// send sends a best-effort notice: one attempt bounded by the notice timeout and by the
// Manager's life. The answer does not matter (an agent that does not know the notice
// answers UNSUPPORTED_MESSAGE); it is logged.
func (n *notifier) send(a *agent, msg *protocol.Message) {
	ctx, cancel := context.WithTimeout(n.ctx, n.timeout)
	defer cancel()
	_, err := n.call(ctx, a, msg, protocol.CallOptions{Retry: protocol.RetryPolicy{Attempts: 1}})
	ev := n.log.Debug()
	if err != nil && protocol.ReasonOf(err) != protocol.ReasonUnsupportedMessage {
		ev = n.log.Info()
	}
	ev.Err(err).Str("conversation_id", msg.Envelope.ConversationID).Str("to", a.sender()).Str("message_type", msg.Envelope.MessageType).Msg("notice sent")
}

// goSend sends a best-effort notice in the background, then runs after (if not nil)
// under mu.
func (n *notifier) goSend(a *agent, msg *protocol.Message, after func()) {
	n.wg.Go(func() {
		n.send(a, msg)
		if after != nil {
			n.mu.Lock()
			defer n.mu.Unlock()
			after()
		}
	})
}

// goCall runs fn in the background; fn must end when ctx does.
func (n *notifier) goCall(fn func(ctx context.Context)) {
	n.wg.Go(func() { fn(n.ctx) })
}

// cancelled sends MATCH_CANCELLED to a player in the background: one attempt, a short
// deadline, any answer accepted.
func (n *notifier) cancelled(mt *match, pl *agent, why string) {
	msg, err := n.message(pl, mt, protocol.MatchCancelled, protocol.Cancellation{MatchID: mt.id, Reason: why})
	if err != nil {
		n.log.Error().Err(err).Str("match_id", mt.id).Msg("build MATCH_CANCELLED")
		return
	}
	n.goSend(pl, msg, nil)
}

// assignment builds MATCH_ASSIGNMENT of mt to ref, with the endpoints and match
// credentials of its players (from players).
func (n *notifier) assignment(mt *match, ref *agent, players map[string]*agent) (*protocol.Message, error) {
	ml := n.cfg.Timeouts.MatchLevel
	scoring := n.scoring
	p := protocol.Assignment{
		MatchID: mt.id, RoundID: mt.roundID, GameType: n.gameType, Players: mt.players[:],
		PlayerEndpoints:   map[string]string{},
		MatchSeed:         mt.seed,
		MatchCredentials:  map[string]string{},
		GameParams:        n.params,
		Scoring:           &scoring,
		Deadlines:         &protocol.Deadlines{JoinAckMS: int(n.cfg.MatchJoinAckTimeout().Milliseconds()), MoveMS: int(n.cfg.MoveTimeout().Milliseconds())},
		TimeControl:       n.cfg.Clock(),
		Opening:           mt.opening,
		IllegalMovePolicy: n.cfg.IllegalMovePolicy,
		Penalties:         &protocol.Penalties{MoveWarnings: ml.MoveWarnings, ForcedMoves: ml.ForcedMoves},
	}
	if p.GameParams == nil {
		p.GameParams = map[string]any{}
	}
	for _, id := range mt.players {
		pl := players[id]
		p.PlayerEndpoints[id] = pl.endpoint
		p.MatchCredentials[id] = protocol.MatchCredential(pl.token, mt.id)
	}
	return n.message(ref, mt, protocol.MatchAssignment, p)
}

// close cancels the calls in flight and waits for them.
func (n *notifier) close() {
	n.cancel()
	n.wg.Wait()
}
