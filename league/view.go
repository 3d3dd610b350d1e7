package league

// The live view: the League Manager is the source of the read-only dashboard (league/web)
// and publishes what happens on its event hub (league/events).
//
// Events, in the order the League Manager decides them (ids increase by one):
//   - agent_registered {id, kind} for each new referee or player;
//   - round_started {round_id, round_number, matches, bye} when a round becomes active;
//   - match_assigned {match_id, round_id, players, referee_id} at each assignment
//     (again after a reassignment);
//   - move_made {step, player, move, outcome, view} for each move taken from a MOVE_EVENT,
//     and, when a result is stored, for each of its moves no MOVE_EVENT brought, so a
//     client sees every move of a match once;
//   - match_finished {match_id, round_id, players, outcome, points, termination} for
//     each stored result (forfeits included, termination "forfeit");
//   - standings_changed {standings} after each stored result: the rows of its two players;
//   - league_completed {rounds, standings} once.
//
// MOVE_EVENT (referee -> League Manager, answered MOVE_EVENT_ACK) carries one applied
// move of a running match: {step_number, player_id, move, outcome, state}, state being
// the game state after the step (State.Final of the rules); or, since this League
// Manager announces move_batches, a batch {moves: [...]} of 1 to 256 such moves in the
// order they were applied. It is accepted only with the referee's own token, for a match
// in flight at that referee (else UNKNOWN_MATCH or NOT_ASSIGNED_REFEREE), and for the
// match's players, in step order (else SCHEMA_VIOLATION); a batch is taken or refused
// whole. A single move before the last step received is refused (STALE_STEP); a move
// received already (a step before the last, or the last if its player moved in it) is
// passed over, so a batch sent again after a lost answer is acknowledged and publishes
// only what is new. Our referee flushes a match's moves before it reports the result;
// moves that still arrive after the result are acknowledged and ignored, since the
// result published the ones the live view missed and the page of a finished match is
// re-played from its stored game_metadata through the game rules. MOVE_EVENT is not rate
// limited. Move events live in memory only while the match runs (at most maxLiveMoves of
// them): they feed the match page and never change the league.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/league/events"
	"github.com/agentleague/agentleague/league/ratings"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/league/web"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// The League Manager is the live view's source.
var _ web.Source = (*Manager)(nil)

// eventsKept is how many recent events the hub keeps for clients that resume.
const eventsKept = 10000

// maxLiveMoves bounds the move events kept for one running match; later ones are
// acknowledged and dropped.
const maxLiveMoves = 5000

// maxLiveView bounds the state kept with one move event.
const maxLiveView = 16 << 10

// LeagueView implements web.Source: the league, its standings with tie-breaks, the
// crosstable, the ratings (the page p asks for of each), the bracket of a knockout and
// the active round.
func (m *Manager) LeagueView(p web.Page) (web.LeagueView, error) {
	v, in, err := m.leagueView(p)
	if err != nil {
		return v, err
	}
	// The ratings are computed outside the lock: results are never changed once stored.
	// The cache's rows are shared: they are copied before being marked.
	rated, err := m.ratings.get(in.ratings)
	if err != nil {
		return web.LeagueView{}, fmt.Errorf("league view: %w", err)
	}
	v.Ratings = ratings.MarkProvisional(slices.Clone(rated.rows), v.Format.ProvisionalGames)
	v.RatedGames, v.IntervalsGames = len(in.ratings.games), rated.intervalsGames
	if slices.Contains(in.technical, true) {
		rated, err := m.ratingsWithoutForfeits.get(in.ratings.withoutForfeits(in.technical))
		if err != nil {
			return web.LeagueView{}, fmt.Errorf("league view: %w", err)
		}
		v.RatingsWithoutForfeits = ratings.MarkProvisional(slices.Clone(rated.rows), v.Format.ProvisionalGames)
	}
	v.LLM = llmBoard(in.llm, v.Cards, v.Ratings, v.RatingsWithoutForfeits)
	if p != (web.Page{}) {
		id := func(r ratings.Rating) string { return r.PlayerID }
		page, pv, err := web.Paginate(v.Ratings, p, id)
		if err != nil {
			return web.LeagueView{}, fmt.Errorf("league view: ratings: %w", err)
		}
		v.Ratings, v.RatingsPage = page, &pv
		if v.RatingsWithoutForfeits != nil {
			// The same rows as the ratings' page, in this table's own order.
			if v.RatingsWithoutForfeits, _, err = web.Paginate(v.RatingsWithoutForfeits, web.Page{Offset: pv.Offset, Limit: p.Limit}, id); err != nil {
				return web.LeagueView{}, fmt.Errorf("league view: ratings without forfeits: %w", err)
			}
		}
	}
	if st, ok := m.arena.get(v.Format, in.ratings.players, in.ratings.seed, in.arena); ok {
		v.Arena = &st
	}
	return v, nil
}

// viewInputs is what the league view computes from outside the lock: the ratings' input
// (technical marking the games decided by a technical termination), an arena's rounds
// so far (nil in another format), and the llm figures of the language-model players.
type viewInputs struct {
	ratings   ratingsInput
	technical []bool
	arena     []schedule.Played
	llm       map[string]LLMStats
}

// llmBoard is the leaderboard of the language-model players, best rated first.
func llmBoard(llm map[string]LLMStats, cards map[string]web.Card, rated, strength []ratings.Rating) []web.LLMRow {
	if len(llm) == 0 {
		return nil
	}
	ratingOf := func(rows []ratings.Rating, id string) (ratings.Rating, bool) {
		i := slices.IndexFunc(rows, func(r ratings.Rating) bool { return r.PlayerID == id })
		if i < 0 {
			return ratings.Rating{}, false
		}
		return rows[i], true
	}
	lowest := 0.0
	if len(rated) > 0 {
		lowest = rated[len(rated)-1].Rating
	}
	out := []web.LLMRow{}
	for _, r := range rated {
		s, ok := llm[r.PlayerID]
		if !ok {
			continue
		}
		row := web.LLMRow{PlayerID: r.PlayerID, Model: cards[r.PlayerID].Model, Rating: r.Rating, RatingWithoutForfeits: r.Rating,
			Provisional: r.Provisional, Moves: s.Notes + int64(s.GivenUp), GivenUp: s.GivenUp, Forfeits: s.Forfeits, LatencyP50MS: s.LatencyMS.P50, CostPerGameUSD: s.CostPerGame}
		if w, ok := ratingOf(strength, r.PlayerID); ok {
			row.RatingWithoutForfeits = w.Rating
		}
		// Per move: the moves with a note and those given up, which have none.
		if n := float64(s.Notes) + float64(s.GivenUp); n > 0 {
			row.FirstTry = float64(s.FirstTry) / n
			row.UnreadablePer100, row.IllegalPer100 = 100*float64(s.Unreadable)/n, 100*float64(s.Illegal)/n
			row.TokensPerMove = float64(s.TokensIn+s.TokensOut) / float64(max(s.Notes, 1))
		}
		if above := r.Rating - lowest; above >= 1 && s.CostUSD > 0 {
			row.CostPerRatingPointUSD = s.CostUSD / above
		}
		out = append(out, row)
	}
	return out
}

// leagueView is the view but its ratings, and what they are computed from, taken under
// the lock: of the standings and the crosstable, the page p asks for.
func (m *Manager) leagueView(p web.Page) (web.LeagueView, viewInputs, error) {
	m.e.mu.Lock()
	defer m.e.mu.Unlock()
	e := m.e
	v := web.LeagueView{
		LeagueID: m.leagueID, GameType: e.gameType, State: e.state,
		TotalRounds: len(e.fx.rounds), Referees: len(e.agents.referees), Players: len(e.agents.players),
		ByStatus: e.fx.counts(), MatchesTotal: len(e.fx.matches), Format: e.format,
		Standings: e.fx.table.Detailed(), LastEventID: m.hub.LastID(),
	}
	if p != (web.Page{}) {
		page, pv, err := web.Paginate(v.Standings, p, func(r standings.Row) string { return r.PlayerID })
		if err != nil {
			return web.LeagueView{}, viewInputs{}, fmt.Errorf("league view: standings: %w", err)
		}
		v.Standings, v.Page = page, &pv
		ids := make([]string, len(page))
		for i, r := range page {
			ids[i] = r.PlayerID
		}
		v.Crosstable = e.fx.table.Crosstable(ids)
	} else {
		v.Crosstable = e.fx.table.Crosstable(nil)
	}
	if st := e.outage.status(); st.Degraded {
		v.StorageFailure, v.StorageSince = st.Cause, st.Since
	}
	players := e.agents.playerIDs()
	if st, ok := schedule.SPRTOf(e.format, e.fx.played()); ok {
		v.SPRT = &st
	}
	var arena []schedule.Played
	if e.format.Algorithm == schedule.Arena {
		arena = e.fx.played()
	}
	if e.format.Algorithm == schedule.Knockout && len(e.fx.rounds) > 0 {
		b, err := schedule.Bracket(e.format, players, e.cfg.League.Seed, e.fx.played())
		if err != nil {
			return web.LeagueView{}, viewInputs{}, fmt.Errorf("league view: bracket: %w", err)
		}
		v.Bracket = b
	}
	in := viewInputs{ratings: ratingsInput{players: players, samples: e.format.RatingSamples, seed: e.cfg.League.Seed}, arena: arena, llm: map[string]LLMStats{}}
	for _, mt := range e.fx.where(func(mt *match) bool { return mt.result != nil && mt.result.rated }) {
		in.ratings.games = append(in.ratings.games, mt.result.game)
		in.technical = append(in.technical, mt.result.technical)
	}
	for _, id := range players {
		if s := e.stats[id]; s != nil && s.LLM != nil {
			in.llm[id] = *s.LLM
		}
		if a := e.agents.players[id]; a != nil && a.card != nil {
			if v.Cards == nil {
				v.Cards = map[string]web.Card{}
			}
			v.Cards[id] = web.Card{AgentCard: *a.card, Hash: a.card.Hash()}
		}
	}
	v.Abandoned = []web.MatchSummary{}
	for _, mt := range e.fx.where(isAbandoned) {
		v.Abandoned = append(v.Abandoned, web.MatchSummary{MatchID: mt.id, Players: mt.players, Status: mt.status, Referee: mt.referee})
	}
	if r := e.fx.active(); r != nil {
		v.CurrentRound = r.number
		rv := &web.RoundView{ID: r.id, Number: r.number, Bye: r.bye, Matches: []web.MatchSummary{}}
		for _, mt := range r.matches {
			s := web.MatchSummary{MatchID: mt.id, Players: mt.players, Status: mt.status, Referee: mt.referee}
			if mt.result != nil {
				s.Outcome = maps.Clone(mt.result.outcome)
			}
			rv.Matches = append(rv.Matches, s)
		}
		v.Round = rv
	}
	return v, in, nil
}

// MatchView implements web.Source: a match with the state after each of its steps. A
// finished match is re-played from its stored moves through the game rules; a running
// one shows the move events received so far.
func (m *Manager) MatchView(id string) (web.MatchView, error) {
	m.e.mu.Lock()
	e := m.e
	mt := e.fx.matches[id]
	if mt == nil {
		m.e.mu.Unlock()
		return web.MatchView{}, web.ErrNotFound
	}
	v := web.MatchView{
		MatchID: mt.id, RoundID: mt.roundID, GameType: e.gameType, RulesKnown: !e.external, Players: mt.players,
		Status: mt.status, Referee: mt.referee, Steps: []web.Step{}, LastEventID: m.hub.LastID(), Clock: web.ClockOf(e.cfg.Clock()),
	}
	finished := mt.result != nil
	if finished {
		v.Outcome, v.Points = maps.Clone(mt.result.outcome), maps.Clone(mt.result.points)
	} else {
		// Views are never changed once received; the step list is copied.
		for _, s := range mt.live {
			v.Steps = append(v.Steps, web.Step{Step: s.Step, Moves: slices.Clone(s.Moves), View: s.View})
		}
	}
	params, seed, opening := e.params, mt.seed, mt.opening
	if opening != nil {
		v.Opening = opening.Name
	}
	m.e.mu.Unlock()

	// A stored result never changes, so it is read and re-played outside the lock.
	if finished {
		if err := m.replayView(&v, params, seed); err != nil {
			m.log.Warn().Err(err).Str("match_id", id).Msg("match view: cannot read the stored result")
			return web.MatchView{}, fmt.Errorf("match view of %s: %w", id, err)
		}
		return v, nil
	}
	if e.external {
		return v, nil // no rules, so no board: the steps show the moves as received
	}
	g, err := e.games.New(v.GameType, params)
	var start game.State
	if err == nil {
		start, err = game.Open(g, seed, opening)
	}
	if err != nil {
		return web.MatchView{}, fmt.Errorf("match view of %s: %w", id, err)
	}
	v.Initial = start.Final()
	return v, nil
}

// replayView fills the initial view, the steps and the termination of a finished match
// from its stored game_metadata. Forfeits and no-shows have no moves and no steps. It
// fails only when the result cannot be read from storage: a result stored before the
// League Manager refused malformed game_metadata is shown as far as it reads and
// re-plays, and Unreadable says what does not. It reads only the stored result, which
// never changes, so it runs without engine.mu.
func (m *Manager) replayView(v *web.MatchView, params map[string]any, seed int64) error {
	e := m.e
	meta, err := e.store.GameMetadata(v.MatchID)
	if err != nil {
		return err
	}
	md, vs := protocol.ReadGameMetadata(meta)
	for _, x := range vs {
		v.Unreadable = append(v.Unreadable, x.String())
	}
	v.Termination = string(md.Ending())
	if c := web.ClockOf(md.TimeControl); c != nil {
		v.Clock = c // as the referee recorded it
	}
	if e.external {
		v.Steps = append(v.Steps, recordedSteps(md.Moves)...) // no rules, no board
		return nil
	}
	if md.GameParams != nil {
		params = md.GameParams
	}
	replayed := 0 // moves re-played
	g, err := e.games.New(v.GameType, params)
	var start game.State
	if err == nil {
		start, err = game.Open(g, seed, md.Opening)
	}
	if md.Opening != nil {
		v.Opening = md.Opening.Name // as the referee recorded it
	}
	if err == nil {
		v.Initial = start.Final()
		err = replaySteps(start, v.Players, md.Moves, func(first, n int, s web.Step) {
			v.Steps, replayed = append(v.Steps, s), first+n
		})
	}
	if err != nil {
		m.log.Warn().Err(err).Str("match_id", v.MatchID).Msg("match view: stored moves the rules refuse are listed as recorded")
		v.Unreadable = append(v.Unreadable, fmt.Sprintf("the stored moves do not re-play through the rules of %s from move %d on: listed as recorded", v.GameType, replayed+1))
		v.Steps = append(v.Steps, recordedSteps(md.Moves[replayed:])...)
	}
	return nil
}

// recordedSteps lists moves step by step as the referee recorded them, without views.
func recordedSteps(moves []protocol.MoveRecord) []web.Step {
	var steps []web.Step
	for _, mv := range moves {
		if n := len(steps); n == 0 || steps[n-1].Step != mv.Step {
			steps = append(steps, web.Step{Step: mv.Step})
		}
		last := &steps[len(steps)-1]
		last.Moves = append(last.Moves, web.MoveOf(mv))
	}
	return steps
}

// moveEvent takes applied moves of a running match from its referee: one, or a batch
// (the rules are at the top of this file). A batch is taken whole or refused whole.
func (m *Manager) moveEvent(msg *protocol.Message) (ans *protocol.Message, err error) {
	defer func() {
		result := "accepted"
		if err != nil {
			result = "refused"
		}
		m.metrics.moveEvents.WithLabelValues(result).Inc()
	}()
	env := &msg.Envelope
	var p struct {
		protocol.MoveNotice
		Moves []protocol.MoveNotice `json:"moves"`
	}
	if err := msg.Decode(&p); err != nil {
		return nil, refuse(errMalformed, "invalid move event payload")
	}
	batch := p.Moves != nil
	moves := p.Moves
	if !batch {
		moves = []protocol.MoveNotice{p.MoveNotice}
	}
	m.e.mu.Lock()
	defer m.e.mu.Unlock()
	e := m.e
	if e.stop.stopped {
		return nil, shuttingDown()
	}
	ref, err := e.agents.authenticateReferee(env, "send move events")
	if err != nil {
		return nil, err
	}
	mt := e.fx.matches[env.MatchID]
	if mt == nil {
		return nil, refuse(errUnknownMatch, "match %q is not in the schedule", env.MatchID)
	}
	late := mt.referee == ref.id && mt.status == protocol.MatchStateCompleted
	if !late && (mt.referee != ref.id || !mt.inFlight()) {
		return nil, refuse(errNotAssigned, "match %s is not in progress at %s", mt.id, env.Sender)
	}
	// Every move is checked before any is taken, so a refused batch changes nothing.
	for i, mv := range moves {
		if mv.PlayerID != mt.players[0] && mv.PlayerID != mt.players[1] {
			return nil, refuse(errMalformed, "%splayer %q does not play match %s", batchItem(batch, i), mv.PlayerID, mt.id)
		}
		if i > 0 && mv.StepNumber < moves[i-1].StepNumber {
			return nil, refuse(errMalformed, "%sstep %d comes after step %d in the same batch", batchItem(batch, i), mv.StepNumber, moves[i-1].StepNumber)
		}
	}
	// A single move before the last step received is refused; a batch's moves already
	// received are passed over, so a batch resent after a lost answer is taken again.
	if last := len(mt.live) - 1; !batch && last >= 0 && p.StepNumber < mt.live[last].Step {
		return nil, refuse(errStaleStep, "step %d of match %s comes after step %d", p.StepNumber, mt.id, mt.live[last].Step)
	}
	if !late {
		for _, mv := range moves {
			if !mt.received(mv.StepNumber, mv.PlayerID) {
				e.live.move(mt, mv)
			}
		}
	}
	return m.matchReply(msg, protocol.MoveEventAck, mt, protocol.Ack{Status: protocol.StatusAcknowledged})
}

// batchItem names the item of a batch a refusal is about, so the referee can find it.
func batchItem(batch bool, i int) string {
	if !batch {
		return ""
	}
	return fmt.Sprintf("moves/%d: ", i)
}

// received reports whether the live view of mt already has the move of player at step:
// a step before the last one received, or the last one if player moved in it (a step has
// at most one move of each player).
func (mt *match) received(step int, player string) bool {
	if len(mt.live) == 0 {
		return false
	}
	last := mt.live[len(mt.live)-1]
	if step != last.Step {
		return step < last.Step
	}
	return slices.ContainsFunc(last.Moves, func(mv web.Move) bool { return mv.Player == player })
}

// liveView owns the live view of the matches in play: the moves each match has shown
// (match.live) and the move_made events that show them, re-playing through the league's
// rules the moves of a result the view missed. It runs under engine.mu.
type liveView struct {
	hub      *events.Hub
	log      zerolog.Logger
	games    *game.Registry
	gameType string
	params   map[string]any
	// external: the game has no compiled-in rules, so nothing is re-played.
	external bool
}

// move adds one move, not received before, to the live view of mt and publishes it as
// move_made. Beyond maxLiveMoves moves are not kept; the result shows them.
func (v liveView) move(mt *match, p protocol.MoveNotice) {
	if mt.liveMoves >= maxLiveMoves {
		return
	}
	mt.liveMoves++
	mv := web.Move{Player: p.PlayerID, Move: p.Move, Outcome: string(p.Outcome), ClockMS: p.ClockMS}
	var view any
	// Only the latest view of a match matters for memory; an oversized one (no game
	// of ours comes near it) is not kept, the page reloads the match when it ends.
	if len(p.State) > 0 && len(p.State) <= maxLiveView {
		view = p.State
	}
	if last := len(mt.live) - 1; last >= 0 && mt.live[last].Step == p.StepNumber {
		mt.live[last].Moves = append(mt.live[last].Moves, mv)
		mt.live[last].View = view
	} else {
		mt.live = append(mt.live, web.Step{Step: p.StepNumber, Moves: []web.Move{mv}, View: view})
	}
	v.hub.Publish(events.MoveMade, mt.id, moveMade{Step: p.StepNumber, Player: p.PlayerID, Move: p.Move, Outcome: p.Outcome, View: view, ClockMS: p.ClockMS})
}

// moveMade is the data of a move_made event: a struct, since encoding a map sorts its
// keys on every move. The members are in the order that sort gave, as before; ClockMS,
// the mover's clock after the move, only under a clock.
type moveMade struct {
	ClockMS *int64               `json:"clock_ms,omitempty"`
	Move    json.RawMessage      `json:"move"`
	Outcome protocol.MoveOutcome `json:"outcome"`
	Player  string               `json:"player"`
	Step    int                  `json:"step"`
	View    any                  `json:"view"`
}

// unseenMoves publishes move_made for every move of a result that the live view of
// mt has not shown (its events were lost, refused or are still on their way), in order,
// each with the view after its step re-played through the rules as on the match page,
// so a client of the live view sees every move once. It runs as the result is stored,
// before match_finished; a move the rules refuse (the result was taken, so the referee's
// record is trusted) or a game without rules leaves the views out.
func (v liveView) unseenMoves(mt *match, md protocol.GameMetadata) {
	var unseen []int // indexes into md.Moves
	for i, mv := range md.Moves {
		if !mt.seen(mv.Step, mv.Player) {
			unseen = append(unseen, i)
		}
	}
	if len(unseen) == 0 {
		return
	}
	views := make([]any, len(md.Moves))
	if !v.external {
		if err := v.stepViews(mt, md, views); err != nil {
			v.log.Warn().Err(err).Str("match_id", mt.id).Msg("moves of the result published without views: cannot re-play them")
		}
	}
	for _, i := range unseen {
		mv := md.Moves[i]
		v.hub.Publish(events.MoveMade, mt.id, moveMade{Step: mv.Step, Player: mv.Player, Move: mv.Move, Outcome: mv.Outcome, View: views[i], ClockMS: mv.ClockMS})
	}
}

// seen reports whether the live view of mt showed the move of player at step.
func (mt *match) seen(step int, player string) bool {
	i, found := slices.BinarySearchFunc(mt.live, step, func(s web.Step, step int) int { return s.Step - step })
	return found && slices.ContainsFunc(mt.live[i].Moves, func(mv web.Move) bool { return mv.Player == player })
}

// stepViews sets views[i] to the view after the step of md.Moves[i], re-played through
// the rules of mt's game.
func (v liveView) stepViews(mt *match, md protocol.GameMetadata, views []any) error {
	params := v.params
	if md.GameParams != nil {
		params = md.GameParams
	}
	g, err := v.games.New(v.gameType, params)
	if err != nil {
		return err
	}
	start, err := game.Open(g, mt.seed, md.Opening)
	if err != nil {
		return err
	}
	return replaySteps(start, mt.players, md.Moves, func(first, n int, s web.Step) {
		for i := first; i < first+n; i++ {
			views[i] = s.View
		}
	})
}

// replaySteps re-plays stored moves through the rules from start (game.Open): for each
// step its moves (md.Moves[first:first+n]) and the view after it.
func replaySteps(start game.State, players [2]string, moves []protocol.MoveRecord, step func(first, n int, s web.Step)) error {
	records := make([]game.Record, len(moves))
	for i, mv := range moves {
		records[i] = game.Record{Step: mv.Step, Player: mv.Player, Move: mv.Move}
	}
	_, err := game.Replay(start, players, records, func(n, first int, s game.State) {
		st := web.Step{Step: n, View: s.Final()}
		for _, mv := range moves[first:] {
			if mv.Step != n {
				break
			}
			st.Moves = append(st.Moves, web.MoveOf(mv))
		}
		step(first, len(st.Moves), st)
	})
	return err
}
