package league

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
)

// nimSteps bounds the test's nim matches.
const nimSteps = 40

// nimLeague makes the league play nim, a game the League Manager has no rules for.
func nimLeague(cfg *config.Config) {
	cfg.Games = append(cfg.Games, config.GameEntry{GameType: "nim", Name: "Nim", Rules: config.RulesExternal, MaxSteps: nimSteps,
		Scoring: protocol.Scoring{Win: 3, Draw: 1, Loss: 0}, Params: map[string]any{"heaps": []any{3.0, 4.0}}})
	cfg.League.GameType = "nim"
}

// nimMoves is what a nim referee might record: the winner takes the last stone.
func nimMoves(mt liveMatch) []any {
	return []any{
		map[string]any{"step": 1, "player": mt.Players[0], "move": map[string]any{"heap": 1, "take": 1}, "outcome": "SUCCESS"},
		map[string]any{"step": 2, "player": mt.Players[1], "move": map[string]any{"heap": 0, "take": 3}, "outcome": "SUCCESS"},
		map[string]any{"step": 3, "player": mt.Players[0], "move": map[string]any{"heap": 1, "take": 3}, "outcome": "SUCCESS"},
	}
}

// A league of an external game: a referee must name the game to register; the matches
// go to those that did, with the registry's params; results are taken by the generic
// rules; the match pages list the moves without a board; verify checks the results
// without re-playing them and still catches a result that contradicts the scoring.
func TestExternalGameLeague(t *testing.T) {
	h := newHarness(t, harnessOptions{cfg: nimLeague})
	f := newFakeReferee(t, "ref0")
	h.unchanged("refused referees", func() {
		perr := h.refused(refereeRegistration(t, "ref0", f.url(), nil), protocol.ReasonUnsupportedGame)
		if !strings.Contains(perr.Message, "must list it in game_types") {
			t.Errorf("referee without game_types refused with %q, want it told to list the game", perr.Message)
		}
		h.refused(refereeRegistration(t, "ref0", f.url(), map[string]any{"game_types": []string{game.TypeTicTacToe}}), protocol.ReasonUnsupportedGame)
	})
	if got, want := h.m.e.rules.longestMatch(), 2*h.cfg.MatchJoinAckTimeout()+nimSteps*h.m.e.rules.stepGap()+h.m.e.rules.margin(); got != want {
		t.Errorf("longest nim match %v, want %v (max_steps %d)", got, want, nimSteps)
	}

	l := h.register([]string{"ref1", "ref2"}, map[string]any{"game_types": []string{"nim"}}, playerIDs(4))
	l.start()
	var played []liveMatch
	for h.m.State() == StateActive {
		var ms []liveMatch
		waitFor(t, "matches in progress", func() bool {
			_, all := h.round()
			ms = ms[:0]
			for _, mt := range all {
				if mt.Status == protocol.MatchStateInProgress {
					ms = append(ms, mt)
				}
			}
			return len(ms) > 0 || h.m.State() != StateActive
		})
		for _, mt := range ms {
			r := decided(mt, 0)
			p := resultPayload(mt, r)
			p["game_type"], p["game_metadata"] = "nim", map[string]any{"moves": nimMoves(mt), "termination": "normal"}
			if ans := l.ok(withPayload(t, l.report(mt.Referee, l.refTokens[mt.Referee], mt, r), p)); ans.Envelope.MessageType != protocol.MatchResultAck {
				t.Fatalf("got %s, want %s", ans.Envelope.MessageType, protocol.MatchResultAck)
			}
			played = append(played, mt)
		}
	}
	checkEveryPairOnce(t, h, l.players)
	for _, ref := range []string{"ref1", "ref2"} {
		for _, a := range l.refs[ref].received(protocol.MatchAssignment) {
			var p struct {
				GameType   string         `json:"game_type"`
				GameParams map[string]any `json:"game_params"`
			}
			if err := a.Decode(&p); err != nil {
				t.Fatal(err)
			}
			if p.GameType != "nim" || !maps.EqualFunc(p.GameParams, map[string]any{"heaps": []any{3.0, 4.0}}, func(a, b any) bool {
				x, _ := json.Marshal(a)
				y, _ := json.Marshal(b)
				return string(x) == string(y)
			}) {
				t.Errorf("assignment to %s: game %q params %v, want nim with the registry's params", ref, p.GameType, p.GameParams)
			}
		}
	}

	mt := played[0]
	v, err := h.m.MatchView(mt.ID)
	if err != nil {
		t.Fatalf("MatchView: %v", err)
	}
	if v.RulesKnown || v.Initial != nil || len(v.Steps) != 3 || v.Steps[2].Step != 3 || v.Steps[2].Moves[0].Player != mt.Players[0] ||
		string(v.Steps[1].Moves[0].Move) != `{"heap":0,"take":3}` || v.Termination != "normal" {
		t.Errorf("nim match view %+v, want three recorded steps, no board", v)
	}

	lg := h.rebuild()
	if problems := lg.VerifyMatches(game.Default()); len(problems) != 0 {
		t.Fatalf("verify of the nim league: %v", problems)
	}
	if got := lg.RulesUnknown(game.Default()); len(got) != len(played) {
		t.Errorf("RulesUnknown lists %d matches, want all %d played", len(got), len(played))
	}
	// Without rules, verify still holds results to the scoring and to each other.
	r := lg.Results[mt.ID]
	r.Points = map[string]int{mt.Players[0]: 1, mt.Players[1]: 0}
	r.Outcome = map[string]string{mt.Players[0]: "win", mt.Players[1]: "win"}
	problems := lg.VerifyMatches(game.Default())
	if len(problems) != 1 || problems[0].MatchID != mt.ID || !strings.Contains(problems[0].Msg, "outcomes win/win do not fit together") {
		t.Errorf("verify of a win/win nim result: %v", problems)
	}
	r.Outcome = map[string]string{mt.Players[0]: "win", mt.Players[1]: "loss"}
	problems = lg.VerifyMatches(game.Default())
	if len(problems) != 1 || !strings.Contains(problems[0].Msg, "reported 1 points for "+mt.Players[0]+", a win scores 3") {
		t.Errorf("verify of a misscored nim result: %v", problems)
	}
}
