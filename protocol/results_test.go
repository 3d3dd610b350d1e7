package protocol_test

import (
	"encoding/json"
	"reflect"
	"slices"
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

// refereeRecord is game_metadata as our referee writes it.
const refereeRecord = `{"match_seed":5,"game_params":{},"moves":[{"step":1,"player":"p1","move":{"row":0,"col":0},"outcome":"SUCCESS","elapsed_ms":4,"metadata":{"llm":{}}}],` +
	`"final_state":{"board":[]},"termination":"illegal_move","loser":"p2","violations":[{"step":2,"player":"p2","kind":"invalid_move","action":"technical_loss","detail":"x"}],` +
	`"steps":1,"total_moves":1,"referee_id":"ref1","started_at":"2026-11-23T07:00:29.467492Z","finished_at":"2026-11-23T07:00:29.475492Z"}`

func read(t *testing.T, raw string) protocol.GameMetadata {
	t.Helper()
	md, vs := protocol.ReadGameMetadata(json.RawMessage(raw))
	if vs != nil {
		t.Fatalf("%s: violations %v", raw, vs)
	}
	return md
}

func TestReadGameMetadata(t *testing.T) {
	t.Run("absent or null", func(t *testing.T) {
		for _, raw := range []string{``, `null`} {
			if md := read(t, raw); !reflect.DeepEqual(md, protocol.GameMetadata{}) {
				t.Errorf("%q: got %+v, want an empty record", raw, md)
			}
		}
	})
	t.Run("referee record", func(t *testing.T) {
		md := read(t, refereeRecord)
		if md.MatchSeed == nil || *md.MatchSeed != 5 || len(md.Moves) != 1 || md.Moves[0].ElapsedMS != 4 || md.Moves[0].Outcome != protocol.MoveSuccess ||
			md.Termination != protocol.TerminationIllegalMove || md.Loser != "p2" || md.Violations[0].Kind != protocol.ViolationInvalidMove ||
			md.Violations[0].Action != protocol.ActionTechnicalLoss || md.RefereeID != "ref1" || string(md.FinalState) != `{"board":[]}` {
			t.Errorf("got %+v", md)
		}
		again, _ := json.Marshal(md)
		if string(again) != refereeRecord {
			t.Errorf("re-encoded as\n%s\nwant\n%s", again, refereeRecord)
		}
	})
	t.Run("forfeit", func(t *testing.T) {
		md := read(t, `{"forfeit":"suspended","suspended":["p1"]}`)
		if md.Forfeit != protocol.ForfeitSuspended || !reflect.DeepEqual(md.Suspended, []string{"p1"}) || md.Moves != nil || md.Ending() != protocol.TerminationForfeit {
			t.Errorf("got %+v", md)
		}
	})
	t.Run("a foreign referee's record", func(t *testing.T) {
		// As the Python implementation sends it (schemas/testdata/python-peer-wire).
		md := read(t, `{"final_state":{"board":[["X","",""],["O","X",""],["","O","X"]],"current_player":"p04","move_count":5,"outcome":"X_WINS"},"total_moves":5}`)
		if md.TotalMoves != 5 || md.Moves != nil || md.Termination != "" || len(md.FinalState) == 0 {
			t.Errorf("got %+v", md)
		}
	})
	t.Run("moves null, none, empty", func(t *testing.T) {
		for raw, recorded := range map[string]bool{`{}`: false, `{"moves":null}`: false, `{"moves":[]}`: true} {
			if md := read(t, raw); (md.Moves != nil) != recorded {
				t.Errorf("%s: got moves %#v", raw, md.Moves)
			}
		}
	})
	t.Run("nulls where our encoding writes them", func(t *testing.T) {
		md := read(t, `{"match_seed":null,"game_params":null,"final_state":null,"violations":null,"suspended":null}`)
		if md.MatchSeed != nil || md.GameParams != nil || string(md.FinalState) != "null" || md.Violations != nil || md.Suspended != nil {
			t.Errorf("got %+v", md)
		}
	})
	t.Run("elapsed_ms absent is -1", func(t *testing.T) {
		md := read(t, `{"moves":[{"player":"p1"},{"player":"p2","elapsed_ms":0}]}`)
		if md.Moves[0].ElapsedMS != -1 || md.Moves[1].ElapsedMS != 0 {
			t.Errorf("got %+v", md.Moves)
		}
	})
	t.Run("integers written with a fraction or an exponent", func(t *testing.T) {
		md := read(t, `{"steps":3.0,"match_seed":-2E0,"moves":[{"player":"p1","step":1.00,"elapsed_ms":2e1}]}`)
		if md.Steps != 3 || *md.MatchSeed != -2 || md.Moves[0].Step != 1 || md.Moves[0].ElapsedMS != 20 {
			t.Errorf("got %+v", md)
		}
	})
	t.Run("members are matched exactly", func(t *testing.T) {
		md := read(t, `{"Termination":"normal","FORFEIT":"suspended","Steps":"x","moves":[{"player":"p1","Player":"p2","STEP":"y"}]}`)
		if md.Termination != "" || md.Forfeit != "" || md.Steps != 0 || len(md.Moves) != 1 || md.Moves[0].Player != "p1" || md.Moves[0].Step != 0 {
			t.Errorf("got %+v", md)
		}
	})
	t.Run("the referee's own members are allowed", func(t *testing.T) {
		md := read(t, `{"termination":"checkmate","x_engine":{"name":"e","depth":[1,2]},"moves":[{"player":"p1","x_eval":0.3}],"violations":[{"player":"p1","kind":"mystery"}]}`)
		if md.Termination != "checkmate" || len(md.Moves) != 1 || md.Violations[0].Kind.Known() {
			t.Errorf("got %+v", md)
		}
	})
}

// A record that violates schemas/game_metadata.json is read as far as it goes: the
// violations name what was left out.
func TestReadGameMetadataViolations(t *testing.T) {
	moved := func(player string, elapsed int64) protocol.MoveRecord {
		return protocol.MoveRecord{Player: player, ElapsedMS: elapsed}
	}
	tests := []struct {
		name, raw string
		want      []string // the violations, without GameMetadataPath
		kept      protocol.GameMetadata
	}{
		{"steps a string", `{"steps":"3","termination":"normal"}`,
			[]string{"/steps: expected integer, but got string"}, protocol.GameMetadata{Termination: protocol.TerminationNormal}},
		{"scalars of the wrong type", `{"match_seed":"3","termination":7,"loser":null,"game_params":[1],"referee_id":{},"total_moves":2.5,"forfeit":true}`,
			[]string{"/forfeit: expected string, but got boolean", "/game_params: expected object or null, but got array", "/loser: expected string, but got null",
				"/match_seed: expected integer or null, but got string", "/referee_id: expected string, but got object",
				"/termination: expected string, but got number", "/total_moves: expected integer, but got number"},
			protocol.GameMetadata{}},
		{"out of bounds", `{"steps":-1,"total_moves":1000000001,"match_seed":92233720368547758070,"loser":"p 1","termination":"normal"}`,
			[]string{"/loser: does not match pattern '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$'", "/match_seed: must be <= 9.223372036854776e+18 but found 92233720368547758070",
				"/steps: must be >= 0 but found -1", "/total_moves: must be <= 1e+09 but found 1000000001"},
			protocol.GameMetadata{Termination: protocol.TerminationNormal}},
		{"times that are not RFC 3339", `{"started_at":"yesterday","finished_at":"2026-11-23T07:00:29+02:00"}`,
			[]string{"/started_at: 'yesterday' is not valid 'date-time'"}, protocol.GameMetadata{FinishedAt: "2026-11-23T07:00:29+02:00"}},
		{"moves not a list, violations still read", `{"moves":"e2e4","violations":[{"player":"p2","kind":"no_join","action":"technical_loss"}]}`,
			[]string{"/moves: expected array or null, but got string"},
			protocol.GameMetadata{Violations: []protocol.MatchViolation{{Player: "p2", Kind: protocol.ViolationNoJoin, Action: protocol.ActionTechnicalLoss}}}},
		{"move entries: a bad member is left out, an entry without its player whole",
			`{"moves":["e4",{"player":5},{"step":1},{"player":"p1","elapsed_ms":"4"},{"player":"p2","outcome":"OK","elapsed_ms":86400001},{"player":"p3","elapsed_ms":-1},{"player":"p4","elapsed_ms":7}]}`,
			[]string{"/moves/0: expected object, but got string", "/moves/1/player: expected string, but got number", "/moves/2: missing properties: 'player'",
				"/moves/3/elapsed_ms: expected integer, but got string", "/moves/4/elapsed_ms: must be <= 8.64e+07 but found 86400001",
				"/moves/4/outcome: value must be one of \"SUCCESS\", \"INVALID\", \"TIMEOUT\", \"FORCED\"", "/moves/5/elapsed_ms: must be >= 0 but found -1"},
			protocol.GameMetadata{Moves: []protocol.MoveRecord{moved("p1", -1), moved("p2", -1), moved("p3", -1), moved("p4", 7)}}},
		{"violation entries without player or kind are left out",
			`{"violations":[3,{"player":"p1"},{"kind":"timeout"},{"player":"p1","kind":null},{"player":"p1","kind":"refused","step":"2","detail":"d"}]}`,
			[]string{"/violations/0: expected object, but got number", "/violations/1: missing properties: 'kind'", "/violations/2: missing properties: 'player'",
				"/violations/3/kind: expected string, but got null", "/violations/4/step: expected integer, but got string"},
			protocol.GameMetadata{Violations: []protocol.MatchViolation{{Player: "p1", Kind: protocol.ViolationRefused, Detail: "d"}}}},
		{"suspended twice", `{"forfeit":"suspended","suspended":["p1","p1"]}`,
			[]string{"/suspended: items at index 0 and 1 are equal"}, protocol.GameMetadata{Forfeit: protocol.ForfeitSuspended}},
		{"nested too deep", `{"termination":"normal","final_state":` + strings.Repeat("[", protocol.MaxDepth) + strings.Repeat("]", protocol.MaxDepth) + `}`,
			[]string{"/final_state" + strings.Repeat("/0", protocol.MaxDepth-2) + ": nesting deeper than 32 levels"},
			protocol.GameMetadata{Termination: protocol.TerminationNormal}},
		{"an unknown member too large", `{"termination":"normal","x":"` + strings.Repeat("x", 8193) + `"}`,
			[]string{"/x: length must be <= 8192, but got 8193"}, protocol.GameMetadata{Termination: protocol.TerminationNormal}},
		{"not an object", `[{"termination":"normal"}]`, []string{": expected object, but got array"}, protocol.GameMetadata{}},
		{"a string", `"normal"`, []string{": expected object, but got string"}, protocol.GameMetadata{}},
		{"not JSON", `{"moves":[`, []string{": not a JSON value"}, protocol.GameMetadata{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			md, vs := protocol.ReadGameMetadata(json.RawMessage(tc.raw))
			var got []string
			for _, v := range vs {
				rel, ok := strings.CutPrefix(v.Path, protocol.GameMetadataPath)
				if !ok {
					t.Errorf("violation %s is not under %s", v, protocol.GameMetadataPath)
				}
				got = append(got, rel+": "+v.Message)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("violations\n%q\nwant\n%q", got, tc.want)
			}
			if !reflect.DeepEqual(md, tc.kept) {
				t.Errorf("kept  %+v\nwant %+v", md, tc.kept)
			}
		})
	}
}

func TestGameMetadataIsNotAMessageType(t *testing.T) {
	v := validator(t)
	if err := v.CompileAll(); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(v.MessageTypes(), "GAME_METADATA") {
		t.Errorf("GAME_METADATA is listed as a message type: %v", v.MessageTypes())
	}
	var md any
	if err := json.Unmarshal([]byte(refereeRecord), &md); err != nil {
		t.Fatal(err)
	}
	if vs := v.ValidateGameMetadata(md); vs != nil {
		t.Errorf("our referee's record: %v", vs)
	}
}

func TestEnding(t *testing.T) {
	for raw, want := range map[string]protocol.Termination{
		``:                         "",
		`{}`:                       "",
		`{"termination":"normal"}`: protocol.TerminationNormal,
		`{"termination":"timeout","forfeit":"suspended"}`:  protocol.TerminationForfeit,
		`{"termination":5,"forfeit":"suspended"}`:          protocol.TerminationForfeit,
		`{"termination":"no_show","forfeit":""}`:           protocol.TerminationNoShow,
		`{"termination":"illegal_move","forfeit":["x"]}`:   protocol.TerminationIllegalMove,
		`{"termination":"normal",`:                         "",
		`{"termination":"double_no_show","loser":{"a":1}}`: protocol.TerminationDoubleNoShow,
	} {
		if md, _ := protocol.ReadGameMetadata(json.RawMessage(raw)); md.Ending() != want {
			t.Errorf("%s: got %q, want %q", raw, md.Ending(), want)
		}
	}
}

func TestTerminationAndKinds(t *testing.T) {
	for _, tt := range []protocol.Termination{protocol.TerminationIllegalMove, protocol.TerminationTimeout, protocol.TerminationNoShow} {
		if !tt.Technical() {
			t.Errorf("%s is not technical", tt)
		}
	}
	for _, tt := range []protocol.Termination{protocol.TerminationNormal, protocol.TerminationDoubleNoShow, protocol.TerminationForfeit, ""} {
		if tt.Technical() {
			t.Errorf("%s is technical", tt)
		}
	}
	known := []protocol.ViolationKind{protocol.ViolationTimeout, protocol.ViolationInvalidMove, protocol.ViolationMalformedMove, protocol.ViolationStaleAnswer,
		protocol.ViolationUnreachable, protocol.ViolationMalformedAnswer, protocol.ViolationRefused, protocol.ViolationNoJoin}
	for _, k := range known {
		if !k.Known() {
			t.Errorf("%s is not known", k)
		}
		if k.IllegalMove() == k.MissedAnswer() && k != protocol.ViolationNoJoin {
			t.Errorf("%s: illegal %v, missed %v", k, k.IllegalMove(), k.MissedAnswer())
		}
	}
	for _, k := range []protocol.ViolationKind{protocol.ViolationInternal, "", "TIMEOUT", "illegal"} {
		if k.Known() || k.IllegalMove() || k.MissedAnswer() {
			t.Errorf("%q is known", k)
		}
	}
}

func TestLLMNote(t *testing.T) {
	for meta, want := range map[string]*protocol.LLMNote{
		`{"llm":{"tokens_in":100,"tokens_out":20,"rethinks":3,"unreadable":1,"illegal":2,"call_retries":2,"latency_ms":840,"cost_usd":0.0012}}`: {
			TokensIn: 100, TokensOut: 20, Rethinks: 3, Unreadable: 1, Illegal: 2, CallRetries: 2, LatencyMS: 840, CostUSD: 0.0012},
		`{"llm":{"cost_usd":-1}}`: {}, `{"llm":{"cost_usd":"1"}}`: {},
		`{"llm":{}}`: {},
		// A careless count reads as 0, so it neither hides the note nor overflows a sum.
		`{"llm":{"tokens_in":-1,"tokens_out":1e20,"rethinks":1.5,"call_retries":"2"}}`: {},
		`{"llm":{"tokens_in":1099511627776,"tokens_out":1099511627777}}`:               {TokensIn: 1 << 40},
		// Members matched exactly, the last of a repeated one wins.
		`{"LLM":{"tokens_in":5},"llm":{"Tokens_in":6,"tokens_in":4,"tokens_in":7}}`: {TokensIn: 7},
		``: nil, `"llm"`: nil, `{"llm":"note"}`: nil, `{"llm":null}`: nil, `{"x":{"tokens_in":1}}`: nil,
	} {
		note, ok := protocol.MoveRecord{Metadata: json.RawMessage(meta)}.LLMNote()
		if ok != (want != nil) || (want != nil && note != *want) {
			t.Errorf("%s: got %+v, %v; want %+v", meta, note, ok, want)
		}
	}
}

func FuzzReadGameMetadata(f *testing.F) {
	for _, raw := range []string{``, `null`, `[]`, `{}`, `"x"`, `{"moves":`, refereeRecord, `{"forfeit":"suspended","suspended":["p1"]}`,
		`{"steps":"3","moves":[{"player":"p1","elapsed_ms":"4"},{"step":1}],"violations":[{"player":"p1"}]}`,
		`{"steps":3.0,"Steps":"x","moves":[{"player":"p1","elapsed_ms":2e1,"metadata":{"llm":{"tokens_in":1e700}}}]}`,
	} {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		md, vs := protocol.ReadGameMetadata(json.RawMessage(raw))
		for _, v := range vs {
			if !strings.HasPrefix(v.Path, protocol.GameMetadataPath) || v.Message == "" {
				t.Fatalf("violation %q", v)
			}
		}
		for _, mv := range md.Moves {
			if mv.ElapsedMS < -1 || mv.Player == "" {
				t.Fatalf("move %+v", mv)
			}
		}
		for _, v := range md.Violations {
			if v.Player == "" {
				t.Fatalf("violation entry %+v", v)
			}
		}
		again, vsAgain := protocol.ReadGameMetadata(json.RawMessage(raw))
		if !reflect.DeepEqual(md, again) || !slices.Equal(vs, vsAgain) {
			t.Fatalf("read twice: %+v, %v and %+v, %v", md, vs, again, vsAgain)
		}
		// A record without violations is read whole.
		var top map[string]json.RawMessage
		var moves, violations []json.RawMessage
		if vs == nil && json.Unmarshal([]byte(raw), &top) == nil {
			_ = json.Unmarshal(top["moves"], &moves)
			_ = json.Unmarshal(top["violations"], &violations)
			if len(md.Moves) != len(moves) || len(md.Violations) != len(violations) {
				t.Fatalf("%d moves and %d violations read of %d and %d", len(md.Moves), len(md.Violations), len(moves), len(violations))
			}
		}
	})
}
