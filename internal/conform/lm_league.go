package conform

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/protocol"
)

// playLeague starts the league (or waits for the League Manager to), lets it run to the
// last result, and judges the schedule, the results and the standings.
func (r *lmRun) playLeague(ctx context.Context) error {
	for _, f := range []struct{ feature, check string }{
		{protocol.FeatureSignedAssignments, ckSigned}, {protocol.FeatureMatchCredentials, ckCredentials}, {protocol.FeatureMatchQuery, ckQueryMatch},
	} {
		if !r.lmHas(f.feature) {
			r.skip(f.check, "the League Manager did not announce "+f.feature)
		}
	}
	if ok, why := r.reminderReady(); !ok {
		r.skip(ckReminder, why)
	}
	registered := time.Now()
	how := "the League Manager closed registration itself"
	if r.opt.AdminToken != "" {
		msg, err := protocol.NewMessage(protocol.AdminStartLeagueRequest, protocol.SenderAdmin, map[string]any{})
		if err != nil {
			return err
		}
		msg.Envelope.AuthToken = r.opt.AdminToken
		c := r.wire.send(ctx, "ADMIN_START_LEAGUE_REQUEST", msg)
		if _, err := c.answer(r.v, protocol.AdminStartLeagueResponse); err == nil {
			how = "ADMIN_START_LEAGUE_REQUEST answered with a valid ADMIN_START_LEAGUE_RESPONSE"
		} else {
			how = "ADMIN_START_LEAGUE_REQUEST: " + err.Error() + "; the League Manager started the league itself"
		}
	}
	started := func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.assignments) > 0 || len(r.inbound[protocol.MatchAssignment]) > 0
	}
	if !r.await(ctx, r.opt.Wait, started) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.fail(ckStart, fmt.Sprintf("no MATCH_ASSIGNMENT within --wait %s of the last registration (%s)", r.opt.Wait, strings.Replace(how, "; the League Manager started the league itself", "", 1)))
		return errors.New("the league did not start")
	}
	r.pass(ckStart, fmt.Sprintf("the first MATCH_ASSIGNMENT came %s after the last registration; %s", time.Since(registered).Round(time.Millisecond), how))

	// Nothing may move while a result is held back for a reminder.
	idle := r.opt.Wait + r.opt.ReminderWait
	complete := r.await(ctx, idle, r.allPlayed)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	r.judgeAssignments()
	r.judgeSchedule()
	r.judgeResults(complete)
	r.judgeStandings(ctx, complete)
	r.mu.Lock()
	unexpected := slices.Clone(r.unexpected)
	for mt, notes := range r.inbound {
		if mt != protocol.MatchAssignment && mt != protocol.ResultReminder && mt != protocol.LeagueShutdown {
			unexpected = append(unexpected, notes...)
		}
	}
	r.mu.Unlock()
	if len(unexpected) > 0 {
		r.fail(ckRespected, strings.Join(unexpected, "; "))
	} else {
		r.pass(ckRespected, "no extension message reached an agent that did not announce it, and every message the agents got was valid")
	}
	if !complete {
		return fmt.Errorf("the league did not complete: nothing moved for %s", idle)
	}
	return nil
}

// pair is a match's two players, sorted.
type pair [2]string

func pairOf(players []string) (pair, bool) {
	if len(players) != 2 {
		return pair{}, false
	}
	p := pair{players[0], players[1]}
	if p[1] < p[0] {
		p[0], p[1] = p[1], p[0]
	}
	return p, true
}

// allPlayed says whether every pair of the tool's players has an acknowledged result.
func (r *lmRun) allPlayed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	done := map[pair]bool{}
	for _, res := range r.results {
		if p, ok := pairOf(res.players); ok {
			done[p] = true
		}
	}
	for _, p := range r.allPairs() {
		if !done[p] {
			return false
		}
	}
	return true
}

// allPairs lists every pair of the tool's players.
func (r *lmRun) allPairs() []pair {
	ids := r.playerIDs()
	slices.Sort(ids)
	var out []pair
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			out = append(out, pair{ids[i], ids[j]})
		}
	}
	return out
}

// judgeAssignments checks every MATCH_ASSIGNMENT against its schema and what it must say.
func (r *lmRun) judgeAssignments() {
	r.mu.Lock()
	assignments := slices.Clone(r.assignments)
	bad := slices.Clone(r.inbound[protocol.MatchAssignment])
	leagueID := r.leagueID
	tokens := map[string]string{}
	for id, a := range r.agents {
		tokens[id] = a.token
	}
	r.mu.Unlock()
	if len(bad) > 0 {
		r.fail(ckAssignSchema, strings.Join(bad, "; "))
	} else {
		r.pass(ckAssignSchema, fmt.Sprintf("%d MATCH_ASSIGNMENTs, every one valid", len(assignments)))
	}

	var content, signed, creds []string
	note := func(list *[]string, format string, args ...any) {
		if len(*list) < maxNotes {
			*list = append(*list, fmt.Sprintf(format, args...))
		}
	}
	for _, x := range assignments {
		a, e := x.a, x.env
		switch {
		case e.MatchID != a.MatchID || e.RoundID != a.RoundID:
			note(&content, "%s: envelope names match %q round %q, payload match %q round %q", x.referee, e.MatchID, e.RoundID, a.MatchID, a.RoundID)
		case e.GameType != a.GameType || a.GameType != r.opt.Game:
			note(&content, "%s: game_type %q (envelope %q), the league plays %s (--game)", a.MatchID, a.GameType, e.GameType, r.opt.Game)
		case e.LeagueID != "" && e.LeagueID != leagueID:
			note(&content, "%s: envelope league_id %q, registration said %q", a.MatchID, e.LeagueID, leagueID)
		}
		for _, p := range a.Players {
			ag := r.agents[p]
			switch {
			case ag == nil || ag.kind != "player":
				note(&content, "%s: %q is not a registered player", a.MatchID, p)
			case a.PlayerEndpoints[p] != ag.url:
				note(&content, "%s: endpoint of %s is %q, it registered %q", a.MatchID, p, a.PlayerEndpoints[p], ag.url)
			case a.MatchCredentials[p] != protocol.MatchCredential(tokens[p], a.MatchID):
				note(&creds, "%s: the credential of %s is not HMAC-SHA256(its token, match_id)", a.MatchID, p)
			}
		}
		if !protocol.TokenEqual(e.AuthToken, tokens[x.referee]) {
			note(&signed, "the assignment of %s to %s does not carry that referee's token", a.MatchID, x.referee)
		}
	}
	n := len(assignments)
	r.check(ckAssignContent, joinErr(content), fmt.Sprintf("%d assignments name registered players, their registered endpoints and %s", n, r.opt.Game))
	if r.lmHas(protocol.FeatureSignedAssignments) {
		r.check(ckSigned, joinErr(signed), fmt.Sprintf("%d assignments carry their referee's own token", n))
	}
	if r.lmHas(protocol.FeatureMatchCredentials) {
		r.check(ckCredentials, joinErr(creds), fmt.Sprintf("%d assignments carry both players' match credentials", n))
	}
}

func joinErr(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(problems, "; "))
}

// judgeSchedule checks that match ids are distinct, nobody plays twice in a round, and
// every pair meets exactly once.
func (r *lmRun) judgeSchedule() {
	r.mu.Lock()
	assignments := slices.Clone(r.assignments)
	r.mu.Unlock()
	byMatch := map[string]pair{}
	inRound := map[string]map[string]string{}
	var problems []string
	for _, x := range assignments {
		p, ok := pairOf(x.a.Players)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s has %d players", x.a.MatchID, len(x.a.Players)))
			continue
		}
		if old, seen := byMatch[x.a.MatchID]; seen {
			// A match sent again (a retry, or to another referee) is the same match.
			if old != p {
				problems = append(problems, fmt.Sprintf("match id %s names %s-%s and %s-%s", x.a.MatchID, old[0], old[1], p[0], p[1]))
			}
			continue
		}
		byMatch[x.a.MatchID] = p
		if inRound[x.a.RoundID] == nil {
			inRound[x.a.RoundID] = map[string]string{}
		}
		for _, id := range p {
			if other, ok := inRound[x.a.RoundID][id]; ok {
				problems = append(problems, fmt.Sprintf("%s plays %s and %s in round %s", id, other, x.a.MatchID, x.a.RoundID))
			}
			inRound[x.a.RoundID][id] = x.a.MatchID
		}
	}
	r.check(ckRounds, joinErr(problems), fmt.Sprintf("%d distinct match ids in %d rounds; nobody plays twice in a round", len(byMatch), len(inRound)))

	count := map[pair]int{}
	for _, p := range byMatch {
		count[p]++
	}
	var missing, twice []string
	for _, p := range r.allPairs() {
		switch n := count[p]; {
		case n == 0:
			missing = append(missing, p[0]+"-"+p[1])
		case n > 1:
			twice = append(twice, fmt.Sprintf("%s-%s (%d matches)", p[0], p[1], n))
		}
	}
	var err error
	switch {
	case len(missing) > 0 && len(twice) > 0:
		err = fmt.Errorf("never paired: %s; paired more than once: %s", strings.Join(missing, ", "), strings.Join(twice, ", "))
	case len(missing) > 0:
		err = fmt.Errorf("never paired within --wait: %s", strings.Join(missing, ", "))
	case len(twice) > 0:
		err = fmt.Errorf("paired more than once: %s", strings.Join(twice, ", "))
	}
	want := len(r.allPairs())
	r.check(ckRoundRobin, err, fmt.Sprintf("all %d pairs of the %d players met exactly once", want, len(r.players)))
}

// judgeResults checks that every report of a played match was acknowledged.
func (r *lmRun) judgeResults(complete bool) {
	r.mu.Lock()
	sent, problems, accepted := r.reportsSent, slices.Clone(r.ackProblems), len(r.results)
	r.mu.Unlock()
	switch {
	case len(problems) > 0:
		r.fail(ckResultAck, strings.Join(problems, "; "))
	case sent == 0:
		r.skip(ckResultAck, "no match was played to the end")
	default:
		r.pass(ckResultAck, fmt.Sprintf("%d reports acknowledged with a valid MATCH_RESULT_ACK naming the match (%d results in all)", sent, accepted))
	}
	if !complete {
		r.skip(ckResultDup, "the league did not complete")
	}
}

// standingsTries and standingsPause bound how long the standings may lag the last
// acknowledgement: seed 004 §3.4 recomputes them after answering the referee.
const (
	standingsTries = 5
	standingsPause = 100 * time.Millisecond
)

// judgeStandings compares the standings with a recount of the acknowledged results, and
// looks for the sign that the league is over.
func (r *lmRun) judgeStandings(ctx context.Context, complete bool) {
	var err error
	var final protocol.Standings
	for try := range standingsTries {
		if try > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(standingsPause):
			}
		}
		msg, merr := r.standingsQuery(r.players[0])
		if merr != nil {
			err = merr
			break
		}
		var m *protocol.Message
		if m, err = r.wire.send(ctx, "final QUERY_STANDINGS", msg).answer(r.v, protocol.StandingsResponse); err != nil {
			continue
		}
		var p protocol.Standings
		if err = json.Unmarshal(m.Payload, &p); err != nil {
			continue
		}
		final = p
		if err = r.compareStandings(p.Standings); err == nil {
			break
		}
	}
	r.mu.Lock()
	n, dup := len(r.results), r.dupAcked
	shutdowns := slices.Clone(r.shutdowns)
	badShutdown := slices.Clone(r.inbound[protocol.LeagueShutdown])
	r.mu.Unlock()
	if err != nil && dup != "" {
		err = fmt.Errorf("%w (the second report of %s was acknowledged: counted twice?)", err, dup)
	}
	r.check(ckStandings, err, fmt.Sprintf("the standings agree with a recount of the %d acknowledged results, ranked by points, wins, draws, player_id", n))

	switch {
	case !complete:
		r.skip(ckCompletion, "the league did not complete")
	case len(badShutdown) > 0:
		r.fail(ckCompletion, "LEAGUE_SHUTDOWN broke its schema: "+badShutdown[0])
	case len(shutdowns) > 0:
		r.pass(ckCompletion, fmt.Sprintf("LEAGUE_SHUTDOWN reached %d of the tool's agents", len(shutdowns)))
	case final.Final || final.LeagueState == "COMPLETED":
		r.pass(ckCompletion, fmt.Sprintf("the standings after the last result say final: %v, league_state %q", final.Final, final.LeagueState))
	default:
		r.fail(ckCompletion, "after the last result neither LEAGUE_SHUTDOWN came nor did the standings say final: true or league_state COMPLETED")
	}
}

// compareStandings checks rows against the acknowledged results: the tool's players'
// numbers and order, and no one else with a match played.
func (r *lmRun) compareStandings(rows []protocol.StandingsRow) error {
	r.mu.Lock()
	results := make([]standings.Result, 0, len(r.results))
	for _, res := range r.results {
		results = append(results, standings.Result{Outcomes: res.outcomes, Points: res.points})
	}
	r.mu.Unlock()
	want, err := standings.Recount(r.playerIDs(), results)
	if err != nil {
		return fmt.Errorf("the acknowledged results cannot be counted: %w", err)
	}
	got := map[string]protocol.StandingsRow{}
	for _, row := range rows {
		if _, dup := got[row.PlayerID]; dup {
			return fmt.Errorf("%s is listed twice", row.PlayerID)
		}
		got[row.PlayerID] = row
		if r.agents[row.PlayerID] == nil && row.MatchesPlayed > 0 {
			return fmt.Errorf("%s, who played no acknowledged match, is listed with %d matches", row.PlayerID, row.MatchesPlayed)
		}
	}
	var ours []protocol.StandingsRow
	for _, w := range want {
		g, ok := got[w.PlayerID]
		if !ok {
			if w.MatchesPlayed > 0 {
				return fmt.Errorf("%s is missing; it played %d acknowledged matches", w.PlayerID, w.MatchesPlayed)
			}
			continue
		}
		if g.Points != w.Points || g.Wins != w.Wins || g.Draws != w.Draws || g.Losses != w.Losses || g.MatchesPlayed != w.MatchesPlayed {
			return fmt.Errorf("%s has %s; the acknowledged results give %s", w.PlayerID, recordLine(g), recordLine(w))
		}
		ours = append(ours, g)
	}
	slices.SortFunc(ours, func(a, b protocol.StandingsRow) int { return cmp.Compare(a.Rank, b.Rank) })
	for i := 1; i < len(ours); i++ {
		a, b := ours[i-1], ours[i]
		if a.Rank == b.Rank {
			return fmt.Errorf("%s and %s share rank %d; the player_id breaks the last tie", a.PlayerID, b.PlayerID, a.Rank)
		}
		if cmp.Or(cmp.Compare(b.Points, a.Points), cmp.Compare(b.Wins, a.Wins), cmp.Compare(b.Draws, a.Draws), cmp.Compare(a.PlayerID, b.PlayerID)) > 0 {
			return fmt.Errorf("%s (rank %d) is ranked above %s (rank %d): points, wins, draws, then player_id order them the other way", a.PlayerID, a.Rank, b.PlayerID, b.Rank)
		}
	}
	return nil
}

func recordLine(s protocol.StandingsRow) string {
	return fmt.Sprintf("%d points, %d wins, %d draws, %d losses, %d played", s.Points, s.Wins, s.Draws, s.Losses, s.MatchesPlayed)
}

// answerChecks judges every JSON-RPC answer of the run: the framing, the conversation id
// and the envelope.
func (r *lmRun) answerChecks() {
	var framing, conversation, envelope []string
	answers, results := 0, 0
	more := map[*[]string]int{}
	note := func(list *[]string, c *lmCall, what string) {
		if len(*list) < 3 {
			*list = append(*list, c.label+": "+what)
			return
		}
		more[list]++
	}
	for _, c := range r.wire.snapshot() {
		if c.err != nil {
			continue
		}
		if c.rpc == nil {
			// A plain HTTP error is a fair answer to a body refused before it was read.
			if !c.bodyProbe {
				note(&framing, c, c.describe())
			}
			continue
		}
		answers++
		if string(c.rpc.jsonrpc) != `"2.0"` {
			note(&framing, c, fmt.Sprintf("jsonrpc is %s, not \"2.0\"", snippet(c.rpc.jsonrpc, 20)))
		}
		if c.rpc.hasResult == c.rpc.hasError {
			note(&framing, c, "the answer must hold exactly one of result and error")
		}
		if c.requestID != "" && (!c.rpc.hasID || !sameJSON(c.rpc.id, json.RawMessage(c.requestID))) {
			note(&framing, c, fmt.Sprintf("id %s, the request's was %s", snippet(c.rpc.id, 60), c.requestID))
		}
		if !c.rpc.hasResult || c.rpc.hasError {
			continue
		}
		results++
		var m struct {
			Envelope map[string]any `json:"envelope"`
		}
		if json.Unmarshal(c.rpc.result, &m) != nil || m.Envelope == nil {
			note(&envelope, c, "the result has no envelope object")
			continue
		}
		if m.Envelope["conversation_id"] != c.conversationID {
			note(&conversation, c, fmt.Sprintf("conversation_id %v, the request's was %q", m.Envelope["conversation_id"], c.conversationID))
		}
		if m.Envelope["protocol"] != protocol.Version || m.Envelope["sender"] != protocol.SenderLeagueManager {
			note(&envelope, c, fmt.Sprintf("protocol %v, sender %v", m.Envelope["protocol"], m.Envelope["sender"]))
		}
	}
	for _, list := range []*[]string{&framing, &conversation, &envelope} {
		if n := more[list]; n > 0 {
			*list = append(*list, fmt.Sprintf("and %d more", n))
		}
	}
	if answers == 0 && len(framing) == 0 {
		return
	}
	r.check(ckJSONRPC, joinErr(framing), fmt.Sprintf("%d answers: JSON-RPC 2.0, each echoing its request's id", answers))
	if results == 0 {
		return
	}
	r.check(ckConversation, joinErr(conversation), fmt.Sprintf("%d results echo their request's conversation_id", results))
	r.check(ckEnvelope, joinErr(envelope), fmt.Sprintf("%d results: protocol league.v2, sender league_manager", results))
}
