package conform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
	"github.com/agentleague/agentleague/referee"
)

// conformRefereeID is the referee the tool plays the player's matches as.
const conformRefereeID = "conform"

// opponentURL stands for the endpoint of the opponent the tool plays itself: the
// runner's calls to it never leave the process.
const opponentURL = "conform:opponent"

// unknownType is a message type no role knows.
const unknownType = "CONFORM_UNKNOWN_MESSAGE"

// oversizedBytes is the size of the oversized-body probe: over our 1 MiB cap, but
// within the 256 KiB a Go server discards after refusing, so the 413 can be read.
const oversizedBytes = protocol.MaxBodyBytes + 100<<10

// scoring is seed 004 §7.2's, which the tool's League Manager uses.
var scoring = protocol.Scoring{Win: 3, Draw: 1, Loss: 0}

// errNotTaken tells the match runner the player's answer failed the checks: the
// player loses the match, as it would with one of our referees.
var errNotTaken = errors.New("the answer failed the conformance checks")

// playerChecks are the checks of `league conform player`, in report order.
var playerChecks = []checkDef{
	{id: "player.register.schema", level: Required, hint: "send REGISTER_PLAYER_REQUEST as schemas/register_player_request.json says: envelope protocol, message_type, sender player:<id>, UTC timestamp, UUID v4 conversation_id, no auth_token; payload player_id and endpoint_url"},
	{id: "player.register.sender", level: Required, hint: `the envelope sender must be "player:" followed by the payload's player_id`},
	{id: "player.register.endpoint", level: Required, hint: "register the URL your server listens on (e.g. http://127.0.0.1:9001/mcp), and start serving no later than registering"},
	{id: "player.outbound.register", level: Recommended, hint: outboundHint},
	{id: "player.features", level: Recommended, hint: `announce "features": ["match_credentials"] in REGISTER_PLAYER_REQUEST and check the auth_token of referees' messages (protocol/README.md, "Authentication on every hop")`},
	{id: "player.league.schema", level: Required, pass: "%d request(s) to the League Manager after registering were valid against their schemas", hint: "validate what you send the League Manager against schemas/ (e.g. AGENT_READY_REQUEST needs auth_token)"},
	{id: "player.league.token", level: Required, pass: "%d request(s) to the League Manager after registering carried the player's token", hint: "put the auth_token of REGISTER_PLAYER_RESPONSE in the envelope of every later request to the League Manager (seed 004 §8.1), with the same sender"},
	{id: "player.join", level: Required, pass: "%d invitation(s) answered with GAME_JOIN_ACK accepted", hint: `answer GAME_INVITATION synchronously with GAME_JOIN_ACK, payload {"status": "accepted", "match_id": <the match>}`},
	{id: "player.move", level: Required, pass: "%d REQUEST_MOVE answered with a MOVE_RESPONSE carrying move_payload", hint: `answer REQUEST_MOVE synchronously with MOVE_RESPONSE, payload {"move_payload": ...}`},
	{id: "player.move.legal", level: Required, pass: "%d move(s), every one legal by the rules", hint: "compute the move from step_context with the game's rules (game): for tic_tac_toe an empty cell, {\"row\": r, \"col\": c}, 0-based"},
	{id: "player.move.deadline", level: Required, pass: "%d move(s) answered within the move deadline", hint: "answer within deadline_ms of REQUEST_MOVE; referees count a late answer as a timeout (warning, forced move, then technical loss)"},
	{id: "player.answer.jsonrpc", level: Required, pass: "%d answer(s) were JSON-RPC 2.0 responses with the request's id", hint: `answer every request with HTTP 200 and {"jsonrpc": "2.0", "id": <the request's id>, "result": {...}} or "error"`},
	{id: "player.answer.conversation_id", level: Required, pass: "%d answer(s) echoed the request's conversation_id", hint: "copy conversation_id from the request's envelope into your answer's envelope (seed 004 §4.1)"},
	{id: "player.answer.sender", level: Required, pass: "%d answer(s) came from player:<id>", hint: `set the envelope sender of every answer to "player:<your id>"`},
	{id: "player.answer.schema", level: Required, pass: "%d answer(s) were valid against their schemas", hint: "validate GAME_JOIN_ACK and MOVE_RESPONSE against schemas/game_join_ack.json and schemas/move_response.json (envelope match_id is required)"},
	{id: "player.answer.auth_token", level: Required, pass: "%d answer(s) carried no auth_token, the player's token or its match credential", hint: "leave auth_token out of answers to a referee, or put your own league token or the match credential the referee showed; never another value"},
	{id: "player.credentials.answer", level: Recommended, pass: "%d answer(s) showed the match credential back", hint: "answer a referee with the match credential it showed in auth_token (feature match_credentials)"},
	{id: "player.credentials.refuse", level: Recommended, hint: "refuse a referee message whose auth_token is not hex(HMAC-SHA256(your token, match_id)) with a JSON-RPC error (UNAUTHORIZED)"},
	{id: "player.match_query", level: Recommended, hint: "when an invitation shows no credential and the League Manager announced match_query, confirm the referee with QUERY_MATCH before joining"},
	{id: "player.stale_step", level: Required, hint: "a REQUEST_MOVE for a step already played must be answered (a move, or an error such as STALE_STEP) without crashing, and later steps still answered"},
	{id: "player.stale_step.answer", level: Recommended, hint: "refuse a request for a step already played with STALE_STEP, or echo its step_number in MOVE_RESPONSE so the referee can tell the answer is stale"},
	{id: "player.game_over", level: Required, pass: "%d GAME_OVER answered", hint: "answer GAME_OVER synchronously, e.g. with GAME_OVER_ACK; never with an error"},
	{id: "player.game_over.ack", level: Recommended, pass: "%d GAME_OVER answered with a valid GAME_OVER_ACK", hint: `answer GAME_OVER with GAME_OVER_ACK from "player:<id>", echoing conversation_id, payload {"status": "acknowledged"}`},
	{id: "player.unknown_message", level: Required, hint: "answer a message type you do not know with a JSON-RPC error (e.g. -32015 UNSUPPORTED_MESSAGE) and keep serving"},
	{id: "player.unknown_message.alive", level: Required, hint: "a message you do not understand must not stop your server: catch errors per request"},
	{id: "player.oversized", level: Recommended, hint: "cap request bodies (ours take at most 1 MiB) and answer a larger one with HTTP 413"},
	{id: "player.oversized.alive", level: Required, hint: "an oversized request must not stop your server: bound what you read per request"},
	{id: "player.shutdown", level: Recommended, hint: `answer LEAGUE_SHUTDOWN with LEAGUE_SHUTDOWN_ACK, payload {"status": "acknowledged"} (seed 004 §6.5)`},
	{id: "player.shutdown.leaves", level: Recommended, hint: "after acknowledging LEAGUE_SHUTDOWN, close your server and exit (seed 004 §6.5: all agents close their HTTP servers)"},
}

// playerRun is one run against a player: the tool is its League Manager and the referee
// of its matches (our referee's match runner), and plays the opponent itself.
type playerRun struct {
	s        *session
	v        *verdicts
	lm       *leagueSide
	g        game.Game
	reg      *registration
	opponent string
	// creds is set when the player announced match_credentials.
	creds bool
	// gone says why the player stopped answering ("" while it answers).
	gone string
}

// runPlayer runs the player subject: it serves as League Manager on opt.Listen and
// drives the player that registers there.
func (s *session) runPlayer(ctx context.Context, rep *Report) error {
	g, err := game.Default().New(s.opt.Game, nil)
	if err != nil {
		return fmt.Errorf("game %q: %w", s.opt.Game, err)
	}
	lm, stop, err := s.serveLeague(newBoard(), "player", []string{protocol.FeatureSignedAssignments, protocol.FeatureMatchCredentials, protocol.FeatureMatchQuery})
	if err != nil {
		return err
	}
	defer s.stop(ctx, stop)
	p := &playerRun{s: s, v: newVerdicts(playerChecks), lm: lm, g: g}
	p.run(ctx)
	lm.judgeInbox(p.v)
	p.v.emit(rep)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	return nil
}

func (p *playerRun) run(ctx context.Context) {
	reg := p.lm.admit(ctx, p.v)
	if reg == nil {
		return
	}
	p.reg = reg
	p.creds = slices.Contains(reg.features, protocol.FeatureMatchCredentials)
	if p.creds {
		p.v.pass("player.features", "announces match_credentials: it checks the credentials referees show")
	} else {
		p.v.failf("player.features", "announces %s: any process can pose as its referee", announced(reg.features, "match_credentials"))
		why := "the player did not announce match_credentials"
		p.v.skip("player.credentials.answer", why)
		p.v.skip("player.credentials.refuse", why)
		p.v.skip("player.match_query", why)
	}
	p.opponent = "conform-opponent"
	if reg.id == p.opponent {
		p.opponent = "conform-opponent-2"
	}
	m1 := &playerMatch{p: p, id: "conform-m1", round: "conform-r1", seat: 0, probes: true}
	if p.creds {
		m1.credential = protocol.MatchCredential(reg.token, m1.id)
	}
	if p.play(ctx, m1); p.gone != "" {
		return
	}
	p.probeUnknown(ctx)
	m2 := &playerMatch{p: p, id: "conform-m2", round: "conform-r2", seat: 1,
		aliveAfter: "player.unknown_message.alive", aliveMove: "player.oversized.alive"}
	m2.afterJoin = func(ctx context.Context) { p.probeOversized(ctx, m1) }
	if p.play(ctx, m2); p.gone != "" {
		return
	}
	if p.creds {
		p.judgeMatchQuery(m2)
	}
	p.lm.judgeShutdown(ctx, p.v, reg)
}

// lost records that the player stopped answering; the rest of the run is skipped.
func (p *playerRun) lost(why string) {
	if p.gone == "" {
		p.gone = why
		p.v.stop("the player stopped answering (" + why + ")")
	}
}

// play has the match runner referee m, and judges the player's moves by the runner's
// record of the match.
func (p *playerRun) play(ctx context.Context, m *playerMatch) {
	players := [2]string{}
	players[m.seat], players[1-m.seat] = p.reg.id, p.opponent
	p.lm.addMatch(&leagueMatch{id: m.id, round: m.round, players: players, refereeID: conformRefereeID})
	ctx, m.cancel = context.WithCancel(ctx)
	defer m.cancel()
	m.ctx = ctx
	runner := &referee.MatchRunner{RefereeID: conformRefereeID, LeagueID: leagueID, Game: p.g, Caller: m, Log: p.s.log,
		A: protocol.Assignment{MatchID: m.id, RoundID: m.round, GameType: p.s.opt.Game, Players: players[:], MatchSeed: 1,
			PlayerEndpoints:  map[string]string{p.reg.id: p.reg.endpoint, p.opponent: opponentURL},
			MatchCredentials: map[string]string{p.reg.id: m.credential}, Scoring: &scoring,
			Deadlines: &protocol.Deadlines{JoinAckMS: int(callTimeout.Milliseconds()), MoveMS: int(p.s.opt.MoveTimeout.Milliseconds())}}}
	rep, err := runner.Run(ctx)
	if err != nil {
		// The player left, or the run was interrupted: what it did is judged already.
		return
	}
	for _, mv := range rep.Metadata.Moves {
		if mv.Player == p.reg.id && mv.Outcome == protocol.MoveSuccess {
			p.v.ok("player.move.legal")
		}
	}
	for _, vi := range rep.Metadata.Violations {
		if vi.Player == p.reg.id && vi.Kind.IllegalMove() {
			p.v.failf("player.move.legal", "step %d of %s: move %s is refused by the rules: %s", vi.Step, m.id, snippet(m.moved, 80), vi.Detail)
		}
	}
}

// playerMatch is one match the tool referees, as the calls to the player see it.
type playerMatch struct {
	p         *playerRun
	id, round string
	// seat is the player's index in players (0 moves first).
	seat int
	// credential is shown in auth_token of every message, "" for none.
	credential string
	// probes runs the wrong-credential and stale-step probes during the match.
	probes bool
	// afterJoin runs once the player joined (the oversized-body probe).
	afterJoin func(ctx context.Context)
	// aliveAfter names the liveness check the invitation answers, and aliveMove the one
	// the first move request answers ("" for none).
	aliveAfter, aliveMove string
	// ctx is the match's, cancel ends it when the player is gone.
	ctx    context.Context
	cancel context.CancelFunc
	// turns counts the REQUEST_MOVE sent the player, first is the first of them, moved
	// the move_payload of its last answer.
	turns int
	first *protocol.Message
	moved json.RawMessage
}

// Call implements referee.Caller: the runner's calls to the player are sent and judged,
// with the probes due at that point; the opponent, the tool itself, answers at once.
func (m *playerMatch) Call(ctx context.Context, url string, req *protocol.Message, opt protocol.CallOptions) (*protocol.Message, error) {
	if url != m.p.reg.endpoint {
		return m.opponent(req)
	}
	if d, ok := ctx.Deadline(); ok && opt.Timeout == 0 {
		// The runner bounds a call by its context: the probes sent before it must not eat
		// into the player's deadline, which its own call gets whole.
		opt.Timeout, ctx = time.Until(d), m.ctx
	}
	var a *answer
	switch req.Envelope.MessageType {
	case protocol.GameInvitation:
		a = m.join(ctx, req, opt.Timeout)
	case protocol.RequestMove:
		a = m.move(ctx, req, opt.Timeout)
	default:
		a = m.gameOver(ctx, req, opt.Timeout)
	}
	if a == nil {
		return nil, errNotTaken
	}
	return a.result, nil
}

// opponent answers as the tool's own player: it joins, plays the first legal move and
// acknowledges the end.
func (m *playerMatch) opponent(req *protocol.Message) (*protocol.Message, error) {
	typ, payload := protocol.GameJoinAck, any(protocol.JoinAck{Status: protocol.StatusAccepted, MatchID: m.id})
	switch req.Envelope.MessageType {
	case protocol.RequestMove:
		var r protocol.MoveRequest
		decode(req.Payload, &r)
		legal, err := m.p.g.LegalMoves(r.StepContext)
		if err != nil || len(legal) == 0 {
			return nil, fmt.Errorf("opponent in %s: no legal move: %w", m.id, err)
		}
		typ, payload = protocol.MoveResponse, protocol.MoveAnswer{MovePayload: legal[0]}
	case protocol.GameOver:
		typ, payload = protocol.GameOverAck, protocol.Ack{Status: protocol.StatusAcknowledged}
	}
	out, err := req.Reply(typ, protocol.PlayerSender(m.p.opponent), payload)
	if err != nil {
		return nil, fmt.Errorf("opponent in %s: %w", m.id, err)
	}
	out.Envelope.MatchID = m.id
	return out, nil
}

// lost records that the player stopped answering and ends the match.
func (m *playerMatch) lost(why string) {
	m.p.lost(why)
	m.cancel()
}

// alive records liveness check id ("" for none): whether the player still answered.
func (m *playerMatch) alive(id string, a *answer, what string) {
	switch {
	case id == "":
	case a.gone() || a.timeout:
		m.p.v.failf(id, "did not answer %s afterwards: it stopped serving", what)
	default:
		m.p.v.pass(id, "still answered "+what+" afterwards")
	}
}

// join sends the invitation; the answer is nil unless the player joined.
func (m *playerMatch) join(ctx context.Context, req *protocol.Message, timeout time.Duration) *answer {
	p := m.p
	a := p.s.call(ctx, p.reg.endpoint, req, timeout, 1)
	m.alive(m.aliveAfter, a, "a GAME_INVITATION")
	if a.gone() {
		if m.aliveAfter == "" {
			// Else the liveness check tells it.
			p.v.failf("player.join", "GAME_INVITATION of %s: %s", m.id, a.problem())
		}
		m.lost("GAME_INVITATION: " + a.problem())
		return nil
	}
	if !m.judgeAnswer(req, a, protocol.GameJoinAck, "player.join") {
		return nil
	}
	var ack protocol.JoinAck
	decode(a.result.Payload, &ack)
	switch {
	case ack.Status != protocol.StatusAccepted:
		p.v.failf("player.join", "GAME_JOIN_ACK of %s has status %q (reason %q), not \"accepted\"", m.id, ack.Status, ack.Reason)
		return nil
	case ack.MatchID != m.id:
		p.v.failf("player.join", "GAME_JOIN_ACK of %s names match_id %q", m.id, ack.MatchID)
		return nil
	}
	p.v.ok("player.join")
	if m.afterJoin != nil {
		m.afterJoin(ctx)
	}
	return a
}

// move sends a REQUEST_MOVE, after the probes due before it; the answer is nil unless
// it carries a move.
func (m *playerMatch) move(ctx context.Context, req *protocol.Message, timeout time.Duration) *answer {
	p := m.p
	var r protocol.MoveRequest
	decode(req.Payload, &r)
	m.turns++
	if m.probes && m.turns == 1 && p.creds {
		m.credentialProbe(ctx, req)
	}
	stale := m.probes && m.turns == 2 && m.staleProbe(ctx, false)
	if p.gone != "" {
		return nil
	}
	if m.first == nil {
		m.first = req
	}
	a := p.s.call(ctx, p.reg.endpoint, req, timeout, 1)
	if m.turns == 1 {
		m.alive(m.aliveMove, a, "a REQUEST_MOVE")
	}
	if stale {
		if a.gone() || a.timeout {
			p.v.failf("player.stale_step", "after a REQUEST_MOVE for step %d, already played, it did not answer step %d", stepOf(m.first), r.StepNumber)
		} else {
			p.v.pass("player.stale_step", fmt.Sprintf("answered a REQUEST_MOVE for step %d, already played, then step %d", stepOf(m.first), r.StepNumber))
		}
	}
	if a.timeout {
		p.v.failf("player.move.deadline", "no MOVE_RESPONSE to step %d of %s within the move deadline of %s", r.StepNumber, m.id, p.s.opt.MoveTimeout)
		return nil
	}
	if a.err == nil {
		p.v.ok("player.move.deadline")
	}
	if !m.judgeAnswer(req, a, protocol.MoveResponse, "player.move") {
		return nil
	}
	var ans protocol.MoveAnswer
	decode(a.result.Payload, &ans)
	if len(ans.MovePayload) == 0 {
		p.v.failf("player.move", "MOVE_RESPONSE to step %d of %s has no move_payload", r.StepNumber, m.id)
		return nil
	}
	p.v.ok("player.move")
	m.moved = ans.MovePayload
	return a
}

// stepOf is the step_number of a REQUEST_MOVE.
func stepOf(req *protocol.Message) int {
	var r protocol.MoveRequest
	decode(req.Payload, &r)
	return r.StepNumber
}

// judgeFraming records the checks every answer to a seed request must pass, under
// prefix ("player.answer" or "referee.answer"): JSON-RPC framing, conversation_id
// echoed, sender, schema. It reports whether a is a result; check gets the failures
// that leave no result to read.
func judgeFraming(v *verdicts, prefix, check, what string, req *protocol.Message, a *answer, sender string) bool {
	switch {
	case a.err != nil:
		v.failf(check, "%s: %s", what, a.problem())
		return false
	case a.malformed != "":
		v.failf(prefix+".jsonrpc", "%s: %s", what, a.malformed)
		v.failf(check, "%s: %s", what, a.malformed)
		return false
	}
	v.ok(prefix + ".jsonrpc")
	if a.rpcErr != nil {
		v.failf(check, "%s: refused with JSON-RPC error %s", what, a.rpcErr.Error())
		return false
	}
	env := a.result.Envelope
	if env.ConversationID != req.Envelope.ConversationID {
		v.failf(prefix+".conversation_id", "%s has conversation_id %q, the request's is %q", what, env.ConversationID, req.Envelope.ConversationID)
	} else {
		v.ok(prefix + ".conversation_id")
	}
	if env.Sender != sender {
		v.failf(prefix+".sender", "%s has sender %q, not %q", what, env.Sender, sender)
	} else {
		v.ok(prefix + ".sender")
	}
	if len(a.violations) > 0 {
		v.failf(prefix+".schema", "%s (%s) breaks its schema: %s", what, env.MessageType, strings.Join(a.violations, "; "))
	} else {
		v.ok(prefix + ".schema")
	}
	return true
}

// judgeAnswer records the checks every seed answer of the player must pass (framing,
// conversation, sender, schema, auth_token), and reports whether a is a result of
// wantType; check is the check of that answer (player.join or player.move).
func (m *playerMatch) judgeAnswer(req *protocol.Message, a *answer, wantType, check string) bool {
	p := m.p
	what := fmt.Sprintf("answer to %s of %s", req.Envelope.MessageType, m.id)
	if !judgeFraming(p.v, "player.answer", check, what, req, a, p.reg.sender) {
		if a.gone() {
			m.lost(req.Envelope.MessageType + ": " + a.problem())
		}
		return false
	}
	env := a.result.Envelope
	switch tok := env.AuthToken; {
	case tok == "", protocol.TokenEqual(tok, p.reg.token), m.credential != "" && protocol.TokenEqual(tok, m.credential):
		p.v.ok("player.answer.auth_token")
	default:
		p.v.failf("player.answer.auth_token", "%s carries an auth_token that is neither the player's token nor its match credential: a referee refuses it", what)
	}
	if m.credential != "" {
		if protocol.TokenEqual(env.AuthToken, m.credential) {
			p.v.ok("player.credentials.answer")
		} else {
			p.v.failf("player.credentials.answer", "%s does not show the match credential back", what)
		}
	}
	if env.MessageType != wantType {
		p.v.failf(check, "%s is %s, not %s", what, env.MessageType, wantType)
		return false
	}
	if env.MatchID != "" && env.MatchID != m.id {
		p.v.failf(check, "%s names match %q", what, env.MatchID)
		return false
	}
	return true
}

// credentialProbe sends req again showing a credential that is not the player's: a
// player that checks credentials refuses it.
func (m *playerMatch) credentialProbe(ctx context.Context, req *protocol.Message) {
	p := m.p
	probe := again(req)
	probe.Envelope.AuthToken = protocol.MatchCredential("not-"+p.reg.token, m.id)
	a := p.s.call(ctx, p.reg.endpoint, probe, p.s.opt.MoveTimeout, 1)
	switch {
	case a.refused():
		p.v.pass("player.credentials.refuse", "refused a REQUEST_MOVE showing another match credential: "+a.rpcErr.Error())
	case a.problem() == "":
		p.v.failf("player.credentials.refuse", "answered a REQUEST_MOVE showing another match credential with %s: anyone could play its moves", a.result.Envelope.MessageType)
	default:
		p.v.failf("player.credentials.refuse", "REQUEST_MOVE showing another match credential: %s", a.problem())
		if a.gone() {
			m.lost("a REQUEST_MOVE with a wrong credential: " + a.problem())
		}
	}
}

// staleProbe sends the player's first REQUEST_MOVE of m again (a new conversation,
// the old step) and reports whether the player answered it at all. With last set no
// later step follows to show the player still plays, so an answer passes at once.
func (m *playerMatch) staleProbe(ctx context.Context, last bool) bool {
	p := m.p
	if m.first == nil {
		p.v.skip("player.stale_step", "the player made no move to ask again")
		p.v.skip("player.stale_step.answer", "the player made no move to ask again")
		return false
	}
	step := stepOf(m.first)
	a := p.s.call(ctx, p.reg.endpoint, again(m.first), p.s.opt.MoveTimeout, 1)
	if a.err != nil || a.malformed != "" {
		p.v.failf("player.stale_step", "a REQUEST_MOVE for step %d of %s, already played: %s", step, m.id, a.problem())
		if a.gone() {
			m.lost("a REQUEST_MOVE for a step already played: " + a.problem())
		}
		return false
	}
	if last {
		p.v.pass("player.stale_step", fmt.Sprintf("answered a REQUEST_MOVE for step %d of %s, already played", step, m.id))
	}
	var ans protocol.MoveAnswer
	switch {
	case a.rpcErr != nil && a.rpcErr.Data != nil && a.rpcErr.Data.Reason == protocol.ReasonStaleStep:
		p.v.pass("player.stale_step.answer", "refused a request for a step already played with "+a.rpcErr.Error())
	case a.rpcErr != nil:
		p.v.failf("player.stale_step.answer", "refused a request for step %d, already played, with %s rather than STALE_STEP", step, a.rpcErr.Error())
	default:
		decode(a.result.Payload, &ans)
		if ans.StepNumber != nil && *ans.StepNumber == step {
			p.v.pass("player.stale_step.answer", fmt.Sprintf("answered a request for step %d, already played, with a MOVE_RESPONSE naming step %d", step, step))
		} else {
			p.v.failf("player.stale_step.answer", "answered a request for step %d, already played, with a move that names no step_number: a referee cannot tell it is stale", step)
		}
	}
	return true
}

// gameOver announces the end of the match, after the stale-step probe when the match
// gave no second move for it; the answer is nil unless it is a result.
func (m *playerMatch) gameOver(ctx context.Context, req *protocol.Message, timeout time.Duration) *answer {
	p := m.p
	if m.probes && !p.v.decided("player.stale_step") {
		if m.staleProbe(ctx, true); p.gone != "" {
			return nil
		}
	}
	a := p.s.call(ctx, p.reg.endpoint, req, timeout, 1)
	switch {
	case a.problem() == "":
		p.v.ok("player.game_over")
	case a.refused():
		p.v.failf("player.game_over", "GAME_OVER of %s refused with %s", m.id, a.rpcErr.Error())
		return nil
	default:
		p.v.failf("player.game_over", "GAME_OVER of %s: %s", m.id, a.problem())
		if a.gone() {
			m.lost("GAME_OVER: " + a.problem())
		}
		return nil
	}
	env := a.result.Envelope
	switch {
	case env.MessageType != protocol.GameOverAck:
		p.v.failf("player.game_over.ack", "GAME_OVER of %s answered with %s, not GAME_OVER_ACK", m.id, env.MessageType)
	case env.ConversationID != req.Envelope.ConversationID:
		p.v.failf("player.game_over.ack", "GAME_OVER_ACK of %s has conversation_id %q, the request's is %q", m.id, env.ConversationID, req.Envelope.ConversationID)
	case env.Sender != p.reg.sender:
		p.v.failf("player.game_over.ack", "GAME_OVER_ACK of %s has sender %q", m.id, env.Sender)
	case len(a.violations) > 0:
		p.v.failf("player.game_over.ack", "GAME_OVER_ACK of %s breaks its schema: %s", m.id, strings.Join(a.violations, "; "))
	default:
		p.v.ok("player.game_over.ack")
	}
	return a
}

// probeUnknown sends a message type no role knows.
func (p *playerRun) probeUnknown(ctx context.Context) {
	m := message(unknownType, protocol.SenderLeagueManager, map[string]any{"note": "a message type this agent cannot know"})
	m.Envelope.AuthToken, m.Envelope.LeagueID = p.reg.token, leagueID
	p.s.probeUnknown(ctx, p.v, "player.unknown_message", p.reg.endpoint, m)
}

// probeOversized sends GAME_OVER of the finished match old again, padded beyond 1 MiB.
func (p *playerRun) probeOversized(ctx context.Context, old *playerMatch) {
	m := message(protocol.GameOver, protocol.RefereeSender(conformRefereeID), map[string]any{"outcome": protocol.Draw, "final_state": map[string]any{"padding": padding()}})
	e := &m.Envelope
	e.MatchID, e.RoundID, e.GameType, e.LeagueID, e.AuthToken = old.id, old.round, p.s.opt.Game, leagueID, old.credential
	p.s.probeOversized(ctx, p.v, "player.oversized", p.reg.endpoint, m)
}

// judgeMatchQuery checks the player confirmed the uncredentialed invitation of m.
func (p *playerRun) judgeMatchQuery(m *playerMatch) {
	p.lm.b.mu.Lock()
	queried := p.lm.matches[m.id].queried
	p.lm.b.mu.Unlock()
	if queried {
		p.v.pass("player.match_query", fmt.Sprintf("confirmed the referee of %s, whose invitation showed no credential, with QUERY_MATCH", m.id))
		return
	}
	p.v.failf("player.match_query", "joined %s on an invitation without credential and never asked the League Manager (QUERY_MATCH) who referees it", m.id)
}
