package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/schedule"
)

// withSchedule returns the small round robin's log with its SCHEDULE body changed by
// change, re-chained.
func withSchedule(t *testing.T, change func(body map[string]any)) []audit.Entry {
	t.Helper()
	var out [][]byte
	prev := ""
	for _, line := range bytes.SplitAfter(smallLeague(t, roundRobin, "p1", "p2"), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		if msg := e["message"].(map[string]any); msg["type"] == string(audit.EventSchedule) {
			change(msg["body"].(map[string]any))
		}
		e["prev_hash"] = prev
		b, _ := json.Marshal(e)
		prev = (&audit.Entry{Raw: b}).Hash()
		out = append(out, append(b, '\n'))
	}
	entries, err := audit.Parse(bytes.NewReader(bytes.Join(out, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := audit.CheckChain(entries); err != nil {
		t.Fatal(err)
	}
	return entries
}

func scheduleLine(entries []audit.Entry) int {
	for _, e := range entries {
		if bytes.Contains(e.Raw, []byte(`"type":"SCHEDULE"`)) {
			return e.Line
		}
	}
	return -1
}

// A schedule no League Manager writes is refused at its line, before a replay pairs or
// rates without end, and every error of the rebuild and of the checks after it names a
// line (found by FuzzLog: a schedule of no players failed CheckPairings with no line).
func TestHostileSchedulesAreFoundAtTheirLine(t *testing.T) {
	players := make([]any, schedule.MaxPlayers+1)
	for i := range players {
		players[i] = fmt.Sprintf("p%d", i)
	}
	cases := []struct {
		name   string
		change func(body map[string]any)
		// check runs the step that must fail
		check func(l *League) error
		want  string
	}{
		{"rating samples beyond the configuration's", func(b map[string]any) { b["format"].(map[string]any)["rating_samples"] = 1 << 40 }, nil, "ranking.rating_samples: must be between 1 and 100000, got 1099511627776"},
		{"swiss rounds beyond", func(b map[string]any) { b["format"].(map[string]any)["rounds"] = 1000 }, nil, "scheduling.rounds: must be between 0 and 999, got 1000"},
		{"best of beyond", func(b map[string]any) { b["format"].(map[string]any)["best_of"] = 1 << 30 }, nil, "scheduling.best_of: must be between 1 and 99, got 1073741824"},
		{"games per pair beyond", func(b map[string]any) { b["format"].(map[string]any)["games_per_pair"] = 101 }, nil, "scheduling.games_per_pair: must be between 1 and 100, got 101"},
		{"players beyond", func(b map[string]any) { b["players"] = players }, nil, "the schedule lists 1001 players, more than a League Manager takes (1000)"},
		{"a scheduled player not registered", func(b map[string]any) {
			b["players"] = []any{"p1", "p2", "p9"}
		}, nil, "the schedule lists p9, whose registration is not in the log"},
		{"no players to pair", func(b map[string]any) { b["players"] = []any{} },
			func(l *League) error { _, err := l.CheckPairings(); return err }, "cannot be paired again: need at least 2 players"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			entries := withSchedule(t, tc.change)
			l, err := Rebuild(entries)
			if tc.check != nil {
				if err != nil {
					t.Fatal(err)
				}
				err = tc.check(l)
			}
			var le *audit.LineError
			if !errors.As(err, &le) || le.Line != scheduleLine(entries) || !strings.Contains(le.Msg, tc.want) {
				t.Errorf("got %v, want line %d: %s", err, scheduleLine(entries), tc.want)
			}
		})
	}
}

// A result that names players the schedule does not fails the table and the ratings at
// the result's line.
func TestResultOfUnscheduledPlayersIsFoundAtItsLine(t *testing.T) {
	entries := withSchedule(t, func(map[string]any) {})
	l, err := Rebuild(entries)
	if err != nil {
		t.Fatal(err)
	}
	var r *Result
	for _, res := range l.Results {
		r = res
	}
	r.Outcome = map[string]string{"x1": "win", "x2": "loss"}
	r.Points = map[string]int{"x1": 3, "x2": 0}
	_, terr := l.Table()
	_, rerr := l.Ratings()
	for what, err := range map[string]error{"Table": terr, "Ratings": rerr} {
		var le *audit.LineError
		if !errors.As(err, &le) || le.Line != r.Line {
			t.Errorf("%s = %v, want an error at line %d", what, err, r.Line)
		}
	}
}
