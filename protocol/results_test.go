package protocol_test

import (
	"strings"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

func TestCheckResult(t *testing.T) {
	players := [2]string{"p1", "p2"}
	scoring := &protocol.Scoring{Win: 3, Draw: 1, Loss: 0}
	report := func(outcome map[string]string, points map[string]int) *protocol.ResultReport {
		return &protocol.ResultReport{GameType: "tic_tac_toe", Players: []string{"p2", "p1"}, Outcome: outcome, Points: points}
	}
	tests := []struct {
		name    string
		r       *protocol.ResultReport
		scoring *protocol.Scoring
		want    string // "" for valid, else a part of the error
	}{
		{"a win", report(map[string]string{"p1": "win", "p2": "loss"}, map[string]int{"p1": 3, "p2": 0}), scoring, ""},
		{"a draw", report(map[string]string{"p1": "draw", "p2": "draw"}, map[string]int{"p1": 1, "p2": 1}), scoring, ""},
		{"a double forfeit", report(map[string]string{"p1": "loss", "p2": "loss"}, map[string]int{"p1": 0, "p2": 0}), scoring, ""},
		{"points unchecked without scoring", report(map[string]string{"p1": "win", "p2": "loss"}, map[string]int{"p1": 7, "p2": 9}), nil, ""},
		{"another player", &protocol.ResultReport{Players: []string{"p1", "p3"}, Outcome: map[string]string{"p1": "win", "p2": "loss"},
			Points: map[string]int{"p1": 3, "p2": 0}}, scoring, "players must be p1 and p2"},
		{"one player", &protocol.ResultReport{Players: []string{"p1"}, Outcome: map[string]string{"p1": "win", "p2": "loss"},
			Points: map[string]int{"p1": 3, "p2": 0}}, scoring, "players must be p1 and p2"},
		{"no outcome", report(map[string]string{"p1": "win", "p3": "loss"}, map[string]int{"p1": 3, "p2": 0}), scoring, "no outcome for p2"},
		{"no points", report(map[string]string{"p1": "win", "p2": "loss"}, map[string]int{"p1": 3}), scoring, "no points for p2"},
		{"a third outcome", report(map[string]string{"p1": "win", "p2": "loss", "p3": "loss"}, map[string]int{"p1": 3, "p2": 0}), scoring,
			"outcome and points name 3 and 2 players"},
		{"two winners", report(map[string]string{"p1": "win", "p2": "win"}, map[string]int{"p1": 3, "p2": 3}), nil, "outcomes win/win do not fit together"},
		{"a win against a draw", report(map[string]string{"p1": "win", "p2": "draw"}, map[string]int{"p1": 3, "p2": 1}), scoring, "do not fit together"},
		{"an unknown outcome", report(map[string]string{"p1": "forfeit", "p2": "loss"}, map[string]int{"p1": 3, "p2": 0}), scoring, "do not fit together"},
		{"a win worth 2", report(map[string]string{"p1": "win", "p2": "loss"}, map[string]int{"p1": 2, "p2": 0}), scoring,
			"reported 2 points for p1, a win scores 3"},
		{"a double forfeit with a point", report(map[string]string{"p1": "loss", "p2": "loss"}, map[string]int{"p1": 0, "p2": 1}), scoring,
			"reported 1 points for p2, a loss scores 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := protocol.CheckResult(tc.r, players, tc.scoring)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got %v, want valid", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}
