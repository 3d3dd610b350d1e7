// Package referee runs matches: it invites both players, runs the game loop with
// deadlines, validates every move with the game's rules, announces the outcome and
// reports the result to the League Manager until it is acknowledged.
package referee

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// Caller sends one request and returns the answer; *protocol.Client implements it.
type Caller interface {
	Call(ctx context.Context, url string, m *protocol.Message, opt protocol.CallOptions) (*protocol.Message, error)
}

// maxMoveMetadata bounds what a player's note beside a move may add to the result.
const maxMoveMetadata = 1024

// Report is the outcome of a match as the referee reports it.
type Report struct {
	// Outcome holds protocol.Outcome values by player id.
	Outcome  map[string]string
	Points   map[string]int
	Metadata protocol.GameMetadata
}

// MatchRunner plays one match. It is the whole game loop, free of HTTP serving, so
// tests drive it with a fake Caller and fake time.
type MatchRunner struct {
	RefereeID string
	LeagueID  string
	Game      game.Game
	A         protocol.Assignment
	Caller    Caller
	Log       zerolog.Logger
	// Defaults used when the assignment does not carry them.
	JoinTimeout, MoveTimeout time.Duration
	Policy                   string
	Penalties                protocol.Penalties
	// OnMove, when set, sees every applied move (used for live move events).
	OnMove func(protocol.MoveRecord, game.State)
	// Progress, when set, hears where the match stands: joining when the invitations
	// go out, then playing with the steps completed so far, after each applied step.
	Progress func(phase string, step int)
}

type seat struct {
	index      int
	id, url    string
	credential string
	lastResult *protocol.LastResult
	timeouts   int
	// lastMeta is what the player said about its last answer (e.g. a model's
	// confidence and reasoning), kept with the move it came with.
	lastMeta json.RawMessage
	// clock is the player's under a time control (nil: the fixed deadline per move);
	// other is the opponent's seat, whose clock REQUEST_MOVE shows too.
	clock *clock
	other *seat
}

// lossError ends the game loop early with a technical result: a loss of loser or, for
// protocol.TerminationTimeoutDraw, a draw.
type lossError struct {
	loser       string
	termination protocol.Termination
}

func (e *lossError) Error() string { return string(e.termination) + " by " + e.loser }

// Run plays the match and returns its outcome. ctx ends the match early (shutdown).
func (r *MatchRunner) Run(ctx context.Context) (*Report, error) {
	if len(r.A.Players) != 2 {
		return nil, fmt.Errorf("match %s: need two players", r.A.MatchID)
	}
	if r.A.GameParams == nil {
		r.A.GameParams = map[string]any{}
	}
	seats := [2]*seat{}
	for i, id := range r.A.Players {
		seats[i] = &seat{index: i, id: id, url: r.A.PlayerEndpoints[id], credential: r.A.MatchCredentials[id]}
		if tc := r.A.TimeControl; tc != nil && tc.On() {
			seats[i].clock = newClock(*tc)
		}
	}
	seats[0].other, seats[1].other = seats[1], seats[0]
	seed := r.A.MatchSeed
	md := protocol.GameMetadata{MatchSeed: &seed, GameParams: r.A.GameParams, Moves: []protocol.MoveRecord{}, Violations: []protocol.MatchViolation{},
		RefereeID: r.RefereeID, StartedAt: protocol.Now(time.Now()), TimeControl: r.A.TimeControl, Opening: r.A.Opening}
	state, err := game.Open(r.Game, r.A.MatchSeed, r.A.Opening)
	if err != nil { // the assignment was checked: the opening opens
		return nil, fmt.Errorf("match %s: %w", r.A.MatchID, err)
	}

	r.progress(protocol.PhaseJoining, 0)
	joined := r.invite(ctx, seats, &md)
	var outcome [2]protocol.Outcome
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case !joined[0] && !joined[1]:
		outcome = [2]protocol.Outcome{protocol.Loss, protocol.Loss}
		md.Termination = protocol.TerminationDoubleNoShow
	case !joined[0] || !joined[1]:
		loser := 0
		if joined[0] {
			loser = 1
		}
		outcome = technicalLoss(loser)
		md.Termination, md.Loser = protocol.TerminationNoShow, seats[loser].id
	default:
		r.progress(protocol.PhasePlaying, 0)
		state, err = r.loop(ctx, seats, state, &md)
		var le *lossError
		switch {
		case errors.As(err, &le):
			loser := 0
			if le.loser == seats[1].id {
				loser = 1
			}
			outcome = technicalLoss(loser)
			md.Termination, md.Loser = le.termination, le.loser
			if le.termination == protocol.TerminationTimeoutDraw {
				outcome, md.Loser = [2]protocol.Outcome{protocol.Draw, protocol.Draw}, ""
			}
		case err != nil:
			return nil, err
		default:
			outcome = state.Outcomes()
			md.Termination = protocol.TerminationNormal
		}
	}
	final, err := json.Marshal(state.Final())
	if err != nil {
		return nil, fmt.Errorf("match %s: final state: %w", r.A.MatchID, err)
	}
	md.FinalState = final
	md.FinishedAt = protocol.Now(time.Now())
	md.TotalMoves = len(md.Moves)
	rep := &Report{Outcome: map[string]string{}, Points: map[string]int{}, Metadata: md}
	sc := r.scoring()
	for i, s := range seats {
		rep.Outcome[s.id] = string(outcome[i])
		rep.Points[s.id] = sc.Points(outcome[i])
	}
	r.announce(ctx, seats, rep)
	return rep, nil
}

func (r *MatchRunner) progress(phase string, step int) {
	if r.Progress != nil {
		r.Progress(phase, step)
	}
}

func technicalLoss(loser int) [2]protocol.Outcome {
	out := [2]protocol.Outcome{protocol.Win, protocol.Win}
	out[loser] = protocol.Loss
	return out
}

func (r *MatchRunner) scoring() protocol.Scoring {
	if r.A.Scoring != nil {
		return *r.A.Scoring
	}
	return protocol.Scoring{Win: 3, Draw: 1, Loss: 0}
}

// playerRetry retries a call to a player whose connection failed (reset, refused, cut
// on the way, as when the relay connection of an outbound agent drops): twice, quickly,
// within the call's deadline. The same request goes again, which a player answers as
// before; a player that answered, or refused, is never asked twice.
var playerRetry = protocol.RetryPolicy{Attempts: 3, Backoff: 100 * time.Millisecond, MaxBackoff: 400 * time.Millisecond}

// callPlayer sends m to the player of s within deadline, retrying lost connections.
func (r *MatchRunner) callPlayer(ctx context.Context, s *seat, m *protocol.Message, deadline time.Duration) (*protocol.Message, error) {
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	return r.Caller.Call(ctx, s.url, m, protocol.CallOptions{Retry: playerRetry, Peer: protocol.PlayerSender(s.id)})
}

func (r *MatchRunner) joinTimeout() time.Duration {
	if r.A.Deadlines != nil && r.A.Deadlines.JoinAckMS > 0 {
		return time.Duration(r.A.Deadlines.JoinAckMS) * time.Millisecond
	}
	return r.JoinTimeout
}

func (r *MatchRunner) moveTimeout() time.Duration {
	if r.A.Deadlines != nil && r.A.Deadlines.MoveMS > 0 {
		return time.Duration(r.A.Deadlines.MoveMS) * time.Millisecond
	}
	return r.MoveTimeout
}

func (r *MatchRunner) policy() string {
	if r.A.IllegalMovePolicy != "" {
		return r.A.IllegalMovePolicy
	}
	if r.Policy != "" {
		return r.Policy
	}
	return protocol.PolicyLoss
}

func (r *MatchRunner) penalties() protocol.Penalties {
	if r.A.Penalties != nil {
		return *r.A.Penalties
	}
	return r.Penalties
}

// message builds a request to a player with the match context and its credential.
func (r *MatchRunner) message(s *seat, messageType string, payload any) (*protocol.Message, error) {
	m, err := protocol.NewMessage(messageType, protocol.RefereeSender(r.RefereeID), payload)
	if err != nil {
		return nil, err
	}
	e := &m.Envelope
	e.MatchID, e.GameType, e.RoundID, e.LeagueID, e.AuthToken = r.A.MatchID, r.A.GameType, r.A.RoundID, r.LeagueID, s.credential
	return m, nil
}

// checkAnswer refuses an answer from another sender or naming another match. Its
// auth_token may be the player's match credential, the player's own league token (a
// player following seed 004 §8.2: its HMAC over the match id is the credential), or
// empty (agents that send none); any other value is refused. Without a credential
// (the League Manager sent none) there is nothing to check a token against.
func checkAnswer(s *seat, ans *protocol.Message, matchID string) error {
	e := ans.Envelope
	if e.Sender != protocol.PlayerSender(s.id) {
		return fmt.Errorf("answer from %s, expected %s", e.Sender, protocol.PlayerSender(s.id))
	}
	if e.MatchID != "" && e.MatchID != matchID {
		return fmt.Errorf("answer names match %s", e.MatchID)
	}
	if e.AuthToken == "" || s.credential == "" || protocol.TokenEqual(e.AuthToken, s.credential) {
		return nil
	}
	if protocol.TokenEqual(protocol.MatchCredential(e.AuthToken, matchID), s.credential) {
		return nil
	}
	return errors.New("answer carries neither the match credential nor the player's token")
}

// invite sends GAME_INVITATION to both players at once; a player joins by answering
// GAME_JOIN_ACK accepted within the join deadline.
func (r *MatchRunner) invite(ctx context.Context, seats [2]*seat, md *protocol.GameMetadata) [2]bool {
	var joined [2]bool
	var mu sync.Mutex
	one := func(i int) {
		s, other := seats[i], seats[1-i]
		ok, detail := r.inviteOne(ctx, s, other)
		mu.Lock()
		defer mu.Unlock()
		joined[i] = ok
		if !ok && ctx.Err() == nil {
			md.Violations = append(md.Violations, protocol.MatchViolation{Player: s.id, Kind: protocol.ViolationNoJoin, Action: protocol.ActionTechnicalLoss, Detail: detail})
		}
	}
	// The second invitation goes out on this goroutine (see loop).
	var wg sync.WaitGroup
	wg.Go(func() { one(0) })
	one(1)
	wg.Wait()
	return joined
}

func (r *MatchRunner) inviteOne(ctx context.Context, s, other *seat) (bool, string) {
	if s.url == "" {
		return false, "no endpoint"
	}
	m, err := r.message(s, protocol.GameInvitation, protocol.Invitation{
		MatchID: r.A.MatchID, GameType: r.A.GameType, Opponents: []string{other.id}, OpponentID: other.id,
		YourIndex: s.index, Players: r.A.Players, GameParams: r.A.GameParams,
		Deadlines: &protocol.Deadlines{JoinAckMS: int(r.joinTimeout().Milliseconds()), MoveMS: int(r.moveTimeout().Milliseconds())},
	})
	if err != nil {
		return false, "internal"
	}
	sent := time.Now()
	ans, err := r.callPlayer(ctx, s, m, r.joinTimeout())
	if err == nil && s.clock != nil {
		// A player answers an invitation at once: its round trip is the network's.
		s.clock.observeNetwork(time.Since(sent))
	}
	if err != nil {
		r.Log.Warn().Err(err).Str("player_id", s.id).Msg("invitation failed")
		return false, errorKind(err)
	}
	if err := checkAnswer(s, ans, r.A.MatchID); err != nil {
		return false, err.Error()
	}
	var ack protocol.JoinAck
	if ans.Envelope.MessageType != protocol.GameJoinAck || ans.Decode(&ack) != nil || ack.Status != protocol.StatusAccepted {
		return false, "invitation declined"
	}
	return true, ""
}

func errorKind(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline exceeded"
	case protocol.ReasonOf(err) != "":
		return "refused: " + string(protocol.ReasonOf(err))
	case errors.Is(err, protocol.ErrBadResponse):
		return "malformed answer"
	}
	return string(protocol.ViolationUnreachable)
}

// contextHash is the SHA-256 of the canonical JSON of what the player was shown.
func contextHash(view json.RawMessage) string {
	h := sha256.Sum256(view)
	return hex.EncodeToString(h[:])
}

// loop runs steps until the state is terminal. Simultaneous steps collect both moves
// against the same snapshot, then apply them together.
func (r *MatchRunner) loop(ctx context.Context, seats [2]*seat, state game.State, md *protocol.GameMetadata) (game.State, error) {
	step := 0
	for !state.Terminal() {
		if err := ctx.Err(); err != nil {
			return state, err
		}
		step++
		movers := state.ToMove()
		if len(movers) == 0 {
			return state, fmt.Errorf("step %d: the rules name no player to move in a game that is not over", step)
		}
		moves := make([]json.RawMessage, len(movers))
		records := make([]protocol.MoveRecord, len(movers))
		errs := make([]error, len(movers))
		var mu sync.Mutex
		collect := func(k, i int) {
			rec, mv, vs, err := r.collect(ctx, seats[i], state, step)
			mu.Lock()
			defer mu.Unlock()
			md.Violations = append(md.Violations, vs...)
			moves[k], records[k], errs[k] = mv, rec, err
		}
		// The last mover is asked on this goroutine, whose stack has already grown to
		// what a call needs; a fresh goroutine per move would grow its own every time.
		var wg sync.WaitGroup
		for k, i := range movers[:len(movers)-1] {
			wg.Go(func() { collect(k, i) })
		}
		collect(len(movers)-1, movers[len(movers)-1])
		wg.Wait()
		// With simultaneous moves both may fail; the first mover in seat order is judged first.
		for _, err := range errs {
			if err != nil {
				return state, err
			}
		}
		next, err := state.Apply(moves)
		if err != nil {
			return state, fmt.Errorf("apply step %d: %w", step, err)
		}
		state = next
		md.Moves = append(md.Moves, records...)
		md.Steps = step
		r.progress(protocol.PhasePlaying, step)
		if r.OnMove != nil {
			for _, rec := range records {
				r.OnMove(rec, state)
			}
		}
	}
	return state, nil
}

// collect obtains one player's move for a step, applying the deadline ladder: warnings
// (the request re-sent with a fresh deadline), then a forced move, then a technical loss.
func (r *MatchRunner) collect(ctx context.Context, s *seat, state game.State, step int) (protocol.MoveRecord, json.RawMessage, []protocol.MatchViolation, error) {
	var vs []protocol.MatchViolation
	pen := r.penalties()
	// A view that cannot be encoded is left empty: requestMove then fails as internal.
	view, _ := json.Marshal(state.Context(s.index))
	hash := contextHash(view)
	warning := ""
	violation := func(kind protocol.ViolationKind, action protocol.ViolationAction, detail string) {
		vs = append(vs, protocol.MatchViolation{Step: step, Player: s.id, Kind: kind, Action: action, Detail: detail})
	}
	for {
		start := time.Now()
		raw, kind, detail, err := r.requestMove(ctx, s, view, hash, step, warning)
		if ctx.Err() != nil {
			return protocol.MoveRecord{}, nil, vs, ctx.Err()
		}
		took := time.Since(start)
		elapsed := took.Milliseconds()
		var stamp clockStamp
		if s.clock != nil {
			// Under a clock the time is charged whatever came back; a player out of time,
			// or silent past its clock, has lost on time (no warning ladder).
			var flagged bool
			stamp.rtt, stamp.measured = s.clock.network, s.clock.measured
			stamp.credit, flagged = s.clock.charge(took)
			// A move's round trip bounds the network's share too: a player that delays
			// its invitation's answer gains no credit once it has answered a move faster.
			s.clock.observeNetwork(took)
			if flagged || errors.Is(err, context.DeadlineExceeded) {
				if !game.CanWin(state, 1-s.index) {
					violation(protocol.ViolationTimeout, protocol.ActionDraw, "out of time on the clock, against an opponent who cannot win: a draw")
					return protocol.MoveRecord{}, nil, vs, &lossError{loser: s.id, termination: protocol.TerminationTimeoutDraw}
				}
				violation(protocol.ViolationTimeout, protocol.ActionTechnicalLoss, "out of time on the clock")
				return protocol.MoveRecord{}, nil, vs, &lossError{loser: s.id, termination: protocol.TerminationTimeout}
			}
			stamp.left = s.clock.show().RemainingMS
		}
		if err == nil {
			mv, perr := state.ParseMove(s.index, raw)
			if perr == nil {
				s.lastResult = &protocol.LastResult{StepNumber: &step, Intent: protocol.IntentMove, Outcome: protocol.MoveSuccess, Move: mv}
				return stamp.on(protocol.MoveRecord{Step: step, Player: s.id, Move: mv, Outcome: protocol.MoveSuccess, ElapsedMS: elapsed, Metadata: s.lastMeta}, s.clock != nil), mv, vs, nil
			}
			kind = protocol.ViolationInvalidMove
			if errors.Is(perr, game.ErrMalformedMove) {
				kind = protocol.ViolationMalformedMove
			}
			detail = perr.Error()
			if r.policy() == protocol.PolicyLoss {
				violation(kind, protocol.ActionTechnicalLoss, detail)
				return protocol.MoveRecord{}, nil, vs, &lossError{loser: s.id, termination: protocol.TerminationIllegalMove}
			}
		}
		// A timeout, an unreachable player, a stale answer, or (policy forced) an illegal move.
		s.timeouts++
		switch {
		case s.timeouts <= pen.MoveWarnings:
			violation(kind, protocol.ActionWarning, detail)
			warning = fmt.Sprintf("%s at step %d: request re-sent with a fresh deadline (warning %d of %d)", kind, step, s.timeouts, pen.MoveWarnings)
			s.lastResult = &protocol.LastResult{StepNumber: &step, Intent: protocol.IntentMove, Outcome: outcomeOf(kind), Reason: warning}
			continue
		case s.timeouts <= pen.MoveWarnings+pen.ForcedMoves:
			mv := state.ForcedMove(s.index)
			violation(kind, protocol.ActionForcedMove, detail)
			s.lastResult = &protocol.LastResult{StepNumber: &step, Intent: protocol.IntentMove, Outcome: protocol.MoveForced,
				Reason: string(kind) + ": the first legal move was played for you", Move: mv}
			return stamp.on(protocol.MoveRecord{Step: step, Player: s.id, Move: mv, Outcome: protocol.MoveForced, ElapsedMS: elapsed}, s.clock != nil), mv, vs, nil
		default:
			violation(kind, protocol.ActionTechnicalLoss, detail)
			return protocol.MoveRecord{}, nil, vs, &lossError{loser: s.id, termination: protocol.TerminationTimeout}
		}
	}
}

// outcomeOf is what last_result says of an answer that drew a warning.
func outcomeOf(kind protocol.ViolationKind) protocol.MoveOutcome {
	if kind.IllegalMove() {
		return protocol.MoveInvalid
	}
	return protocol.MoveTimeout
}

// requestMove sends one REQUEST_MOVE. On failure it returns the violation kind.
func (r *MatchRunner) requestMove(ctx context.Context, s *seat, view json.RawMessage, hash string, step int, warning string) (json.RawMessage, protocol.ViolationKind, string, error) {
	s.lastMeta = nil
	if len(view) == 0 {
		err := errors.New("step context cannot be encoded")
		return nil, protocol.ViolationInternal, err.Error(), err
	}
	deadline := r.moveTimeout()
	var clocks *protocol.Clocks
	if s.clock != nil {
		deadline = s.clock.deadline()
		clocks = &protocol.Clocks{You: s.clock.show(), Opponent: s.other.clock.show(), IncrementMS: s.clock.tc.IncrementMS}
	}
	m, err := r.message(s, protocol.RequestMove, protocol.MoveRequest{
		StepNumber: step, StepContext: view, ContextHash: hash,
		DeadlineMS: int(deadline.Milliseconds()), Deadline: protocol.Now(time.Now().Add(deadline)),
		LastResult: s.lastResult, Warning: warning, Clocks: clocks,
	})
	if err != nil {
		return nil, protocol.ViolationInternal, err.Error(), err
	}
	ans, err := r.callPlayer(ctx, s, m, deadline)
	if err != nil {
		kind := protocol.ViolationUnreachable
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			kind = protocol.ViolationTimeout
		case errors.Is(err, protocol.ErrBadResponse):
			// A garbage answer is judged as a malformed move below when it has a payload.
			if ans != nil {
				move, kind, detail, err := r.answerMove(s, ans, hash, step)
				// What comes with an answer that broke its schema is not kept.
				s.lastMeta = nil
				return move, kind, detail, err
			}
			kind = protocol.ViolationMalformedAnswer
		case protocol.ReasonOf(err) != "":
			kind = protocol.ViolationRefused
		}
		return nil, kind, errorKind(err), err
	}
	return r.answerMove(s, ans, hash, step)
}

// answerMove extracts move_payload from a MOVE_RESPONSE, refusing an answer for
// another step or another context as stale.
func (r *MatchRunner) answerMove(s *seat, ans *protocol.Message, hash string, step int) (json.RawMessage, protocol.ViolationKind, string, error) {
	if err := checkAnswer(s, ans, r.A.MatchID); err != nil {
		return nil, protocol.ViolationStaleAnswer, err.Error(), err
	}
	var p protocol.MoveAnswer
	if err := ans.Decode(&p); err != nil {
		return json.RawMessage("null"), "", "", nil
	}
	s.lastMeta = p.Metadata
	if len(s.lastMeta) > maxMoveMetadata {
		// The result report must stay well inside the League Manager's 1 MiB body cap.
		s.lastMeta = json.RawMessage(`{"dropped":"metadata larger than 1024 bytes"}`)
	}
	if (p.StepNumber != nil && *p.StepNumber != step) || (p.ContextHash != "" && p.ContextHash != hash) {
		err := fmt.Errorf("answer for another step or context (step %d expected)", step)
		return nil, protocol.ViolationStaleAnswer, err.Error(), err
	}
	if len(p.MovePayload) == 0 {
		return json.RawMessage("null"), "", "", nil
	}
	return p.MovePayload, "", "", nil
}

// announce sends GAME_OVER to both players. Answers are not judged: a player that is
// gone or answers oddly cannot change a finished match.
func (r *MatchRunner) announce(ctx context.Context, seats [2]*seat, rep *Report) {
	var winner *string
	for id, o := range rep.Outcome {
		if protocol.Outcome(o) == protocol.Win && protocol.Outcome(rep.Outcome[otherID(seats, id)]) == protocol.Loss {
			winner = &id
		}
	}
	one := func(s *seat) {
		if s.url == "" {
			return
		}
		m, err := r.message(s, protocol.GameOver, protocol.GameResult{
			Outcome: protocol.Outcome(rep.Outcome[s.id]), FinalState: rep.Metadata.FinalState, Outcomes: rep.Outcome,
			Points: rep.Points, Reason: string(rep.Metadata.Termination), Winner: winner,
		})
		if err != nil {
			return
		}
		if _, err := r.callPlayer(ctx, s, m, r.joinTimeout()); err != nil && !errors.Is(err, protocol.ErrBadResponse) {
			r.Log.Debug().Err(err).Str("player_id", s.id).Msg("game over not delivered")
		}
	}
	// The second notice goes out on this goroutine (see loop).
	var wg sync.WaitGroup
	wg.Go(func() { one(seats[0]) })
	one(seats[1])
	wg.Wait()
}

func otherID(seats [2]*seat, id string) string {
	if seats[0].id == id {
		return seats[1].id
	}
	return seats[0].id
}
