package referee

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/internal/testtools"
	"github.com/agentleague/agentleague/player"
	"github.com/agentleague/agentleague/protocol"
)

// Every metric of the referee moves as its matches are played, as GET /metrics shows
// in the Prometheus text format: p1 always answers an illegal move, p2 never answers in
// time. The move deadline is wide enough that p1's illegal move always comes before it,
// however loaded the machine (a 100 ms one is not).
func TestRefereeMetricsMove(t *testing.T) {
	const moveDeadline = 2 * time.Second
	a := startAgents(t, agents{
		features: []string{protocol.FeatureSignedAssignments, protocol.FeatureMatchCredentials},
		player: func(c *player.Config) {
			// p2's answers wait until the referee stops waiting for them.
			c.Fault = map[string]string{"p1": player.FaultIllegal, "p2": player.FaultSlow + ":1h"}[c.ID]
		},
	})
	f := a.league
	f.mu.Lock()
	base := strings.TrimSuffix(f.endpoints["referee:ref1"], "/mcp")
	f.mu.Unlock()
	before := scrapeHTTP(t, base)
	// m1: p1 moves first, illegally. m2: p2 moves first and misses its deadline twice
	// (a warning, then a forced move), then p1 moves illegally.
	for i, players := range [][]string{{"p1", "p2"}, {"p2", "p1"}} {
		m := f.assignment([]string{"m1", "m2"}[i], true, true)
		var p map[string]any
		_ = json.Unmarshal(m.Payload, &p)
		p["players"] = players
		p["deadlines"] = map[string]int{"join_ack_ms": int(agentDeadline.Milliseconds()), "move_ms": int(moveDeadline.Milliseconds())}
		m.Payload, _ = json.Marshal(p)
		if _, err := f.send(t, m); err != nil {
			t.Fatal(err)
		}
		f.waitResults(t, 1)
	}
	after := scrapeHTTP(t, base)
	for _, tc := range []struct {
		series string
		want   float64
	}{
		{"referee_matches_assigned_total", 2},
		{"referee_matches_completed_total", 2},
		{"referee_match_duration_seconds_count", 2},
		{"referee_move_latency_seconds_count", 1}, // m2's forced move
		{`referee_player_timeouts_total{kind="timeout"}`, 2},
		{`referee_invalid_moves_total{kind="invalid_move"}`, 2},
	} {
		if got := after[tc.series] - before[tc.series]; got != tc.want {
			t.Errorf("%s moved by %v, want %v", tc.series, got, tc.want)
		}
	}
}

// scrapeHTTP reads GET /metrics of a running server.
func scrapeHTTP(t *testing.T, base string) map[string]float64 {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); res.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("GET /metrics: %d %s", res.StatusCode, ct)
	}
	m, err := testtools.MetricValues(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
