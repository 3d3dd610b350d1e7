package player

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/player/lbm"
	"github.com/agentleague/agentleague/player/strategy"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// fallbackStrategy plays when the configured strategy does not support a match's game.
const fallbackStrategy = "random"

// Finisher is a strategy told how its match ended; the MCP gateway's seats pass the
// result on to their client.
type Finisher interface {
	Finish(result protocol.GameResult)
}

// match is the player's state of one match in progress; matchBook's mu guards opponent
// and referee.
type match struct {
	game     game.Game
	strategy strategy.Strategy
	opponent string
	// referee is the sender of the invitation: a GAME_OVER from another referee (one
	// the match was taken from) does not end this run of the match.
	referee string
}

// errMatchOver marks a message about a match whose GAME_OVER already arrived.
var errMatchOver = errors.New("match is over")

var _ protocol.Handler = (*Player)(nil)

// Handle implements protocol.Handler: one validated message from a referee or the
// League Manager.
func (p *Player) Handle(ctx context.Context, msg *protocol.Message) (*protocol.Message, error) {
	var handle func(context.Context, *protocol.Message) (*protocol.Message, error)
	switch msg.Envelope.MessageType {
	case protocol.GameInvitation:
		handle = p.invitation
	case protocol.RequestMove:
		handle = p.requestMove
	case protocol.GameOver:
		handle = p.gameOver
	case protocol.LeagueShutdown:
		handle = p.leagueShutdown
	case protocol.MatchCancelled:
		handle = p.matchCancelled
	case protocol.LeagueCompleted:
		handle = p.leagueCompleted
	default:
		return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "a player does not accept %s", msg.Envelope.MessageType)
	}
	if err := p.awaitRegistration(ctx); err != nil {
		return nil, err
	}
	_, leagueID := p.link.registration()
	if env := msg.Envelope; env.LeagueID != "" && leagueID != "" && env.LeagueID != leagueID {
		return nil, protocol.Errorf(protocol.ReasonWrongLeague, "player %s plays in league %q", p.cfg.ID, leagueID)
	}
	return handle(ctx, msg)
}

// awaitRegistration holds a request until the registration answer is stored: the League
// Manager may dispatch a match as soon as the last player registers, so an invitation can
// arrive before the player has read its token and the announced features.
func (p *Player) awaitRegistration(ctx context.Context) error {
	select {
	case <-p.link.registered:
		return nil
	default:
	}
	select {
	case <-p.link.registered:
		return nil
	case <-p.stopping:
		return protocol.Errorf(protocol.ReasonShuttingDown, "player %s is shutting down", p.cfg.ID)
	case <-ctx.Done():
		return protocol.Errorf(protocol.ReasonBusy, "player %s is not registered yet", p.cfg.ID)
	}
}

// reply builds an answer from this player, with the league id once known.
func (p *Player) reply(msg *protocol.Message, messageType string, payload any) (*protocol.Message, error) {
	out, err := msg.Reply(messageType, protocol.PlayerSender(p.cfg.ID), payload)
	if err != nil {
		return nil, err
	}
	_, out.Envelope.LeagueID = p.link.registration()
	return out, nil
}

// matchReply is reply for a match message: it names the match and shows the credential
// back to the referee.
func (p *Player) matchReply(msg *protocol.Message, messageType string, payload any) (*protocol.Message, error) {
	out, err := p.reply(msg, messageType, payload)
	if err != nil {
		return nil, err
	}
	out.Envelope.MatchID, out.Envelope.AuthToken = msg.Envelope.MatchID, msg.Envelope.AuthToken
	return out, nil
}

func (p *Player) newMatch(ctx context.Context, matchID, gameType string, params map[string]any) (*match, error) {
	g, err := p.games.New(gameType, params)
	if err != nil {
		return nil, fmt.Errorf("new game: %w", err)
	}
	s, err := p.newStrategy(p.cfg.Strategy, g, p.cfg.Seed, matchID)
	if err != nil {
		zerolog.Ctx(ctx).Warn().Err(err).Str("match_id", matchID).Str("fallback", fallbackStrategy).Msg("strategy cannot play this match; using the fallback")
		if s, err = p.newStrategy(fallbackStrategy, g, p.cfg.Seed, matchID); err != nil {
			return nil, fmt.Errorf("new strategy: %w", err)
		}
	}
	return &match{game: g, strategy: s}, nil
}

// invitation answers GAME_INVITATION: accepted once the match state exists. A repeated
// invitation finds the state and answers the same.
func (p *Player) invitation(ctx context.Context, msg *protocol.Message) (*protocol.Message, error) {
	env := &msg.Envelope
	if err := p.link.authorizeMatch(ctx, env, true); err != nil {
		return nil, err
	}
	var inv protocol.Invitation
	if err := msg.Decode(&inv); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "invalid GAME_INVITATION payload")
	}
	if inv.MatchID != env.MatchID || inv.GameType != env.GameType {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "payload match_id and game_type must equal the envelope's")
	}
	log := zerolog.Ctx(ctx).With().Str("match_id", env.MatchID).Str("game_type", env.GameType).Logger()
	ack := protocol.JoinAck{Status: protocol.StatusAccepted, MatchID: env.MatchID}
	p.book.invite(env.MatchID, env.Sender)
	m, err := p.book.match(ctx, env.MatchID, env.GameType, inv.GameParams)
	if err == nil {
		p.book.join(m, env.Sender, inv.Opponents)
	}
	switch {
	case errors.Is(err, errMatchOver):
		ack.Status, ack.Reason = protocol.StatusDeclined, "the match is over"
	case err != nil:
		log.Warn().Err(err).Msg("declining invitation")
		ack.Status, ack.Reason = protocol.StatusDeclined, fmt.Sprintf("cannot play %s with these game_params", env.GameType)
	default:
		// DEBUG: a busy league plays thousands of matches; "match over" says it at INFO.
		log.Debug().Strs("opponents", inv.Opponents).Str("referee", env.Sender).Msg("joined match")
	}
	return p.matchReply(msg, protocol.GameJoinAck, ack)
}

// requestMove answers REQUEST_MOVE with the strategy's move. A referee that skipped the
// invitation gets a match created on the spot. When the strategy fails, the first legal
// move keeps the player in the game.
func (p *Player) requestMove(ctx context.Context, msg *protocol.Message) (*protocol.Message, error) {
	start := time.Now()
	env := &msg.Envelope
	if p.fault.crashed(ctx, env.MatchID) {
		return nil, p.unanswered(ctx)
	}
	if err := p.link.authorizeMatch(ctx, env, false); err != nil {
		return nil, err
	}
	var req protocol.MoveRequest
	if err := msg.Decode(&req); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "invalid REQUEST_MOVE payload")
	}
	log := zerolog.Ctx(ctx).With().Str("match_id", env.MatchID).Int("step_number", req.StepNumber).Logger()
	logLastResult(&log, req.LastResult)
	m, err := p.book.match(ctx, env.MatchID, env.GameType, nil)
	switch {
	case errors.Is(err, errMatchOver):
		return nil, protocol.Errorf(protocol.ReasonStaleStep, "match %s is over", env.MatchID)
	case err != nil:
		log.Warn().Err(err).Msg("cannot play this match")
		return nil, protocol.Errorf(protocol.ReasonUnsupportedGame, "this player cannot play %s", env.GameType)
	}
	if err := p.pause(ctx, p.cfg.Think); err != nil {
		log.Debug().Err(err).Msg("stopped thinking: the referee gave up or the player is stopping")
		return nil, protocol.Errorf(protocol.ReasonShuttingDown, "the move was not chosen: %v", err)
	}
	sreq := strategy.Request{MatchID: env.MatchID, GameType: env.GameType, StepNumber: req.StepNumber, Context: req.StepContext, DeadlineMS: req.DeadlineMS,
		Clocks: req.Clocks, Opponent: p.book.opponent(m), ConversationID: env.ConversationID, LastResult: req.LastResult, Warning: req.Warning}
	var move, meta json.RawMessage
	switch s := m.strategy.(type) {
	case strategy.ContextExplainer:
		move, meta, err = s.MoveContext(log.WithContext(ctx), sreq)
	case strategy.Explainer:
		move, meta, err = s.MoveWithMetadata(sreq)
	default:
		move, err = s.Move(sreq)
	}
	if errors.Is(err, strategy.ErrNoMove) {
		// No stand-in move: the referee's deadline and forfeit rules judge the failure.
		log.Warn().Err(err).Msg("strategy produced no move")
		return nil, protocol.Errorf(protocol.ReasonInternal, "no move: %s", noMoveReason(err))
	}
	if err != nil {
		legal, lerr := m.game.LegalMoves(req.StepContext)
		if lerr != nil || len(legal) == 0 {
			log.Warn().Err(err).AnErr("legal_moves_error", lerr).Msg("no move for this step_context")
			return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "step_context is not a playable %s position", m.game.Type())
		}
		log.Warn().Err(err).Msg("strategy failed; playing the first legal move")
		move = legal[0]
	}
	if p.fault.mode == FaultIllegal {
		move = illegalMove(m.game, req.StepContext)
		log.Warn().RawJSON("move", move).Msg("fault illegal: answering a move that breaks the rules")
	}
	log.Debug().RawJSON("move", move).Int("deadline_ms", req.DeadlineMS).Msg("move chosen")
	if err := p.slowDown(ctx, start); err != nil {
		log.Warn().Err(err).Msg("fault slow: the referee stopped waiting")
		return nil, err
	}
	return p.matchReply(msg, protocol.MoveResponse, protocol.MoveAnswer{MovePayload: move, StepNumber: &req.StepNumber, ContextHash: req.ContextHash, Metadata: meta})
}

// logLastResult records what the referee made of the previous move; a move that was not
// played as sent is worth a warning.
func logLastResult(log *zerolog.Logger, lr *protocol.LastResult) {
	if lr == nil {
		return
	}
	ev := log.Debug()
	switch lr.Outcome {
	case protocol.MoveInvalid, protocol.MoveTimeout, protocol.MoveForced:
		ev = log.Warn()
	}
	if lr.StepNumber != nil {
		ev = ev.Int("previous_step", *lr.StepNumber)
	}
	ev.Str("intent", lr.Intent).Str("outcome", string(lr.Outcome)).Str("reason", lr.Reason).Msg("previous move result")
}

// gameOver records the player's outcome once per match and drops the match state.
func (p *Player) gameOver(ctx context.Context, msg *protocol.Message) (*protocol.Message, error) {
	env := &msg.Envelope
	if err := p.link.authorizeMatch(ctx, env, false); err != nil {
		return nil, err
	}
	var over protocol.GameResult
	if err := msg.Decode(&over); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "invalid GAME_OVER payload")
	}
	ended, repeated, ok := p.book.end(env.MatchID, env.Sender, over)
	if !ok {
		// The referee the match was taken from finished its own run: not this run's end.
		zerolog.Ctx(ctx).Info().Str("match_id", env.MatchID).Str("referee", env.Sender).Msg("game over from a former referee of the match; ignored")
		return p.matchReply(msg, protocol.GameOverAck, protocol.Ack{Status: protocol.StatusAcknowledged})
	}
	ev := zerolog.Ctx(ctx).Info().Str("match_id", env.MatchID)
	if ended != nil {
		ev = ev.Str("opponent", ended.opponent).Str("referee", ended.referee)
	}
	ev.Str("outcome", string(over.Outcome)).Str("reason", over.Reason).Bool("repeated", repeated).Msg("match over")
	return p.matchReply(msg, protocol.GameOverAck, protocol.Ack{Status: protocol.StatusAcknowledged})
}

// leagueShutdown acknowledges LEAGUE_SHUTDOWN and tells Run to stop; Run's graceful
// server shutdown lets this answer be written first.
func (p *Player) leagueShutdown(ctx context.Context, msg *protocol.Message) (*protocol.Message, error) {
	if err := p.link.fromLeague(&msg.Envelope); err != nil {
		return nil, err
	}
	var sp protocol.Shutdown
	if err := msg.Decode(&sp); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "invalid LEAGUE_SHUTDOWN payload")
	}
	out, err := p.reply(msg, protocol.LeagueShutdownAck, protocol.Ack{Status: protocol.StatusAcknowledged})
	if err != nil {
		return nil, err
	}
	zerolog.Ctx(ctx).Info().Str("reason", sp.Reason).Msg("league shutdown received")
	p.shutOnce.Do(func() { close(p.shutdown) })
	return out, nil
}

// matchCancelled drops the state of a match the League Manager stopped before it had a
// result (e.g. its referee lost its lease). The match is not over: it keeps its id and
// may be assigned again, so a later GAME_INVITATION for it starts it afresh. A match
// the player does not know (or that already ended) is acknowledged all the same.
func (p *Player) matchCancelled(ctx context.Context, msg *protocol.Message) (*protocol.Message, error) {
	env := &msg.Envelope
	if err := p.link.fromLeague(env); err != nil {
		return nil, err
	}
	var mc protocol.Cancellation
	if err := msg.Decode(&mc); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "invalid MATCH_CANCELLED payload")
	}
	if mc.MatchID != env.MatchID {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "payload match_id must equal the envelope's")
	}
	known, over := p.book.cancel(mc.MatchID)
	// Its next referee must be confirmed afresh.
	token := p.link.unconfirm(mc.MatchID)
	zerolog.Ctx(ctx).Info().Str("match_id", mc.MatchID).Str("reason", mc.Reason).Bool("in_progress", known).Bool("over", over).
		Msg("match cancelled by the league manager")
	out, err := p.reply(msg, protocol.MatchCancelledAck, protocol.MatchAck{Status: protocol.StatusAcknowledged, MatchID: mc.MatchID})
	if err != nil {
		return nil, err
	}
	// The match named, and the player's own token back only to a sender that showed it:
	// a League Manager that signs nothing must not be able to collect it.
	out.Envelope.MatchID = mc.MatchID
	if env.AuthToken != "" && protocol.TokenEqual(env.AuthToken, token) {
		out.Envelope.AuthToken = token
	}
	return out, nil
}

// noMoveReason says why a strategy had no move without passing on its internals.
func noMoveReason(err error) string {
	var api *lbm.APIError
	switch {
	case errors.As(err, &api):
		return fmt.Sprintf("the model server answered %d", api.Status)
	case errors.Is(err, context.DeadlineExceeded):
		return "the model server did not answer in time"
	}
	return "the strategy failed"
}
