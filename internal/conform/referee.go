package conform

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
)

// toolPlayers are the players the tool plays in a referee's matches; the first moves
// first (players[0]).
var toolPlayers = [2]string{"conform-p1", "conform-p2"}

// Penalties the tool's assignments ask for: room for both bad answers of the third
// match before a referee that follows them would force a move.
const (
	moveWarnings = 2
	forcedMoves  = 1
)

// refereeChecks are the checks of `league conform referee`, in report order.
var refereeChecks = []checkDef{
	{id: "referee.register.schema", level: Required, hint: "send REGISTER_REFEREE_REQUEST as schemas/register_referee_request.json says: envelope sender referee:<id>, UTC timestamp, UUID v4 conversation_id, no auth_token; payload referee_id and endpoint_url"},
	{id: "referee.register.sender", level: Required, hint: `the envelope sender must be "referee:" followed by the payload's referee_id`},
	{id: "referee.register.game_types", level: Required, hint: "list the game in game_types, or leave game_types out to take any game"},
	{id: "referee.register.endpoint", level: Required, hint: "register the URL your server listens on, and serve it by the time you registered (at most 5 s later)"},
	{id: "referee.outbound.register", level: Recommended, hint: outboundHint},
	{id: "referee.features", level: Recommended, hint: `announce "features": ["match_credentials", ...] in REGISTER_REFEREE_REQUEST and show each player its credential (protocol/README.md, "Features")`},
	{id: "referee.league.schema", level: Required, pass: "%d request(s) to the League Manager after registering were valid against their schemas", hint: "validate what you send the League Manager against schemas/ (MATCH_RESULT_REPORT needs auth_token and match_id in the envelope)"},
	{id: "referee.league.token", level: Required, pass: "%d request(s) to the League Manager after registering carried the referee's token", hint: "put the auth_token of REGISTER_REFEREE_RESPONSE in the envelope of every later request to the League Manager (seed 004 §8.1)"},
	{id: "referee.assignment", level: Required, pass: "%d MATCH_ASSIGNMENT acknowledged", hint: `answer MATCH_ASSIGNMENT synchronously with MATCH_ASSIGNMENT_ACK, payload {"status": "acknowledged", "match_id": <the match>}`},
	{id: "referee.answer.jsonrpc", level: Required, pass: "%d answer(s) were JSON-RPC 2.0 responses with the request's id", hint: `answer every request with HTTP 200 and {"jsonrpc": "2.0", "id": <the request's id>, "result": {...}} or "error"`},
	{id: "referee.answer.conversation_id", level: Required, pass: "%d answer(s) echoed the request's conversation_id", hint: "copy conversation_id from the request's envelope into your answer's envelope (seed 004 §4.1)"},
	{id: "referee.answer.sender", level: Required, pass: "%d answer(s) came from referee:<id>", hint: `set the envelope sender of every answer to "referee:<your id>"`},
	{id: "referee.answer.schema", level: Required, pass: "%d answer(s) were valid against their schemas", hint: "validate MATCH_ASSIGNMENT_ACK against schemas/match_assignment_ack.json (envelope match_id is required)"},
	{id: "referee.assignment.auth_token", level: Recommended, hint: "when the League Manager announced signed_assignments, refuse a MATCH_ASSIGNMENT whose auth_token is not your token (UNAUTHORIZED)"},
	{id: "referee.invite", level: Required, pass: "both players invited to each of %d match(es)", hint: "send GAME_INVITATION to both players of the assignment, at player_endpoints, naming match_id and game_type in envelope and payload"},
	{id: "referee.messages.schema", level: Required, pass: "%d message(s) to the players were valid against their schemas", hint: "validate GAME_INVITATION, REQUEST_MOVE and GAME_OVER against schemas/ (envelope match_id and game_type are required)"},
	{id: "referee.messages.envelope", level: Required, pass: "%d message(s) to the players came from referee:<id> about their match", hint: `send every match message as "referee:<your id>" with the assignment's match_id and game_type`},
	{id: "referee.credentials", level: Recommended, pass: "%d message(s) to the players showed that player's match credential", hint: "put match_credentials[player_id] of MATCH_ASSIGNMENT in auth_token of every message to that player"},
	{id: "referee.turns", level: Required, pass: "%d move request(s), each to the player the rules say moves", hint: "ask moves only once both players joined, of the player to move by the rules (players[0] moves first), one request per step unless an answer was refused"},
	{id: "referee.step_context", level: Recommended, pass: "%d step_context(s) agreed with the rules", hint: "show the position the moves made lead to, in the game's step_context format (tic_tac_toe: board, your_mark, move_number)"},
	{id: "referee.outcome", level: Required, hint: "apply every move the players made with the game's rules and report the outcome they give, in GAME_OVER and MATCH_RESULT_REPORT"},
	{id: "referee.illegal_move", level: Required, hint: "a move the rules refuse loses the match for its mover at once (technical loss): end the match, the opponent wins"},
	{id: "referee.player_answer.conversation_id", level: Recommended, hint: "refuse a player's answer whose conversation_id is not your request's: it answers another request (ask again, or apply your timeout rules)"},
	{id: "referee.player_answer.auth_token", level: Recommended, hint: "refuse a player's answer whose auth_token is neither empty, the match credential, nor a token whose HMAC over match_id is the credential"},
	{id: "referee.game_over", level: Required, pass: "GAME_OVER sent to both players of each of %d match(es), each with its outcome", hint: "send GAME_OVER to both players when the match ends, payload outcome (the receiving player's) and final_state"},
	{id: "referee.result", level: Required, pass: "a MATCH_RESULT_REPORT came for each of %d match(es)", hint: "send MATCH_RESULT_REPORT to the League Manager with your token once the match ends, and again until it is acknowledged"},
	{id: "referee.result.fields", level: Required, pass: "%d report(s) named the right match, round, game and players, with points per the scoring", hint: "report envelope match_id and round_id of the assignment, payload game_type, players, outcome {player: win|loss|draw} and points per the scoring (3/1/0)"},
	{id: "referee.result.consistent", level: Required, pass: "every report of the %d match(es) said the same", hint: "send a match's result again unchanged, never a different one: a match has exactly one result"},
	{id: "referee.result.retry", level: Recommended, hint: "when the League Manager answers a report with INTERNAL or cannot be reached, send the same report again with backoff"},
	{id: "referee.result_reminder", level: Recommended, hint: "answer RESULT_REMINDER with RESULT_REMINDER_ACK {status, match_id, phase} and send the report again"},
	{id: "referee.heartbeats", level: Recommended, hint: "send HEARTBEAT_REQUEST with your token every heartbeat_interval_ms of the registration answer (with match_progress if announced)"},
	{id: "referee.move_events", level: Recommended, hint: "send MOVE_EVENT with your token for every applied move when you and the League Manager announced move_events"},
	{id: "referee.unknown_message", level: Required, hint: "answer a message type you do not know with a JSON-RPC error (e.g. -32015 UNSUPPORTED_MESSAGE) and keep serving"},
	{id: "referee.unknown_message.alive", level: Required, hint: "a message you do not understand must not stop your server: catch errors per request"},
	{id: "referee.oversized", level: Recommended, hint: "cap request bodies (ours take at most 1 MiB) and answer a larger one with HTTP 413"},
	{id: "referee.oversized.alive", level: Required, hint: "an oversized request must not stop your server: bound what you read per request"},
	{id: "referee.shutdown", level: Recommended, hint: `answer LEAGUE_SHUTDOWN with LEAGUE_SHUTDOWN_ACK, payload {"status": "acknowledged"} (seed 004 §6.5)`},
	{id: "referee.shutdown.leaves", level: Recommended, hint: "after LEAGUE_SHUTDOWN, finish or report the matches in progress, then close your server and exit (seed 004 §6.5)"},
}

// answerKind is how one of the tool's players answers a move request.
type answerKind int

const (
	answerValid answerKind = iota
	answerIllegal
	// answerOtherConversation carries another conversation_id.
	answerOtherConversation
	// answerWrongCredential carries a credential that is not the player's.
	answerWrongCredential
)

// pending is a move answer the referee has not yet been seen to apply or refuse.
type pending struct {
	step int
	kind answerKind
	move json.RawMessage
}

// refMatch is one match of the referee as the tool's players see it. Guarded by b.mu.
type refMatch struct {
	id, round string
	creds     [2]string
	// illegal has the second player's first move break the rules; probes are the bad
	// answers the first player still has to give before it answers properly.
	illegal bool
	probes  []answerKind
	// state is the match by the rules, from the moves the referee applied.
	state   game.State
	applied []json.RawMessage
	joined  [2]bool
	// over holds the outcome each player's GAME_OVER announced ("" before it came).
	over   [2]string
	overAt time.Time
	// failFirst has the tool's League Manager refuse the first report with INTERNAL.
	failFirst    bool
	lastActivity time.Time
	pending      map[int]*pending
	curStep      int
	// illegalGiven is set once the illegal answer was given; illegalBy is the seat whose
	// illegal move ended the match (-1 if none), illegalIgnored set when the referee
	// went on after it.
	illegalGiven   bool
	illegalBy      int
	illegalIgnored bool
	// judge is the check of the match's outcome ("" for none).
	judge string
	// lost says why the tool cannot follow the match by the rules any more.
	lost string
	// ended is set once the pending answers were settled at the end of play.
	ended bool
}

// refereeRun is one run against a referee: the tool is its League Manager and both
// players of its matches.
type refereeRun struct {
	s     *session
	v     *verdicts
	b     *board
	lm    *leagueSide
	g     game.Game
	reg   *registration
	creds bool
	urls  [2]string
	// tokens are the tool's players' league tokens, keys of their match credentials.
	tokens [2]string
	// gone says why the referee stopped answering ("" while it answers).
	gone string

	// Guarded by b.mu.
	matches map[string]*refMatch
}

// runReferee runs the referee subject: the tool serves as League Manager on
// opt.Listen and as two players on free loopback ports.
func (s *session) runReferee(ctx context.Context, rep *Report) error {
	g, err := game.Default().New(s.opt.Game, nil)
	if err != nil {
		return fmt.Errorf("game %q: %w", s.opt.Game, err)
	}
	r := &refereeRun{s: s, v: newVerdicts(refereeChecks), b: newBoard(), g: g, matches: map[string]*refMatch{}}
	var stops []func(context.Context) error
	defer func() { s.stop(ctx, stops...) }()
	for i, id := range toolPlayers {
		seat := &seatServer{r: r, seat: i}
		url, stop, err := s.serve("127.0.0.1:0", s.serveRPC(seat, seat.observe, s.log.With().Str("role", "player").Str("player_id", id).Logger()))
		if err != nil {
			return fmt.Errorf("serve as player %s: %w", id, err)
		}
		stops = append(stops, stop)
		r.urls[i], r.tokens[i] = url, uuid.NewString()
	}
	lm, stop, err := s.serveLeague(r.b, "referee", []string{protocol.FeatureSignedAssignments, protocol.FeatureMatchCredentials,
		protocol.FeatureHeartbeats, protocol.FeatureMatchProgress, protocol.FeatureResultReminders, protocol.FeatureMoveEvents})
	if err != nil {
		return err
	}
	stops = append(stops, stop)
	r.lm = lm
	r.run(ctx)
	lm.judgeInbox(r.v)
	r.v.emit(rep)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	return nil
}

func (r *refereeRun) run(ctx context.Context) {
	reg := r.lm.admit(ctx, r.v)
	if reg == nil {
		return
	}
	// Under the lock: the tool's players read it.
	r.b.mu.Lock()
	r.reg = reg
	r.b.mu.Unlock()
	r.creds = slices.Contains(reg.features, protocol.FeatureMatchCredentials)
	if r.creds {
		r.v.pass("referee.features", fmt.Sprintf("announces %v", reg.features))
	} else {
		r.v.failf("referee.features", "announces %s: players cannot tell its messages from anyone's", announced(reg.features, "match_credentials"))
		r.v.skip("referee.credentials", "the referee did not announce match_credentials")
		r.v.skip("referee.player_answer.auth_token", "the referee did not announce match_credentials")
	}
	m1 := r.newMatch("conform-m1", "conform-r1")
	m1.judge, m1.failFirst = "referee.outcome", true
	if !r.play(ctx, m1, "") {
		return
	}
	r.s.probeUnknown(ctx, r.v, "referee.unknown_message", reg.endpoint, r.leagueMessage(unknownType, map[string]any{"note": "a message type this agent cannot know"}, ""))
	m2 := r.newMatch("conform-m2", "conform-r2")
	m2.illegal, m2.judge = true, "referee.illegal_move"
	if !r.play(ctx, m2, "referee.unknown_message.alive") {
		return
	}
	r.s.probeOversized(ctx, r.v, "referee.oversized", reg.endpoint, r.leagueMessage(protocol.ResultReminder,
		map[string]any{"match_id": m1.id, "attempt": 1, "reason": "conformance check", "padding": padding()}, m1.id))
	m3 := r.newMatch("conform-m3", "conform-r3")
	if len(r.g.NewState(1).ToMove()) == 1 {
		m3.probes = []answerKind{answerOtherConversation}
		if r.creds {
			m3.probes = append(m3.probes, answerWrongCredential)
		}
	} else {
		why := "both players move at once in " + r.s.opt.Game + ": the probe needs a game whose players alternate"
		r.v.skip("referee.player_answer.conversation_id", why)
		r.v.skip("referee.player_answer.auth_token", why)
	}
	if !r.play(ctx, m3, "referee.oversized.alive") {
		return
	}
	r.forgedAssignment(ctx)
	r.extensions(ctx, m1)
	r.judgeResults(m1, m2, m3)
	r.lm.judgeShutdown(ctx, r.v, reg)
}

func (r *refereeRun) newMatch(id, round string) *refMatch {
	m := &refMatch{id: id, round: round, state: r.g.NewState(1), pending: map[int]*pending{}, illegalBy: -1}
	for i := range toolPlayers {
		m.creds[i] = protocol.MatchCredential(r.tokens[i], id)
	}
	return m
}

// lost records that the referee stopped answering; the rest of the run is skipped.
func (r *refereeRun) lost(why string) {
	if r.gone == "" {
		r.gone = why
		r.v.stop("the referee stopped answering (" + why + ")")
	}
}

// leagueMessage builds a message of the tool's League Manager to the referee.
func (r *refereeRun) leagueMessage(messageType string, payload any, matchID string) *protocol.Message {
	m := message(messageType, protocol.SenderLeagueManager, payload)
	m.Envelope.AuthToken, m.Envelope.LeagueID, m.Envelope.MatchID = r.reg.token, leagueID, matchID
	return m
}

// assignment is the MATCH_ASSIGNMENT of match id in round to the tool's players.
func (r *refereeRun) assignment(id, round string, creds [2]string) *protocol.Message {
	m := r.leagueMessage(protocol.MatchAssignment, protocol.Assignment{MatchID: id, RoundID: round, GameType: r.s.opt.Game,
		Players: toolPlayers[:], MatchSeed: 1, GameParams: map[string]any{}, Scoring: &scoring,
		PlayerEndpoints:   map[string]string{toolPlayers[0]: r.urls[0], toolPlayers[1]: r.urls[1]},
		MatchCredentials:  map[string]string{toolPlayers[0]: creds[0], toolPlayers[1]: creds[1]},
		Deadlines:         &protocol.Deadlines{JoinAckMS: int(callTimeout.Milliseconds()), MoveMS: int(r.s.opt.MoveTimeout.Milliseconds())},
		IllegalMovePolicy: protocol.PolicyLoss, Penalties: &protocol.Penalties{MoveWarnings: moveWarnings, ForcedMoves: forcedMoves},
	}, id)
	m.Envelope.RoundID, m.Envelope.GameType = round, r.s.opt.Game
	return m
}

// play assigns m, waits until it is played and reported, and judges it. alive names the
// liveness check the assignment's answer decides. It reports whether the run goes on.
func (r *refereeRun) play(ctx context.Context, m *refMatch, alive string) bool {
	req := r.assignment(m.id, m.round, m.creds)
	r.lm.addMatch(&leagueMatch{id: m.id, round: m.round, players: toolPlayers, refereeID: r.reg.id, failFirst: m.failFirst})
	r.b.mu.Lock()
	r.matches[m.id] = m
	m.lastActivity = time.Now()
	r.b.mu.Unlock()
	a := r.s.call(ctx, r.reg.endpoint, req, callTimeout, 1)
	if alive != "" {
		if a.err == nil {
			r.v.pass(alive, "still answered a MATCH_ASSIGNMENT afterwards")
		} else {
			r.v.failf(alive, "did not answer a MATCH_ASSIGNMENT afterwards: %s", a.problem())
		}
	}
	what := "answer to MATCH_ASSIGNMENT of " + m.id
	if !judgeFraming(r.v, "referee.answer", "referee.assignment", what, req, a, r.reg.sender) {
		if a.gone() {
			r.lost("MATCH_ASSIGNMENT: " + a.problem())
			return false
		}
		return true
	}
	var ack protocol.MatchAck
	decode(a.result.Payload, &ack)
	switch {
	case a.result.Envelope.MessageType != protocol.MatchAssignmentAck:
		r.v.failf("referee.assignment", "%s is %s, not MATCH_ASSIGNMENT_ACK", what, a.result.Envelope.MessageType)
		return true
	case ack.Status != protocol.StatusAcknowledged || ack.MatchID != m.id:
		r.v.failf("referee.assignment", "%s has status %q and match_id %q, not acknowledged and %s", what, ack.Status, ack.MatchID, m.id)
		return true
	}
	r.v.ok("referee.assignment")
	r.awaitMatch(ctx, m)
	r.judgeMatch(m)
	return ctx.Err() == nil
}

// awaitMatch waits until both players got GAME_OVER and a report came, or the referee
// stops: no message for the match within the stall bound while playing, no report
// within ResultTimeout once play is over.
func (r *refereeRun) awaitMatch(ctx context.Context, m *refMatch) {
	stall := max(r.s.opt.MoveTimeout, callTimeout)
	for {
		r.b.mu.Lock()
		over := m.over[0] != "" && m.over[1] != ""
		reported := len(r.lm.matches[m.id].reports) > 0
		deadline := m.lastActivity.Add(stall + r.s.opt.ResultTimeout)
		switch {
		case over && reported:
			r.b.mu.Unlock()
			return
		case over:
			deadline = m.overAt.Add(r.s.opt.ResultTimeout)
		case reported:
			// GAME_OVER may follow the report; it has no reason to be slow.
			deadline = m.lastActivity.Add(callTimeout)
		}
		changed := r.b.changed
		r.b.mu.Unlock()
		wait := time.Until(deadline)
		if wait <= 0 {
			return
		}
		timer := time.NewTimer(wait)
		select {
		case <-changed:
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
		if ctx.Err() != nil {
			return
		}
	}
}

// seatServer is one of the tool's players in the referee's matches.
type seatServer struct {
	r    *refereeRun
	seat int
}

// observe records every message the referee sent this player.
func (p *seatServer) observe(rc received) {
	r := p.r
	env := rc.msg.Envelope
	switch {
	case rc.notRequest != "":
		r.v.failf("referee.messages.schema", "a request to %s is not JSON-RPC: %s", toolPlayers[p.seat], rc.notRequest)
	case len(rc.violations) > 0:
		r.v.failf("referee.messages.schema", "%s to %s breaks its schema: %s", env.MessageType, toolPlayers[p.seat], strings.Join(rc.violations, "; "))
	default:
		r.v.ok("referee.messages.schema")
	}
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	if m := r.matches[env.MatchID]; m != nil {
		m.lastActivity = time.Now()
		r.b.notify()
	}
}

// Handle implements protocol.Handler: a schema-valid message of the referee to this
// player.
func (p *seatServer) Handle(_ context.Context, msg *protocol.Message) (*protocol.Message, error) {
	r := p.r
	env := &msg.Envelope
	who := toolPlayers[p.seat]
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	defer r.b.notify()
	m := r.matches[env.MatchID]
	if m == nil || r.reg == nil {
		return nil, protocol.Errorf(protocol.ReasonUnauthorized, "%s was assigned no match %q", who, env.MatchID)
	}
	what := fmt.Sprintf("%s to %s in %s", env.MessageType, who, m.id)
	switch {
	case env.Sender != r.reg.sender:
		r.v.failf("referee.messages.envelope", "%s has sender %q, not %q", what, env.Sender, r.reg.sender)
		return nil, protocol.Errorf(protocol.ReasonUnauthorized, "%s is not the referee of %s", env.Sender, m.id)
	case env.GameType != "" && env.GameType != r.s.opt.Game:
		r.v.failf("referee.messages.envelope", "%s names game_type %q, the match plays %s", what, env.GameType, r.s.opt.Game)
	default:
		r.v.ok("referee.messages.envelope")
	}
	shown := env.AuthToken != "" && protocol.TokenEqual(env.AuthToken, m.creds[p.seat])
	switch {
	case !r.creds:
	case shown:
		r.v.ok("referee.credentials")
	case env.AuthToken == "":
		r.v.failf("referee.credentials", "%s shows no match credential", what)
	default:
		r.v.failf("referee.credentials", "%s shows a credential that is not %s's", what, who)
	}
	var out *protocol.Message
	var err error
	switch env.MessageType {
	case protocol.GameInvitation:
		out, err = p.invitation(m, msg)
	case protocol.RequestMove:
		out, err = p.requestMove(m, msg)
	case protocol.GameOver:
		out, err = p.gameOver(m, msg)
	default:
		return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "a player does not accept %s", env.MessageType)
	}
	if out != nil {
		out.Envelope.MatchID = m.id
		if shown && out.Envelope.AuthToken == "" {
			out.Envelope.AuthToken = m.creds[p.seat]
		}
	}
	return out, err
}

func (p *seatServer) reply(msg *protocol.Message, messageType string, payload any) (*protocol.Message, error) {
	out, err := msg.Reply(messageType, protocol.PlayerSender(toolPlayers[p.seat]), payload)
	if err != nil {
		return nil, fmt.Errorf("reply to %s: %w", msg.Envelope.MessageType, err)
	}
	return out, nil
}

// invitation joins the match; callers hold b.mu.
func (p *seatServer) invitation(m *refMatch, msg *protocol.Message) (*protocol.Message, error) {
	var inv protocol.Invitation
	decode(msg.Payload, &inv)
	if inv.MatchID != m.id || inv.GameType != p.r.s.opt.Game {
		p.r.v.failf("referee.invite", "GAME_INVITATION to %s in %s names match_id %q and game_type %q in its payload", toolPlayers[p.seat], m.id, inv.MatchID, inv.GameType)
	}
	m.joined[p.seat] = true
	return p.reply(msg, protocol.GameJoinAck, protocol.JoinAck{Status: protocol.StatusAccepted, MatchID: m.id})
}

// requestMove answers a move request as m's probes say, after settling what the
// referee made of the answers of the step before; callers hold b.mu.
func (p *seatServer) requestMove(m *refMatch, msg *protocol.Message) (*protocol.Message, error) {
	r, seat, who := p.r, p.seat, toolPlayers[p.seat]
	// Handle sees schema-valid requests only: step_number is there.
	var req protocol.MoveRequest
	decode(msg.Payload, &req)
	step := req.StepNumber
	switch {
	case m.over[0] != "" || m.over[1] != "":
		r.v.failf("referee.turns", "asked %s for a move of %s after GAME_OVER", who, m.id)
		return nil, protocol.Errorf(protocol.ReasonStaleStep, "match %s is over", m.id)
	case !m.joined[0] || !m.joined[1]:
		r.v.failf("referee.turns", "asked %s for a move of %s before both players joined", who, m.id)
	}
	switch pend := m.pending[seat]; {
	case pend != nil && step == m.curStep:
		p.askedAgain(m, pend)
	case len(m.pending) > 0 && (step != m.curStep || m.stepAnswered()):
		// The referee moved on: see what it made of the step's answers.
		r.settle(m, seat, req.StepContext)
	}
	m.curStep = step
	if m.lost == "" {
		if !slices.Contains(m.state.ToMove(), seat) {
			r.v.failf("referee.turns", "asked %s for step %d of %s, but the rules say %s moves", who, step, m.id, movers(m.state))
			m.lost = "it asked a player who is not to move"
		} else {
			r.v.ok("referee.turns")
			if why, ok := covers(req.StepContext, m.state.Context(seat)); ok {
				r.v.ok("referee.step_context")
			} else {
				r.v.failf("referee.step_context", "step %d of %s shown to %s: %s", step, m.id, who, why)
			}
		}
	}
	kind, move := p.answer(m, req.StepContext)
	if move == nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "step_context is not a playable %s position", r.s.opt.Game)
	}
	m.pending[seat] = &pending{step: step, kind: kind, move: move}
	ans := map[string]any{"move_payload": move, "step_number": step}
	if req.ContextHash != "" {
		ans["context_hash"] = req.ContextHash
	}
	out, err := p.reply(msg, protocol.MoveResponse, ans)
	if err != nil {
		return nil, err
	}
	switch kind {
	case answerOtherConversation:
		out.Envelope.ConversationID = uuid.NewString()
	case answerWrongCredential:
		out.Envelope.AuthToken = protocol.MatchCredential("not-"+r.tokens[seat], m.id)
	}
	return out, nil
}

// answer picks this player's answer to a move request; callers hold b.mu.
func (p *seatServer) answer(m *refMatch, stepContext json.RawMessage) (answerKind, json.RawMessage) {
	switch {
	case m.lost != "":
		// The tool no longer knows the position: play from what the referee shows.
		legal, err := p.r.g.LegalMoves(stepContext)
		if err != nil || len(legal) == 0 {
			return answerValid, nil
		}
		return answerValid, legal[0]
	case m.illegal && p.seat == 1 && !m.illegalGiven:
		m.illegalGiven = true
		return answerIllegal, illegalMove(m.state, p.seat, m.applied)
	case p.seat == 0 && len(m.probes) > 0:
		kind := m.probes[0]
		m.probes = m.probes[1:]
		return kind, lastLegal(p.r.g, m.state, p.seat)
	}
	return answerValid, m.state.ForcedMove(p.seat)
}

// askedAgain handles a request for the step a player already answered; callers hold b.mu.
func (p *seatServer) askedAgain(m *refMatch, pend *pending) {
	r, who := p.r, toolPlayers[p.seat]
	switch pend.kind {
	case answerValid:
		r.v.failf("referee.turns", "asked %s again for step %d of %s after a valid answer", who, pend.step, m.id)
	case answerIllegal:
		r.v.failf("referee.illegal_move", "asked %s again for step %d of %s after its illegal move, instead of ending the match", who, pend.step, m.id)
		m.illegalIgnored = true
	default:
		r.v.pass(probeCheck(pend.kind), fmt.Sprintf("did not take %s's answer %s as its move: it asked again", who, probeText(pend.kind)))
	}
	delete(m.pending, p.seat)
}

// gameOver records the outcome announced to this player; callers hold b.mu.
func (p *seatServer) gameOver(m *refMatch, msg *protocol.Message) (*protocol.Message, error) {
	var over protocol.GameResult
	decode(msg.Payload, &over)
	if !m.ended {
		m.ended = true
		p.r.settle(m, p.seat, nil)
	}
	if m.over[p.seat] == "" {
		m.over[p.seat] = string(over.Outcome)
		if m.over[1-p.seat] != "" {
			m.overAt = time.Now()
		}
	}
	return p.reply(msg, protocol.GameOverAck, protocol.Ack{Status: protocol.StatusAcknowledged})
}

// settle applies what the referee made of the answers of the step before, told by the
// position it now shows the player at seat (nil at the end of play); callers hold b.mu.
func (r *refereeRun) settle(m *refMatch, seat int, shown json.RawMessage) {
	defer clear(m.pending)
	if m.lost != "" {
		return
	}
	movers := m.state.ToMove()
	if len(movers) != 1 {
		r.settleTogether(m, movers, shown)
		return
	}
	mover := movers[0]
	pend := m.pending[mover]
	if pend == nil {
		if shown != nil {
			r.v.failf("referee.turns", "went on to %s in %s without asking %s for step %d", toolPlayers[seat], m.id, toolPlayers[mover], m.curStep)
			m.lost = "a player's turn was skipped"
		}
		return
	}
	forced := m.state.ForcedMove(mover)
	switch pend.kind {
	case answerValid:
		r.apply(m, pend.move)
	case answerIllegal:
		if shown == nil {
			m.illegalBy = mover
			return
		}
		r.v.failf("referee.illegal_move", "went on with %s after %s's illegal move at step %d, instead of ending the match", m.id, toolPlayers[mover], pend.step)
		m.illegalIgnored = true
		if !r.follow(m, seat, shown, forced) {
			m.lost = "the position after an illegal move matches no move"
		}
	default:
		id, who := probeCheck(pend.kind), toolPlayers[mover]
		switch {
		case shown == nil:
			r.v.pass(id, fmt.Sprintf("did not take %s's answer %s as its move: it ended the match", who, probeText(pend.kind)))
		case sameJSON(pend.move, forced):
			r.v.skip(id, "the bad answer's move is also the forced move: what the referee took cannot be told")
			r.apply(m, forced)
		case r.follow(m, seat, shown, pend.move):
			r.v.failf(id, "took %s's answer %s as its move at step %d of %s", who, probeText(pend.kind), pend.step, m.id)
		case r.follow(m, seat, shown, forced):
			r.v.pass(id, fmt.Sprintf("did not take %s's answer %s as its move: it played the forced move", who, probeText(pend.kind)))
		default:
			m.lost = "the position shown after a bad answer matches no move"
		}
	}
}

// settleTogether is settle for a step whose players move at once. The tool's players
// give only valid or illegal answers there, so no position has to be matched; callers
// hold b.mu.
func (r *refereeRun) settleTogether(m *refMatch, movers []int, shown json.RawMessage) {
	for _, i := range movers {
		if pend := m.pending[i]; pend != nil && pend.kind == answerIllegal {
			if shown == nil {
				m.illegalBy = i
				return
			}
			r.v.failf("referee.illegal_move", "went on with %s after %s's illegal move at step %d, instead of ending the match", m.id, toolPlayers[i], pend.step)
			m.illegalIgnored, m.lost = true, "the match went on after an illegal move"
			return
		}
	}
	moves := make([]json.RawMessage, len(movers))
	for k, i := range movers {
		pend := m.pending[i]
		if pend == nil {
			if shown != nil {
				r.v.failf("referee.turns", "went on in %s without asking %s for step %d", m.id, toolPlayers[i], m.curStep)
				m.lost = "a player's move was skipped"
			}
			return
		}
		moves[k] = pend.move
	}
	r.apply(m, moves...)
}

// stepAnswered reports whether every player to move gave an answer to the step.
func (m *refMatch) stepAnswered() bool {
	return !slices.ContainsFunc(m.state.ToMove(), func(i int) bool { return m.pending[i] == nil })
}

// follow applies move if the position it leads to is what the referee shows the player
// at seat, and reports whether it did; callers hold b.mu.
func (r *refereeRun) follow(m *refMatch, seat int, shown, move json.RawMessage) bool {
	next, err := m.state.Apply([]json.RawMessage{move})
	if err != nil {
		return false
	}
	if _, ok := covers(shown, next.Context(seat)); !ok {
		return false
	}
	r.apply(m, move)
	return true
}

// apply plays moves on the tool's copy of the match; callers hold b.mu.
func (r *refereeRun) apply(m *refMatch, moves ...json.RawMessage) {
	next, err := m.state.Apply(moves)
	if err != nil {
		m.lost = "the rules refuse a move the referee took: " + err.Error()
		return
	}
	m.state, m.applied = next, append(m.applied, moves...)
}

// covers reports whether every member of want is in got with the same value: the
// step_context a referee shows may carry more than the rules' own.
func covers(got json.RawMessage, want map[string]any) (string, bool) {
	var gm map[string]json.RawMessage
	if err := json.Unmarshal(got, &gm); err != nil || gm == nil {
		return "step_context is not an object", false
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		v, present := gm[k]
		if !present {
			return fmt.Sprintf("step_context lacks %q", k), false
		}
		if !sameJSON(v, want[k]) {
			wj, _ := json.Marshal(want[k])
			return fmt.Sprintf("step_context %q is %s, the rules say %s", k, snippet(v, 100), snippet(wj, 100)), false
		}
	}
	return "", true
}

func probeCheck(k answerKind) string {
	if k == answerWrongCredential {
		return "referee.player_answer.auth_token"
	}
	return "referee.player_answer.conversation_id"
}

func probeText(k answerKind) string {
	if k == answerWrongCredential {
		return "showing another player's credential"
	}
	return "carrying another conversation_id"
}

// movers names the players the rules say move in state.
func movers(state game.State) string {
	var out []string
	for _, i := range state.ToMove() {
		out = append(out, toolPlayers[i])
	}
	if len(out) == 0 {
		return "nobody (the match is over)"
	}
	return strings.Join(out, " and ")
}

// lastLegal is the last legal move of seat in state: a move other than the forced one
// (the first), so that what a referee applied can be told apart.
func lastLegal(g game.Game, state game.State, seat int) json.RawMessage {
	view, _ := json.Marshal(state.Context(seat))
	legal, err := g.LegalMoves(view)
	if err != nil || len(legal) == 0 {
		return state.ForcedMove(seat)
	}
	return legal[len(legal)-1]
}

// illegalMove is a move the rules refuse to seat in state: a move already made (an
// occupied cell), else one that is not a move at all.
func illegalMove(state game.State, seat int, applied []json.RawMessage) json.RawMessage {
	for _, mv := range applied {
		if _, err := state.ParseMove(seat, mv); err != nil {
			return mv
		}
	}
	return json.RawMessage(`"not a move"`)
}

// judgeMatch records the checks of one played match: invitations, GAME_OVER, a report,
// and the outcome by the rules.
func (r *refereeRun) judgeMatch(m *refMatch) {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	if !m.ended {
		m.ended = true
		r.settle(m, 0, nil)
	}
	switch {
	case m.joined[0] && m.joined[1]:
		r.v.ok("referee.invite")
	case m.joined[0]:
		r.v.failf("referee.invite", "invited %s to %s, not both players", toolPlayers[0], m.id)
	case m.joined[1]:
		r.v.failf("referee.invite", "invited %s to %s, not both players", toolPlayers[1], m.id)
	default:
		r.v.failf("referee.invite", "invited neither to %s, not both players", m.id)
	}
	for i, o := range m.over {
		if o == "" {
			r.v.failf("referee.game_over", "sent %s no GAME_OVER for %s", toolPlayers[i], m.id)
		}
	}
	if m.over[0] != "" && m.over[1] != "" {
		r.v.ok("referee.game_over")
	}
	reports := r.lm.matches[m.id].reports
	if len(reports) == 0 {
		r.v.failf("referee.result", "no MATCH_RESULT_REPORT for %s within %s of its end", m.id, r.s.opt.ResultTimeout)
	} else {
		r.v.ok("referee.result")
	}
	if m.judge == "" {
		return
	}
	want, why := r.expected(m)
	if want == nil {
		if why != "" {
			r.v.failf(m.judge, "%s: %s", m.id, why)
		}
		return
	}
	wantMap := map[string]string{toolPlayers[0]: string(want[0]), toolPlayers[1]: string(want[1])}
	for i, o := range m.over {
		if o != "" && o != string(want[i]) {
			r.v.failf(m.judge, "GAME_OVER of %s tells %s %q, the rules say %q", m.id, toolPlayers[i], o, want[i])
		}
	}
	if len(reports) > 0 && !maps.Equal(reports[0].payload.Outcome, wantMap) {
		r.v.failf(m.judge, "the report of %s says %s, the rules say %s", m.id, outcomeText(reports[0].payload.Outcome), outcomeText(wantMap))
	}
	switch {
	case r.v.failed(m.judge):
	case len(reports) == 0:
		r.v.skip(m.judge, "no report of "+m.id+" came to compare with the rules (see referee.result)")
	case m.over[0] == "" || m.over[1] == "":
		r.v.skip(m.judge, "not every player of "+m.id+" got GAME_OVER to compare with the rules (see referee.game_over)")
	case m.illegalBy >= 0:
		r.v.pass(m.judge, fmt.Sprintf("%s's illegal move lost it %s: %s in GAME_OVER and the report", toolPlayers[m.illegalBy], m.id, outcomeText(wantMap)))
	default:
		r.v.pass(m.judge, fmt.Sprintf("GAME_OVER and the report of %s say %s, as the rules give after %d move(s)", m.id, outcomeText(wantMap), len(m.applied)))
	}
}

// outcomeText renders outcomes by player as "conform-p1 win, conform-p2 loss".
func outcomeText(o map[string]string) string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(o)) {
		out = append(out, id+" "+o[id])
	}
	return strings.Join(out, ", ")
}

// expected is m's outcome by the rules, or nil and why it cannot be told ("" when a
// check already failed for it); callers hold b.mu.
func (r *refereeRun) expected(m *refMatch) (*[2]protocol.Outcome, string) {
	switch {
	case m.illegalIgnored:
		return nil, ""
	case m.lost != "":
		return nil, "the tool could not follow the match by the rules: " + m.lost
	case m.illegalBy >= 0:
		out := [2]protocol.Outcome{protocol.Win, protocol.Win}
		out[m.illegalBy] = protocol.Loss
		return &out, ""
	case m.illegal:
		return nil, fmt.Sprintf("the match ended after %d move(s), before %s could make its illegal move", len(m.applied), toolPlayers[1])
	case m.state.Terminal():
		out := m.state.Outcomes()
		return &out, ""
	}
	return nil, fmt.Sprintf("the match ended after %d move(s) while the rules say it goes on", len(m.applied))
}

// judgeResults records the checks of every report taken: fields and consistency.
func (r *refereeRun) judgeResults(ms ...*refMatch) {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	why := "no report came (see referee.result)"
	r.v.skip("referee.result.fields", why)
	r.v.skip("referee.result.consistent", why)
	for _, m := range ms {
		reports := r.lm.matches[m.id].reports
		for _, rep := range reports {
			if problems := r.reportProblems(m, rep); len(problems) > 0 {
				r.v.failf("referee.result.fields", "report of %s: %s", m.id, strings.Join(problems, "; "))
			} else {
				r.v.ok("referee.result.fields")
			}
		}
		if len(reports) == 0 {
			continue
		}
		same := true
		for _, rep := range reports[1:] {
			if !maps.Equal(rep.payload.Outcome, reports[0].payload.Outcome) || !maps.Equal(rep.payload.Points, reports[0].payload.Points) {
				same = false
				r.v.failf("referee.result.consistent", "%s was reported as %s (points %v), then as %s (points %v)", m.id,
					outcomeText(reports[0].payload.Outcome), reports[0].payload.Points, outcomeText(rep.payload.Outcome), rep.payload.Points)
			}
		}
		if same {
			r.v.ok("referee.result.consistent")
		}
	}
}

// reportProblems lists what is wrong with a report of m.
func (r *refereeRun) reportProblems(m *refMatch, rep reportSeen) []string {
	var out []string
	env, p := rep.env, rep.payload
	switch {
	case env.RoundID == "" && p.RoundID == "":
		out = append(out, "names no round_id (seed 004 §4.2: the envelope carries it)")
	case env.RoundID != "" && env.RoundID != m.round, p.RoundID != "" && p.RoundID != m.round:
		out = append(out, fmt.Sprintf("names round %q/%q, not %s", env.RoundID, p.RoundID, m.round))
	}
	if p.MatchID != "" && p.MatchID != m.id {
		out = append(out, fmt.Sprintf("payload names match %q", p.MatchID))
	}
	if p.GameType != r.s.opt.Game {
		out = append(out, fmt.Sprintf("game_type %q, not %s", p.GameType, r.s.opt.Game))
	}
	if err := protocol.CheckResult(&p, toolPlayers, &scoring); err != nil {
		out = append(out, err.Error())
	}
	return out
}

// forgedAssignment sends an assignment carrying a token that is not the referee's.
func (r *refereeRun) forgedAssignment(ctx context.Context) {
	const id = "conform-m4"
	req := r.assignment(id, "conform-r4", [2]string{protocol.MatchCredential(r.tokens[0], id), protocol.MatchCredential(r.tokens[1], id)})
	req.Envelope.AuthToken = uuid.NewString()
	a := r.s.call(ctx, r.reg.endpoint, req, callTimeout, 1)
	switch {
	case a.refused():
		r.v.pass("referee.assignment.auth_token", "refused a MATCH_ASSIGNMENT carrying another token: "+a.rpcErr.Error())
	case a.problem() == "":
		r.v.failf("referee.assignment.auth_token", "answered a MATCH_ASSIGNMENT carrying a token that is not its own with %s: anyone can make it run matches", a.result.Envelope.MessageType)
	default:
		r.v.failf("referee.assignment.auth_token", "MATCH_ASSIGNMENT carrying another token: %s", a.problem())
		if a.gone() {
			r.lost("MATCH_ASSIGNMENT: " + a.problem())
		}
	}
}

// extensions records the checks of the extensions the referee announced: the report
// sent again after INTERNAL, RESULT_REMINDER, heartbeats, move events.
func (r *refereeRun) extensions(ctx context.Context, m1 *refMatch) {
	reports := func() bool { return len(r.lm.matches[m1.id].reports) >= 2 }
	switch {
	case r.count(func() int { return len(r.lm.matches[m1.id].reports) }) == 0:
		r.v.skip("referee.result.retry", "no report of "+m1.id+" came")
	case r.b.await(ctx, r.s.opt.ResultTimeout, false, reports):
		r.v.pass("referee.result.retry", "sent the report of "+m1.id+" again after the League Manager answered INTERNAL")
	default:
		r.v.failf("referee.result.retry", "did not send the report of %s again within %s of an INTERNAL answer", m1.id, r.s.opt.ResultTimeout)
	}
	has := func(f string) bool { return slices.Contains(r.reg.features, f) }
	if has(protocol.FeatureResultReminders) {
		r.reminder(ctx, m1)
	} else {
		r.v.skip("referee.result_reminder", "the referee did not announce result_reminders")
	}
	beatWait := 2*heartbeatMS*time.Millisecond + time.Second
	switch {
	case !has(protocol.FeatureHeartbeats):
		r.v.skip("referee.heartbeats", "the referee did not announce heartbeats")
	case !r.b.await(ctx, beatWait, false, func() bool { return r.lm.heartbeats > 0 }):
		r.v.failf("referee.heartbeats", "announced heartbeats but sent no HEARTBEAT_REQUEST within %s (interval %d ms)", beatWait, heartbeatMS)
	case has(protocol.FeatureMatchProgress) && r.count(func() int { return r.lm.withProgress }) == 0:
		r.v.failf("referee.heartbeats", "announced match_progress but none of its %d heartbeat(s) carried match_progress", r.count(func() int { return r.lm.heartbeats }))
	default:
		r.v.pass("referee.heartbeats", fmt.Sprintf("sent %d HEARTBEAT_REQUEST(s)", r.count(func() int { return r.lm.heartbeats })))
	}
	switch n := r.count(func() int { return r.lm.moveEvents }); {
	case !has(protocol.FeatureMoveEvents):
		r.v.skip("referee.move_events", "the referee did not announce move_events")
	case n > 0:
		r.v.pass("referee.move_events", fmt.Sprintf("sent %d MOVE_EVENT(s)", n))
	default:
		r.v.fail("referee.move_events", "announced move_events but sent no MOVE_EVENT")
	}
}

// count reads a count under the lock.
func (r *refereeRun) count(f func() int) int {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	return f()
}

// reminder sends RESULT_REMINDER about m, reported already.
func (r *refereeRun) reminder(ctx context.Context, m *refMatch) {
	req := r.leagueMessage(protocol.ResultReminder, map[string]any{"match_id": m.id, "attempt": 1, "reason": "conformance check"}, m.id)
	a := r.s.call(ctx, r.reg.endpoint, req, callTimeout, 1)
	var ack protocol.ReminderAck
	switch {
	case a.problem() != "":
		r.v.failf("referee.result_reminder", "RESULT_REMINDER about %s: %s", m.id, a.problem())
		return
	case a.result.Envelope.MessageType != protocol.ResultReminderAck:
		r.v.failf("referee.result_reminder", "RESULT_REMINDER answered with %s, not RESULT_REMINDER_ACK", a.result.Envelope.MessageType)
		return
	case a.result.Envelope.ConversationID != req.Envelope.ConversationID:
		r.v.failf("referee.result_reminder", "RESULT_REMINDER_ACK has conversation_id %q, the request's is %q", a.result.Envelope.ConversationID, req.Envelope.ConversationID)
		return
	case len(a.violations) > 0:
		r.v.failf("referee.result_reminder", "RESULT_REMINDER_ACK breaks its schema: %s", strings.Join(a.violations, "; "))
		return
	}
	decode(a.result.Payload, &ack)
	if ack.MatchID != m.id {
		r.v.failf("referee.result_reminder", "RESULT_REMINDER_ACK names match %q, not %s", ack.MatchID, m.id)
		return
	}
	r.v.pass("referee.result_reminder", fmt.Sprintf("answered RESULT_REMINDER about %s with phase %q", m.id, ack.Phase))
}
