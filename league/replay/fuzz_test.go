package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/league/standings"
)

// smallLeague is the log of a whole tic-tac-toe league of players in format, every
// match won by its first mover, as short as a League Manager could write it (chained):
// a seed the fuzzer can change into every kind of line the rebuild reads.
func smallLeague(tb testing.TB, format schedule.Format, players ...string) []byte {
	tb.Helper()
	var out bytes.Buffer
	prev := ""
	add := func(dir audit.Direction, conv string, msg string) {
		if !json.Valid([]byte(msg)) {
			tb.Fatalf("seed message is not JSON: %s", msg)
		}
		line := fmt.Sprintf(`{"log_id":"l%d","timestamp":"t","direction":%q,"source":"s","destination":"d","conversation_id":%q,"message":%s,"prev_hash":%q}`, out.Len(), dir, conv, msg, prev)
		e := audit.Entry{Raw: []byte(line)}
		prev = e.Hash()
		out.WriteString(line + "\n")
	}
	conv := 0
	exchange := func(typ, sender, matchID string, payload any, answer string) {
		conv++
		body, err := json.Marshal(payload)
		if err != nil {
			tb.Fatal(err)
		}
		c := fmt.Sprint("c", conv)
		add(audit.DirRequest, c, fmt.Sprintf(`{"params":{"envelope":{"message_type":%q,"sender":%q,"match_id":%q},"payload":%s}}`, typ, sender, matchID, body))
		add(audit.DirResponse, c, fmt.Sprintf(`{"result":{"envelope":{"message_type":%q,"league_id":"L"},"payload":{}}}`, answer))
	}
	note := func(typ audit.Event, body any) {
		msg, err := json.Marshal(map[string]any{"type": typ, "body": body})
		if err != nil {
			tb.Fatal(err)
		}
		add(audit.DirEvent, "", string(msg))
	}
	logged := func(r schedule.Round) Round {
		lr := Round{ID: r.ID, Number: r.Number, Cycle: r.Cycle, Bye: r.Bye}
		if r.Bye != "" {
			lr.ByePoints = format.ByeScore()
		}
		for _, m := range r.Matches {
			lr.Matches = append(lr.Matches, Match{ID: m.ID, Players: m.Players, Seed: m.Seed})
		}
		return lr
	}
	exchange("REGISTER_REFEREE_REQUEST", "referee:f1", "", map[string]any{"referee_id": "f1"}, "REGISTER_REFEREE_RESPONSE")
	for _, p := range players {
		exchange("REGISTER_PLAYER_REQUEST", "player:"+p, "", map[string]any{"player_id": p}, "REGISTER_PLAYER_RESPONSE")
	}
	const seed = 1
	rounds, err := schedule.Next(format, players, seed, nil)
	if err != nil {
		tb.Fatal(err)
	}
	var first []Round
	for _, r := range rounds {
		first = append(first, logged(r))
	}
	note(audit.EventSchedule, map[string]any{"league_id": "L", "game_type": "tic_tac_toe", "seed": seed, "players": players, "format": format, "rounds": first})
	var played []schedule.Played
	for len(rounds) > 0 {
		for _, r := range rounds {
			p := schedule.Played{Round: r, Results: map[string]schedule.Result{}}
			for _, m := range r.Matches {
				x, o := m.Players[0], m.Players[1]
				exchange("MATCH_ASSIGNMENT", "league_manager", m.ID, map[string]any{"scoring": map[string]int{"win": 3, "draw": 1, "loss": 0}}, "MATCH_ASSIGNMENT_ACK")
				var moves []map[string]any
				for i, cell := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}} {
					moves = append(moves, map[string]any{"step": i + 1, "player": m.Players[i%2], "move": map[string]int{"row": cell[0], "col": cell[1]}})
				}
				res := schedule.Result{Outcome: map[string]string{x: "win", o: "loss"}, Points: map[string]int{x: 3, o: 0}}
				exchange("MATCH_RESULT_REPORT", "referee:f1", m.ID, map[string]any{"game_type": "tic_tac_toe", "players": m.Players, "outcome": res.Outcome, "points": res.Points,
					"game_metadata": map[string]any{"match_seed": m.Seed, "termination": "normal", "moves": moves}}, "MATCH_RESULT_ACK")
				p.Results[m.ID] = res
			}
			played = append(played, p)
		}
		if rounds, err = schedule.Next(format, players, seed, played); err != nil {
			tb.Fatal(err)
		}
		for _, r := range rounds {
			note(audit.EventRoundPaired, logged(r))
		}
	}
	return out.Bytes()
}

var (
	roundRobin = changedFormat(func(f *schedule.Format) { f.RatingSamples = 20 })
	swiss      = changedFormat(func(f *schedule.Format) {
		f.Algorithm, f.Rounds, f.ByePoints = schedule.Swiss, 2, new(3)
		f.Tiebreaks, f.RatingSamples = []string{standings.SonnebornBerger, standings.HeadToHead}, 20
	})
)

// changedFormat is the default format changed by set.
func changedFormat(set func(f *schedule.Format)) schedule.Format {
	f := schedule.Default()
	set(&f)
	return f
}

// The seeds of FuzzLog are leagues that replay and verify.
func TestSmallLeaguesVerify(t *testing.T) {
	for _, tc := range []struct {
		name    string
		log     []byte
		matches int
	}{
		{"round robin of 2", smallLeague(t, roundRobin, "p1", "p2"), 1},
		{"swiss of 3", smallLeague(t, swiss, "p1", "p2", "p3"), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries, err := audit.Parse(bytes.NewReader(tc.log))
			if err != nil {
				t.Fatal(err)
			}
			if err := audit.CheckChain(entries); err != nil {
				t.Fatal(err)
			}
			l, err := Rebuild(entries)
			if err != nil {
				t.Fatal(err)
			}
			if p := l.VerifyMatches(game.Default()); len(p) != 0 || len(l.Results) != tc.matches || len(l.Unrecorded()) != 0 {
				t.Fatalf("problems %v, %d results, unrecorded %v; want %d results", p, len(l.Results), l.Unrecorded(), tc.matches)
			}
			if n, err := l.CheckPairings(); err != nil || n != len(l.Rounds) {
				t.Fatalf("CheckPairings = %d, %v; want %d rounds", n, err, len(l.Rounds))
			}
			checkLog(t, tc.log)
		})
	}
}

// FuzzLog reads hostile logs along the paths of league verify and league replay: the
// entries Parse returns (before any bad line), then Rebuild, VerifyMatches, the report,
// CheckPairings, the table, crosstable and ratings. None may panic, and every error
// must be a LineError naming one of the lines read (a Problem names its match); results
// VerifyMatches passes, the table counts.
func FuzzLog(f *testing.F) {
	for _, log := range [][]byte{smallLeague(f, roundRobin, "p1", "p2"), smallLeague(f, swiss, "p1", "p2", "p3")} {
		f.Add(log)
		lines := bytes.SplitAfter(log, []byte("\n"))
		f.Add(bytes.Join(lines[:len(lines)-3], nil))
	}
	// The golden logs are too long to seed with (a new input is minimized for up to a
	// minute, at milliseconds a run); their first lines are the real League Manager's.
	golden, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.audit.jsonl"))
	for _, path := range golden {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		lines := bytes.SplitAfter(data, []byte("\n"))
		f.Add(bytes.Join(lines[:min(4, len(lines))], nil))
	}
	f.Fuzz(checkLog)
}

func checkLog(t *testing.T, data []byte) {
	entries, _ := audit.Parse(bytes.NewReader(data))
	named := func(what string, err error) bool {
		t.Helper()
		if err == nil {
			return true
		}
		var le *audit.LineError
		if !errors.As(err, &le) || le.Line < 1 || le.Line > len(entries) {
			t.Fatalf("%s = %v, want a LineError naming one of the %d lines", what, err, len(entries))
		}
		return false
	}
	_ = audit.CheckChain(entries) // FuzzParse in package audit checks it
	l, err := Rebuild(entries)
	if !named("Rebuild", err) {
		return
	}
	reg := game.Default()
	problems := l.VerifyMatches(reg)
	for _, p := range problems {
		if p.MatchID == "" || p.Msg == "" || p.Move < 0 {
			t.Fatalf("problem %+v names no match or move", p)
		}
	}
	if _, err := l.Table(); err != nil && len(problems) == 0 {
		// What verify passes, replay counts: only a bye may stop the table then.
		var le *audit.LineError
		errors.As(err, &le)
		for _, r := range l.Results {
			if le != nil && le.Line == r.Line {
				t.Fatalf("verify finds nothing wrong with the results, but the table refuses one: %v", err)
			}
		}
	}
	l.Unrecorded()
	l.RulesUnknown(reg)
	named("WriteReport", l.WriteReport(io.Discard, true))
	_, err = l.CheckPairings()
	named("CheckPairings", err)
	table, err := l.Table()
	if !named("Table", err) {
		return
	}
	standings.WriteCrosstable(io.Discard, table.Crosstable(nil))
	rated, err := l.Ratings()
	if named("Ratings", err) {
		standings.WriteRated(io.Discard, table.Detailed(), rated)
	}
}
