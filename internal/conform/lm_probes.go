package conform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
)

// registration builds the registration request of a, naming endpoint. Like seed 004 §3.1
// says, it carries no auth_token.
func (r *lmRun) registration(a *lmAgent, endpoint string) (*protocol.Message, error) {
	p := map[string]any{a.kind + "_id": a.id, "endpoint_url": endpoint, "game_types": []string{r.opt.Game}}
	mt := protocol.RegisterPlayerRequest
	if a.kind == "referee" {
		mt = protocol.RegisterRefereeRequest
		p["max_concurrent_matches"] = lmMaxMatches
	}
	if len(a.features) > 0 {
		p["features"] = a.features
	}
	return protocol.NewMessage(mt, a.sender(), p)
}

// register sends a's registration and judges the answer; on success a holds its token.
func (r *lmRun) register(ctx context.Context, a *lmAgent) error {
	msg, err := r.registration(a, a.url)
	if err != nil {
		return err
	}
	return r.registered(r.wire.send(ctx, msg.Envelope.MessageType+" of "+a.id, msg), a)
}

// registered judges a registration answer: a result of the right type that validates,
// whose league_id agrees with the envelope's and with earlier answers. It stores a's token
// and what the League Manager announced.
func (r *lmRun) registered(c *lmCall, a *lmAgent) error {
	want := protocol.RegisterPlayerResponse
	if a.kind == "referee" {
		want = protocol.RegisterRefereeResponse
	}
	m, err := c.answer(r.v, want)
	if err != nil {
		return fmt.Errorf("%s: %w", a.id, err)
	}
	var p protocol.RegistrationAnswer
	if err := json.Unmarshal(m.Payload, &p); err != nil {
		return fmt.Errorf("%s: payload cannot be read: %w", a.id, err)
	}
	if p.LeagueID != m.Envelope.LeagueID {
		return fmt.Errorf("%s: payload league_id %q differs from the envelope's %q", a.id, p.LeagueID, m.Envelope.LeagueID)
	}
	features := p.Features
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.leagueID != "" && r.leagueID != p.LeagueID {
		return fmt.Errorf("%s: league_id %q, earlier answers said %q", a.id, p.LeagueID, r.leagueID)
	}
	first := r.leagueID == ""
	r.leagueID, a.token = p.LeagueID, p.AuthToken
	if len(p.Features) == 0 {
		r.featuresMissing = append(r.featuresMissing, a.id)
	}
	if first {
		r.lmFeatures = features
	}
	if a.kind == "referee" && p.HeartbeatIntervalMS > 0 && r.heartbeatEvery == 0 {
		r.heartbeatEvery = time.Duration(p.HeartbeatIntervalMS) * time.Millisecond
	}
	return nil
}

// registerFirst checks that a player is refused before any referee, then registers both
// referees and the first player.
func (r *lmRun) registerFirst(ctx context.Context) error {
	p1 := r.players[0]
	msg, err := r.registration(p1, p1.url)
	if err != nil {
		return err
	}
	c := r.wire.send(ctx, "REGISTER_PLAYER_REQUEST before any referee", msg)
	if c.err != nil {
		r.fail(ckOrder, c.describe())
		return fmt.Errorf("the League Manager at %s does not answer: %v%s", r.opt.URL, c.err, certHint(c.err))
	}
	p1Registered := false
	if e, err := c.refusal(); err == nil {
		r.pass(ckOrder, "a player registering before any referee was refused with "+e.describe())
	} else {
		r.fail(ckOrder, "a player registering before any referee was "+err.Error())
		// A League Manager that took it gave p1 its token: keep it.
		p1Registered = r.registered(c, p1) == nil
	}

	var problems []string
	for _, ref := range r.refs {
		if err := r.register(ctx, ref); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		r.fail(ckRefereeReg, strings.Join(problems, "; "))
		return errors.New("a referee could not register")
	}
	r.pass(ckRefereeReg, fmt.Sprintf("%s and %s registered: valid REGISTER_REFEREE_RESPONSE, league_id %q", r.refs[0].id, r.refs[1].id, r.leagueIDOf()))
	r.startHeartbeats()
	if !p1Registered {
		if err := r.register(ctx, p1); err != nil {
			r.fail(ckPlayerReg, err.Error())
			return errors.New("the first player could not register")
		}
	}
	return nil
}

// duplicates registers the first referee and the first player again from another
// conversation and another endpoint (the same agent behind a query string, so that a
// League Manager that wrongly takes it still reaches the tool).
func (r *lmRun) duplicates(ctx context.Context) error {
	var refused, problems []string
	for _, a := range []*lmAgent{r.refs[0], r.players[0]} {
		msg, err := r.registration(a, a.url+"?again=1")
		if err != nil {
			return err
		}
		c := r.wire.send(ctx, "second "+msg.Envelope.MessageType+" of "+a.id, msg)
		if e, err := c.refusal(); err == nil {
			refused = append(refused, fmt.Sprintf("%s (%s)", a.id, e.describe()))
			continue
		}
		problems = append(problems, fmt.Sprintf("the second registration of %s: %s", a.id, c.describe()))
		// Taken: the League Manager now knows the agent by the new answer's token, if any.
		if c.err == nil {
			old := r.tokenOf(a)
			if r.registered(c, a) != nil {
				r.mu.Lock()
				a.token = old
				r.mu.Unlock()
			}
		}
	}
	if len(problems) > 0 {
		r.fail(ckDuplicate, strings.Join(problems, "; "))
		return nil
	}
	r.pass(ckDuplicate, "second registrations from another conversation and endpoint were refused: "+strings.Join(refused, ", "))
	return nil
}

// standingsQuery is a QUERY_STANDINGS of player a.
func (r *lmRun) standingsQuery(a *lmAgent) (*protocol.Message, error) {
	return r.message(a, protocol.QueryStandings, map[string]any{})
}

// badRequests sends one good standings query, then bad requests, each followed by a good
// one to see that the League Manager still answers.
func (r *lmRun) badRequests(ctx context.Context) error {
	p1 := r.players[0]
	good, err := r.standingsQuery(p1)
	if err != nil {
		return err
	}
	c := r.wire.send(ctx, "QUERY_STANDINGS", good)
	if _, err := c.answer(r.v, protocol.StandingsResponse); err != nil {
		r.fail(ckStandingsQ, err.Error())
	} else {
		r.pass(ckStandingsQ, "a registered player's QUERY_STANDINGS was answered with a valid STANDINGS_RESPONSE")
	}

	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"requests with a wrong auth_token", r.badAuth},
		{"an unknown message type", r.badType},
		{"envelopes that break seed 004 §4.4", r.badEnvelope},
		{"a registration without player_id", r.badPayload},
		{"a body that is not JSON", r.badJSON},
		{"a body over 1 MiB", r.oversized},
	}
	for _, s := range steps {
		if err := s.run(ctx); err != nil {
			return err
		}
		if err := r.alive(ctx, s.name); err != nil {
			r.fail(ckSurvived, err.Error())
			return errors.New("the League Manager stopped answering after " + s.name)
		}
	}
	r.pass(ckSurvived, fmt.Sprintf("a good QUERY_STANDINGS was answered after each of the %d bad requests", r.badInputs))
	return nil
}

// alive sends a good request after bad input: any JSON-RPC answer shows the League
// Manager is still serving (an error may be a rate limit).
func (r *lmRun) alive(ctx context.Context, after string) error {
	msg, err := r.standingsQuery(r.players[0])
	if err != nil {
		return err
	}
	c := r.wire.send(ctx, "QUERY_STANDINGS after "+after, msg)
	if c.rpc == nil {
		return fmt.Errorf("after %s, a good QUERY_STANDINGS got %s", after, c.describe())
	}
	return nil
}

// refusedAll sends each request and says how each was refused; the first one taken or
// not answered with a JSON-RPC error is an error.
func (r *lmRun) refusedAll(ctx context.Context, reqs []lmBadRequest) (string, error) {
	var how []string
	for _, q := range reqs {
		r.badInputs++
		c := r.wire.sendBad(ctx, q.name, q.msg)
		e, err := c.refusal()
		if err != nil {
			return "", fmt.Errorf("%s: %v", q.name, err)
		}
		how = append(how, fmt.Sprintf("%s (%s)", q.name, e.describe()))
	}
	return "refused: " + strings.Join(how, "; "), nil
}

// lmBadRequest is a request that must be refused.
type lmBadRequest struct {
	name string
	msg  *protocol.Message
}

func (r *lmRun) badAuth(ctx context.Context) error {
	p1, ref1 := r.players[0], r.refs[0]
	wrong, err := r.standingsQuery(p1)
	if err != nil {
		return err
	}
	wrong.Envelope.AuthToken = uuid.NewString()
	other, err := r.standingsQuery(p1)
	if err != nil {
		return err
	}
	other.Envelope.AuthToken = r.tokenOf(ref1)
	how, err := r.refusedAll(ctx, []lmBadRequest{
		{"QUERY_STANDINGS with an unknown token", wrong},
		{"QUERY_STANDINGS of " + p1.id + " with " + ref1.id + "'s token", other},
	})
	r.check(ckBadAuth, err, how)
	return nil
}

func (r *lmRun) badType(ctx context.Context) error {
	msg, err := r.message(r.players[0], "CONFORM_NO_SUCH_MESSAGE", map[string]any{})
	if err != nil {
		return err
	}
	how, err := r.refusedAll(ctx, []lmBadRequest{{"message_type CONFORM_NO_SUCH_MESSAGE", msg}})
	r.check(ckBadType, err, how)
	return nil
}

func (r *lmRun) badEnvelope(ctx context.Context) error {
	var reqs []lmBadRequest
	for _, bad := range []struct {
		name  string
		spoil func(*protocol.Envelope)
	}{
		{"protocol league.v1", func(e *protocol.Envelope) { e.Protocol = "league.v1" }},
		{"a timestamp at +02:00", func(e *protocol.Envelope) { e.Timestamp = "2025-01-21T10:00:00+02:00" }},
		{"an empty conversation_id", func(e *protocol.Envelope) { e.ConversationID = "" }},
	} {
		msg, err := r.standingsQuery(r.players[0])
		if err != nil {
			return err
		}
		bad.spoil(&msg.Envelope)
		reqs = append(reqs, lmBadRequest{"QUERY_STANDINGS with " + bad.name, msg})
	}
	how, err := r.refusedAll(ctx, reqs)
	r.check(ckBadEnvelope, err, how)
	return nil
}

func (r *lmRun) badPayload(ctx context.Context) error {
	id := "conform-" + r.tag + "-noid"
	msg, err := protocol.NewMessage(protocol.RegisterPlayerRequest, protocol.PlayerSender(id), map[string]any{
		"endpoint_url": r.base + "/player/" + id + "/mcp",
	})
	if err != nil {
		return err
	}
	how, err := r.refusedAll(ctx, []lmBadRequest{{"REGISTER_PLAYER_REQUEST without player_id", msg}})
	r.check(ckBadPayload, err, how)
	return nil
}

func (r *lmRun) badJSON(ctx context.Context) error {
	r.badInputs++
	c := r.wire.post(ctx, "a body that is not JSON", []byte(`{"jsonrpc": "2.0", "method": "league.handle", "params": {"envelope": `), "", "", true)
	e, err := c.refusal()
	if err != nil {
		r.fail(ckBadJSON, "a body that is not JSON got "+err.Error())
		r.fail(ckParseCode, "no JSON-RPC error came back")
		return nil
	}
	r.pass(ckBadJSON, "a body that is not JSON was refused with "+e.describe())
	code, _ := e.Code.Int64()
	idOK := !c.rpc.hasID || string(c.rpc.id) == "null"
	switch {
	case code != -32700:
		r.fail(ckParseCode, fmt.Sprintf("code %d, JSON-RPC 2.0 says -32700 (Parse error)", code))
	case !idOK:
		r.fail(ckParseCode, fmt.Sprintf("code -32700 but id %s: JSON-RPC 2.0 says null when the id cannot be read", snippet(c.rpc.id, 60)))
	default:
		r.pass(ckParseCode, "code -32700 with id null")
	}
	return nil
}

func (r *lmRun) oversized(ctx context.Context) error {
	r.badInputs++
	msg, err := r.standingsQuery(r.players[0])
	if err != nil {
		return err
	}
	msg.Payload, err = json.Marshal(map[string]string{"padding": strings.Repeat("x", oversizedBytes)})
	if err != nil {
		return err
	}
	id := `"` + uuid.NewString() + `"`
	body, err := json.Marshal(protocol.Request{JSONRPC: protocol.JSONRPCVersion, Method: protocol.Method, Params: msg, ID: json.RawMessage(id)})
	if err != nil {
		return err
	}
	c := r.wire.post(ctx, "a body over 1 MiB", body, id, msg.Envelope.ConversationID, true)
	size := fmt.Sprintf("a body of %d bytes", len(body))
	switch e, rerr := c.refusal(); {
	case rerr == nil:
		r.pass(ckOversized, size+" was refused with "+e.describe())
	case c.err == nil && c.status == 413:
		r.pass(ckOversized, size+" was refused with HTTP 413")
	case c.err != nil && !errors.Is(c.err, context.DeadlineExceeded) && ctx.Err() == nil:
		// Closing the connection on a body it will not read is a refusal too; whether the
		// server survived is lm.bad.survived's business.
		r.pass(ckOversized, size+" was cut off: "+c.err.Error())
	default:
		r.fail(ckOversized, size+": "+c.describe())
	}
	return nil
}

// registerRest registers the other players, then judges every player's registration,
// the tokens and the features announced.
func (r *lmRun) registerRest(ctx context.Context) error {
	var problems []string
	for _, p := range r.players[1:] {
		if err := r.register(ctx, p); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		r.fail(ckPlayerReg, strings.Join(problems, "; "))
		return errors.New("a player could not register")
	}
	r.pass(ckPlayerReg, fmt.Sprintf("%d players registered: valid REGISTER_PLAYER_RESPONSE, league_id %q", len(r.players), r.leagueIDOf()))

	seen := map[string]string{}
	var clash []string
	for _, a := range append(r.refs[:], r.players[:]...) {
		t := r.tokenOf(a)
		if other, ok := seen[t]; ok {
			clash = append(clash, a.id+" got the token of "+other)
		}
		seen[t] = a.id
	}
	if len(clash) > 0 {
		r.fail(ckTokens, strings.Join(clash, "; "))
	} else {
		r.pass(ckTokens, fmt.Sprintf("%d agents, %d distinct tokens", len(seen), len(seen)))
	}

	r.mu.Lock()
	missing, features := slices.Clone(r.featuresMissing), slices.Clone(r.lmFeatures)
	r.mu.Unlock()
	switch {
	case len(missing) >= len(r.refs)+len(r.players):
		r.fail(ckFeatures, "no registration answer announces features: agents will use plain league.v2 only")
	case len(missing) > 0:
		r.fail(ckFeatures, "the registration answers of "+strings.Join(missing, ", ")+" announce no features")
	default:
		r.pass(ckFeatures, "announced: "+strings.Join(features, ", "))
	}
	return nil
}
