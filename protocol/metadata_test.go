package protocol_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

func TestParseGameMetadata(t *testing.T) {
	t.Run("absent", func(t *testing.T) {
		md, err := protocol.ParseGameMetadata(nil)
		if err != nil || !reflect.DeepEqual(md, protocol.GameMetadata{}) {
			t.Errorf("got %+v, %v; want an empty record", md, err)
		}
	})
	t.Run("referee record", func(t *testing.T) {
		raw := `{"match_seed":5,"game_params":{},"moves":[{"step":1,"player":"p1","move":{"row":0,"col":0},"outcome":"SUCCESS","elapsed_ms":4,"metadata":{"llm":{}}}],` +
			`"final_state":{"board":[]},"termination":"illegal_move","loser":"p2","violations":[{"step":2,"player":"p2","kind":"invalid_move","action":"technical_loss","detail":"x"}],` +
			`"steps":1,"total_moves":1,"referee_id":"ref1","started_at":"a","finished_at":"b"}`
		md, err := protocol.ParseGameMetadata(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		if md.MatchSeed == nil || *md.MatchSeed != 5 || len(md.Moves) != 1 || md.Moves[0].ElapsedMS != 4 || md.Moves[0].Outcome != protocol.MoveSuccess ||
			md.Termination != protocol.TerminationIllegalMove || md.Loser != "p2" || md.Violations[0].Kind != protocol.ViolationInvalidMove ||
			md.Violations[0].Action != protocol.ActionTechnicalLoss || md.RefereeID != "ref1" || string(md.FinalState) != `{"board":[]}` {
			t.Errorf("got %+v", md)
		}
		again, _ := json.Marshal(md)
		if string(again) != raw {
			t.Errorf("re-encoded as\n%s\nwant\n%s", again, raw)
		}
	})
	t.Run("forfeit", func(t *testing.T) {
		md, err := protocol.ParseGameMetadata(json.RawMessage(`{"forfeit":"suspended","suspended":["p1"]}`))
		if err != nil || md.Forfeit != protocol.ForfeitSuspended || !reflect.DeepEqual(md.Suspended, []string{"p1"}) || md.Moves != nil ||
			md.Ending() != protocol.TerminationForfeit {
			t.Errorf("got %+v, %v", md, err)
		}
	})
	t.Run("moves null, none, empty", func(t *testing.T) {
		for raw, recorded := range map[string]bool{`{}`: false, `{"moves":null}`: false, `{"moves":[]}`: true} {
			md, err := protocol.ParseGameMetadata(json.RawMessage(raw))
			if err != nil || (md.Moves != nil) != recorded {
				t.Errorf("%s: got moves %#v, %v", raw, md.Moves, err)
			}
		}
	})
	t.Run("final_state null is kept", func(t *testing.T) {
		md, err := protocol.ParseGameMetadata(json.RawMessage(`{"final_state":null}`))
		if err != nil || string(md.FinalState) != "null" {
			t.Errorf("got %q, %v", md.FinalState, err)
		}
	})
	for name, raw := range map[string]string{
		"not JSON":                `{"moves":`,
		"not an object":           `[1,2]`,
		"violations not a list":   `{"violations":{"kind":"timeout"}}`,
		"entry of the wrong type": `{"moves":["e2e4"]}`,
		"elapsed not a number":    `{"moves":[{"player":"p1","elapsed_ms":"4"}]}`,
		"seed too large":          `{"match_seed":1e400}`,
		"termination a number":    `{"termination":3}`,
	} {
		t.Run("refuses "+name, func(t *testing.T) {
			if _, err := protocol.ParseGameMetadata(json.RawMessage(raw)); err == nil {
				t.Errorf("%s: no error", raw)
			}
		})
	}
}

func TestReadGameMetadata(t *testing.T) {
	seed := func(n int64) *int64 { return &n }
	mv := func(step int, player string, elapsed int64) protocol.MoveRecord {
		return protocol.MoveRecord{Step: step, Player: player, ElapsedMS: elapsed}
	}
	tests := []struct {
		name, raw string
		want      protocol.GameMetadata
	}{
		{"empty", ``, protocol.GameMetadata{}},
		{"not JSON", `{"moves":[`, protocol.GameMetadata{}},
		{"not an object", `[{"termination":"normal"}]`, protocol.GameMetadata{}},
		{"null", `null`, protocol.GameMetadata{}},
		{"a string", `"normal"`, protocol.GameMetadata{}},
		{"scalars", `{"match_seed":-3,"steps":2,"total_moves":4,"termination":"timeout","loser":"p1","referee_id":"r","started_at":"s","finished_at":"f","game_params":{"n":1}}`,
			protocol.GameMetadata{MatchSeed: seed(-3), Steps: 2, TotalMoves: 4, Termination: protocol.TerminationTimeout, Loser: "p1", RefereeID: "r",
				StartedAt: "s", FinishedAt: "f", GameParams: map[string]any{"n": 1.0}}},
		{"scalars of the wrong type are left zero", `{"match_seed":"3","steps":2.5,"total_moves":-1e400,"termination":7,"loser":null,"game_params":[1],"referee_id":{}}`,
			protocol.GameMetadata{}},
		{"huge seed", `{"match_seed":92233720368547758070}`, protocol.GameMetadata{}},
		{"members are matched exactly", `{"Termination":"normal","FORFEIT":"suspended","Moves":[{"player":"p1"}]}`, protocol.GameMetadata{}},
		{"violations not a list, moves still read", `{"violations":{"player":"p1","kind":"timeout"},"moves":[{"player":"p1","elapsed_ms":5}]}`,
			protocol.GameMetadata{Moves: []protocol.MoveRecord{mv(0, "p1", 5)}}},
		{"moves not a list, violations still read", `{"moves":"e2e4","violations":[{"player":"p2","kind":"no_join","action":"technical_loss"}]}`,
			protocol.GameMetadata{Violations: []protocol.MatchViolation{{Player: "p2", Kind: protocol.ViolationNoJoin, Action: protocol.ActionTechnicalLoss}}}},
		{"null lists", `{"moves":null,"violations":null,"suspended":null}`, protocol.GameMetadata{}},
		{"empty lists", `{"moves":[],"violations":[]}`, protocol.GameMetadata{Moves: []protocol.MoveRecord{}, Violations: []protocol.MatchViolation{}}},
		{"violation entries that do not fit are skipped",
			`{"violations":["timeout",3,null,[],{"player":1,"kind":"timeout"},{"player":"p1"},{"kind":"timeout"},{"player":"p1","kind":null},` +
				`{"player":"p1","kind":"refused","step":"2","action":5,"detail":"d"},{"player":"p2","kind":"mystery","step":3,"action":"warning"}]}`,
			protocol.GameMetadata{Violations: []protocol.MatchViolation{
				{Player: "p1", Kind: protocol.ViolationRefused, Detail: "d"},
				{Step: 3, Player: "p2", Kind: "mystery", Action: protocol.ActionWarning}}}},
		{"move entries that do not fit are skipped",
			`{"moves":["e4",null,7,{"player":null},{"step":1},{"player":"p1","step":"one","move":"e4","outcome":"SUCCESS","elapsed_ms":3,"metadata":{"llm":{"tokens_in":2}}}]}`,
			protocol.GameMetadata{Moves: []protocol.MoveRecord{{Player: "p1", Move: json.RawMessage(`"e4"`), Outcome: protocol.MoveSuccess, ElapsedMS: 3,
				Metadata: json.RawMessage(`{"llm":{"tokens_in":2}}`)}}}},
		{"elapsed_ms must be a non-negative number",
			`{"moves":[{"player":"a","elapsed_ms":-1},{"player":"b","elapsed_ms":"5"},{"player":"c","elapsed_ms":null},{"player":"d"},` +
				`{"player":"e","elapsed_ms":0},{"player":"f","elapsed_ms":1.9},{"player":"g","elapsed_ms":-0.5},{"player":"h","elapsed_ms":true}]}`,
			protocol.GameMetadata{Moves: []protocol.MoveRecord{mv(0, "a", -1), mv(0, "b", -1), mv(0, "c", -1), mv(0, "d", -1),
				mv(0, "e", 0), mv(0, "f", 1), mv(0, "g", -1), mv(0, "h", -1)}}},
		{"huge elapsed_ms",
			`{"moves":[{"player":"a","elapsed_ms":1e300},{"player":"b","elapsed_ms":1e400},{"player":"c","elapsed_ms":9223372036854775807},` +
				`{"player":"d","elapsed_ms":9223372036854774784},{"player":"e","elapsed_ms":123456789012}]}`,
			protocol.GameMetadata{Moves: []protocol.MoveRecord{mv(0, "a", -1), mv(0, "b", -1), mv(0, "c", -1),
				mv(0, "d", 9223372036854774784), mv(0, "e", 123456789012)}}},
		{"forfeit", `{"forfeit":"suspended","suspended":["p1",2,null,"p2"],"termination":"normal"}`,
			protocol.GameMetadata{Forfeit: protocol.ForfeitSuspended, Suspended: []string{"p1", "p2"}, Termination: protocol.TerminationNormal}},
		{"forfeit of the wrong type", `{"forfeit":true,"termination":"no_show"}`, protocol.GameMetadata{Termination: protocol.TerminationNoShow}},
		{"final_state kept as sent", `{"final_state": {"a" : 1}}`, protocol.GameMetadata{FinalState: json.RawMessage(`{"a" : 1}`)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := protocol.ReadGameMetadata(json.RawMessage(tc.raw))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
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
		if got := protocol.ReadGameMetadata(json.RawMessage(raw)).Ending(); got != want {
			t.Errorf("%s: got %q, want %q", raw, got, want)
		}
		if got := resultTermination(json.RawMessage(raw)); got != string(want) {
			t.Errorf("%s: the League Manager's reading gives %q, want %q", raw, got, want)
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

// The League Manager's statistics read game_metadata with readFacts (league/stats.go)
// and its match view with resultTermination (league/handlers.go). What follows are
// copies of both as they read the raw record, and the same facts computed from
// ReadGameMetadata: the two must agree on every input.

var violationKinds = map[string]bool{
	"timeout": true, "invalid_move": true, "malformed_move": true, "stale_answer": true,
	"unreachable": true, "malformed_answer": true, "refused": true, "no_join": true,
}

type resultFacts struct {
	violations map[string]map[string]int
	elapsed    map[string][]int64
	llm        map[string]llmFacts
}

type llmFacts struct{ tokensIn, tokensOut, errors int64 }

func readFacts(players [2]string, meta json.RawMessage) resultFacts {
	f := resultFacts{violations: map[string]map[string]int{}, elapsed: map[string][]int64{}, llm: map[string]llmFacts{}}
	var top map[string]json.RawMessage
	if json.Unmarshal(meta, &top) != nil {
		return f
	}
	var violations, moves []any
	_ = json.Unmarshal(top["violations"], &violations)
	_ = json.Unmarshal(top["moves"], &moves)
	inMatch := func(obj map[string]any) (string, bool) {
		p, _ := obj["player"].(string)
		return p, p == players[0] || p == players[1]
	}
	for _, e := range violations {
		obj, _ := e.(map[string]any)
		kind, _ := obj["kind"].(string)
		if p, ok := inMatch(obj); ok && violationKinds[kind] {
			if f.violations[p] == nil {
				f.violations[p] = map[string]int{}
			}
			f.violations[p][kind]++
		}
	}
	for _, e := range moves {
		obj, _ := e.(map[string]any)
		p, ok := inMatch(obj)
		if !ok {
			continue
		}
		// Garbage beyond int64 (which readFacts converts with an undefined result) is
		// left out; ReadGameMetadata's bound makes it so.
		if ms, isNum := obj["elapsed_ms"].(float64); isNum && ms >= 0 && ms < 1<<63 {
			f.elapsed[p] = append(f.elapsed[p], int64(ms))
		}
		md, _ := obj["metadata"].(map[string]any)
		if note, isNote := md["llm"].(map[string]any); isNote {
			sum := f.llm[p]
			sum.tokensIn += noteCount(note["tokens_in"])
			sum.tokensOut += noteCount(note["tokens_out"])
			sum.errors += noteCount(note["rethinks"]) + noteCount(note["call_retries"])
			f.llm[p] = sum
		}
	}
	return f
}

func noteCount(v any) int64 {
	n, ok := v.(float64)
	if !ok || n < 0 || n > 1<<40 || n != float64(int64(n)) {
		return 0
	}
	return int64(n)
}

func resultTermination(meta json.RawMessage) string {
	var md struct {
		Termination string `json:"termination"`
		Forfeit     string `json:"forfeit"`
	}
	_ = json.Unmarshal(meta, &md)
	if md.Forfeit != "" {
		return "forfeit"
	}
	return md.Termination
}

// factsOf is readFacts on top of ReadGameMetadata, the llm note read from the typed
// MoveRecord.Metadata.
func factsOf(players [2]string, meta json.RawMessage) resultFacts {
	f := resultFacts{violations: map[string]map[string]int{}, elapsed: map[string][]int64{}, llm: map[string]llmFacts{}}
	md := protocol.ReadGameMetadata(meta)
	inMatch := func(p string) bool { return p == players[0] || p == players[1] }
	for _, v := range md.Violations {
		if inMatch(v.Player) && v.Kind.Known() {
			if f.violations[v.Player] == nil {
				f.violations[v.Player] = map[string]int{}
			}
			f.violations[v.Player][string(v.Kind)]++
		}
	}
	for _, mv := range md.Moves {
		if !inMatch(mv.Player) {
			continue
		}
		if mv.ElapsedMS >= 0 {
			f.elapsed[mv.Player] = append(f.elapsed[mv.Player], mv.ElapsedMS)
		}
		if note, ok := mv.LLMNote(); ok {
			sum := f.llm[mv.Player]
			sum.tokensIn += note.TokensIn
			sum.tokensOut += note.TokensOut
			sum.errors += note.Errors
			f.llm[mv.Player] = sum
		}
	}
	return f
}

var factsCorpus = []string{
	``, `null`, `[]`, `{}`, `"x"`, `{"moves":`,
	`{"moves":[{"step":1,"player":"p1","move":0,"outcome":"SUCCESS","elapsed_ms":12,"metadata":{"llm":{"tokens_in":100,"tokens_out":20,"rethinks":1,"call_retries":2}}},` +
		`{"step":2,"player":"p2","move":1,"outcome":"FORCED","elapsed_ms":30001}],` +
		`"violations":[{"step":2,"player":"p2","kind":"timeout","action":"warning"},{"step":2,"player":"p2","kind":"timeout","action":"forced_move"}]}`,
	`{"violations":{"player":"p1","kind":"timeout"},"moves":[{"player":"p1","elapsed_ms":5}]}`,
	`{"moves":"x","violations":[{"player":"p1","kind":"refused"},{"player":"p3","kind":"refused"},{"player":"p1","kind":"internal"},{"player":"p2","kind":7}]}`,
	`{"moves":[null,1,"a",[],{"player":"p1","elapsed_ms":-4,"metadata":{"llm":{"tokens_in":7}}},{"player":"p2","elapsed_ms":"4"},{"player":"p1","elapsed_ms":1e400}]}`,
	`{"moves":[{"player":"p1","elapsed_ms":1e300},{"player":"p1","elapsed_ms":2.7},{"player":"p1","metadata":{"llm":{"tokens_in":-1,"tokens_out":1e20,"rethinks":1.5}}}]}`,
	`{"moves":[{"player":"p1","metadata":"llm"},{"player":"p1","metadata":{"llm":"note"}},{"player":"p1","metadata":{"llm":null}},{"player":"p1","metadata":null}]}`,
	`{"moves":[{"player":"p1","metadata":{"llm":{"tokens_in":1099511627776,"tokens_out":1099511627777}}}]}`,
	`{"violations":[{"player":"p1","kind":"no_join","step":"x"},{"player":"p1","kind":"no_join","step":1e400}],"moves":[{"player":"p2","step":1e400,"elapsed_ms":3}]}`,
	`{"Moves":[{"player":"p1","elapsed_ms":1}],"violations":[{"Player":"p1","kind":"timeout"},{"player":"p1","Kind":"timeout"}]}`,
	`{"moves":[{"player":"p1","player":"p2","elapsed_ms":1}],"violations":[{"player":"p1","kind":"timeout","kind":"refused"}]}`,
	// A number beyond float64 in the note (found by fuzzing), repeated and case-varied members.
	`{"moves":[{"player":"p1","metadata":{"llm":{"":1E700}}},{"player":"p2","metadata":{"x":1e700,"llm":{"tokens_in":1e700,"tokens_out":3}}}]}`,
	`{"moves":[{"player":"p1","metadata":{"llm":{"tokens_in":1},"llm":{"tokens_out":2}}},{"player":"p2","metadata":{"LLM":{"tokens_in":5},"llm":{"Tokens_in":6,"tokens_in":4,"tokens_in":"7"}}}]}`,
}

func TestReadGameMetadataKeepsStatistics(t *testing.T) {
	players := [2]string{"p1", "p2"}
	for _, raw := range factsCorpus {
		if got, want := factsOf(players, json.RawMessage(raw)), readFacts(players, json.RawMessage(raw)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", raw, got, want)
		}
	}
}

func FuzzReadGameMetadata(f *testing.F) {
	for _, raw := range factsCorpus {
		f.Add(raw)
	}
	players := [2]string{"p1", "p2"}
	f.Fuzz(func(t *testing.T, raw string) {
		md := protocol.ReadGameMetadata(json.RawMessage(raw))
		for _, mv := range md.Moves {
			if mv.ElapsedMS < -1 {
				t.Fatalf("elapsed %d", mv.ElapsedMS)
			}
		}
		if got, want := factsOf(players, json.RawMessage(raw)), readFacts(players, json.RawMessage(raw)); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\ngot  %+v\nwant %+v", raw, got, want)
		}
		// Case-insensitive members aside, the League Manager's termination is Ending's.
		if !strings.ContainsFunc(raw, func(r rune) bool { return r >= 'A' && r <= 'Z' || r > 0x7f || r == '\\' }) {
			if got, want := string(md.Ending()), resultTermination(json.RawMessage(raw)); got != want {
				t.Fatalf("%s: Ending %q, resultTermination %q", raw, got, want)
			}
		}
	})
}
