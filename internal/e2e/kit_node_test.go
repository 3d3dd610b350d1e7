package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/protocol"
)

// nodeConformReport is the --json report of league conform.
type nodeConformReport struct {
	Subject  string `json:"subject"`
	Conforms bool   `json:"conforms"`
	Results  []struct {
		ID     string `json:"id"`
		Level  string `json:"level"`
		Status string `json:"status"`
		Reason string `json:"reason"`
	} `json:"results"`
}

// conformNodeAgent runs `league conform player --json` from binDir, starts the agent (bin
// args..., then --id and --league) once the tool says where it listens, and returns the
// tool's exit code, its report, the agent's output and the agent's exit code (-1 if it
// had to be killed: it did not leave by itself).
func conformNodeAgent(t *testing.T, id, bin string, args ...string) (int, nodeConformReport, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "league"), "conform", "player", "--listen", "127.0.0.1:0", "--json",
		"--wait", "20s", "--move-timeout", "5s", "--grace", "5s")
	var stdout syncBuffer
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
	ag := exec.Command(bin, append(args, "--id", id, "--league", url)...)
	ag.Env = append(os.Environ(), protocol.SelfCheckEnv+"=1")
	var out syncBuffer
	ag.Stdout, ag.Stderr = &out, &out
	if err := ag.Start(); err != nil {
		t.Fatal(err)
	}
	agDone := make(chan struct{})
	go func() {
		_ = ag.Wait()
		close(agDone)
	}()
	rest, _ := io.ReadAll(r) // until league conform exits
	err = cmd.Wait()
	agCode := -1
	select {
	case <-agDone:
		agCode = ag.ProcessState.ExitCode()
	case <-time.After(10 * time.Second):
		_ = ag.Process.Kill()
		<-agDone
	}
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("league conform: %v", err)
	}
	var rep nodeConformReport
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("--json output is not one JSON document: %v\n%s\nstderr:\n%s", err, stdout.String(), rest)
	}
	return code, rep, out.String(), agCode
}

// The Node kit's example passes `league conform player` through the real binary, listening
// (--port 0) and outbound (--outbound): every required check passes, and so do the
// recommended checks the kit is written for (it announces match_credentials, checks and
// shows credentials, confirms an uncredentialed invitation with QUERY_MATCH, acknowledges
// GAME_OVER and LEAGUE_SHUTDOWN and leaves, registers outbound without an endpoint). The
// example exits 0 by itself.
func TestKitNodeExampleConforms(t *testing.T) {
	node, script := nodeExample(t, "tic_tac_toe_player.js")
	for _, tc := range []struct {
		name string
		args []string
		pass []string // recommended checks that must pass too
	}{
		{"inbound", []string{"--port", "0"}, nil},
		{"outbound", []string{"--outbound"}, []string{"player.outbound.register"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, rep, out, agCode := conformNodeAgent(t, "kit1", node, append([]string{script}, tc.args...)...)
			if code != 0 || !rep.Conforms || rep.Subject != "player" {
				t.Errorf("league conform exited %d, conforms %v (subject %q), want 0 and true", code, rep.Conforms, rep.Subject)
			}
			pass := append([]string{"player.features", "player.credentials.answer", "player.credentials.refuse", "player.match_query",
				"player.stale_step.answer", "player.game_over.ack", "player.shutdown", "player.shutdown.leaves"}, tc.pass...)
			seen := map[string]bool{}
			for _, r := range rep.Results {
				seen[r.ID] = true
				mustPass := r.Level == "required" || strings.Contains(" "+strings.Join(pass, " ")+" ", " "+r.ID+" ")
				if mustPass && r.Status != "pass" {
					t.Errorf("%s (%s): %s: %s", r.ID, r.Level, r.Status, r.Reason)
				} else if r.Status != "pass" {
					t.Logf("%s (%s): %s: %s", r.ID, r.Level, r.Status, r.Reason)
				}
			}
			for _, id := range pass {
				if !seen[id] {
					t.Errorf("the report has no check %s", id)
				}
			}
			if agCode != 0 {
				t.Errorf("the example exited %d, want 0 after LEAGUE_SHUTDOWN; output:\n%s", agCode, out)
			}
			if !strings.Contains(out, "league shut down") {
				t.Errorf("the example did not log LEAGUE_SHUTDOWN; output:\n%s", out)
			}
			if t.Failed() {
				t.Logf("example output:\n%s", out)
			}
		})
	}
}

// A Node kit player whose strategy is too slow, then throws, then (next match) returns an
// illegal move (testdata/kit_bad_node.js) plays a league with two of our players under a
// referee with a 2 s move deadline. The kit logs each cause and the referee's words,
// answers a missed move with an error (the referee's ladder: a warning, then a forced
// move) and the illegal move as given (the referee's rules: a loss), keeps serving (every
// match ends, and the match after is played), and the player exits 0 on LEAGUE_SHUTDOWN.
func TestKitNodeBadStrategy(t *testing.T) {
	node := interpreter(t, "node")
	script := filepath.Join(moduleRoot(), "internal", "e2e", "testdata", "kit_bad_node.js")
	cfg := fastConfig(t, func(_, policy map[string]any) {
		// Three violations must not suspend the player: the test is about the kit.
		policy["timeouts"].(map[string]any)["enforcement"].(map[string]any)["suspend_after_violations"] = 10
	})
	var bad *proc
	run := runLeague(t, leagueOpts{players: 2, referees: 1, seed: 41, config: cfg, extraPlayers: func(t *testing.T, lmURL string) int {
		bad = startOutbound(t, "kb1", node, script, "--id", "kb1", "--league", lmURL, "--outbound")
		return 1
	}})
	run.checkLeague(t, 1)

	var slowMatch, illegalMatch bool
	for _, r := range results(t, run) {
		var kinds []string
		vs, _ := r.metadata["violations"].([]any)
		for _, v := range vs {
			m, _ := v.(map[string]any)
			if m["player"] != "kb1" {
				t.Errorf("match %v: violation %v by another player than kb1", r.players, m)
				continue
			}
			kinds = append(kinds, m["kind"].(string)+"/"+m["action"].(string))
		}
		switch {
		case r.players[0] != "kb1" && r.players[1] != "kb1":
			if r.termination != "normal" {
				t.Errorf("match %v ended %q, want normal", r.players, r.termination)
			}
		case r.termination == "illegal_move":
			illegalMatch = true
			if r.loser != "kb1" || r.outcome["kb1"] != "loss" || !strings.Contains(strings.Join(kinds, " "), "invalid_move/technical_loss") {
				t.Errorf("match %v: loser %q, outcome %v, violations %v: want kb1 to lose for its invalid move", r.players, r.loser, r.outcome, kinds)
			}
		default:
			// The slow move draws a warning, the exception a forced move; then it plays on.
			slowMatch = true
			if r.termination != "normal" || len(kinds) != 2 || !strings.HasSuffix(kinds[0], "/warning") || !strings.HasSuffix(kinds[1], "/forced_move") {
				t.Errorf("match %v ended %q with violations %v, want normal after a warning and a forced move", r.players, r.termination, kinds)
			}
		}
	}
	if !slowMatch || !illegalMatch {
		t.Errorf("slow match %v, illegal match %v: want both", slowMatch, illegalMatch)
	}

	if code := run.lm.stop(t); code != 0 {
		t.Errorf("league manager exited %d, want 0", code)
	}
	select {
	case <-bad.done:
	case <-time.After(15 * time.Second):
		t.Fatal("the kit player did not leave on LEAGUE_SHUTDOWN")
	}
	out := bad.out.String()
	if code := bad.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("the kit player exited %d, want 0", code)
	}
	for _, want := range []string{
		"the strategy is too slow: no move within",                  // the cause, logged
		"the strategy failed: Error: deliberate failure",            // the exception, logged
		"warning from the referee: ",                                // the referee's words after the miss
		"FORCED (refused: the first legal move was played for you)", // last_result of the forced move
		"is not a legal move; sending it as given",                  // the illegal move, sent
		"loss (illegal_move)",                                       // the referee's verdict in the match line
		"the referee refused your move",
		"league shut down",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the kit player's log does not say %q", want)
		}
	}
	if t.Failed() {
		t.Logf("kit player output:\n%s", out)
	}
}
