package e2e

import (
	"testing"
)

// A league of four players on the starter kits (two Python, examples/python, two Node,
// examples/node; in each language one listening and one outbound through the relay) and
// four of ours, real binaries under two of our referees: every pair plays once (the
// standings agree with a recount, replay and verify pass), no match names a violation or
// ends abnormally, each kit player logs its rank when the league completes
// (LEAGUE_COMPLETED), and leaves by itself with exit code 0 on LEAGUE_SHUTDOWN.
func TestKitLeague(t *testing.T) {
	py, pyScript := pythonExample(t, "python/tic_tac_toe_player.py")
	node, jsScript := nodeExample(t, "tic_tac_toe_player.js")
	kits := map[string]*proc{}
	run := runLeague(t, leagueOpts{players: 4, referees: 2, seed: 43, extraPlayers: func(t *testing.T, lmURL string) int {
		kits["kpy1"] = startOutbound(t, "kpy1", py, pyScript, "--id", "kpy1", "--league", lmURL, "--port", "0")
		kits["kpy2"] = startOutbound(t, "kpy2", py, pyScript, "--id", "kpy2", "--league", lmURL, "--outbound")
		kits["kjs1"] = startOutbound(t, "kjs1", node, jsScript, "--id", "kjs1", "--league", lmURL, "--port", "0")
		kits["kjs2"] = startOutbound(t, "kjs2", node, jsScript, "--id", "kjs2", "--league", lmURL, "--outbound")
		return len(kits)
	}})
	run.checkLeague(t, 1)

	checkCleanLeague(t, run, 28, 7, "", kits)
	checkLeftOnShutdown(t, run, kits, func(string) []string { return []string{"completed: rank ", "league shut down"} })
}
