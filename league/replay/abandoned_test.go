package replay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/league/audit"
)

// events builds an audit log of the registrations of p1 and p2 followed by League
// Manager events, the events numbered from line 1.
func events(t *testing.T, evs ...map[string]any) []audit.Entry {
	t.Helper()
	var out []audit.Entry
	add := func(line int, direction audit.Direction, conversation string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, audit.Entry{Line: line, Direction: direction, ConversationID: conversation, Message: b})
	}
	for _, id := range []string{"p1", "p2"} {
		env := map[string]any{"protocol": "league.v2", "message_type": "REGISTER_PLAYER_REQUEST", "sender": "player:" + id, "conversation_id": "c-" + id}
		add(-1, audit.DirRequest, "c-"+id, map[string]any{"params": map[string]any{"envelope": env, "payload": map[string]any{"player_id": id}}})
		env = map[string]any{"protocol": "league.v2", "message_type": "REGISTER_PLAYER_RESPONSE", "sender": "league_manager", "conversation_id": "c-" + id, "league_id": "l1"}
		add(-1, audit.DirResponse, "c-"+id, map[string]any{"result": map[string]any{"envelope": env, "payload": map[string]any{"player_id": id}}})
	}
	for i, ev := range evs {
		add(i+1, audit.DirEvent, "", ev)
	}
	return out
}

// An abandoned match completes its round without a result; a log that gives the same
// match a result as well contradicts itself, in either order.
func TestAbandonedMatches(t *testing.T) {
	schedule := map[string]any{"type": audit.EventSchedule, "body": map[string]any{
		"league_id": "l1", "game_type": "tic_tac_toe", "seed": 1, "players": []string{"p1", "p2"},
		"rounds": []map[string]any{{"round_id": "round-1", "round_number": 1, "cycle": 1, "matches": []map[string]any{
			{"match_id": "m1", "players": []string{"p1", "p2"}, "match_seed": 7},
		}}},
	}}
	abandoned := map[string]any{"type": audit.EventMatchAbandoned, "body": map[string]any{"match_id": "m1", "failures": 3}}
	result := map[string]any{"type": audit.EventResultRecorded, "body": map[string]any{
		"match_id": "m1", "game_type": "tic_tac_toe", "players": []string{"p1", "p2"},
		"outcome": map[string]string{"p1": "win", "p2": "loss"}, "points": map[string]int{"p1": 3, "p2": 0},
	}}
	unknown := map[string]any{"type": audit.EventMatchAbandoned, "body": map[string]any{"match_id": "m9"}}

	l, err := Rebuild(events(t, schedule, abandoned))
	if err != nil {
		t.Fatal(err)
	}
	if !l.RoundComplete(0) || l.Abandoned["m1"] != 2 || len(l.Results) != 0 {
		t.Fatalf("round complete %v, abandoned %v, results %d: want the round complete with m1 abandoned at line 2", l.RoundComplete(0), l.Abandoned, len(l.Results))
	}
	var report strings.Builder
	if err := l.WriteReport(&report, false); err != nil || !strings.Contains(report.String(), "0 results, 1 abandoned") {
		t.Errorf("report %q (%v), want it to count the abandoned match", report.String(), err)
	}
	for _, tc := range []struct {
		name string
		log  []map[string]any
		want string
	}{
		{"result after abandonment", []map[string]any{schedule, abandoned, result}, "line 3: result for match m1, which was abandoned (line 2)"},
		{"abandonment after a result", []map[string]any{schedule, result, abandoned}, "line 3: match m1 is abandoned but has a result (line 2)"},
		{"unscheduled match", []map[string]any{schedule, unknown}, "line 2: match m9 is abandoned but not in the schedule"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Rebuild(events(t, tc.log...)); err == nil || err.Error() != tc.want {
				t.Errorf("Rebuild: %v, want %q", err, tc.want)
			}
		})
	}
}
