package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
)

// Problem is one finding of Verify, naming the match and, where it applies, the move.
type Problem struct {
	MatchID string
	// Move is the 1-based index into the match's moves, 0 when the problem is not a move.
	Move int
	Msg  string
}

func (p Problem) String() string {
	if p.Move > 0 {
		return fmt.Sprintf("match %s move %d: %s", p.MatchID, p.Move, p.Msg)
	}
	return fmt.Sprintf("match %s: %s", p.MatchID, p.Msg)
}

// VerifyMatches checks every acknowledged result as the League Manager does
// (protocol.CheckResult: the match's players, outcomes that fit together, points per the
// scoring), then re-plays it through the game rules: the reported outcome must be what
// they give. A result that records no moves (Unrecorded) cannot be re-played.
func (l *League) VerifyMatches(reg *game.Registry) []Problem {
	ids := make([]string, 0, len(l.Results))
	for id := range l.Results {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []Problem
	for _, id := range ids {
		out = append(out, l.verifyMatch(reg, l.Results[id])...)
	}
	return out
}

func (l *League) verifyMatch(reg *game.Registry, r *Result) []Problem {
	bad := func(move int, format string, args ...any) []Problem {
		return []Problem{{MatchID: r.MatchID, Move: move, Msg: fmt.Sprintf(format, args...)}}
	}
	m, ok := l.Match(r.MatchID)
	if !ok {
		return bad(0, "not in the schedule")
	}
	var scoring *protocol.Scoring
	if sc, ok := l.Scoring[r.MatchID]; ok {
		scoring = &sc
	}
	// The outcomes fit together and score as the scoring says; whether they are what the
	// rules give is re-played below.
	if err := protocol.CheckResult(&r.ResultReport, m.Players, scoring); err != nil {
		return bad(0, "%v", err)
	}
	md, vs := protocol.ReadGameMetadata(r.GameMetadata)
	if vs != nil {
		return bad(0, "game_metadata violates schemas/game_metadata.json: %s", vs[0])
	}
	gameType := l.gameType(r)
	if unrecorded(&md) || (md.Forfeit == "" && !slices.Contains(reg.Types(), gameType)) {
		return nil // nothing to re-play, or no rules to re-play it with
	}
	want, problem := l.expectedOutcome(reg, gameType, m, &md)
	if problem != nil {
		return []Problem{*problem}
	}
	for i, id := range m.Players {
		if r.Outcome[id] != string(want[i]) {
			return bad(0, "reported %s for %s, the rules give %s", r.Outcome[id], id, want[i])
		}
	}
	return nil
}

// unrecorded reports whether a referee's result records no moves at all (no "moves"
// member, or null), as a referee written from the seeds alone may send it: game_metadata
// is opaque to the league. Our referee always records them ([] for a no-show), and a
// forfeit the League Manager decided has none to record.
func unrecorded(md *protocol.GameMetadata) bool { return md.Moves == nil && md.Forfeit == "" }

// Unrecorded lists, sorted, the matches whose result records no moves: VerifyMatches
// checks only that their outcomes fit together and score as the rules say.
func (l *League) Unrecorded() []string {
	var out []string
	for id, r := range l.Results {
		if md, vs := protocol.ReadGameMetadata(r.GameMetadata); vs == nil && unrecorded(&md) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// gameType is the game a result was played at.
func (l *League) gameType(r *Result) string {
	if r.GameType != "" {
		return r.GameType
	}
	return l.GameType
}

// RulesUnknown lists, sorted, the matches that recorded moves of a game reg has no rules
// for (a game the registry marks external): VerifyMatches checks only that their
// outcomes fit together and score as the scoring says. A forfeit needs no rules and is
// not listed.
func (l *League) RulesUnknown(reg *game.Registry) []string {
	known := reg.Types()
	var out []string
	for id, r := range l.Results {
		md, vs := protocol.ReadGameMetadata(r.GameMetadata)
		if vs == nil && !unrecorded(&md) && md.Forfeit == "" && !slices.Contains(known, l.gameType(r)) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// expectedOutcome re-plays the moves and returns the outcome the rules give, indexed
// like the scheduled players.
func (l *League) expectedOutcome(reg *game.Registry, gameType string, m Match, md *protocol.GameMetadata) ([2]protocol.Outcome, *Problem) {
	fail := func(move int, format string, args ...any) ([2]protocol.Outcome, *Problem) {
		return [2]protocol.Outcome{}, &Problem{MatchID: m.ID, Move: move, Msg: fmt.Sprintf(format, args...)}
	}
	if md.Forfeit != "" {
		out := [2]protocol.Outcome{protocol.Win, protocol.Win}
		for _, s := range md.Suspended {
			for i, id := range m.Players {
				if id == s {
					out[i] = protocol.Loss
				}
			}
		}
		return out, nil
	}
	if md.MatchSeed != nil && *md.MatchSeed != m.Seed {
		return fail(0, "played with seed %d, the schedule says %d", *md.MatchSeed, m.Seed)
	}
	if !protocol.SameOpening(md.Opening, m.Opening) {
		return fail(0, "played from opening %s, the schedule says %s", protocol.OpeningName(md.Opening), protocol.OpeningName(m.Opening))
	}
	g, err := reg.New(gameType, md.GameParams)
	if err != nil {
		return fail(0, "game %s: %v", gameType, err)
	}
	seat := map[string]int{m.Players[0]: 0, m.Players[1]: 1}
	records := make([]game.Record, len(md.Moves))
	for i, mv := range md.Moves {
		records[i] = game.Record{Step: mv.Step, Player: mv.Player, Move: mv.Move}
	}
	start, err := game.Open(g, m.Seed, md.Opening)
	if err != nil {
		return fail(0, "%v", err)
	}
	state, err := game.Replay(start, m.Players, records, nil)
	var re *game.ReplayError
	if errors.As(err, &re) {
		return fail(re.Move, "%s", re.Msg)
	}
	if err != nil {
		return fail(0, "%v", err)
	}
	switch {
	case md.Termination == protocol.TerminationDoubleNoShow:
		return [2]protocol.Outcome{protocol.Loss, protocol.Loss}, nil
	case md.Termination.Technical():
		s, ok := seat[md.Loser]
		if !ok {
			return fail(0, "%s names loser %q, who is not in the match", md.Termination, md.Loser)
		}
		out := [2]protocol.Outcome{protocol.Win, protocol.Win}
		out[s] = protocol.Loss
		return out, nil
	case md.Termination == protocol.TerminationTimeoutDraw:
		// The player to move ran out of time; a draw only if the other could not win.
		toMove := state.ToMove()
		if len(toMove) != 1 || game.CanWin(state, 1-toMove[0]) {
			return fail(len(md.Moves), "%s, but the opponent of the player to move could still win", md.Termination)
		}
		return [2]protocol.Outcome{protocol.Draw, protocol.Draw}, nil
	case !state.Terminal():
		return fail(len(md.Moves), "the moves do not finish the game (termination %q)", md.Termination)
	}
	if len(md.FinalState) > 0 {
		var reported, replayed any
		_ = json.Unmarshal(md.FinalState, &reported)
		b, _ := json.Marshal(state.Final())
		_ = json.Unmarshal(b, &replayed)
		if !reflect.DeepEqual(reported, replayed) {
			return fail(0, "final state %s differs from the re-played %s", md.FinalState, b)
		}
	}
	return state.Outcomes(), nil
}
