package e2e

import (
	"testing"
	"time"
)

func TestRefereeKilledMidMatch(t *testing.T) {
	// Slow players keep matches running long enough to kill a referee inside one.
	run := startLeague(t, leagueOpts{players: 4, referees: 2, seed: 22, config: fastConfig(t, nil),
		faults: map[string]string{"p01": "slow:100ms", "p02": "slow:100ms", "p03": "slow:100ms", "p04": "slow:100ms"}})
	waitStatus(t, run.lm, 30*time.Second, func(s statusDoc) bool { return s.MatchesByStatus["IN_PROGRESS"] > 0 })
	ref := run.refs[0]
	_ = ref.cmd.Process.Kill()
	<-ref.done
	run.waitCompleted(t, 120*time.Second)
	run.checkLeague(t, 1)
}

func TestSIGTERMMidLeague(t *testing.T) {
	run := startLeague(t, leagueOpts{players: 6, referees: 2, seed: 24, config: fastConfig(t, nil),
		faults: map[string]string{"p01": "slow:50ms", "p02": "slow:50ms"}})
	waitStatus(t, run.lm, 30*time.Second, func(s statusDoc) bool { return completed(s) >= 2 })
	if code := run.lm.stop(t); code != 0 {
		t.Errorf("league manager exited %d on SIGTERM, want 0", code)
	}
	// Every agent leaves by itself on LEAGUE_SHUTDOWN, with exit code 0.
	for _, p := range append(run.refs, run.players...) {
		select {
		case <-p.done:
			if code := p.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("%s exited %d, want 0", p.name, code)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("%s did not leave after LEAGUE_SHUTDOWN", p.name)
		}
	}
	db := run.openDB(t)
	var open int
	if err := db.QueryRow(`SELECT count(*) FROM matches WHERE status NOT IN ('COMPLETED', 'CANCELLED')`).Scan(&open); err != nil {
		t.Fatal(err)
	}
	if open != 0 {
		t.Errorf("%d matches left neither completed nor cancelled", open)
	}
	var results, done int
	_ = db.QueryRow(`SELECT count(*) FROM match_results`).Scan(&results)
	_ = db.QueryRow(`SELECT count(*) FROM matches WHERE status = 'COMPLETED'`).Scan(&done)
	if results != done || done < 2 {
		t.Errorf("%d results for %d completed matches", results, done)
	}
	checkReplayAndVerify(t, run.audit, run.db)
}
