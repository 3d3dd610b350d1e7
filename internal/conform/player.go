package conform

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
)

func init() { Subjects["player"] = runPlayerSubject }

// conformRefereeID is the referee the tool plays the player's matches as.
const conformRefereeID = "conform"

// unknownType is a message type no role knows.
const unknownType = "CONFORM_UNKNOWN_MESSAGE"

// oversizedBytes is the size of the oversized-body probe: over our 1 MiB cap, but
// within the 256 KiB a Go server discards after refusing, so the 413 can be read.
const oversizedBytes = protocol.MaxBodyBytes + 100<<10

// scoring is seed 004 §7.2's, which the tool's League Manager uses.
var scoring = protocol.Scoring{Win: 3, Draw: 1, Loss: 0}

// playerChecks are the checks of `league conform player`, in report order.
var playerChecks = []checkDef{
	{id: "player.register.schema", level: Required,
		hint: "send REGISTER_PLAYER_REQUEST as schemas/register_player_request.json says: envelope protocol, message_type, sender player:<id>, UTC timestamp, UUID v4 conversation_id, no auth_token; payload player_id and endpoint_url"},
	{id: "player.register.sender", level: Required,
		hint: `the envelope sender must be "player:" followed by the payload's player_id`},
	{id: "player.register.endpoint", level: Required,
		hint: "register the URL your server listens on (e.g. http://127.0.0.1:9001/mcp), and start serving no later than registering"},
	{id: "player.features", level: Recommended,
		hint: `announce "features": ["match_credentials"] in REGISTER_PLAYER_REQUEST and check the auth_token of referees' messages (protocol/README.md, "Authentication on every hop")`},
	{id: "player.league.schema", level: Required, pass: "%d request(s) to the League Manager after registering were valid against their schemas",
		hint: "validate what you send the League Manager against schemas/ (e.g. AGENT_READY_REQUEST needs auth_token)"},
	{id: "player.league.token", level: Required, pass: "%d request(s) to the League Manager after registering carried the player's token",
		hint: "put the auth_token of REGISTER_PLAYER_RESPONSE in the envelope of every later request to the League Manager (seed 004 §8.1), with the same sender"},
	{id: "player.join", level: Required, pass: "%d invitation(s) answered with GAME_JOIN_ACK accepted",
		hint: `answer GAME_INVITATION synchronously with GAME_JOIN_ACK, payload {"status": "accepted", "match_id": <the match>}`},
	{id: "player.move", level: Required, pass: "%d REQUEST_MOVE answered with a MOVE_RESPONSE carrying move_payload",
		hint: `answer REQUEST_MOVE synchronously with MOVE_RESPONSE, payload {"move_payload": ...}`},
	{id: "player.move.legal", level: Required, pass: "%d move(s), every one legal by the rules",
		hint: "compute the move from step_context with the game's rules (game): for tic_tac_toe an empty cell, {\"row\": r, \"col\": c}, 0-based"},
	{id: "player.move.deadline", level: Required, pass: "%d move(s) answered within the move deadline",
		hint: "answer within deadline_ms of REQUEST_MOVE; referees count a late answer as a timeout (warning, forced move, then technical loss)"},
	{id: "player.answer.jsonrpc", level: Required, pass: "%d answer(s) were JSON-RPC 2.0 responses with the request's id",
		hint: `answer every request with HTTP 200 and {"jsonrpc": "2.0", "id": <the request's id>, "result": {...}} or "error"`},
	{id: "player.answer.conversation_id", level: Required, pass: "%d answer(s) echoed the request's conversation_id",
		hint: "copy conversation_id from the request's envelope into your answer's envelope (seed 004 §4.1)"},
	{id: "player.answer.sender", level: Required, pass: "%d answer(s) came from player:<id>",
		hint: `set the envelope sender of every answer to "player:<your id>"`},
	{id: "player.answer.schema", level: Required, pass: "%d answer(s) were valid against their schemas",
		hint: "validate GAME_JOIN_ACK and MOVE_RESPONSE against schemas/game_join_ack.json and schemas/move_response.json (envelope match_id is required)"},
	{id: "player.answer.auth_token", level: Required, pass: "%d answer(s) carried no auth_token, the player's token or its match credential",
		hint: "leave auth_token out of answers to a referee, or put your own league token or the match credential the referee showed; never another value"},
	{id: "player.credentials.answer", level: Recommended, pass: "%d answer(s) showed the match credential back",
		hint: "answer a referee with the match credential it showed in auth_token (feature match_credentials)"},
	{id: "player.credentials.refuse", level: Recommended,
		hint: "refuse a referee message whose auth_token is not hex(HMAC-SHA256(your token, match_id)) with a JSON-RPC error (UNAUTHORIZED)"},
	{id: "player.match_query", level: Recommended,
		hint: "when an invitation shows no credential and the League Manager announced match_query, confirm the referee with QUERY_MATCH before joining"},
	{id: "player.stale_step", level: Required,
		hint: "a REQUEST_MOVE for a step already played must be answered (a move, or an error such as STALE_STEP) without crashing, and later steps still answered"},
	{id: "player.stale_step.answer", level: Recommended,
		hint: "refuse a request for a step already played with STALE_STEP, or echo its step_number in MOVE_RESPONSE so the referee can tell the answer is stale"},
	{id: "player.game_over", level: Required, pass: "%d GAME_OVER answered",
		hint: "answer GAME_OVER synchronously, e.g. with GAME_OVER_ACK; never with an error"},
	{id: "player.game_over.ack", level: Recommended, pass: "%d GAME_OVER answered with a valid GAME_OVER_ACK",
		hint: `answer GAME_OVER with GAME_OVER_ACK from "player:<id>", echoing conversation_id, payload {"status": "acknowledged"}`},
	{id: "player.unknown_message", level: Required,
		hint: "answer a message type you do not know with a JSON-RPC error (e.g. -32015 UNSUPPORTED_MESSAGE) and keep serving"},
	{id: "player.unknown_message.alive", level: Required,
		hint: "a message you do not understand must not stop your server: catch errors per request"},
	{id: "player.oversized", level: Recommended,
		hint: "cap request bodies (ours take at most 1 MiB) and answer a larger one with HTTP 413"},
	{id: "player.oversized.alive", level: Required,
		hint: "an oversized request must not stop your server: bound what you read per request"},
	{id: "player.shutdown", level: Recommended,
		hint: `answer LEAGUE_SHUTDOWN with LEAGUE_SHUTDOWN_ACK, payload {"status": "acknowledged"} (seed 004 §6.5)`},
	{id: "player.shutdown.leaves", level: Recommended,
		hint: "after acknowledging LEAGUE_SHUTDOWN, close your server and exit (seed 004 §6.5: all agents close their HTTP servers)"},
}

func runPlayerSubject(ctx context.Context, opt Options, r *Report) error {
	s, err := newSession(opt)
	if err != nil {
		return err
	}
	return s.runPlayer(ctx, r)
}

// playerRun is one run against a player: the tool is its League Manager and the referee
// of its matches, and plays the opponent itself.
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

// playerMatch is one match the tool referees.
type playerMatch struct {
	id, round string
	// seat is the player's index in players (0 moves first).
	seat    int
	players [2]string
	// credential is shown in auth_token of every message, "" for none.
	credential string
	// probes runs the wrong-credential and stale-step probes during the match.
	probes bool
	// afterJoin runs once the player joined (the oversized-body probe).
	afterJoin func(ctx context.Context)
	// aliveAfter names the liveness check the invitation answers, and aliveMove the one
	// the first move request answers ("" for none).
	aliveAfter, aliveMove string
	// asked are the REQUEST_MOVE sent, in order, and stepOf their step numbers.
	asked  []*protocol.Message
	stepOf []int
}

// runPlayer runs the player subject: it serves as League Manager on opt.Listen and
// drives the player that registers there.
func (s *session) runPlayer(ctx context.Context, rep *Report) error {
	g, err := game.Default().New(s.opt.Game, nil)
	if err != nil {
		return fmt.Errorf("game %q: %w", s.opt.Game, err)
	}
	b := newBoard()
	lm := newLeagueSide(s, b, "player", []string{protocol.FeatureSignedAssignments, protocol.FeatureMatchCredentials, protocol.FeatureMatchQuery})
	url, stop, err := s.serve(s.opt.Listen, s.newEndpoint(lm, lm.observe, lm.log))
	if err != nil {
		return fmt.Errorf("serve as league manager: %w", err)
	}
	lm.url = url
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		// Idle keep-alive connections hold goroutines: they end with the run.
		s.http.CloseIdleConnections()
		_ = stop(sctx)
	}()
	s.log.Info().Str("url", url).Str("game", s.opt.Game).Msg("serving as League Manager; waiting for a player")
	if s.opt.Ready != nil {
		s.opt.Ready(url)
	}
	p := &playerRun{s: s, v: newVerdicts(playerChecks), lm: lm, g: g}
	p.run(ctx)
	if p.reg != nil && p.reg.accepted() {
		lm.judgeInbox(p.v, "player")
	}
	p.v.emit(rep)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	return nil
}

func (p *playerRun) run(ctx context.Context) {
	reg := p.lm.awaitRegistration(ctx, p.s.opt.Wait)
	if !p.lm.judgeRegistration(p.v, reg, p.s.opt.Wait) {
		return
	}
	p.reg = reg
	if !p.s.judgeEndpoint(ctx, p.v, "player.register.endpoint", reg) {
		return
	}
	p.lm.awaitReady(ctx)
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

	m1 := p.newMatch("conform-m1", "conform-r1", 0)
	m1.probes = true
	if p.creds {
		m1.credential = protocol.MatchCredential(reg.token, m1.id)
	}
	p.play(ctx, m1)
	if p.gone != "" {
		return
	}
	p.unknownProbe(ctx)

	m2 := p.newMatch("conform-m2", "conform-r2", 1)
	m2.aliveAfter, m2.aliveMove = "player.unknown_message.alive", "player.oversized.alive"
	m2.afterJoin = func(ctx context.Context) { p.oversizedProbe(ctx, m1) }
	p.play(ctx, m2)
	if p.gone != "" {
		return
	}
	if p.creds {
		p.judgeMatchQuery(m2)
	}
	p.shutdown(ctx)
}

func (p *playerRun) newMatch(id, round string, seat int) *playerMatch {
	m := &playerMatch{id: id, round: round, seat: seat}
	m.players[seat], m.players[1-seat] = p.reg.id, p.opponent
	p.lm.addMatch(&leagueMatch{id: id, round: round, players: m.players, refereeID: conformRefereeID})
	return m
}

// lost records that the player stopped answering; the rest of the run is skipped.
func (p *playerRun) lost(why string) {
	if p.gone == "" {
		p.gone = why
		p.v.stop("the player stopped answering (" + why + ")")
	}
}

// matchMessage builds a message of the tool's referee about m.
func (p *playerRun) matchMessage(m *playerMatch, messageType string, payload any) *protocol.Message {
	msg := message(messageType, protocol.RefereeSender(conformRefereeID), payload)
	e := &msg.Envelope
	e.MatchID, e.RoundID, e.GameType, e.LeagueID, e.AuthToken = m.id, m.round, p.s.opt.Game, leagueID, m.credential
	return msg
}

// play referees match m: invitation, every move (the tool plays the opponent with the
// first legal move), GAME_OVER.
func (p *playerRun) play(ctx context.Context, m *playerMatch) {
	inv := p.matchMessage(m, protocol.GameInvitation, protocol.Invitation{
		MatchID: m.id, GameType: p.s.opt.Game, Opponents: []string{m.players[1-m.seat]},
		OpponentID: m.players[1-m.seat], YourIndex: m.seat, Players: m.players[:],
		Deadlines: &protocol.Deadlines{JoinAckMS: int(callTimeout.Milliseconds()), MoveMS: int(p.s.opt.MoveTimeout.Milliseconds())},
	})
	a := p.s.call(ctx, p.reg.endpoint, inv, callTimeout)
	p.alive(m.aliveAfter, a, "a GAME_INVITATION")
	if a.gone() {
		if m.aliveAfter == "" {
			// Else the liveness check tells it.
			p.v.failf("player.join", "GAME_INVITATION of %s: %s", m.id, a.problem())
		}
		p.lost("GAME_INVITATION: " + a.problem())
		return
	}
	state := p.g.NewState(1)
	loser := -1
	if p.judgeJoin(m, inv, a) {
		if m.afterJoin != nil {
			m.afterJoin(ctx)
		}
		state, loser = p.moves(ctx, m, state)
		if p.gone != "" {
			return
		}
	} else {
		loser = m.seat
	}
	if m.probes && !p.v.decided("player.stale_step") {
		// The player had no second move in this match: ask for a step of the finished one.
		p.staleProbe(ctx, m, true)
	}
	p.gameOver(ctx, m, state, loser)
}

// moves plays until the rules end the match or the player fails a move; loser is the
// player's seat when it loses by a failure, else -1.
func (p *playerRun) moves(ctx context.Context, m *playerMatch, state game.State) (game.State, int) {
	step, turn := 0, 0
	for !state.Terminal() {
		step++
		movers := state.ToMove()
		moves := make([]json.RawMessage, len(movers))
		for k, i := range movers {
			if i != m.seat {
				moves[k] = state.ForcedMove(i)
				continue
			}
			turn++
			if m.probes && turn == 1 && p.creds {
				p.credentialProbe(ctx, m, state, step)
			}
			staleAnswered := false
			if m.probes && turn == 2 {
				staleAnswered = p.staleProbe(ctx, m, false)
			}
			if p.gone != "" {
				return state, m.seat
			}
			mv, answered := p.requestMove(ctx, m, state, step)
			if turn == 1 && m.aliveMove != "" {
				p.aliveOn(m.aliveMove, answered, "a REQUEST_MOVE")
			}
			if staleAnswered {
				if answered {
					p.v.pass("player.stale_step", fmt.Sprintf("answered a REQUEST_MOVE for step %d, already played, then step %d", m.stepOf[0], step))
				} else {
					p.v.failf("player.stale_step", "after a REQUEST_MOVE for step %d, already played, it did not answer step %d", m.stepOf[0], step)
				}
			}
			if p.gone != "" || mv == nil {
				return state, m.seat
			}
			moves[k] = mv
		}
		next, err := state.Apply(moves)
		if err != nil {
			// ParseMove took every move, so the rules cannot refuse them here.
			p.s.log.Error().Err(err).Str("match_id", m.id).Msg("apply parsed moves")
			return state, m.seat
		}
		state = next
	}
	return state, -1
}

// alive records liveness check id from the answer to a valid message ("" for none).
func (p *playerRun) alive(id string, a *answer, what string) {
	if id != "" {
		p.aliveOn(id, !a.gone() && !a.timeout, what)
	}
}

func (p *playerRun) aliveOn(id string, answered bool, what string) {
	if answered {
		p.v.pass(id, "still answered "+what+" afterwards")
	} else {
		p.v.failf(id, "did not answer %s afterwards: it stopped serving", what)
	}
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
		v.failf(check, "%s: refused with JSON-RPC error %s", what, describeError(a.rpcErr))
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
func (p *playerRun) judgeAnswer(m *playerMatch, req *protocol.Message, a *answer, wantType, check string) bool {
	what := fmt.Sprintf("answer to %s of %s", req.Envelope.MessageType, m.id)
	if !judgeFraming(p.v, "player.answer", check, what, req, a, p.reg.sender) {
		if a.gone() {
			p.lost(req.Envelope.MessageType + ": " + a.problem())
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

// judgeJoin records the checks of the invitation's answer and reports whether the
// player joined.
func (p *playerRun) judgeJoin(m *playerMatch, inv *protocol.Message, a *answer) bool {
	if !p.judgeAnswer(m, inv, a, protocol.GameJoinAck, "player.join") {
		return false
	}
	var ack protocol.JoinAck
	decode(a.result.Payload, &ack)
	switch {
	case ack.Status != protocol.StatusAccepted:
		p.v.failf("player.join", "GAME_JOIN_ACK of %s has status %q (reason %q), not \"accepted\"", m.id, ack.Status, ack.Reason)
		return false
	case ack.MatchID != m.id:
		p.v.failf("player.join", "GAME_JOIN_ACK of %s names match_id %q", m.id, ack.MatchID)
		return false
	}
	p.v.ok("player.join")
	return true
}

// moveRequest builds the REQUEST_MOVE of step for the player.
func (p *playerRun) moveRequest(m *playerMatch, state game.State, step int) *protocol.Message {
	view, _ := json.Marshal(state.Context(m.seat))
	return p.matchMessage(m, protocol.RequestMove, protocol.MoveRequest{
		StepNumber: step, StepContext: view,
		DeadlineMS: int(p.s.opt.MoveTimeout.Milliseconds()), Deadline: protocol.Now(time.Now().Add(p.s.opt.MoveTimeout)),
	})
}

// requestMove asks the player for its move of step and returns it once the rules take
// it (nil otherwise); answered is false when no answer came at all.
func (p *playerRun) requestMove(ctx context.Context, m *playerMatch, state game.State, step int) (mv json.RawMessage, answered bool) {
	req := p.moveRequest(m, state, step)
	m.asked, m.stepOf = append(m.asked, req), append(m.stepOf, step)
	a := p.s.call(ctx, p.reg.endpoint, req, p.s.opt.MoveTimeout)
	if a.timeout {
		p.v.failf("player.move.deadline", "no MOVE_RESPONSE to step %d of %s within the move deadline of %s", step, m.id, p.s.opt.MoveTimeout)
		return nil, false
	}
	if a.err == nil {
		p.v.ok("player.move.deadline")
	}
	if !p.judgeAnswer(m, req, a, protocol.MoveResponse, "player.move") {
		return nil, !a.gone()
	}
	var ans protocol.MoveAnswer
	decode(a.result.Payload, &ans)
	if len(ans.MovePayload) == 0 {
		p.v.failf("player.move", "MOVE_RESPONSE to step %d of %s has no move_payload", step, m.id)
		return nil, true
	}
	p.v.ok("player.move")
	mv, err := state.ParseMove(m.seat, ans.MovePayload)
	if err != nil {
		p.v.failf("player.move.legal", "step %d of %s: move %s is refused by the rules: %v", step, m.id, truncate(string(ans.MovePayload), 80), err)
		return nil, true
	}
	p.v.ok("player.move.legal")
	return mv, true
}

// credentialProbe sends the request of step with a credential that is not the
// player's: a player that checks credentials refuses it.
func (p *playerRun) credentialProbe(ctx context.Context, m *playerMatch, state game.State, step int) {
	req := p.moveRequest(m, state, step)
	req.Envelope.AuthToken = protocol.MatchCredential("not-"+p.reg.token, m.id)
	a := p.s.call(ctx, p.reg.endpoint, req, p.s.opt.MoveTimeout)
	switch {
	case a.rpcErr != nil && a.err == nil:
		p.v.pass("player.credentials.refuse", "refused a REQUEST_MOVE showing another match credential: "+describeError(a.rpcErr))
	case a.ok():
		p.v.failf("player.credentials.refuse", "answered a REQUEST_MOVE showing another match credential with %s: anyone could play its moves", a.result.Envelope.MessageType)
	default:
		p.v.failf("player.credentials.refuse", "REQUEST_MOVE showing another match credential: %s", a.problem())
		if a.gone() {
			p.lost("a REQUEST_MOVE with a wrong credential: " + a.problem())
		}
	}
}

// staleProbe sends the player's first REQUEST_MOVE of m again (a new conversation,
// the old step) and reports whether the player answered it at all. With last set no
// later step follows to show the player still plays, so an answer passes at once.
func (p *playerRun) staleProbe(ctx context.Context, m *playerMatch, last bool) bool {
	if len(m.asked) == 0 {
		p.v.skip("player.stale_step", "the player made no move to ask again")
		p.v.skip("player.stale_step.answer", "the player made no move to ask again")
		return false
	}
	old, step := m.asked[0], m.stepOf[0]
	req := message(protocol.RequestMove, old.Envelope.Sender, old.Payload)
	e := &req.Envelope
	e.MatchID, e.RoundID, e.GameType, e.LeagueID, e.AuthToken = old.Envelope.MatchID, old.Envelope.RoundID, old.Envelope.GameType, old.Envelope.LeagueID, old.Envelope.AuthToken
	a := p.s.call(ctx, p.reg.endpoint, req, p.s.opt.MoveTimeout)
	if a.err != nil || a.malformed != "" {
		p.v.failf("player.stale_step", "a REQUEST_MOVE for step %d of %s, already played: %s", step, m.id, a.problem())
		if a.gone() {
			p.lost("a REQUEST_MOVE for a step already played: " + a.problem())
		}
		return false
	}
	if last {
		p.v.pass("player.stale_step", fmt.Sprintf("answered a REQUEST_MOVE for step %d of %s, already played", step, m.id))
	}
	var ans protocol.MoveAnswer
	switch {
	case a.rpcErr != nil && reasonOf(a.rpcErr) == protocol.ReasonStaleStep:
		p.v.pass("player.stale_step.answer", "refused a request for a step already played with "+describeError(a.rpcErr))
	case a.rpcErr != nil:
		p.v.failf("player.stale_step.answer", "refused a request for step %d, already played, with %s rather than STALE_STEP", step, describeError(a.rpcErr))
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

// unknownProbe sends a message type no role knows.
func (p *playerRun) unknownProbe(ctx context.Context) {
	m := message(unknownType, protocol.SenderLeagueManager, map[string]any{"note": "a message type this agent cannot know"})
	m.Envelope.AuthToken, m.Envelope.LeagueID = p.reg.token, leagueID
	body, id, err := request(m)
	if err != nil {
		p.v.failf("player.unknown_message", "conform tool: %v", err)
		return
	}
	judgeUnknown(p.v, "player.unknown_message", p.s.post(ctx, p.reg.endpoint, body, id, callTimeout))
}

// judgeUnknown records check id from the answer to an unknown message type.
func judgeUnknown(v *verdicts, id string, a *answer) {
	switch {
	case a.err == nil && a.rpcErr != nil:
		reason := "answered " + unknownType + " with a JSON-RPC error: " + describeError(a.rpcErr)
		if a.status != 200 {
			reason += fmt.Sprintf(" (under HTTP %d; JSON-RPC answers use 200)", a.status)
		}
		v.pass(id, reason)
	case a.ok():
		v.failf(id, "answered %s with a %s result instead of a JSON-RPC error", unknownType, a.result.Envelope.MessageType)
	case a.gone():
		v.failf(id, "%s: the connection closed without an answer (%s); did it crash?", unknownType, shortErr(a.err))
	default:
		v.failf(id, "%s: %s", unknownType, a.problem())
	}
}

// oversizedProbe sends GAME_OVER of the finished match old again, padded beyond 1 MiB.
func (p *playerRun) oversizedProbe(ctx context.Context, old *playerMatch) {
	m := p.matchMessage(old, protocol.GameOver, map[string]any{"outcome": protocol.Draw, "final_state": map[string]any{"padding": padding()}})
	body, id, err := request(m)
	if err != nil {
		p.v.failf("player.oversized", "conform tool: %v", err)
		return
	}
	judgeOversized(p.v, "player.oversized", p.s.post(ctx, p.reg.endpoint, body, id, callTimeout), len(body))
}

// padding is schema-valid filler that makes a message larger than oversizedBytes.
func padding() []string {
	item := strings.Repeat("x", 1000)
	return slices.Repeat([]string{item}, oversizedBytes/(len(item)+3)+1)
}

// judgeOversized records check id from the answer to a body over 1 MiB.
func judgeOversized(v *verdicts, id string, a *answer, size int) {
	mib := fmt.Sprintf("%.1f MiB", float64(size)/(1<<20))
	switch {
	case a.err == nil && a.status >= 400 && a.status < 500:
		v.pass(id, fmt.Sprintf("refused a %s body with HTTP %d", mib, a.status))
	case a.err == nil && a.rpcErr != nil:
		v.pass(id, fmt.Sprintf("refused a %s body with a JSON-RPC error: %s", mib, describeError(a.rpcErr)))
	case a.ok():
		v.failf(id, "took a %s body and answered it with %s", mib, a.result.Envelope.MessageType)
	default:
		v.failf(id, "a %s body: %s", mib, a.problem())
	}
}

// gameOver announces the end of m to the player.
func (p *playerRun) gameOver(ctx context.Context, m *playerMatch, state game.State, loser int) {
	var outcome [2]protocol.Outcome
	reason := string(protocol.TerminationNormal)
	switch {
	case loser >= 0:
		outcome[loser], outcome[1-loser] = protocol.Loss, protocol.Win
		reason = string(protocol.ActionTechnicalLoss)
	default:
		outcome = state.Outcomes()
	}
	outcomes, points := map[string]string{}, map[string]int{}
	var winner *string
	for i, id := range m.players {
		outcomes[id], points[id] = string(outcome[i]), scoring.Points(outcome[i])
		if outcome[i] == protocol.Win {
			winner = &id
		}
	}
	final, _ := json.Marshal(state.Final())
	req := p.matchMessage(m, protocol.GameOver, protocol.GameResult{
		Outcome: outcome[m.seat], FinalState: final, Outcomes: outcomes, Points: points,
		Reason: reason, Winner: winner,
	})
	a := p.s.call(ctx, p.reg.endpoint, req, callTimeout)
	switch {
	case a.ok():
		p.v.ok("player.game_over")
	case a.rpcErr != nil && a.err == nil:
		p.v.failf("player.game_over", "GAME_OVER of %s refused with %s", m.id, describeError(a.rpcErr))
	default:
		p.v.failf("player.game_over", "GAME_OVER of %s: %s", m.id, a.problem())
		if a.gone() {
			p.lost("GAME_OVER: " + a.problem())
		}
		return
	}
	if !a.ok() {
		return
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

// shutdown sends LEAGUE_SHUTDOWN and sees whether the player leaves.
func (p *playerRun) shutdown(ctx context.Context) {
	req := message(protocol.LeagueShutdown, protocol.SenderLeagueManager, protocol.Shutdown{Reason: "conformance run complete", LeagueID: leagueID})
	req.Envelope.AuthToken, req.Envelope.LeagueID = p.reg.token, leagueID
	judgeShutdown(ctx, p.s, p.v, "player", p.reg, req, p.s.call(ctx, p.reg.endpoint, req, callTimeout))
}

// judgeShutdown records the checks of LEAGUE_SHUTDOWN (kind.shutdown, kind.shutdown.leaves).
func judgeShutdown(ctx context.Context, s *session, v *verdicts, kind string, reg *registration, req *protocol.Message, a *answer) {
	id := kind + ".shutdown"
	switch {
	case !a.ok():
		v.failf(id, "LEAGUE_SHUTDOWN: %s", a.problem())
	case a.result.Envelope.MessageType != protocol.LeagueShutdownAck:
		v.failf(id, "LEAGUE_SHUTDOWN answered with %s, not LEAGUE_SHUTDOWN_ACK", a.result.Envelope.MessageType)
	case a.result.Envelope.ConversationID != req.Envelope.ConversationID:
		v.failf(id, "LEAGUE_SHUTDOWN_ACK has conversation_id %q, the request's is %q", a.result.Envelope.ConversationID, req.Envelope.ConversationID)
	case a.result.Envelope.Sender != reg.sender:
		v.failf(id, "LEAGUE_SHUTDOWN_ACK has sender %q, not %q", a.result.Envelope.Sender, reg.sender)
	case len(a.violations) > 0:
		v.failf(id, "LEAGUE_SHUTDOWN_ACK breaks its schema: %s", strings.Join(a.violations, "; "))
	default:
		v.pass(id, "acknowledged LEAGUE_SHUTDOWN")
	}
	if s.awaitGone(ctx, reg.endpoint, s.opt.Grace) {
		v.pass(id+".leaves", fmt.Sprintf("stopped listening within %s of LEAGUE_SHUTDOWN", s.opt.Grace))
	} else {
		v.failf(id+".leaves", "still listening %s after LEAGUE_SHUTDOWN", s.opt.Grace)
	}
}

// announced describes features that lack want.
func announced(features []string, want string) string {
	if len(features) == 0 {
		return "no features"
	}
	return fmt.Sprintf("features %v but not %s", features, want)
}
