package ratings

import (
	"encoding/json"
	"testing"
)

func TestFromResult(t *testing.T) {
	tests := []struct {
		name     string
		outcome  map[string]string
		metadata string
		want     Game
		ok       bool
	}{
		{"win for the later id", map[string]string{"b": "win", "a": "loss"}, `{"termination":"normal"}`, Game{"a", "b", 0}, true},
		{"win for the earlier id", map[string]string{"b": "loss", "a": "win"}, ``, Game{"a", "b", 1}, true},
		{"draw", map[string]string{"b": "draw", "a": "draw"}, `{}`, Game{"a", "b", 0.5}, true},
		{"timeout counts", map[string]string{"a": "win", "b": "loss"}, `{"termination":"timeout"}`, Game{"a", "b", 1}, true},
		{"illegal move counts", map[string]string{"a": "loss", "b": "win"}, `{"termination":"illegal_move"}`, Game{"a", "b", 0}, true},
		{"league forfeit", map[string]string{"a": "win", "b": "loss"}, `{"forfeit":"suspended","suspended":["b"]}`, Game{}, false},
		{"no show", map[string]string{"a": "win", "b": "loss"}, `{"termination":"no_show"}`, Game{}, false},
		{"double no show", map[string]string{"a": "loss", "b": "loss"}, `{"termination":"double_no_show"}`, Game{}, false},
		{"both lose", map[string]string{"a": "loss", "b": "loss"}, `{}`, Game{}, false},
		{"one player", map[string]string{"a": "win"}, `{}`, Game{}, false},
		{"unreadable metadata is a played game", map[string]string{"a": "draw", "b": "draw"}, `[1]`, Game{"a", "b", 0.5}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := FromResult(tc.outcome, json.RawMessage(tc.metadata))
			if got != tc.want || ok != tc.ok {
				t.Errorf("FromResult = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestLeagueNeverNil(t *testing.T) {
	rows, err := League(nil, nil, 10, 1)
	if err != nil || rows == nil || len(rows) != 0 {
		t.Fatalf("League(nil) = %v, %v; want an empty list", rows, err)
	}
	a, _ := League([]string{"a", "b"}, []Game{{"a", "b", 1}, {"a", "b", 0.5}}, 50, 7)
	b, _ := League([]string{"b", "a"}, []Game{{"b", "a", 0.5}, {"b", "a", 0}}, 50, 7)
	if len(a) != 2 || a[0] != b[0] || a[1] != b[1] {
		t.Errorf("the same games rate differently: %+v and %+v", a, b)
	}
}
