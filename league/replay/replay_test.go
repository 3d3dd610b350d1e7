package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/protocol"
)

var update = flag.Bool("update", false, "rewrite the golden standings files from the golden logs")

func goldenLogs(t *testing.T) []string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join("testdata", "golden", "*.audit.jsonl"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no golden logs: %v", err)
	}
	return logs
}

func TestGoldenLogsReplayToKnownStandings(t *testing.T) {
	for _, path := range goldenLogs(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".audit.jsonl")
		t.Run(name, func(t *testing.T) {
			entries, err := audit.Read(path)
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
			if problems := l.VerifyMatches(game.Default()); len(problems) > 0 {
				t.Fatalf("golden log does not verify: %v", problems)
			}
			var out bytes.Buffer
			if err := l.WriteReport(&out, true); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", name+".standings.txt")
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("replay of %s differs from %s:\n got:\n%s\nwant:\n%s", path, golden, out.Bytes(), want)
			}
		})
	}
}

// lines returns a golden log's lines (without newlines).
func lines(t *testing.T) [][]byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden", "tic_tac_toe_4.audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

func join(ls [][]byte) []byte { return append(bytes.Join(ls, []byte("\n")), '\n') }

// rechain rewrites every prev_hash so the chain is valid again, as a forger who
// understands the format would.
func rechain(t *testing.T, ls [][]byte) [][]byte {
	t.Helper()
	prev := ""
	out := make([][]byte, len(ls))
	for i, l := range ls {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatal(err)
		}
		m["prev_hash"], _ = json.Marshal(prev)
		out[i], _ = json.Marshal(m)
		h := sha256.Sum256(out[i])
		prev = hex.EncodeToString(h[:])
	}
	return out
}

// A result that records no moves (a referee written from the seeds alone, as the Python
// implementation's) is not re-played, is listed by Unrecorded, and passes when its
// outcomes fit together and score as the rules say.
func TestResultsWithoutMovesAreListedNotReplayed(t *testing.T) {
	var matchID string
	l, err := Rebuild(forge(t, func(p map[string]any) {
		md := p["game_metadata"].(map[string]any)
		delete(md, "moves")
		md["final_state"] = map[string]any{"board": "in the referee's own shape"}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if problems := l.VerifyMatches(game.Default()); len(problems) != 0 {
		t.Fatalf("got %v, want no problem", problems)
	}
	for id, r := range l.Results {
		if !bytes.Contains(r.GameMetadata, []byte(`"moves"`)) {
			matchID = id
		}
	}
	if got := l.Unrecorded(); len(got) != 1 || got[0] != matchID {
		t.Errorf("Unrecorded() = %v, want [%s]", got, matchID)
	}
}

// forge changes the first acknowledged result report with change and re-chains the
// log, as a lying referee whose report was accepted would leave it.
func forge(t *testing.T, change func(payload map[string]any)) []audit.Entry {
	t.Helper()
	ls := append([][]byte(nil), lines(t)...)
	for i, l := range ls {
		if !bytes.Contains(l, []byte(`"message_type":"MATCH_RESULT_REPORT"`)) || !bytes.Contains(l, []byte(`"direction":"request"`)) {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatal(err)
		}
		payload := e["message"].(map[string]any)["params"].(map[string]any)["payload"].(map[string]any)
		change(payload)
		ls[i], _ = json.Marshal(e)
		break
	}
	entries, err := audit.Parse(bytes.NewReader(join(rechain(t, ls))))
	if err != nil {
		t.Fatal(err)
	}
	if err := audit.CheckChain(entries); err != nil {
		t.Fatal(err)
	}
	return entries
}

func TestMisreportedResultsAreFound(t *testing.T) {
	cases := []struct {
		name   string
		change func(p map[string]any)
		want   string
	}{
		// Consistent and scored right (protocol.CheckResult passes it): only the rules
		// find it out.
		{"outcome and points swapped", func(p map[string]any) {
			for _, key := range []string{"outcome", "points"} {
				m := p[key].(map[string]any)
				ids := slices.Sorted(maps.Keys(m))
				m[ids[0]], m[ids[1]] = m[ids[1]], m[ids[0]]
			}
		}, "the rules give"},
		{"outcome swapped, points kept", func(p map[string]any) {
			o := p["outcome"].(map[string]any)
			ids := slices.Sorted(maps.Keys(o))
			o[ids[0]], o[ids[1]] = o[ids[1]], o[ids[0]]
		}, "a loss scores 0"},
		{"points inflated", func(p map[string]any) {
			pts := p["points"].(map[string]any)
			for k := range pts {
				pts[k] = 3
			}
		}, "points"},
		{"moves dropped, two winners", func(p map[string]any) {
			delete(p["game_metadata"].(map[string]any), "moves")
			o := p["outcome"].(map[string]any)
			for k := range o {
				o[k] = "win"
			}
		}, "do not fit together"},
		{"moves dropped, points inflated", func(p map[string]any) {
			delete(p["game_metadata"].(map[string]any), "moves")
			pts := p["points"].(map[string]any)
			for k := range pts {
				pts[k] = 3
			}
		}, "points"},
		{"a third player's outcome", func(p map[string]any) {
			p["outcome"].(map[string]any)["p99"] = "win"
			p["points"].(map[string]any)["p99"] = 3
		}, "outcome and points name 3 and 3 players, not the match's two"},
		{"a player's outcome missing", func(p map[string]any) {
			o := p["outcome"].(map[string]any)
			for k := range o {
				delete(o, k)
				break
			}
		}, "no outcome for"},
		{"illegal move inserted", func(p map[string]any) {
			md := p["game_metadata"].(map[string]any)
			moves := md["moves"].([]any)
			second := moves[1].(map[string]any)
			second["move"] = moves[0].(map[string]any)["move"] // the cell just taken
		}, "move 2:"},
		{"a draw on time while the opponent could win", flagDraw(4), "could still win"},
		{"played from an opening the schedule does not give", func(p map[string]any) {
			p["game_metadata"].(map[string]any)["opening"] = map[string]any{"name": "book.epd#3", "moves": []any{}}
		}, "played from opening book.epd#3, the schedule says none (the game's start)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Rebuild(forge(t, tc.change))
			if err != nil {
				t.Fatal(err)
			}
			problems := l.VerifyMatches(game.Default())
			if len(problems) != 1 {
				t.Fatalf("got %v, want one problem", problems)
			}
			if p := problems[0].String(); !strings.Contains(p, tc.want) || !strings.HasPrefix(p, "match r0") {
				t.Errorf("got %q, want the match id and %q", p, tc.want)
			}
		})
	}
}

// flagDraw makes the first result a draw on time after the first n moves: X (p02) to move
// ran out of time.
func flagDraw(n int) func(p map[string]any) {
	return func(p map[string]any) {
		md := p["game_metadata"].(map[string]any)
		md["moves"] = md["moves"].([]any)[:n]
		md["termination"] = string(protocol.TerminationTimeoutDraw)
		delete(md, "final_state")
		for _, key := range []string{"outcome", "points"} {
			for id := range p[key].(map[string]any) {
				p[key].(map[string]any)[id] = map[string]any{"outcome": "draw", "points": 1}[key]
			}
		}
	}
}

// A draw on time passes when the rules give it: after 8 moves X is to move on the last
// empty cell, and O, with no move left, cannot win.
func TestDrawOnTimeByTheRules(t *testing.T) {
	l, err := Rebuild(forge(t, flagDraw(8)))
	if err != nil {
		t.Fatal(err)
	}
	if problems := l.VerifyMatches(game.Default()); len(problems) != 0 {
		t.Fatalf("got %v, want no problem", problems)
	}
}
