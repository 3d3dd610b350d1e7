package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/player"
	"github.com/agentleague/agentleague/player/uci"
)

func TestParseSeats(t *testing.T) {
	specs, err := parseSeats([]byte(`
- {id: p01, strategy: random}
- id: p02
  strategy: alphabeta
  display_name: Second
  seed: 7
  think: 20ms
- &sf
  id: sf1
  strategy: uci
  engine: /usr/games/stockfish
  engine_options: ["Skill Level=5", "Threads=1"]
  movetime: 100ms
- <<: *sf
  id: sf2
  depth: 3
  movetime: 0s
- {id: m1, strategy: lbm, model_url: "http://127.0.0.1:9100"}
- {id: a1, strategy: llm, profile: config/agents/aggressive.yaml}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []seatSpec{
		{ID: "p01", Strategy: "random", line: 2},
		{ID: "p02", Strategy: "alphabeta", DisplayName: "Second", Seed: 7, Think: 20 * time.Millisecond, line: 3},
		{ID: "sf1", Strategy: "uci", Engine: "/usr/games/stockfish", EngineOptions: []string{"Skill Level=5", "Threads=1"}, MoveTime: 100 * time.Millisecond, line: 8},
		{ID: "sf2", Strategy: "uci", Engine: "/usr/games/stockfish", EngineOptions: []string{"Skill Level=5", "Threads=1"}, Depth: 3, line: 14},
		{ID: "m1", Strategy: "lbm", ModelURL: "http://127.0.0.1:9100", line: 18},
		{ID: "a1", Strategy: "llm", Profile: "config/agents/aggressive.yaml", line: 19},
	}
	if got, w := fmt.Sprintf("%+v", specs), fmt.Sprintf("%+v", want); got != w {
		t.Errorf("got\n%s\nwant\n%s", got, w)
	}
}

func TestParseSeatsRefuses(t *testing.T) {
	tooMany := strings.Repeat("- {id: p, strategy: random}\n", maxSeats+1)
	tests := []struct{ name, file, want string }{
		{"empty file", "", "no seats: the file is empty"},
		{"only a comment", "# nobody\n", "no seats: the file is empty"},
		{"empty list", "[]\n", "no seats: the list is empty"},
		{"not a list", "id: p01\nstrategy: random\n", "line 1: want a list of seats"},
		{"seat that is not a mapping", "- p01\n", "seat 1 (line 1): want a mapping"},
		{"unknown field", "- {id: p01, strategy: random}\n- id: p02\n  strategy: random\n  strategyy: first\n",
			`seat p02 (line 2): unknown field "strategyy" at line 4 (a seat has id, strategy, display_name, seed, think, profile, model_url, engine, engine_options, movetime, nodes, depth)`},
		{"unknown field of a seat without id", "- {strategy: random, colour: red}\n", `seat 1 (line 1): unknown field "colour"`},
		{"unknown field in a merged mapping", "- &d {id: p01, strategy: random}\n- {<<: *d, id: p02, fault: garbage}\n- {<<: [*d], id: p03}\n",
			`seat p02 (line 2): unknown field "fault"`},
		{"unknown field reached through a merge", "- &d {id: p01, strategy: random, colour: red}\n", `seat p01 (line 1): unknown field "colour"`},
		{"missing id", "- {strategy: random}\n", "seat 1 (line 1): id is required"},
		{"missing strategy", "- {id: p01, strategy: random}\n- {id: p02}\n", "seat p02 (line 2): strategy is required"},
		{"duplicate id", "- {id: p01, strategy: random}\n- {id: p02, strategy: random}\n- {id: p01, strategy: first}\n",
			"seat p01 (line 3): duplicate id p01, first at line 1"},
		{"duplicate field", "- {id: p01, strategy: random, strategy: first}\n", `mapping key "strategy" already defined`},
		{"bad duration", "- {id: p01, strategy: random, think: soon}\n", "seat p01 (line 1): yaml: unmarshal errors"},
		{"two documents", "- {id: p01, strategy: random}\n---\n- {id: p02, strategy: random}\n", "more than one YAML document"},
		{"not yaml", "- {id: p01\n", "yaml:"},
		{"too many seats", tooMany, "10001 seats: one process hosts at most 10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseSeats([]byte(tt.file))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// A seat's options make the player configuration the single player's flags would, and a
// seat the player would refuse is refused before anything starts.
func TestSeatConfig(t *testing.T) {
	base := player.Config{Addr: "127.0.0.1:0", LeagueURL: "http://127.0.0.1:8000/mcp"}
	cfg, err := seatSpec{ID: "sf1", Strategy: "uci", Engine: "/usr/games/stockfish", EngineOptions: []string{"Skill Level=5"}, Nodes: 900, Think: time.Millisecond}.config(base)
	if err != nil {
		t.Fatal(err)
	}
	want := uci.Config{Path: "/usr/games/stockfish", Options: []uci.Option{{Name: "Skill Level", Value: "5"}}, Nodes: 900}
	if fmt.Sprint(cfg.Engine) != fmt.Sprint(want) || cfg.ID != "sf1" || cfg.Think != time.Millisecond || cfg.LeagueURL != base.LeagueURL {
		t.Errorf("config %+v", cfg)
	}
	cfg, err = seatSpec{ID: "a1", Strategy: "llm", Profile: filepath.Join("..", "..", "config", "agents", "local-ollama.yaml")}.config(base)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LLM == nil || cfg.DisplayName == "" || cfg.AgentCard == nil {
		t.Errorf("llm seat without its profile's client, name or card: %+v", cfg)
	}
	for _, tt := range []struct {
		name string
		seat seatSpec
		want string
	}{
		{"unknown strategy", seatSpec{ID: "p01", Strategy: "clairvoyant"}, `unknown strategy "clairvoyant"`},
		{"bad id", seatSpec{ID: "../p01", Strategy: "random"}, `player id "../p01" must match`},
		{"uci without an engine", seatSpec{ID: "p01", Strategy: "uci"}, "strategy uci: no engine path"},
		{"lbm without a model server", seatSpec{ID: "p01", Strategy: "lbm"}, "strategy lbm needs a model server url"},
		{"llm without a profile", seatSpec{ID: "p01", Strategy: "llm"}, "strategy llm needs profile"},
		{"llm with a profile that is not there", seatSpec{ID: "p01", Strategy: "llm", Profile: "/nonexistent/agent.yaml"}, "/nonexistent/agent.yaml"},
		{"engine option without a name", seatSpec{ID: "p01", Strategy: "uci", Engine: "e", EngineOptions: []string{"=5"}}, "engine_options: engine option"},
		{"engine of another strategy", seatSpec{ID: "p01", Strategy: "random", Engine: "/usr/games/stockfish"}, "engine goes with strategy uci, not random"},
		{"profile of another strategy", seatSpec{ID: "p01", Strategy: "uci", Engine: "e", Profile: "a.yaml"}, "profile goes with strategy llm, not uci"},
		{"negative think", seatSpec{ID: "p01", Strategy: "random", Think: -time.Second}, "think time must not be negative"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.seat.config(base); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// writeSeats writes a seats file and returns its path.
func writeSeats(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "seats.yaml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A bad seats file or command line is refused with exit code 2, before any log file or
// registration.
func TestRunSeatsRefuses(t *testing.T) {
	lg := startLeague(t, "")
	good := writeSeats(t, "- {id: p01, strategy: random}\n")
	big := writeSeats(t, "# "+strings.Repeat("x", maxSeatsFileBytes)+"\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"file not there", []string{"--seats", "/nonexistent/seats.yaml"}, "seats file: open /nonexistent/seats.yaml"},
		{"empty file", []string{"--seats", writeSeats(t, "")}, "no seats: the file is empty"},
		{"unknown field", []string{"--seats", writeSeats(t, "- {id: p01, strategy: random, colour: red}\n")}, `seat p01 (line 1): unknown field "colour"`},
		{"a bad seat after good ones", []string{"--seats", writeSeats(t, "- {id: p01, strategy: random}\n- {id: p02, strategy: clairvoyant}\n")},
			`seat p02 (line 2): unknown strategy "clairvoyant"`},
		{"uci seat without an engine", []string{"--seats", writeSeats(t, "- {id: p01, strategy: uci}\n")}, "seat p01 (line 1): strategy uci: no engine path"},
		{"file too large", []string{"--seats", big}, "is larger than 8 MiB"},
		{"a seat's flag", []string{"--seats", good, "--strategy", "first", "--id", "p09"}, "--id, --strategy: with --seats each seat's options are in the seats file"},
		{"stray argument", []string{"--seats", good, "extra"}, `unexpected argument "extra"`},
		{"outbound with advertise", []string{"--seats", good, "--outbound", "--advertise", "http://127.0.0.1:9001"}, "--outbound serves nothing"},
		{"unknown log level", []string{"--seats", good, "--log-level", "chatty"}, "--log-level"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			logs := t.TempDir()
			args := append([]string{"--log-dir", logs, "--league", lg.url, "--register-for", "1m"}, tt.args...)
			if code := run(context.Background(), args, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("code %d, stderr %q; want code 2 and stderr mentioning %q", code, stderr.String(), tt.want)
			}
			if entries, _ := os.ReadDir(logs); len(entries) != 0 {
				t.Errorf("log folder holds %d entries after a refusal, want none", len(entries))
			}
		})
	}
	lg.mu.Lock()
	defer lg.mu.Unlock()
	if len(lg.endpoints) != 0 {
		t.Errorf("registered %v after refusals, want nobody", lg.endpoints)
	}
}

// One process hosts three players: each registers its own endpoint at /seats/<id> on the
// one server, answers a move there, and the process exits 0 once each has had
// LEAGUE_SHUTDOWN. Every log line, in the one log file, names its component and player.
func TestRunSeatsInbound(t *testing.T) {
	lg := startLeague(t, "")
	ids := []string{"p01", "p02", "p03"}
	file := writeSeats(t, `
- {id: p01, strategy: random, seed: 1}
- {id: p02, strategy: first, display_name: Second}
- {id: p03, strategy: perfect}
`)
	logs := t.TempDir()
	stdout, stderr, code := runAsync(context.Background(), []string{"--seats", file, "--league", lg.url, "--log-dir", logs, "--register-for", "1m"})
	for range ids {
		select {
		case <-lg.ready:
		case c := <-code:
			t.Fatalf("seats exited with %d; stderr:\n%s", c, stderr.String())
		case <-time.After(10 * time.Second):
			t.Fatalf("not every seat sent AGENT_READY; stderr:\n%s", stderr.String())
		}
	}
	root, ok := strings.CutPrefix(strings.TrimSpace(stdout.String()), "player --seats: 3 players listening on ")
	if !ok {
		t.Fatalf("stdout %q", stdout.String())
	}
	for _, id := range ids {
		lg.mu.Lock()
		got := lg.endpoints[id]
		lg.mu.Unlock()
		if want := root + "/seats/" + id; got != want {
			t.Errorf("%s registered %s, want %s", id, got, want)
		}
	}
	if err := lg.requestMove(t, "p02", root+"/seats/p02"); err != nil {
		t.Errorf("REQUEST_MOVE to a seat: %v", err)
	}
	for _, id := range ids {
		lg.shutdown(t, id, root+"/seats/"+id)
	}
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit code %d, want 0; stderr:\n%s", c, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("seats did not stop after LEAGUE_SHUTDOWN to each")
	}
	f, err := os.Open(filepath.Join(logs, "player_seats_seats.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		id, _ := rec["player_id"].(string)
		seen[id] = true
		if rec["component"] != "player" || rec["conversation_id"] == nil {
			t.Errorf("log line %q lacks component=player or a conversation_id", sc.Text())
		}
	}
	for _, id := range ids {
		if !seen[id] {
			t.Errorf("no log line of %s", id)
		}
	}
}

// A signal stops every seat, registered or not, with exit code 0.
func TestRunSeatsStopsOnSignal(t *testing.T) {
	lg := startLeague(t, "")
	file := writeSeats(t, "- {id: p01, strategy: random}\n- {id: p02, strategy: random}\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, stderr, code := runAsync(ctx, []string{"--seats", file, "--outbound", "--league", lg.url, "--log-dir", t.TempDir(), "--register-for", "1m"})
	select {
	case <-lg.ready: // a seat registered: the process runs
	case c := <-code:
		t.Fatalf("seats exited with %d; stderr:\n%s", c, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("no seat sent AGENT_READY; stderr:\n%s", stderr.String())
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit code %d, want 0; stderr:\n%s", c, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("seats did not stop when asked")
	}
}

// The example seats file of config/ is a valid one.
func TestExampleSeatsFile(t *testing.T) {
	specs, err := readSeats(filepath.Join("..", "..", "config", "seats.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	base := player.Config{Addr: "127.0.0.1:0", LeagueURL: "http://127.0.0.1:8000/mcp"}
	for _, s := range specs {
		if _, err := s.config(base); err != nil {
			t.Errorf("seat %s: %v", s.ID, err)
		}
	}
	if len(specs) != 6 || specs[5].Strategy != "alphabeta" || specs[5].Seed != 6 {
		t.Errorf("got %+v", specs)
	}
}
