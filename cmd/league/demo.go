package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/league"
	"github.com/agentleague/agentleague/protocol"
)

// demo runs a complete local league with every role as its own OS process.
func demo(ctx context.Context, args []string) error {
	fset := flag.NewFlagSet("league demo", flag.ContinueOnError)
	players := fset.Int("players", 8, "number of player processes")
	referees := fset.Int("referees", 3, "number of referee processes")
	gameType := fset.String("game", "tic_tac_toe", "game to play")
	strategy := fset.String("strategy", "random", "strategy of every player")
	seed := fset.Int64("seed", 1, "league seed (same seed, same league)")
	cfgPath := fset.String("config", "config/league.yaml", "league.yaml")
	dataDir := fset.String("data", "data", "folder of league.db")
	logDir := fset.String("log-dir", "logs", "folder of audit.jsonl and the process logs")
	timeout := fset.Duration("timeout", 10*time.Minute, "give up after this long (not counting the wait for --extra players)")
	grace := fset.Duration("grace", 5*time.Second,
		"after the League Manager has shut down, how long agents may take to leave on its LEAGUE_SHUTDOWN before SIGTERM (and as long again before SIGKILL)")
	extra := fset.Int("extra", 0, "before starting the league, wait for this many more players, started by hand from another terminal with --league <the League Manager's URL> (the demo prints the command lines of the examples)")
	extraWait := fset.Duration("extra-wait", 5*time.Minute, "how long to wait for the --extra players")
	if _, err := cli.Parse(fset, args); err != nil {
		return usageError{err}
	}
	if *players < 2 || *referees < 1 {
		return usageError{errors.New("need at least 2 players and 1 referee")}
	}
	if *grace <= 0 {
		return usageError{fmt.Errorf("--grace must be positive, got %s", *grace)}
	}
	if *extra < 0 || *extraWait <= 0 {
		return usageError{fmt.Errorf("--extra must not be negative and --extra-wait must be positive, got %d and %s", *extra, *extraWait)}
	}
	wait := time.Duration(0) // for the extra players, which --timeout does not count
	if *extra > 0 {
		wait = *extraWait
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own binary: %w", err)
	}
	binDir := filepath.Dir(exe)
	for _, b := range []string{"referee", "player"} {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			return fmt.Errorf("demo needs the %s binary beside %s (run make demo): %w", b, exe, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout+wait)
	defer cancel()

	dbPath := filepath.Join(*dataDir, "league.db")
	auditPath := filepath.Join(*logDir, "audit.jsonl")
	// A demo is a fresh league: the previous run's database and audit log are replaced.
	for _, p := range []string{dbPath, dbPath + "-wal", dbPath + "-shm", auditPath} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove previous %s: %w", p, err)
		}
	}
	if err := os.MkdirAll(*logDir, 0o755); err != nil {
		return fmt.Errorf("create log folder: %w", err)
	}
	raw := make([]byte, 16)
	_, _ = rand.Read(raw)
	adminToken := hex.EncodeToString(raw)

	procs := &procSet{logDir: *logDir}
	defer procs.stop(*grace, auditPath)

	lmPort := pickPort(8000)
	lmURL := fmt.Sprintf("http://127.0.0.1:%d/mcp", lmPort)
	fmt.Printf("League Manager on %s (live view: http://127.0.0.1:%d/)\n", lmURL, lmPort)
	err = procs.start(roleLeagueManager, "", filepath.Join(binDir, "league"), []string{"LEAGUE_ADMIN_TOKEN=" + adminToken},
		"serve", "--config", *cfgPath, "--addr", fmt.Sprintf("127.0.0.1:%d", lmPort), "--db", dbPath, "--audit", auditPath,
		"--log", filepath.Join(*logDir, "league_manager.log"), "--game", *gameType, "--seed", strconv.FormatInt(*seed, 10),
		"--window", strconv.Itoa(3600+int(wait.Seconds())), "--drain", demoDrain.String())
	if err != nil {
		return err
	}
	base := strings.TrimSuffix(lmURL, "/mcp")
	if err := waitFor(ctx, procs, func() bool { _, err := getStatus(base); return err == nil }); err != nil {
		return fmt.Errorf("league manager did not come up: %w", err)
	}
	next := 8001
	var refPorts []string
	for i := 1; i <= *referees; i++ {
		port := pickPort(next)
		next = port + 1
		refPorts = append(refPorts, strconv.Itoa(port))
		id := fmt.Sprintf("ref%d", i)
		// A referee drains its matches for as long as the League Manager does, so one
		// stopped mid-match still leaves well inside the grace period.
		if err := procs.start(roleReferee, id, filepath.Join(binDir, "referee"), nil, "--id", id, "--addr", fmt.Sprintf("127.0.0.1:%d", port),
			"--league", lmURL, "--games", *gameType, "--log-dir", *logDir,
			"--drain-timeout-ms", strconv.FormatInt(demoDrain.Milliseconds(), 10)); err != nil {
			return err
		}
	}
	if err := waitFor(ctx, procs, func() bool { s, err := getStatus(base); return err == nil && s.Referees == *referees }); err != nil {
		return fmt.Errorf("referees did not register: %w", err)
	}
	next = 9001
	var playerPorts []string
	ours := map[string]bool{}
	for i := 1; i <= *players; i++ {
		port := pickPort(next)
		next = port + 1
		playerPorts = append(playerPorts, strconv.Itoa(port))
		id := fmt.Sprintf("p%02d", i)
		ours[id] = true
		if err := procs.start(rolePlayer, id, filepath.Join(binDir, "player"), nil, "--id", id, "--addr", fmt.Sprintf("127.0.0.1:%d", port),
			"--league", lmURL, "--strategy", *strategy, "--seed", strconv.FormatInt(*seed+int64(i), 10), "--log-dir", *logDir); err != nil {
			return err
		}
	}
	fmt.Printf("%d referees on ports %s\n%d players on ports %s\n", *referees, strings.Join(refPorts, ","), *players, strings.Join(playerPorts, ","))
	// Counted by id: an extra player started early may register before ours.
	if err := waitFor(ctx, procs, func() bool {
		s, err := getStatus(base)
		return err == nil && len(registeredPlayers(s, ours, true)) == *players
	}); err != nil {
		return fmt.Errorf("players did not register: %w", err)
	}
	if *extra > 0 {
		if err := waitExtra(ctx, procs, base, lmURL, ours, *extra, *extraWait, *gameType); err != nil {
			return err
		}
	}
	started := time.Now()
	if _, err := adminCall(ctx, lmURL, adminToken, protocol.AdminStartLeagueRequest, map[string]any{}); err != nil {
		return fmt.Errorf("start league: %w", err)
	}
	var last league.Status
	lastShown := -1
	err = waitFor(ctx, procs, func() bool {
		s, err := getStatus(base)
		if err != nil {
			return false
		}
		last = s
		if done := s.MatchesByStatus[protocol.MatchStateCompleted]; done != lastShown {
			lastShown = done
			fmt.Printf("round %d/%d  matches %d/%d\n", s.CurrentRound, s.TotalRounds, done, s.MatchesTotal)
		}
		return s.State == league.StateCompleted
	})
	if err != nil {
		return fmt.Errorf("league did not complete (%d of %d matches): %w", last.MatchesByStatus[protocol.MatchStateCompleted], last.MatchesTotal, err)
	}
	wall := time.Since(started)
	ans, err := adminCall(ctx, lmURL, adminToken, protocol.QueryStandings, map[string]any{})
	if err != nil {
		return fmt.Errorf("query standings: %w", err)
	}
	var p struct {
		Standings []protocol.StandingsRow `json:"standings"`
	}
	if err := ans.Decode(&p); err != nil {
		return err
	}
	fmt.Printf("\nFinal standings (%s, %d players, %d matches):\n", *gameType, len(p.Standings), last.MatchesTotal)
	PrintTable(os.Stdout, p.Standings)
	fmt.Printf("\nleague time %.3fs, %.1f matches/s\ndatabase %s, audit log %s\n", wall.Seconds(), float64(last.MatchesTotal)/wall.Seconds(), dbPath, auditPath)
	return nil
}

// pickPort returns want when it is free on 127.0.0.1, else a free port chosen by the
// kernel (and says so).
func pickPort(want int) int {
	if ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", want)); err == nil {
		ln.Close()
		return want
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return want
	}
	defer ln.Close()
	got := ln.Addr().(*net.TCPAddr).Port
	fmt.Printf("port %d is taken; using %d\n", want, got)
	return got
}

func getStatus(base string) (league.Status, error) {
	var s league.Status
	c := http.Client{Timeout: 2 * time.Second}
	res, err := c.Get(base + "/status")
	if err != nil {
		return s, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return s, fmt.Errorf("status %d", res.StatusCode)
	}
	err = json.NewDecoder(res.Body).Decode(&s)
	return s, err
}

// waitFor polls cond until it holds, ctx ends, or a child process dies.
func waitFor(ctx context.Context, procs *procSet, cond func() bool) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if cond() {
			return nil
		}
		if name := procs.dead(); name != "" {
			return fmt.Errorf("process %s exited early (see %s)", name, filepath.Join(procs.logDir, name+".out"))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
