// Package replay rebuilds the league from a League Manager audit log alone (read and
// chain-checked by package audit), re-plays every match through the game rules, and
// compares the result with the League Manager's database.
package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/ratings"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
)

// League is what the audit log says happened.
type League struct {
	LeagueID string
	GameType string
	Seed     int64
	Players  []string
	// SchedulePlayers are the players the schedule was built for.
	SchedulePlayers []string
	Referees        []string
	Rounds          []Round
	Results         map[string]*Result
	Abandoned       map[string]int              // line of the audit.EventMatchAbandoned event, by match id
	Scoring         map[string]protocol.Scoring // by match id, from its last assignment
	Recoveries      []int                       // lines of audit.EventAuditRecovery records
	// Format is the one the schedule names; a log from before formats holds a round
	// robin ranked the seed's way (Cycles from its rounds).
	Format schedule.Format
	// SPRT is the decision of a gauntlet's SPRT as logged (audit.EventSPRTDecided), at
	// line SPRTLine; nil when none is logged.
	SPRT       *schedule.SPRTState
	SPRTLine   int
	matchRound map[string]int
}

// Round is one scheduled round.
type Round struct {
	ID        string  `json:"round_id"`
	Number    int     `json:"round_number"`
	Cycle     int     `json:"cycle"`
	Bye       string  `json:"bye"`
	ByePoints int     `json:"bye_points"`
	Matches   []Match `json:"matches"`
	// Line is where the log has the round: its SCHEDULE or ROUND_PAIRED event.
	Line int `json:"-"`
}

// Match is one scheduled match, players in first-mover order.
type Match struct {
	ID      string    `json:"match_id"`
	Players [2]string `json:"players"`
	Seed    int64     `json:"match_seed"`
	// Opening is where the schedule starts it (league.yaml openings); nil: the game's start.
	Opening *protocol.Opening `json:"opening,omitempty"`
}

// Result is one acknowledged result: the report (a MATCH_RESULT_REPORT, or the body of
// a RESULT_RECORDED event), who sent it and where the log has it.
type Result struct {
	protocol.ResultReport
	Referee string `json:"-"`
	Line    int    `json:"-"`
}

type rpc struct {
	Params *protocol.Message `json:"params"`
	Result *protocol.Message `json:"result"`
	Error  *protocol.Error   `json:"error"`
}

type event struct {
	Type audit.Event     `json:"type"`
	Body json.RawMessage `json:"body"`
}

type scheduleNote struct {
	LeagueID string           `json:"league_id"`
	GameType string           `json:"game_type"`
	Seed     int64            `json:"seed"`
	Players  []string         `json:"players"`
	Format   *schedule.Format `json:"format"`
	Rounds   []Round          `json:"rounds"`
}

// Rebuild reconstructs the league from the log alone: registrations, the schedule and
// every acknowledged result.
func Rebuild(entries []audit.Entry) (*League, error) {
	l, err := Logged(entries)
	if err != nil {
		return nil, err
	}
	if len(l.Rounds) > 0 {
		for _, id := range l.scheduledPlayers() {
			if !slices.Contains(l.Players, id) {
				return nil, &audit.LineError{Line: l.Rounds[0].Line, Msg: fmt.Sprintf("the schedule lists %s, whose registration is not in the log", id)}
			}
		}
	}
	return l, nil
}

// Logged is Rebuild without its last check, that the log registers every scheduled
// player: a League Manager reads with it what its log lacks, to write it.
func Logged(entries []audit.Entry) (*League, error) {
	l := &League{Results: map[string]*Result{}, Abandoned: map[string]int{}, Scoring: map[string]protocol.Scoring{}, matchRound: map[string]int{}}
	players := map[string]bool{}
	referees := map[string]bool{}
	for i := 0; i < len(entries); i++ {
		e := &entries[i]
		switch e.Direction {
		case audit.DirEvent, audit.DirRecovery:
			if err := l.applyEvent(e); err != nil {
				return nil, err
			}
			if a, ok := recoveredAgent(e); ok {
				if a.Kind == store.KindReferee {
					referees[a.ID] = true
				} else {
					players[a.ID] = true
				}
			}
			continue
		case audit.DirRequest:
		default:
			continue
		}
		var req rpc
		if json.Unmarshal(e.Message, &req) != nil || req.Params == nil {
			continue
		}
		var ans rpc
		if i+1 < len(entries) && entries[i+1].Direction == audit.DirResponse && entries[i+1].ConversationID == e.ConversationID {
			i++
			_ = json.Unmarshal(entries[i].Message, &ans)
		}
		if ans.Result == nil {
			continue // refused or unanswered: it changed nothing
		}
		env := req.Params.Envelope
		switch env.MessageType {
		case protocol.RegisterPlayerRequest, protocol.RegisterRefereeRequest:
			// The message type says the role, as it does for the League Manager.
			if env.MessageType == protocol.RegisterPlayerRequest {
				var p protocol.PlayerRegistration
				_ = json.Unmarshal(req.Params.Payload, &p)
				if p.PlayerID != "" {
					players[p.PlayerID] = true
				}
			} else {
				var p protocol.RefereeRegistration
				_ = json.Unmarshal(req.Params.Payload, &p)
				if p.RefereeID != "" {
					referees[p.RefereeID] = true
				}
			}
			if l.LeagueID == "" {
				l.LeagueID = ans.Result.Envelope.LeagueID
			}
		case protocol.MatchAssignment:
			// Only the scoring: the log redacts the credentials.
			var p struct {
				Scoring *protocol.Scoring `json:"scoring"`
			}
			if json.Unmarshal(req.Params.Payload, &p) == nil && p.Scoring != nil {
				l.Scoring[env.MatchID] = *p.Scoring
			}
		case protocol.MatchResultReport:
			if ans.Result.Envelope.MessageType != protocol.MatchResultAck {
				continue
			}
			var r Result
			if err := json.Unmarshal(req.Params.Payload, &r); err != nil {
				return nil, &audit.LineError{Line: e.Line, Msg: "acknowledged result cannot be read: " + err.Error()}
			}
			r.MatchID, r.Line = env.MatchID, e.Line
			_, r.Referee = protocol.ParseSender(env.Sender)
			if err := l.addResult(&r); err != nil {
				return nil, err
			}
		}
	}
	l.Players = sortedKeys(players)
	l.Referees = sortedKeys(referees)
	return l, nil
}

// recoveredAgent reads an AGENT_RECOVERED event: a registration the database held and
// the log lacked after a crash.
func recoveredAgent(e *audit.Entry) (a struct{ Kind, ID string }, ok bool) {
	var ev struct {
		Type audit.Event `json:"type"`
		Body struct {
			Kind string `json:"kind"`
			ID   string `json:"id"`
		} `json:"body"`
	}
	if json.Unmarshal(e.Message, &ev) != nil || ev.Type != audit.EventAgentRecovered || ev.Body.ID == "" {
		return a, false
	}
	a.Kind, a.ID = ev.Body.Kind, ev.Body.ID
	return a, true
}

func (l *League) applyEvent(e *audit.Entry) error {
	var ev event
	if json.Unmarshal(e.Message, &ev) != nil {
		return nil
	}
	switch ev.Type {
	case audit.EventAuditRecovery:
		l.Recoveries = append(l.Recoveries, e.Line)
	case audit.EventSchedule:
		var s scheduleNote
		if err := json.Unmarshal(ev.Body, &s); err != nil {
			return &audit.LineError{Line: e.Line, Msg: "schedule cannot be read: " + err.Error()}
		}
		if len(l.Rounds) > 0 {
			return &audit.LineError{Line: e.Line, Msg: "a second schedule"}
		}
		l.LeagueID, l.GameType, l.Seed, l.SchedulePlayers = s.LeagueID, s.GameType, s.Seed, s.Players
		if len(s.Players) > schedule.MaxPlayers {
			return &audit.LineError{Line: e.Line, Msg: fmt.Sprintf("the schedule lists %d players, more than a League Manager takes (%d)", len(s.Players), schedule.MaxPlayers)}
		}
		if s.Format != nil {
			if err := s.Format.Validate(); err != nil {
				return &audit.LineError{Line: e.Line, Msg: "schedule format: " + err.Error()}
			}
			l.Format = *s.Format
		} else {
			l.Format = schedule.Default()
			for _, r := range s.Rounds {
				l.Format.Cycles = max(l.Format.Cycles, r.Cycle)
			}
		}
		if len(s.Rounds) == 0 {
			return &audit.LineError{Line: e.Line, Msg: "a schedule without rounds"}
		}
		for _, r := range s.Rounds {
			if err := l.addRound(r, e.Line); err != nil {
				return err
			}
		}
	case audit.EventRoundPaired:
		var r Round
		if err := json.Unmarshal(ev.Body, &r); err != nil {
			return &audit.LineError{Line: e.Line, Msg: "paired round cannot be read: " + err.Error()}
		}
		if len(l.Rounds) == 0 {
			return &audit.LineError{Line: e.Line, Msg: "a round paired before the schedule"}
		}
		return l.addRound(r, e.Line)
	case audit.EventResultRecorded:
		var r Result
		// A result recovered from the database after a crash names its referee.
		var by struct {
			RefereeID string `json:"referee_id"`
		}
		if err := json.Unmarshal(ev.Body, &r); err != nil {
			return &audit.LineError{Line: e.Line, Msg: "recorded result cannot be read: " + err.Error()}
		}
		_ = json.Unmarshal(ev.Body, &by)
		r.Line, r.Referee = e.Line, by.RefereeID
		return l.addResult(&r)
	case audit.EventSPRTDecided:
		var d struct {
			SPRT schedule.SPRTState `json:"sprt"`
		}
		if err := json.Unmarshal(ev.Body, &d); err != nil {
			return &audit.LineError{Line: e.Line, Msg: "SPRT decision cannot be read: " + err.Error()}
		}
		l.SPRT, l.SPRTLine = &d.SPRT, e.Line
	case audit.EventMatchAbandoned:
		var a struct {
			MatchID string `json:"match_id"`
		}
		if err := json.Unmarshal(ev.Body, &a); err != nil {
			return &audit.LineError{Line: e.Line, Msg: "abandoned match cannot be read: " + err.Error()}
		}
		if _, ok := l.matchRound[a.MatchID]; !ok {
			return &audit.LineError{Line: e.Line, Msg: fmt.Sprintf("match %s is abandoned but not in the schedule", a.MatchID)}
		}
		if r := l.Results[a.MatchID]; r != nil {
			return &audit.LineError{Line: e.Line, Msg: fmt.Sprintf("match %s is abandoned but has a result (line %d)", a.MatchID, r.Line)}
		}
		if _, ok := l.Abandoned[a.MatchID]; !ok {
			l.Abandoned[a.MatchID] = e.Line
		}
	}
	return nil
}

// addRound appends the next round of the schedule.
func (l *League) addRound(r Round, line int) error {
	if r.Number != len(l.Rounds)+1 {
		return &audit.LineError{Line: line, Msg: fmt.Sprintf("round %s is number %d, expected %d", r.ID, r.Number, len(l.Rounds)+1)}
	}
	for _, m := range r.Matches {
		if _, dup := l.matchRound[m.ID]; dup {
			return &audit.LineError{Line: line, Msg: fmt.Sprintf("match %s is scheduled twice", m.ID)}
		}
		l.matchRound[m.ID] = len(l.Rounds)
	}
	r.Line = line
	l.Rounds = append(l.Rounds, r)
	return nil
}

// addResult keeps the first acknowledgement of a match; an identical retry is the same
// result, a different one means the log contradicts itself.
func (l *League) addResult(r *Result) error {
	if _, ok := l.matchRound[r.MatchID]; !ok {
		return &audit.LineError{Line: r.Line, Msg: fmt.Sprintf("result for match %s, which is not in the schedule", r.MatchID)}
	}
	if line, ok := l.Abandoned[r.MatchID]; ok {
		return &audit.LineError{Line: r.Line, Msg: fmt.Sprintf("result for match %s, which was abandoned (line %d)", r.MatchID, line)}
	}
	if old, ok := l.Results[r.MatchID]; ok {
		if !maps.Equal(old.Outcome, r.Outcome) || !maps.Equal(old.Points, r.Points) {
			return &audit.LineError{Line: r.Line, Msg: fmt.Sprintf("a second, different result for match %s (first at line %d)", r.MatchID, old.Line)}
		}
		return nil
	}
	l.Results[r.MatchID] = r
	return nil
}

func (l *League) scheduledPlayers() []string {
	if len(l.Rounds) == 0 {
		return l.Players
	}
	set := map[string]bool{}
	// The schedule names its players: a knockout's first-round byes play no match.
	for _, p := range l.SchedulePlayers {
		set[p] = true
	}
	for _, r := range l.Rounds {
		for _, m := range r.Matches {
			set[m.Players[0]], set[m.Players[1]] = true, true
		}
		if r.Bye != "" {
			set[r.Bye] = true
		}
	}
	return sortedKeys(set)
}

// Match finds a scheduled match.
func (l *League) Match(id string) (Match, bool) {
	i, ok := l.matchRound[id]
	if !ok {
		return Match{}, false
	}
	for _, m := range l.Rounds[i].Matches {
		if m.ID == id {
			return m, true
		}
	}
	return Match{}, false
}

// RoundComplete reports whether every match of round i has a result or was abandoned.
func (l *League) RoundComplete(i int) bool {
	for _, m := range l.Rounds[i].Matches {
		if _, gone := l.Abandoned[m.ID]; l.Results[m.ID] == nil && !gone {
			return false
		}
	}
	return true
}

// StandingsAfter is the standings once rounds 0..i are applied (results of later
// rounds are left out, as in the League Manager's round snapshot).
func (l *League) StandingsAfter(i int) ([]protocol.StandingsRow, error) {
	t, err := l.tableAfter(i)
	if err != nil {
		return nil, err
	}
	return t.Rows(), nil
}

// tableAfter is the standings table of rounds 0..i: their results and byes.
func (l *League) tableAfter(i int) (*standings.Table, error) {
	t := standings.New(l.scheduledPlayers(), l.Format.Tiebreaks...)
	for r := 0; r <= i && r < len(l.Rounds); r++ {
		if b := l.Rounds[r]; b.ByePoints > 0 {
			if err := t.Bye(b.Bye, b.ByePoints); err != nil {
				return nil, &audit.LineError{Line: b.Line, Msg: fmt.Sprintf("bye of %s: %v", b.ID, err)}
			}
		}
		for _, m := range l.Rounds[r].Matches {
			if res := l.Results[m.ID]; res != nil {
				if err := t.Apply(res.Outcome, res.Points); err != nil {
					return nil, &audit.LineError{Line: res.Line, Msg: fmt.Sprintf("result of %s: %v", m.ID, err)}
				}
			}
		}
	}
	return t, nil
}

// Table is the standings table with every acknowledged result and bye.
func (l *League) Table() (*standings.Table, error) { return l.tableAfter(len(l.Rounds) - 1) }

// Ratings rates the scheduled players from the log's results as the League Manager
// does (forfeits and no-shows left out).
func (l *League) Ratings() ([]ratings.Rating, error) {
	var games []ratings.Game
	players := l.scheduledPlayers()
	scheduled := make(map[string]bool, len(players))
	for _, p := range players {
		scheduled[p] = true
	}
	for _, r := range l.Rounds {
		for _, m := range r.Matches {
			if res := l.Results[m.ID]; res != nil {
				if g, ok := ratings.FromResult(res.Outcome, res.GameMetadata); ok {
					if !scheduled[g.A] || !scheduled[g.B] {
						return nil, &audit.LineError{Line: res.Line, Msg: fmt.Sprintf("result of %s rates %s and %s, who are not both scheduled", m.ID, g.A, g.B)}
					}
					games = append(games, g)
				}
			}
		}
	}
	samples := l.Format.RatingSamples
	if samples == 0 {
		samples = ratings.DefaultSamples
	}
	return ratings.League(players, games, samples, l.Seed)
}

// Final is the standings with every acknowledged result.
func (l *League) Final() ([]protocol.StandingsRow, error) { return l.StandingsAfter(len(l.Rounds) - 1) }

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// WriteReport prints the league and its standings, after every round when rounds is set.
func (l *League) WriteReport(w io.Writer, rounds bool) error {
	fmt.Fprintf(w, "league %s, %s, seed %d: %d players, %d referees, %d rounds, %d results",
		l.LeagueID, l.GameType, l.Seed, len(l.Players), len(l.Referees), len(l.Rounds), len(l.Results))
	if len(l.Abandoned) > 0 {
		fmt.Fprintf(w, ", %d abandoned", len(l.Abandoned))
	}
	fmt.Fprintln(w)
	if rounds {
		for i, r := range l.Rounds {
			if !l.RoundComplete(i) {
				fmt.Fprintf(w, "\nround %d (%s): incomplete\n", r.Number, r.ID)
				continue
			}
			rows, err := l.StandingsAfter(i)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "\nafter round %d (%s):\n", r.Number, r.ID)
			standings.WriteTable(w, rows)
		}
	}
	rows, err := l.Final()
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "\nstandings:")
	standings.WriteTable(w, rows)
	return nil
}
