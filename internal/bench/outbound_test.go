package bench

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/internal/testtools"
)

// The audit log's assignments name each match's players, and its results the player of
// each move.
func TestParseAuditPlayersAndMovers(t *testing.T) {
	start := auditLine("request", "c0", 0, request("ADMIN_START_LEAGUE_REQUEST", "", 0, map[string]any{})) + auditLine("response", "c0", 0, okAnswer)
	assign := auditLine("request", "c1", 1, request("MATCH_ASSIGNMENT", "m1", 1, map[string]any{"players": []string{"p01", "p02"}})) +
		auditLine("response", "c1", 1, okAnswer)
	moves := []map[string]any{{"step": 1, "player": "p01"}, {"step": 2, "player": "p02"}, {"step": 3, "player": "p01"}}
	result := auditLine("request", "c2", 10, request("MATCH_RESULT_REPORT", "m1", 10, map[string]any{"game_metadata": map[string]any{"moves": moves}})) +
		auditLine("response", "c2", 10, okAnswer)
	f, err := parseAudit(strings.NewReader(start + assign + result))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.matches) != 1 {
		t.Fatalf("got %d matches, want 1", len(f.matches))
	}
	m := f.matches[0]
	if strings.Join(m.players, ",") != "p01,p02" || m.moves != 3 || m.movesBy["p01"] != 2 || m.movesBy["p02"] != 1 {
		t.Errorf("got players %v, %d moves by %v; want p01 and p02, 3 moves, 2 by p01 and 1 by p02", m.players, m.moves, m.movesBy)
	}
}

// Matches split by how many of their players are outbound; the moves of outbound players
// count as relayed, whoever they played.
func TestByKindAndRelayedMoves(t *testing.T) {
	outbound := map[string]bool{"p03": true, "p04": true}
	matches := []matchFigure{
		{id: "direct", players: []string{"p01", "p02"}, movesBy: map[string]int{"p01": 5, "p02": 4}},
		{id: "mixed", players: []string{"p01", "p03"}, movesBy: map[string]int{"p01": 3, "p03": 3}},
		{id: "relayed", players: []string{"p04", "p03"}, movesBy: map[string]int{"p04": 5, "p03": 4}},
		{id: "unnamed"},
	}
	kinds := byKind(matches, outbound)
	ids := func(ms []matchFigure) string {
		var s []string
		for _, m := range ms {
			s = append(s, m.id)
		}
		return strings.Join(s, ",")
	}
	for k, want := range [3]string{"direct,unnamed", "mixed", "relayed"} {
		if got := ids(kinds[k]); got != want {
			t.Errorf("%s matches: got %q, want %q", kindNames[k], got, want)
		}
	}
	if got := relayedMoves(matches, outbound); got != 3+5+4 {
		t.Errorf("got %d relayed moves, want 12", got)
	}
}

func TestRelayCPUPer(t *testing.T) {
	// 0.3 s more over 1000 moves is 300 µs each.
	if got, ok := relayCPUPer(1.5, 1.2, 1000); !ok || math.Abs(got-300) > 1e-9 {
		t.Errorf("got %v %v, want 300 true", got, ok)
	}
	if _, ok := relayCPUPer(1.5, 1.2, 0); ok {
		t.Error("no relayed move: want false")
	}
}

func TestAnsweredRelayCalls(t *testing.T) {
	text := `# HELP league_relay_calls_total Calls to outbound agents through the relay, by outcome.
# TYPE league_relay_calls_total counter
league_relay_calls_total{league_id="l1",outcome="answered"} 1096
league_relay_calls_total{league_id="l1",outcome="gone"} 3
league_relay_calls_total{league_id="l2",outcome="answered"} 1.5e+06
league_relay_polls_total{league_id="l1"} 900
`
	got, err := answeredRelayCalls(strings.NewReader(text))
	if err != nil || got != 1096+1500000 {
		t.Errorf("got %d %v, want 1501096", got, err)
	}
	if _, err := answeredRelayCalls(strings.NewReader(`league_relay_calls_total{outcome="answered"} many` + "\n")); err == nil {
		t.Error("a value that is no number: no error")
	}
}

// The report's figures: the median per kind over the runs, the ratio of relayed to
// direct, and the relay's CPU as the median of the pairs' differences over the moves.
func TestOutboundReport(t *testing.T) {
	run := func(lm float64, direct, relayed float64, moves int, calls int64) runFigures {
		return runFigures{leagueTime: time.Second, cpu: [3]float64{lm, 1, 1}, kindMatches: [3]int{45, 100, 45},
			kindP50: [3]float64{direct, 0, relayed}, kindP99: [3]float64{2 * direct, 0, 3 * relayed}, relayedMoves: moves, relayCalls: calls}
	}
	with := []runFigures{run(1.9, 10, 25, 700, 1000), run(2.0, 11, 24, 720, 1100), run(1.8, 12, 30, 710, 1050)}
	// LM CPU differences 0.7, 0.6, 0.75 s: per move 1000, ~833 and ~1056 µs.
	without := []runFigures{run(1.2, 9, 0, 0, 0), run(1.4, 9, 0, 0, 0), run(1.05, 9, 0, 0, 0)}
	s := summariseOutbound(with, without)
	if !s.ok || s.p50[kindDirect] != 11 || s.p50[kindRelayed] != 25 || s.p99[kindDirect] != 22 || s.p99[kindRelayed] != 75 {
		t.Errorf("got %+v", s)
	}
	if math.Abs(s.cpuPerMove-1000) > 1e-6 || math.Abs(s.cpuPerCall-700) > 1e-6 {
		t.Errorf("relay CPU per move %v and per call %v µs, want 1000 and 700", s.cpuPerMove, s.cpuPerCall)
	}
	var b strings.Builder
	writeOutboundReport(&b, 20, 10, s)
	text := b.String()
	t.Log(text)
	if !strings.Contains(text, "with 10 outbound (p11-p20)") {
		t.Errorf("the outbound players are not named:\n%s", text)
	}
	rows := testtools.BenchRows(text)
	for label, want := range map[string]string{
		"matches":               "45 100 45",
		"per-move overhead p50": "25.000 ms 0.000 ms 11.000 ms 2.27x",
		"per-move overhead p99": "75.000 ms 0.000 ms 22.000 ms 3.41x",
	} {
		if got := strings.Join(strings.Fields(rows[label]), " "); got != want {
			t.Errorf("row %q: got %q, want %q", label, got, want)
		}
	}
	if !strings.Contains(text, "relay CPU per relayed move: 1000 µs (700 µs per relayed call)") {
		t.Errorf("no relay CPU line:\n%s", text)
	}

	// Without pairs, or without relayed moves, there is no relay CPU to give.
	b.Reset()
	writeOutboundReport(&b, 20, 10, summariseOutbound(with, without[:1]))
	if !strings.Contains(b.String(), "relay CPU per relayed move: -") {
		t.Errorf("unpaired runs give a relay CPU:\n%s", b.String())
	}
}
