package ratings

import (
	"encoding/json"
	"slices"

	"github.com/agentleague/agentleague/protocol"
)

// FromResult is the game a stored match result counts as in the ratings: the first
// player (by id) is A. It is false for a result that rates nobody: a forfeit the League
// Manager decided, a no-show (the game was never played), a result that is not a win,
// loss or draw between two players.
func FromResult(outcome map[string]string, metadata json.RawMessage) (Game, bool) {
	md, _ := protocol.ReadGameMetadata(metadata) // what cannot be read is left out
	return FromOutcome(outcome, md.Ending())
}

// FromOutcome is FromResult for a caller that has read the game_metadata already: ending
// is its termination.
func FromOutcome(outcome map[string]string, ending protocol.Termination) (Game, bool) {
	if len(outcome) != 2 {
		return Game{}, false
	}
	switch ending {
	case protocol.TerminationForfeit, protocol.TerminationNoShow, protocol.TerminationDoubleNoShow:
		return Game{}, false
	}
	ids := make([]string, 0, 2)
	for id := range outcome {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	a, b := protocol.Outcome(outcome[ids[0]]), protocol.Outcome(outcome[ids[1]])
	g := Game{A: ids[0], B: ids[1]}
	switch {
	case a == protocol.Win && b == protocol.Loss:
		g.Score = 1
	case a == protocol.Draw && b == protocol.Draw:
		g.Score = 0.5
	case a == protocol.Loss && b == protocol.Win:
		g.Score = 0
	default:
		return Game{}, false
	}
	return g, true
}

// League rates the players of a league: samples bootstrap resamples seeded by the league
// seed, so the League Manager, an export and a replay of the same results agree. It never
// returns nil rows without an error.
func League(players []string, games []Game, samples int, leagueSeed int64) ([]Rating, error) {
	rows, err := Compute(players, games, Options{Samples: samples, Seed: uint64(leagueSeed)})
	if rows == nil && err == nil {
		rows = []Rating{}
	}
	return rows, err
}
