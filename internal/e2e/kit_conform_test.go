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

// conformAgent runs `league conform player --game game --json` from binDir, starts the
// agent (bin args..., then --id and --league) once the tool says where it listens, and
// returns the tool's exit code, its report, the agent's output and the agent's exit code
// (-1 if it had to be killed: it did not leave by itself).
func conformAgent(t *testing.T, game, id, bin string, args ...string) (int, conformReport, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "league"), "conform", "player", "--game", game, "--listen", "127.0.0.1:0", "--json",
		"--wait", "30s", "--move-timeout", "5s", "--grace", "5s")
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
	var rep conformReport
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("--json output is not one JSON document: %v\n%s\nstderr:\n%s", err, stdout.String(), rest)
	}
	return code, rep, out.String(), agCode
}

// checkKitConforms checks a player's conformance run: the tool exits 0, every check passes
// (an inbound player skips only player.outbound.register, not its case), the player exits
// 0 by itself, and its output says each of logged.
func checkKitConforms(t *testing.T, outbound bool, code int, rep conformReport, out string, agCode int, logged ...string) {
	t.Helper()
	if code != 0 || !rep.Conforms || rep.Subject != "player" || len(rep.Results) == 0 {
		t.Errorf("league conform exited %d, conforms %v (subject %q, %d results), want 0 and true", code, rep.Conforms, rep.Subject, len(rep.Results))
	}
	for _, res := range rep.Results {
		if res.Status != "pass" && (outbound || res.ID != "player.outbound.register") {
			t.Errorf("%s (%s): %s: %s", res.ID, res.Level, res.Status, res.Reason)
		}
	}
	if agCode != 0 {
		t.Errorf("the player exited %d, want 0 after LEAGUE_SHUTDOWN", agCode)
	}
	for _, want := range logged {
		if !strings.Contains(out, want) {
			t.Errorf("the player's output does not say %q", want)
		}
	}
	if t.Failed() {
		t.Logf("player output:\n%s", out)
	}
}

// The Go example (examples/go/centre: a strategy on the player runtime) builds and passes
// league conform player, outbound, with every check.
func TestKitGoExampleConforms(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "centre")
	build := exec.Command("go", "build", "-o", bin, "./examples/go/centre")
	build.Dir = moduleRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/go/centre: %v\n%s", err, out)
	}
	code, rep, out, agCode := conformAgent(t, "tic_tac_toe", "kit1", bin)
	checkKitConforms(t, true, code, rep, out, agCode, `"message":"match over"`, `"message":"stopping: league shut down"`)
}
