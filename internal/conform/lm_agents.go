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
	"github.com/agentleague/agentleague/referee"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

// lmRecorder sees every request sent to one of the tool's agents, also those the
// protocol server refused, and keeps the schema violations of what the League Manager sent.
type lmRecorder struct {
	r     *lmRun
	agent *lmAgent
}

// Record implements protocol.Recorder.
func (rec lmRecorder) Record(ex protocol.Exchange) error {
	if !ex.Inbound {
		return nil
	}
	generic, err := normalize(ex.Request)
	obj, _ := generic.(map[string]any)
	if err != nil || obj == nil {
		rec.r.noteInbound("", fmt.Sprintf("%s got a request that is not a JSON-RPC request object", rec.agent.id))
		return nil
	}
	params, _ := obj["params"].(map[string]any)
	env, _ := params["envelope"].(map[string]any)
	mt, _ := env["message_type"].(string)
	if vs := rec.r.v.ValidateParams(obj["params"]); len(vs) > 0 {
		rec.r.noteInbound(mt, fmt.Sprintf("%s to %s: %s", mt, rec.agent.id, joinViolations(vs, 4)))
	}
	return nil
}

// maxNotes bounds each list of problems kept for a reason line.
const maxNotes = 8

func (r *lmRun) noteInbound(messageType, note string) {
	r.mu.Lock()
	if len(r.inbound[messageType]) < maxNotes {
		r.inbound[messageType] = append(r.inbound[messageType], note)
	}
	r.mu.Unlock()
	if messageType == protocol.MatchAssignment {
		r.notify()
	}
}

// noteUnexpected keeps an extension message sent to an agent that did not announce it.
func (r *lmRun) noteUnexpected(a *lmAgent, messageType string) error {
	r.mu.Lock()
	if len(r.unexpected) < maxNotes {
		r.unexpected = append(r.unexpected, messageType+" to "+a.id)
	}
	r.mu.Unlock()
	return protocol.Errorf(protocol.ReasonUnsupportedMessage, "%s did not announce the feature %s needs", a.id, messageType)
}

func (r *lmRun) noteShutdown(a *lmAgent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.shutdowns, a.id) {
		r.shutdowns = append(r.shutdowns, a.id)
	}
}

// reply answers msg as agent a, naming the match when msg did.
func (a *lmAgent) reply(msg *protocol.Message, messageType string, payload any) (*protocol.Message, error) {
	out, err := msg.Reply(messageType, a.sender(), payload)
	if err != nil {
		return nil, err
	}
	out.Envelope.MatchID = msg.Envelope.MatchID
	return out, nil
}

// refereeHandle answers what the League Manager sends one of the tool's referees.
func (r *lmRun) refereeHandle(ctx context.Context, a *lmAgent, msg *protocol.Message) (*protocol.Message, error) {
	switch msg.Envelope.MessageType {
	case protocol.MatchAssignment:
		return r.assignment(a, msg)
	case protocol.ResultReminder:
		if !slices.Contains(a.features, protocol.FeatureResultReminders) {
			return nil, r.noteUnexpected(a, msg.Envelope.MessageType)
		}
		return r.resultReminder(a, msg)
	case protocol.LeagueShutdown:
		r.noteShutdown(a)
		return a.reply(msg, protocol.LeagueShutdownAck, protocol.Ack{Status: protocol.StatusAcknowledged})
	case protocol.MatchCancelled:
		return nil, r.noteUnexpected(a, msg.Envelope.MessageType)
	}
	zerolog.Ctx(ctx).Debug().Str("referee_id", a.id).Msg("message a referee does not take")
	return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "a referee does not accept %s", msg.Envelope.MessageType)
}

// assignment acknowledges a MATCH_ASSIGNMENT and plays the match in the background; a
// repeated assignment of a match the referee took is acknowledged again.
func (r *lmRun) assignment(a *lmAgent, msg *protocol.Message) (*protocol.Message, error) {
	var as protocol.Assignment
	if err := msg.Decode(&as); err != nil {
		r.noteInbound(protocol.MatchAssignment, fmt.Sprintf("MATCH_ASSIGNMENT to %s cannot be read: %v", a.id, err))
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "assignment payload cannot be read")
	}
	g, err := r.reg.New(as.GameType, as.GameParams)
	if err != nil {
		return nil, protocol.Errorf(protocol.ReasonUnsupportedGame, "the conform referee cannot play %s with these game_params", as.GameType)
	}
	ack := protocol.MatchAck{Status: protocol.StatusAcknowledged, MatchID: as.MatchID}
	r.mu.Lock()
	r.assignments = append(r.assignments, lmAssignment{referee: a.id, env: msg.Envelope, a: as})
	key := a.id + "/" + as.MatchID
	switch {
	case r.closing:
		r.mu.Unlock()
		return nil, protocol.Errorf(protocol.ReasonShuttingDown, "the conformance run is over")
	case !r.taken[key]:
		r.taken[key] = true
		r.bg.Add(1)
		// Ends when the match is reported or the run's context ends.
		go r.playMatch(a, as, g)
	}
	r.mu.Unlock()
	r.notify()
	r.log.Info().Str("conversation_id", msg.Envelope.ConversationID).Str("referee_id", a.id).Str("match_id", as.MatchID).
		Strs("players", as.Players).Msg("match assigned")
	return a.reply(msg, protocol.MatchAssignmentAck, ack)
}

// playerHandle answers what a referee or the League Manager sends one of the tool's
// players: it joins every match and plays a random legal move by the game's rules.
func (r *lmRun) playerHandle(_ context.Context, a *lmAgent, msg *protocol.Message) (*protocol.Message, error) {
	env := &msg.Envelope
	switch env.MessageType {
	case protocol.GameInvitation:
		var inv protocol.Invitation
		if err := msg.Decode(&inv); err != nil {
			return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "invitation payload cannot be read")
		}
		g, err := r.reg.New(env.GameType, inv.GameParams)
		if err != nil {
			return a.reply(msg, protocol.GameJoinAck, map[string]string{"status": protocol.StatusDeclined, "match_id": env.MatchID, "reason": "unknown game"})
		}
		r.mu.Lock()
		a.games[env.MatchID] = g
		r.mu.Unlock()
		return a.reply(msg, protocol.GameJoinAck, map[string]string{"status": protocol.StatusAccepted, "match_id": env.MatchID})
	case protocol.RequestMove:
		return r.move(a, msg)
	case protocol.GameOver:
		r.mu.Lock()
		delete(a.games, env.MatchID)
		r.mu.Unlock()
		return a.reply(msg, protocol.GameOverAck, protocol.Ack{Status: protocol.StatusAcknowledged})
	case protocol.LeagueShutdown:
		r.noteShutdown(a)
		return a.reply(msg, protocol.LeagueShutdownAck, protocol.Ack{Status: protocol.StatusAcknowledged})
	case protocol.MatchCancelled:
		return nil, r.noteUnexpected(a, env.MessageType)
	}
	return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "a player does not accept %s", env.MessageType)
}

// move answers REQUEST_MOVE with a random legal move of the step_context.
func (r *lmRun) move(a *lmAgent, msg *protocol.Message) (*protocol.Message, error) {
	var req protocol.MoveRequest
	if err := msg.Decode(&req); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "move request payload cannot be read")
	}
	r.mu.Lock()
	g := a.games[msg.Envelope.MatchID]
	r.mu.Unlock()
	if g == nil {
		var err error
		if g, err = r.reg.New(msg.Envelope.GameType, nil); err != nil {
			return nil, protocol.Errorf(protocol.ReasonUnsupportedGame, "this player cannot play %s", msg.Envelope.GameType)
		}
	}
	legal, err := g.LegalMoves(req.StepContext)
	if err != nil || len(legal) == 0 {
		return nil, protocol.Errorf(protocol.ReasonStaleStep, "no legal move in this step_context")
	}
	r.mu.Lock()
	mv := legal[a.rng.IntN(len(legal))]
	r.mu.Unlock()
	return a.reply(msg, protocol.MoveResponse, map[string]any{"move_payload": mv, "step_number": req.StepNumber, "context_hash": req.ContextHash})
}

// otherReferee is the tool's referee that is not a.
func (r *lmRun) otherReferee(a *lmAgent) *lmAgent {
	if a == r.refs[0] {
		return r.refs[1]
	}
	return r.refs[0]
}

// playMatch plays one assigned match by the rules and reports it. The first match of the
// run also carries the result probes; the first of the first referee may be held back to
// see a RESULT_REMINDER.
func (r *lmRun) playMatch(a *lmAgent, as protocol.Assignment, g game.Game) {
	defer r.bg.Done()
	ctx := r.ctx
	log := r.log.With().Str("referee_id", a.id).Str("match_id", as.MatchID).Logger()
	r.mu.Lock()
	probe := !r.probed
	r.probed = true
	r.mu.Unlock()
	if probe {
		r.probeResults(ctx, a, as)
		r.probeQueryMatch(ctx, a, as)
	}
	runner := &referee.MatchRunner{
		RefereeID: a.id, LeagueID: r.leagueIDOf(), Game: g, A: as, Caller: r.client, Log: log,
		JoinTimeout: r.opt.MoveTimeout, MoveTimeout: r.opt.MoveTimeout,
		Progress: func(phase string, step int) { r.setProgress(a, as.MatchID, phase, step) },
	}
	rep, err := runner.Run(ctx)
	if err != nil {
		log.Info().Err(err).Msg("match not finished")
		r.setProgress(a, as.MatchID, "", 0)
		return
	}
	if h := r.claimHold(a, as.MatchID); h != nil {
		r.holdForReminder(ctx, a, h, rep.Metadata.Steps)
	}
	r.report(ctx, a, as, rep, probe)
	r.setProgress(a, as.MatchID, "", 0)
}

// resultMessage is a MATCH_RESULT_REPORT of as from referee a.
func (r *lmRun) resultMessage(a *lmAgent, as protocol.Assignment, outcome map[string]string, points map[string]int, meta any) (*protocol.Message, error) {
	payload := map[string]any{"game_type": as.GameType, "players": as.Players, "outcome": outcome, "points": points,
		"game_metadata": meta, "match_id": as.MatchID, "round_id": as.RoundID}
	m, err := r.message(a, protocol.MatchResultReport, payload)
	if err != nil {
		return nil, err
	}
	m.Envelope.RoundID, m.Envelope.MatchID, m.Envelope.GameType = as.RoundID, as.MatchID, as.GameType
	return m, nil
}

// drawResult is a plausible result no referee played: both players draw.
func drawResult(as protocol.Assignment) (map[string]string, map[string]int) {
	pts := 1
	if as.Scoring != nil {
		pts = as.Scoring.Draw
	}
	outcome, points := map[string]string{}, map[string]int{}
	for _, p := range as.Players {
		outcome[p], points[p] = string(protocol.Draw), pts
	}
	return outcome, points
}

// probeResults sends two reports of a match that must be refused: one with a wrong token,
// one from the referee the match is not assigned to. One the League Manager takes stands
// as the match's result.
func (r *lmRun) probeResults(ctx context.Context, a *lmAgent, as protocol.Assignment) {
	outcome, points := drawResult(as)
	meta := map[string]any{"conform_probe": "a result no referee played"}
	for _, p := range []struct {
		check, what string
		from        *lmAgent
		token       string
	}{
		{ckResultToken, "with a wrong auth_token", a, uuid.NewString()},
		{ckResultOwner, "from " + r.otherReferee(a).id + ", which it is not assigned to", r.otherReferee(a), ""},
	} {
		msg, err := r.resultMessage(p.from, as, outcome, points, meta)
		if err != nil {
			r.fail(p.check, "cannot build the report: "+err.Error())
			continue
		}
		if p.token != "" {
			msg.Envelope.AuthToken = p.token
		}
		c := r.wire.send(ctx, "MATCH_RESULT_REPORT of "+as.MatchID+" "+p.what, msg)
		if ctx.Err() != nil {
			return
		}
		if e, err := c.refusal(); err == nil {
			r.pass(p.check, fmt.Sprintf("a report of %s %s was refused with %s", as.MatchID, p.what, e.describe()))
			continue
		}
		r.fail(p.check, fmt.Sprintf("a report of %s %s: %s", as.MatchID, p.what, c.describe()))
		if _, err := c.answer(r.v, protocol.MatchResultAck); err == nil {
			r.accept(as, outcome, points)
		}
	}
}

// probeQueryMatch asks, as a player of the match, which referee holds it.
func (r *lmRun) probeQueryMatch(ctx context.Context, a *lmAgent, as protocol.Assignment) {
	if !r.lmHas(protocol.FeatureMatchQuery) || len(as.Players) == 0 {
		return
	}
	p := r.agents[as.Players[0]]
	if p == nil || p.kind != "player" {
		r.fail(ckQueryMatch, fmt.Sprintf("match %s names %q, not a player of the tool", as.MatchID, as.Players[0]))
		return
	}
	msg, err := r.message(p, protocol.QueryMatch, protocol.MatchQuery{MatchID: as.MatchID})
	if err != nil {
		r.fail(ckQueryMatch, err.Error())
		return
	}
	msg.Envelope.MatchID = as.MatchID
	c := r.wire.send(ctx, "QUERY_MATCH of "+as.MatchID, msg)
	if ctx.Err() != nil {
		return
	}
	m, err := c.answer(r.v, protocol.MatchInfo)
	if err != nil {
		r.fail(ckQueryMatch, err.Error())
		return
	}
	var info protocol.MatchDetails
	if err := json.Unmarshal(m.Payload, &info); err != nil {
		r.fail(ckQueryMatch, "MATCH_INFO payload cannot be read: "+err.Error())
		return
	}
	switch {
	case info.MatchID != as.MatchID:
		r.fail(ckQueryMatch, fmt.Sprintf("MATCH_INFO names match %q, asked about %s", info.MatchID, as.MatchID))
	case info.RefereeID == nil || *info.RefereeID != a.id:
		r.fail(ckQueryMatch, fmt.Sprintf("MATCH_INFO of %s (status %s) does not name its referee %s", as.MatchID, info.Status, a.id))
	default:
		r.pass(ckQueryMatch, fmt.Sprintf("MATCH_INFO of %s names referee %s (status %s)", as.MatchID, a.id, info.Status))
	}
}

// report sends the result of a played match until an answer comes, judges the
// acknowledgement, and for the probed match sends it a second time.
func (r *lmRun) report(ctx context.Context, a *lmAgent, as protocol.Assignment, rep *referee.Report, probe bool) {
	r.mu.Lock()
	_, forged := r.results[as.MatchID]
	r.mu.Unlock()
	if forged {
		// A probe's report was taken for this match: nothing more would be accepted.
		if probe {
			r.skip(ckResultDup, "the League Manager took a probe's report of "+as.MatchID+", so no report of the match was sent twice")
		}
		return
	}
	msg, err := r.resultMessage(a, as, rep.Outcome, rep.Points, rep.Metadata)
	if err != nil {
		r.noteAck(as.MatchID + ": cannot build the report: " + err.Error())
		return
	}
	c := r.wire.sendAttempts(ctx, "MATCH_RESULT_REPORT of "+as.MatchID, msg, 3)
	if ctx.Err() != nil {
		return
	}
	r.mu.Lock()
	r.reportsSent++
	r.mu.Unlock()
	if err := r.acked(c, as.MatchID); err != nil {
		r.noteAck(as.MatchID + ": " + err.Error())
		return
	}
	r.accept(as, rep.Outcome, rep.Points)
	if !probe {
		return
	}
	again, err := r.resultMessage(a, as, rep.Outcome, rep.Points, rep.Metadata)
	if err != nil {
		r.fail(ckResultDup, err.Error())
		return
	}
	c = r.wire.send(ctx, "second identical MATCH_RESULT_REPORT of "+as.MatchID, again)
	if ctx.Err() != nil {
		return
	}
	if e, err := c.refusal(); err == nil {
		r.pass(ckResultDup, fmt.Sprintf("an identical second report of %s was refused with %s", as.MatchID, e.describe()))
		return
	}
	if err := r.acked(c, as.MatchID); err != nil {
		r.fail(ckResultDup, fmt.Sprintf("an identical second report of %s: %v", as.MatchID, err))
		return
	}
	r.mu.Lock()
	r.dupAcked = as.MatchID
	r.mu.Unlock()
	r.pass(ckResultDup, fmt.Sprintf("an identical second report of %s was acknowledged again", as.MatchID))
}

// acked checks that c is a valid MATCH_RESULT_ACK of matchID.
func (r *lmRun) acked(c *lmCall, matchID string) error {
	m, err := c.answer(r.v, protocol.MatchResultAck)
	if err != nil {
		return err
	}
	var p protocol.MatchAck
	if err := json.Unmarshal(m.Payload, &p); err != nil || p.MatchID != matchID {
		return fmt.Errorf("MATCH_RESULT_ACK names match %q", p.MatchID)
	}
	return nil
}

func (r *lmRun) noteAck(problem string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ackProblems) < maxNotes {
		r.ackProblems = append(r.ackProblems, problem)
	}
}

// accept keeps an acknowledged result, the first for each match.
func (r *lmRun) accept(as protocol.Assignment, outcome map[string]string, points map[string]int) {
	r.mu.Lock()
	if _, ok := r.results[as.MatchID]; !ok {
		r.results[as.MatchID] = lmResult{players: slices.Clone(as.Players), outcomes: maps.Clone(outcome), points: maps.Clone(points)}
	}
	r.mu.Unlock()
	r.notify()
}

// setProgress keeps where a match stands for heartbeats; an empty phase forgets it.
func (r *lmRun) setProgress(a *lmAgent, matchID, phase string, step int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	held := r.progress[a.id]
	if held == nil {
		held = map[string]protocol.MatchProgress{}
		r.progress[a.id] = held
	}
	if phase == "" {
		delete(held, matchID)
		return
	}
	held[matchID] = protocol.MatchProgress{MatchID: matchID, Step: step, Phase: phase}
}

// reminderReady says whether the League Manager and the run allow the reminder check,
// and if not, why.
func (r *lmRun) reminderReady() (bool, string) {
	for _, f := range lmRefereeFeatures {
		if !r.lmHas(f) {
			return false, fmt.Sprintf("the League Manager did not announce %s (a reminder is checked with a referee announcing %v)", f, lmRefereeFeatures)
		}
	}
	if r.opt.ReminderWait <= 0 {
		return false, "not checked: --reminder-wait is 0 (set it above the League Manager's result_report_ms)"
	}
	return true, ""
}

// claimHold picks the first match the first referee finishes as the one whose result is
// held back; nil for any other.
func (r *lmRun) claimHold(a *lmAgent, matchID string) *lmReminder {
	if a != r.refs[0] {
		return nil
	}
	if ok, _ := r.reminderReady(); !ok {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reminder != nil {
		return nil
	}
	r.reminder = &lmReminder{matchID: matchID, since: time.Now(), got: make(chan string, 1)}
	return r.reminder
}

// holdForReminder says play is over (phase reporting) and waits for the RESULT_REMINDER.
func (r *lmRun) holdForReminder(ctx context.Context, a *lmAgent, h *lmReminder, steps int) {
	r.setProgress(a, h.matchID, protocol.PhaseReporting, steps)
	r.heartbeat(ctx, a)
	t := time.NewTimer(r.opt.ReminderWait)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case how := <-h.got:
		r.pass(ckReminder, fmt.Sprintf("RESULT_REMINDER of %s came %s after the referee said play was over (%s); the report followed",
			h.matchID, time.Since(h.since).Round(time.Millisecond), how))
	case <-t.C:
		r.mu.Lock()
		bad := slices.Clone(r.inbound[protocol.ResultReminder])
		r.mu.Unlock()
		if len(bad) > 0 {
			r.fail(ckReminder, "RESULT_REMINDER broke its schema: "+bad[0])
			return
		}
		r.skip(ckReminder, fmt.Sprintf("no RESULT_REMINDER of %s within --reminder-wait %s of its referee saying play was over; set --reminder-wait above the League Manager's result_report_ms",
			h.matchID, r.opt.ReminderWait))
	}
}

// resultReminder answers RESULT_REMINDER with where the match stands and lets the held
// report go.
func (r *lmRun) resultReminder(a *lmAgent, msg *protocol.Message) (*protocol.Message, error) {
	var p protocol.Reminder
	if err := msg.Decode(&p); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "reminder payload cannot be read")
	}
	r.mu.Lock()
	prog, held := r.progress[a.id][p.MatchID]
	h := r.reminder
	signed := slices.Contains(r.lmFeatures, protocol.FeatureSignedAssignments)
	tokenOK := protocol.TokenEqual(msg.Envelope.AuthToken, a.token)
	r.mu.Unlock()
	phase := protocol.PhaseUnknown
	if held {
		phase = prog.Phase
	}
	if h != nil && h.matchID == p.MatchID {
		how := fmt.Sprintf("attempt %d", p.Attempt)
		if signed && !tokenOK {
			how += ", without the referee's token although signed_assignments was announced"
		}
		select {
		case h.got <- how:
		default:
		}
		r.notify()
	}
	return a.reply(msg, protocol.ResultReminderAck, protocol.ReminderAck{Status: protocol.StatusAcknowledged, MatchID: p.MatchID, Phase: phase, Resent: held && phase == protocol.PhaseReporting})
}

// startHeartbeats sends the first referee's heartbeats when both sides announced them.
func (r *lmRun) startHeartbeats() {
	if !r.lmHas(protocol.FeatureHeartbeats) {
		r.skip(ckHeartbeat, "the League Manager did not announce heartbeats")
		return
	}
	r.mu.Lock()
	every := r.heartbeatEvery
	r.mu.Unlock()
	if every <= 0 {
		every = 2 * time.Second
	}
	a := r.refs[0]
	r.bg.Go(func() {
		// Ends when close cancels the run's context.
		r.heartbeat(r.ctx, a)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-r.ctx.Done():
				return
			case <-t.C:
				r.heartbeat(r.ctx, a)
			}
		}
	})
}

// heartbeat sends one HEARTBEAT_REQUEST listing where a's matches stand and judges the answer.
func (r *lmRun) heartbeat(ctx context.Context, a *lmAgent) {
	r.mu.Lock()
	progress := append([]protocol.MatchProgress{}, slices.SortedFunc(maps.Values(r.progress[a.id]), func(x, y protocol.MatchProgress) int {
		return strings.Compare(x.MatchID, y.MatchID)
	})...)
	withProgress := slices.Contains(r.lmFeatures, protocol.FeatureMatchProgress)
	r.mu.Unlock()
	active := []string{}
	for _, p := range progress {
		if p.Phase == protocol.PhaseJoining || p.Phase == protocol.PhasePlaying {
			active = append(active, p.MatchID)
		}
	}
	payload := protocol.Heartbeat{ActiveMatches: active}
	if withProgress {
		payload.MatchProgress = progress
	}
	msg, err := r.message(a, protocol.HeartbeatRequest, payload)
	if err != nil {
		r.log.Error().Err(err).Msg("build heartbeat")
		return
	}
	c := r.wire.send(ctx, "HEARTBEAT_REQUEST of "+a.id, msg)
	if ctx.Err() != nil {
		return
	}
	ans, err := c.answer(r.v, protocol.HeartbeatResponse)
	var p protocol.HeartbeatAnswer
	if err == nil {
		err = json.Unmarshal(ans.Payload, &p)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.heartbeats++
	if err != nil && r.heartbeatErr == "" {
		r.heartbeatErr = fmt.Sprintf("heartbeat %d: %v", r.heartbeats, err)
	}
	if err == nil {
		r.heartbeatLease = p.LeaseMS
	}
}

// heartbeatCheck judges every heartbeat sent during the run.
func (r *lmRun) heartbeatCheck() {
	r.mu.Lock()
	n, lease, problem := r.heartbeats, r.heartbeatLease, r.heartbeatErr
	r.mu.Unlock()
	switch {
	case n == 0:
		return
	case problem != "":
		r.fail(ckHeartbeat, problem)
	default:
		r.pass(ckHeartbeat, fmt.Sprintf("%d HEARTBEAT_REQUESTs answered with a valid HEARTBEAT_RESPONSE (lease_ms %d)", n, lease))
	}
}
