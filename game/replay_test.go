package game

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

func ticTacToeRecords(moves ...string) []Record {
	players := [2]string{"x", "o"}
	out := make([]Record, len(moves))
	for i, m := range moves {
		out[i] = Record{Step: i + 1, Player: players[i%2], Move: json.RawMessage(m)}
	}
	return out
}

// Replay reaches the end of a finished game and names the record a bad log breaks at.
func TestReplay(t *testing.T) {
	g, err := Default().New("tic_tac_toe", nil)
	if err != nil {
		t.Fatal(err)
	}
	win := []string{`{"row":0,"col":0}`, `{"row":1,"col":0}`, `{"row":0,"col":1}`, `{"row":1,"col":1}`, `{"row":0,"col":2}`}
	var steps []int
	final, err := Replay(g.NewState(1), [2]string{"x", "o"}, ticTacToeRecords(win...), func(step, first int, s State) {
		if first != step-1 {
			t.Errorf("step %d starts at record %d", step, first)
		}
		steps = append(steps, step)
	})
	if err != nil || !final.Terminal() || final.Outcomes() != [2]protocol.Outcome{protocol.Win, protocol.Loss} || len(steps) != 5 {
		t.Fatalf("Replay = %v, %v (steps %v), want x to win in 5", final, err, steps)
	}
	tests := []struct {
		name    string
		records []Record
		move    int
		want    string
	}{
		{"a move after the end", ticTacToeRecords(append(win, `{"row":2,"col":2}`)...), 6, "after the game was over"},
		{"a player not in the match", []Record{{Step: 1, Player: "z", Move: json.RawMessage(win[0])}}, 1, "z, who is not in the match"},
		{"an illegal move", ticTacToeRecords(win[0], win[0]), 2, "refused by the rules"},
		{"a malformed move", ticTacToeRecords(`{"row":"a"}`), 1, "refused by the rules"},
		{"the wrong player to move", []Record{{Step: 1, Player: "o", Move: json.RawMessage(win[0])}}, 1, "is not to move"},
		{"two moves in one alternating step", []Record{{Step: 1, Player: "x", Move: json.RawMessage(win[0])}, {Step: 1, Player: "o", Move: json.RawMessage(win[1])}}, 2, "is not to move"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Replay(g.NewState(1), [2]string{"x", "o"}, tc.records, nil)
			var re *ReplayError
			if !errors.As(err, &re) || re.Move != tc.move || !strings.Contains(re.Msg, tc.want) {
				t.Errorf("Replay error %v, want move %d saying %q", err, tc.move, tc.want)
			}
		})
	}
}
