package mcpgw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/player"
	"github.com/agentleague/agentleague/player/llm"
	"github.com/agentleague/agentleague/player/strategy"
	"github.com/agentleague/agentleague/protocol"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// holdGrace is how long a REQUEST_MOVE whose deadline passed is still held, so that the
// referee, not the seat, ends it: its timeout rules then apply as to any player.
const holdGrace = 2 * time.Second

// strategyName is the strategy a seat shows in its player's status.
const strategyName = "mcp"

// Why a seat stopped playing.
const (
	endLeague = "league_over"
	endLeft   = "left"
	endFailed = "failed"
)

// errNoTurn is why a turn ended without a move from the client.
var errNoTurn = fmt.Errorf("%w: the mcp client did not move in time", strategy.ErrNoMove)

// seat is one player of the league whose moves come from an MCP session.
type seat struct {
	id     string
	log    zerolog.Logger
	clock  clock
	player *player.Player
	cancel context.CancelFunc
	// done is closed when the player stopped; err is then why.
	done chan struct{}
	err  error

	mu sync.Mutex
	// queue holds what wait_for_turn has to show, oldest first: a *turn stays until it
	// is answered or expires, an event until it is shown.
	queue []any
	// wake is closed and replaced whenever queue or ended changes.
	wake chan struct{}
	// ended says why the seat stopped playing ("" while it plays).
	ended string
	// missed is the last turn that expired unanswered.
	missed *turn
	// results are the matches that ended, by id.
	results map[string]GameOver
	// final is what LEAGUE_COMPLETED brought: the league is over for the client, which
	// wait_for_turn tells at once, with the final table.
	final *protocol.LeagueCompletion
	// noneLeft is set once the League Manager said the seat has no match left.
	noneLeft bool
}

// turn is one REQUEST_MOVE held for the client.
type turn struct {
	info TurnInfo
	pos  llm.Position
	// deadline is when the client's time is up; zero when the referee set none.
	deadline time.Time
	// answer takes the one move sent; answered and expired are guarded by the seat's mu.
	answer   chan json.RawMessage
	answered bool
	expired  bool
}

// join registers a seat for the session with the League Manager and returns once it is
// registered. The seat's player then runs until the league shuts down, the session
// leaves, or the gateway closes.
func (g *Gateway) join(ctx context.Context, ss *sdk.ServerSession, id, displayName string) (*seat, error) {
	s := &seat{id: id, clock: g.clock, done: make(chan struct{}), wake: make(chan struct{}), results: map[string]GameOver{}}
	s.log = g.log.With().Str("player_id", id).Logger()
	// An inbound seat is served at a path of the gateway; an outbound one (the default)
	// registers no endpoint and takes its requests from the League Manager's relay.
	endpoint, addr := "", "relay" // Addr only names where it listens: an outbound seat does not
	if g.cfg.Inbound {
		endpoint, addr = g.base+"/seats/"+id, g.http.Addr()
	}
	p, err := player.New(player.Config{
		ID: id, Addr: addr, LeagueURL: g.cfg.LeagueURL, Strategy: strategyName, DisplayName: displayName,
		Outbound: !g.cfg.Inbound, RegisterFor: g.cfg.RegisterFor, Stdout: io.Discard, Remote: s.strategy,
		ClientTLS: g.cfg.ClientTLS, Insecure: g.cfg.Insecure, OnLeagueCompleted: s.completed,
	}, s.log)
	if err != nil {
		return nil, err
	}
	s.player = p
	g.mu.Lock()
	switch held := g.bySession[ss]; {
	case g.closed:
		g.mu.Unlock()
		return nil, errors.New("the gateway is shutting down")
	case held != nil:
		g.mu.Unlock()
		return nil, fmt.Errorf("this session already holds the seat of %s: one session plays one seat (leave_league first)", held.id)
	case g.seats[id] != nil:
		g.mu.Unlock()
		return nil, fmt.Errorf("player %s already has a seat on this gateway, held by another session", id)
	}
	g.seats[id], g.bySession[ss] = s, s
	g.watch(ss)
	var pctx context.Context
	pctx, s.cancel = context.WithCancel(g.seatsCtx)
	// The player's goroutine ends when the league shuts down or pctx ends.
	g.wg.Go(func() {
		err := p.Serve(pctx, endpoint)
		reason := endLeague
		switch {
		case err != nil:
			reason = endFailed
		case pctx.Err() != nil:
			reason = endLeft
		}
		s.err = err
		s.end(reason)
		close(s.done)
	})
	g.mu.Unlock()
	select {
	case <-p.Registered():
		s.log.Info().Str("endpoint", endpoint).Bool("outbound", endpoint == "").Msg("seat joined the league")
		return s, nil
	case <-s.done:
		err = errors.New("the league is shutting down: not registered")
		if s.err != nil {
			err = fmt.Errorf("registration failed: %s", leagueError(s.err))
			if !g.cfg.Inbound {
				err = fmt.Errorf("%w (this gateway's seats are outbound, through the League Manager's relay; a League Manager without relay needs a gateway started with --inbound)", err)
			}
		}
	case <-ctx.Done():
		err = fmt.Errorf("join cancelled: %w", ctx.Err())
	}
	g.drop(s)
	return nil, err
}

// drop stops a seat and frees its player id and its session.
func (g *Gateway) drop(s *seat) {
	g.mu.Lock()
	if g.seats[s.id] == s {
		delete(g.seats, s.id)
	}
	for ss, held := range g.bySession {
		if held == s {
			delete(g.bySession, ss)
		}
	}
	g.mu.Unlock()
	s.end(endLeft)
	s.cancel()
	<-s.done
}

// live reports whether the seat still plays.
func (s *seat) live() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended == ""
}

// end marks the seat stopped, once; turns still held end without a move.
func (s *seat) end(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended == "" {
		s.ended = reason
		s.changed()
	}
}

// completed is the seat player's Config.OnLeagueCompleted: the league is over, and every
// waiter is told with the final table.
func (s *seat) completed(lc protocol.LeagueCompletion) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.final = &lc
	s.changed()
	s.log.Info().Str("league_id", lc.LeagueID).Str("completed_at", lc.CompletedAt).Msg("league completed: telling the mcp client")
}

// changed wakes every waiter. Callers hold mu.
func (s *seat) changed() {
	close(s.wake)
	s.wake = make(chan struct{})
}

// strategy is the seat player's Config.Remote: every match is played by the client.
func (s *seat) strategy(g game.Game, matchID string) (strategy.Strategy, error) {
	if _, err := llm.Rules(g); err != nil {
		return nil, fmt.Errorf("the gateway cannot show %s to a client: %w", g.Type(), err)
	}
	return &remote{seat: s, g: g, matchID: matchID}, nil
}

// remote is the strategy of one match of a seat: it holds each REQUEST_MOVE for the
// client and tells it how the match ended.
type remote struct {
	seat    *seat
	g       game.Game
	matchID string
}

// Move implements strategy.Strategy; the player calls MoveContext.
func (r *remote) Move(req strategy.Request) (json.RawMessage, error) {
	mv, _, err := r.MoveContext(context.Background(), req)
	return mv, err
}

// MoveContext implements strategy.ContextExplainer: it waits for the client's move.
func (r *remote) MoveContext(ctx context.Context, req strategy.Request) (json.RawMessage, json.RawMessage, error) {
	mv, err := r.seat.await(ctx, r.g, req)
	return mv, nil, err
}

// Finish implements player.Finisher.
func (r *remote) Finish(res protocol.GameResult) { r.seat.finish(r.matchID, res) }

// await holds a move request until the client answers it, the client's deadline passes
// (then until the referee gives up, at most holdGrace more), or the seat stops.
func (s *seat) await(ctx context.Context, g game.Game, req strategy.Request) (json.RawMessage, error) {
	pos, err := llm.Describe(g, req.Context)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", strategy.ErrNoMove, err)
	}
	var state map[string]any
	if err := json.Unmarshal(req.Context, &state); err != nil {
		return nil, fmt.Errorf("%w: step_context: %v", strategy.ErrNoMove, err)
	}
	t := &turn{pos: pos, answer: make(chan json.RawMessage, 1), info: TurnInfo{
		MatchID: req.MatchID, GameType: req.GameType, StepNumber: req.StepNumber, Opponent: req.Opponent,
		Board: pos.Board, LegalMoves: pos.Moves, State: state, Warning: req.Warning, LastResult: lastResultOf(req.LastResult),
		Clocks: req.Clocks,
	}}
	var expire <-chan time.Time
	// The client's deadline is when the answer is due: its move is the whole answer. Under
	// a clock it is the clock's budget (the one rule), not the whole clock.
	now := s.clock.Now()
	if b := strategy.MoveBudget(now, req, 0); !b.AnswerBy.IsZero() {
		t.deadline = b.AnswerBy
		t.info.Deadline = t.deadline.UTC().Format(time.RFC3339Nano)
		var stop func()
		expire, stop = s.clock.Timer(b.AnswerBy.Sub(now))
		defer stop()
	}
	s.mu.Lock()
	if s.ended != "" {
		s.mu.Unlock()
		return nil, errNoTurn
	}
	s.queue = append(s.queue, t)
	s.changed()
	wake := s.wake
	s.mu.Unlock()
	log := zerolog.Ctx(ctx) // the player's, with the match and the step
	log.Info().Str("deadline", t.info.Deadline).Msg("move requested: waiting for the mcp client")
	var hold <-chan time.Time
	for {
		select {
		case mv := <-t.answer:
			return mv, nil
		case <-expire:
			expire = nil
			if s.expire(t) {
				log.Warn().Msg("the mcp client did not move before the deadline")
				var stop func()
				hold, stop = s.clock.Timer(holdGrace)
				defer stop()
			}
		case <-hold:
			return nil, errNoTurn
		case <-ctx.Done():
			s.expire(t)
			return nil, errNoTurn
		case <-wake:
			s.mu.Lock()
			ended := s.ended != ""
			wake = s.wake
			s.mu.Unlock()
			if ended {
				s.expire(t)
				return nil, errNoTurn
			}
		}
	}
}

// expire withdraws an unanswered turn; it reports false when the turn was answered
// meanwhile (its move is then in t.answer).
func (s *seat) expire(t *turn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.answered || t.expired {
		return !t.answered
	}
	t.expired = true
	s.missed = t
	s.queue = slices.DeleteFunc(s.queue, func(it any) bool { return it == t })
	s.changed()
	return true
}

// finish records how a match ended and queues it for the client.
func (s *seat) finish(matchID string, res protocol.GameResult) {
	over := GameOver{MatchID: matchID, Outcome: string(res.Outcome), Reason: res.Reason, Points: res.Points}
	if res.Winner != nil {
		over.Winner = *res.Winner
	}
	if len(res.FinalState) > 0 {
		_ = json.Unmarshal(res.FinalState, &over.FinalState) // shown as sent when it is an object
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.results[matchID] = over
	s.queue = append(s.queue, over)
	s.changed()
}

// next is what wait_for_turn shows now, if anything: the oldest turn or event, else the
// seat's end. When there is nothing, wake is closed at the next change.
func (s *seat) next() (res WaitResult, ok bool, wake <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res, ok = s.peek()
	return res, ok, s.wake
}

// peek is next without the lock: callers hold mu.
func (s *seat) peek() (WaitResult, bool) {
	if len(s.queue) > 0 {
		switch it := s.queue[0].(type) {
		case *turn:
			info := it.info
			if !it.deadline.IsZero() {
				info.SecondsLeft = max(0, it.deadline.Sub(s.clock.Now()).Seconds())
			}
			return WaitResult{Status: StatusYourTurn, Turn: &info, Message: turnMessage(info)}, true
		case GameOver:
			s.queue = s.queue[1:]
			return WaitResult{Status: StatusGameOver, GameOver: &it, Message: overMessage(it)}, true
		}
	}
	if s.final != nil && (s.ended == "" || s.ended == endLeague) {
		return leagueOver(s.id, s.final), true
	}
	switch s.ended {
	case "":
		return WaitResult{}, false
	case endLeague:
		return WaitResult{Status: StatusLeagueOver, Message: "The league is over: the League Manager shut it down. Call get_standings for the final table."}, true
	case endLeft:
		return WaitResult{Status: StatusLeft, Message: "This seat left the league."}, true
	}
	return WaitResult{Status: StatusLeft, Message: "This seat stopped: its registration failed."}, true
}

// wait blocks until next has something, the timeout passes, or ctx ends; progress is
// called every interval meanwhile with the time waited.
func (s *seat) wait(ctx context.Context, timeout, every time.Duration, progress func(waited time.Duration)) (WaitResult, error) {
	start := s.clock.Now()
	timer, stopTimer := s.clock.Timer(timeout)
	defer stopTimer()
	tick, stopTick := s.clock.Timer(every)
	// stopTick is read when wait returns: it is the latest tick's.
	defer func() { stopTick() }()
	for {
		res, ok, wake := s.next()
		if ok {
			return res, nil
		}
		select {
		case <-wake:
		case <-timer:
			if s.noMatchesLeft(ctx) {
				return WaitResult{Status: StatusNoMoreMatches, MatchesLeft: new(0), Message: noMoreMatches}, nil
			}
			return WaitResult{Status: StatusWaiting, Message: fmt.Sprintf("No move was asked of you in %v. Call wait_for_turn again.", timeout)}, nil
		case <-tick:
			progress(s.clock.Now().Sub(start))
			tick, stopTick = s.clock.Timer(every)
		case <-ctx.Done():
			return WaitResult{}, ctx.Err()
		}
	}
}

// move answers the oldest turn (of matchID, when given) with the client's move, once the
// rules accept it. An illegal move changes nothing: the error says why, and the client
// may try again while time remains.
func (s *seat) move(raw json.RawMessage, matchID string) (MoveResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t *turn
	for _, it := range s.queue {
		if tt, ok := it.(*turn); ok && (matchID == "" || tt.info.MatchID == matchID) {
			t = tt
			break
		}
	}
	if t == nil {
		switch {
		case s.ended == endLeague || s.final != nil:
			return MoveResult{}, errors.New("the league is over: no move is awaited")
		case s.ended != "":
			return MoveResult{}, errors.New("this seat no longer plays")
		case s.missed != nil && (matchID == "" || s.missed.info.MatchID == matchID):
			m := s.missed.info
			return MoveResult{}, fmt.Errorf("no move is awaited now: the deadline of match %s step %d passed at %s, and the referee's timeout rules apply. Call wait_for_turn for your next turn",
				m.MatchID, m.StepNumber, m.Deadline)
		case matchID != "":
			return MoveResult{}, fmt.Errorf("no move is awaited in match %s: call wait_for_turn", matchID)
		}
		return MoveResult{}, errors.New("no move is awaited now: call wait_for_turn first")
	}
	label, payload, err := t.pos.Find(raw)
	if err != nil {
		left := ""
		if !t.deadline.IsZero() {
			left = fmt.Sprintf(" %.0f seconds left;", max(0, t.deadline.Sub(s.clock.Now()).Seconds()))
		}
		return MoveResult{}, fmt.Errorf("illegal move: %v.%s try again with one of the legal moves: %s", err, left, joinMoves(t.pos.Moves))
	}
	t.answered = true
	t.answer <- payload
	s.queue = slices.DeleteFunc(s.queue, func(it any) bool { return it == t })
	s.changed()
	s.log.Info().Str("match_id", t.info.MatchID).Int("step_number", t.info.StepNumber).RawJSON("move", payload).Msg("move sent for the mcp client")
	return MoveResult{Status: "sent", MatchID: t.info.MatchID, StepNumber: t.info.StepNumber, Move: label,
		Message: fmt.Sprintf("Move %s sent to the referee. Call wait_for_turn for what comes next.", label)}, nil
}

// result is how a match of the seat ended, when it did.
func (s *seat) result(matchID string) (GameOver, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.results[matchID]
	return r, ok
}

// standingsFor bounds the standings query of noMatchesLeft.
const standingsFor = 5 * time.Second

// noMatchesLeft reports whether the seat has no match left while the league runs: no
// match in progress, and the League Manager says none is left (matches_left 0 in its
// standings, which it gives when the schedule fixes every match). It asks once per
// wait that times out idle, and never again once it said so.
func (s *seat) noMatchesLeft(ctx context.Context) bool {
	s.mu.Lock()
	known := s.noneLeft
	s.mu.Unlock()
	if known {
		return true
	}
	if s.player.Status().CurrentMatches > 0 {
		return false
	}
	qctx, cancel := context.WithTimeout(ctx, standingsFor)
	defer cancel()
	st, err := s.player.Standings(qctx)
	if err != nil || st.Final || st.MatchesLeft == nil || *st.MatchesLeft > 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.noneLeft {
		s.noneLeft = true
		s.log.Info().Msg("no match left for the seat while the league runs: telling the mcp client")
	}
	return true
}

// noMoreMatches is the message of status no_more_matches.
const noMoreMatches = "All your matches are over, but the league still runs: other players' matches are being played. " +
	"You may stop now. To get the final table, call wait_for_turn again: it answers league_over as soon as the league completes."

// leagueOver is wait_for_turn's answer once LEAGUE_COMPLETED came: the final table, and
// the seat's own line.
func leagueOver(id string, lc *protocol.LeagueCompletion) WaitResult {
	f := &FinalTable{LeagueID: lc.LeagueID, CompletedAt: lc.CompletedAt, Standings: lc.Standings}
	if f.Standings == nil {
		f.Standings = []protocol.StandingsRow{}
	}
	msg := "The league is complete: every result is in."
	for _, r := range lc.Standings {
		if r.PlayerID == id {
			f.Rank, f.Points = r.Rank, r.Points
			msg += fmt.Sprintf(" You finished %d of %d with %d points (%d wins, %d draws, %d losses).", r.Rank, len(lc.Standings), r.Points, r.Wins, r.Draws, r.Losses)
		}
	}
	return WaitResult{Status: StatusLeagueOver, Final: f, MatchesLeft: new(0), Message: msg + " The final table is in final.standings. Stop calling wait_for_turn."}
}
