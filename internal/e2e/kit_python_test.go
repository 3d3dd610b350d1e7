package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The Python kit's examples (examples/python/agentleague.py and the players built on it)
// pass `league conform player` for their game with every required check passed, not
// skipped, both listening on a port (--port 0) and outbound through the tool's relay (no
// port, the kit's default); each acknowledges LEAGUE_SHUTDOWN and exits 0 unasked.
func TestKitPythonExamplesConform(t *testing.T) {
	py := interpreter(t, "python3")
	for _, tc := range []struct{ game, script string }{
		{"tic_tac_toe", "tic_tac_toe_player.py"},
		{"connect_four", "connect_four_player.py"},
		{"chess", "chess_player.py"},
	} {
		for _, outbound := range []bool{false, true} {
			mode := "inbound"
			if outbound {
				mode = "outbound"
			}
			t.Run(tc.game+"/"+mode, func(t *testing.T) {
				t.Parallel()
				script := filepath.Join(moduleRoot(), "examples", "python", tc.script)
				kitConform(t, py, script, tc.game, outbound)
			})
		}
	}
}

// conformReport is the part of `league conform --json` these tests read.
type conformReport struct {
	Subject  string `json:"subject"`
	Conforms bool   `json:"conforms"`
	Results  []struct {
		ID     string `json:"id"`
		Level  string `json:"level"`
		Status string `json:"status"`
		Reason string `json:"reason"`
	} `json:"results"`
}

// kitConform runs `league conform player --game game --json`, starts the kit player once
// the tool says where it listens, and checks the report and the player's exit.
func kitConform(t *testing.T, py, script, game string, outbound bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "league"), "conform", "player", "--game", game,
		"--listen", "127.0.0.1:0", "--json", "--wait", "30s", "--move-timeout", "5s", "--grace", "5s")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stderr)
	line, err := r.ReadString('\n')
	const marker = "start the player with --league "
	i := strings.Index(line, marker)
	if err != nil || i < 0 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("league conform did not say where it listens: %q (%v)", line, err)
	}
	url := strings.Fields(line[i+len(marker):])[0]
	args := []string{script, "--id", "kit1", "--league", url}
	if outbound {
		args = append(args, "--outbound")
	} else {
		args = append(args, "--port", "0")
	}
	agent := exec.CommandContext(ctx, py, args...)
	var agentOut syncBuffer
	agent.Stdout, agent.Stderr = &agentOut, &agentOut
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r)
	runErr := cmd.Wait()
	exited := make(chan error, 1)
	go func() { exited <- agent.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the kit player exited with %v after LEAGUE_SHUTDOWN, want 0; output:\n%s", err, agentOut.String())
		}
	case <-time.After(10 * time.Second):
		_ = agent.Process.Kill()
		<-exited
		t.Errorf("the kit player did not leave on LEAGUE_SHUTDOWN; output:\n%s", agentOut.String())
	}
	if runErr != nil {
		t.Fatalf("league conform: %v\nreport:\n%s\nstderr:\n%s\nplayer:\n%s", runErr, stdout.String(), rest, agentOut.String())
	}
	var doc conformReport
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("--json output is not one JSON document: %v\n%s", err, stdout.String())
	}
	if doc.Subject != "player" || !doc.Conforms || len(doc.Results) == 0 {
		t.Errorf("report: subject %q, conforms %v, %d results", doc.Subject, doc.Conforms, len(doc.Results))
	}
	for _, res := range doc.Results {
		skipOK := !outbound && res.ID == "player.outbound.register" // inbound: not its case
		if res.Level == "required" && res.Status != "pass" {
			t.Errorf("required check %s: %s (%s)", res.ID, res.Status, res.Reason)
		}
		if res.Level != "required" && res.Status != "pass" && !skipOK {
			t.Errorf("recommended check %s: %s (%s)", res.ID, res.Status, res.Reason)
		}
	}
	if out := agentOut.String(); !strings.Contains(out, "kit1: match conform-m1: ") || !strings.Contains(out, "league shut down") {
		t.Errorf("the kit player's log lacks its match lines or the shutdown:\n%s", out)
	}
}

// A kit player whose strategy misbehaves once, in a short real league beside two of ours:
// too slow, raising, or returning an illegal move. The kit logs the cause; for a slow or
// raising strategy it answers without a move (a JSON-RPC error), which the referee counts
// as a miss: a warning and the request again, then the match goes on; an illegal move is
// sent as given and loses the match by the referee's rules. Every kit player keeps
// serving, plays all its matches, gets LEAGUE_COMPLETED, and exits 0 on LEAGUE_SHUTDOWN.
func TestKitPythonBadStrategy(t *testing.T) {
	py := interpreter(t, "python3")
	script := filepath.Join(moduleRoot(), "internal", "e2e", "testdata", "kit_bad_player.py")
	config := fastConfig(t, func(_, policy map[string]any) {
		ml := policy["timeouts"].(map[string]any)["match_level"].(map[string]any)
		ml["game_join_ack"], ml["move_response"] = 5000, 3000
	})
	kits := map[string]*proc{}
	faults := map[string]string{"kit-slow": "slow", "kit-raise": "raise", "kit-illegal": "illegal"}
	run := runLeague(t, leagueOpts{players: 2, referees: 2, seed: 41, config: config,
		extraPlayers: func(t *testing.T, lmURL string) int {
			for id, fault := range faults {
				args := []string{script, "--fault", fault, "--id", id, "--league", lmURL}
				if fault != "slow" { // the slow one plays outbound, the others listen
					args = append(args, "--port", "0")
				}
				// startOutbound keeps stdout, where the kit logs; the League Manager's status
				// shows the registration, inbound or not.
				kits[id] = startOutbound(t, id, py, args...)
			}
			return len(kits)
		}})
	run.checkLeague(t, 1)

	played := map[string]int{}
	violations := map[string][]map[string]any{}
	rs := results(t, run)
	for _, r := range rs {
		for _, p := range r.players {
			played[p]++
		}
		if r.forfeit != "" {
			t.Errorf("match %v was forfeited (%s)", r.players, r.forfeit)
		}
		vs, _ := r.metadata["violations"].([]any)
		for _, v := range vs {
			m, _ := v.(map[string]any)
			p, _ := m["player"].(string)
			violations[p] = append(violations[p], m)
		}
		if r.loser == "kit-illegal" && r.termination == "illegal_move" {
			played["illegal losses"]++
		}
	}
	if len(rs) != 10 {
		t.Errorf("%d results, want 10 (5 players)", len(rs))
	}
	for id := range kits {
		if played[id] != 4 {
			t.Errorf("%s played %d matches, want 4", id, played[id])
		}
	}
	// The referee's rules decide: one illegal move, one lost match; a miss, one warning.
	if played["illegal losses"] != 1 {
		t.Errorf("kit-illegal lost %d matches by illegal_move, want 1; violations %v", played["illegal losses"], violations["kit-illegal"])
	}
	if vs := violations["kit-illegal"]; len(vs) != 1 || vs[0]["kind"] != "invalid_move" || vs[0]["action"] != "technical_loss" {
		t.Errorf("kit-illegal's violations %v, want one invalid_move (technical_loss)", vs)
	}
	for _, id := range []string{"kit-slow", "kit-raise"} {
		if vs := violations[id]; len(vs) != 1 || vs[0]["kind"] != "refused" || vs[0]["action"] != "warning" {
			t.Errorf("%s's violations %v, want one refused move (warning)", id, vs)
		}
	}

	if code := run.lm.stop(t); code != 0 {
		t.Errorf("league manager exited %d on SIGTERM, want 0", code)
	}
	logs := map[string]string{
		"kit-slow":    "choose_move gave no move within",
		"kit-raise":   "choose_move raised ValueError: deliberately broken strategy",
		"kit-illegal": `{"row": 7, "col": 7} is not a legal move; sending it as given`,
	}
	for id, p := range kits {
		select {
		case <-p.done:
			out := p.out.String()
			if code := p.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("%s exited %d, want 0; output:\n%s", id, code, out)
			}
			for _, want := range []string{logs[id], "league shut down", id + ": league ", "completed: rank "} {
				if !strings.Contains(out, want) {
					t.Errorf("%s's log lacks %q; output:\n%s", id, want, out)
				}
			}
			if id == "kit-illegal" && !strings.Contains(out, `loss against`) {
				t.Errorf("kit-illegal's log has no lost match; output:\n%s", out)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("%s did not leave on LEAGUE_SHUTDOWN", id)
		}
	}
}
