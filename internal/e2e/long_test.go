//go:build long

package e2e

import "testing"

// TestLongFiftyPlayersTenReferees is the 1225-match league the Python implementation
// never finishes; run it with make test-long.
func TestLongFiftyPlayersTenReferees(t *testing.T) {
	run := runLeague(t, leagueOpts{players: 50, referees: 10, seed: 50})
	run.checkLeague(t, 1)
	t.Logf("50 players, 10 referees: 1225 matches in %v of league time", run.elapsed)
}
