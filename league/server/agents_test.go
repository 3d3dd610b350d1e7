package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/player"
	"github.com/agentleague/agentleague/protocol"
	"github.com/agentleague/agentleague/referee"
	"github.com/rs/zerolog"
)

// agentRun is a referee or player running in-process; done delivers what Run returned.
type agentRun struct {
	name string
	log  *syncBuffer
	stop context.CancelFunc
	done chan error
}

// runAgent runs run(ctx) in a goroutine until it returns; the cleanup stops it if the
// test did not wait for it.
func runAgent(t *testing.T, name string, log *syncBuffer, run func(context.Context) error) *agentRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a := &agentRun{name: name, log: log, stop: cancel, done: make(chan error, 1)}
	// Ends when Run returns: on LEAGUE_SHUTDOWN, or when the cleanup cancels ctx.
	go func() { a.done <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-a.done:
		case <-time.After(15 * time.Second):
			t.Errorf("%s did not stop", name)
		}
	})
	return a
}

// A whole league with real referees and players, all in-process: they register with
// the League Manager, it plays every match of the round robin to completion, and the
// end of its context sends every agent home with LEAGUE_SHUTDOWN.
func TestLeagueWithRealAgents(t *testing.T) {
	dir := t.TempDir()
	lm := startLM(t, dir)
	var agents []*agentRun
	for i := 1; i <= 2; i++ {
		id := fmt.Sprintf("ref%d", i)
		log := &syncBuffer{}
		ref, err := referee.New(referee.Config{ID: id, Addr: "127.0.0.1:0", LeagueURL: lm.url, Stdout: io.Discard,
			Penalties: protocol.Penalties{MoveWarnings: 1, ForcedMoves: 1}}, zerolog.New(log))
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, runAgent(t, id, log, ref.Run))
	}
	lm.waitStatus(t, "2 referees", func(s map[string]any) bool { return s["referees"] == float64(2) })
	players := []string{"p01", "p02", "p03", "p04"}
	for i, id := range players {
		log := &syncBuffer{}
		p, err := player.New(player.Config{ID: id, Addr: "127.0.0.1:0", LeagueURL: lm.url, Strategy: "random", Seed: int64(i + 1),
			Stdout: io.Discard}, zerolog.New(log))
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, runAgent(t, id, log, p.Run))
	}
	lm.waitStatus(t, "4 players", func(s map[string]any) bool { return s["players"] == float64(4) })
	w := newWire(t, lm)
	w.ok(adminStartMsg(t, e2eAdminToken))
	s := lm.waitStatus(t, "COMPLETED", func(s map[string]any) bool { return s["state"] == "COMPLETED" })
	if matchesIn(s, "COMPLETED") != 6 || s["matches_total"] != float64(6) {
		t.Errorf("status at the end %v, want the 6 matches of 4 players completed", s)
	}

	// The standings agree with a recount of the stored results.
	db := openRO(t, filepath.Join(dir, "league.db"))
	rows, err := db.Query(`SELECT outcome, points FROM match_results`)
	if err != nil {
		t.Fatal(err)
	}
	var results []standings.Result
	for rows.Next() {
		var outcome, points string
		if err := rows.Scan(&outcome, &points); err != nil {
			t.Fatal(err)
		}
		var r standings.Result
		if json.Unmarshal([]byte(outcome), &r.Outcomes) != nil || json.Unmarshal([]byte(points), &r.Points) != nil {
			t.Fatalf("result %s %s does not decode", outcome, points)
		}
		results = append(results, r)
	}
	rows.Close()
	want, err := standings.Recount(players, results)
	if err != nil {
		t.Fatal(err)
	}
	q := msgOf(t, protocol.QueryStandings, protocol.SenderAdmin, map[string]any{})
	q.Envelope.AuthToken = e2eAdminToken
	if got := standingsOf(t, w.ok(q)); fmt.Sprint(got) != fmt.Sprint(want) || len(results) != 6 {
		t.Errorf("standings %v, want %v (a recount of %d results)", got, want, len(results))
	}

	lm.stop()
	for _, a := range agents {
		select {
		case err := <-a.done:
			a.done <- err // for the cleanup
			if err != nil {
				t.Errorf("%s: %v\nlog:\n%s", a.name, err, a.log)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("%s did not leave on LEAGUE_SHUTDOWN\nlog:\n%s", a.name, a.log)
		}
	}
}
