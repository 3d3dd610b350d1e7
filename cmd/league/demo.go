package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
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
	binDir, err := ownBinDir()
	if err != nil {
		return err
	}
	if err := checkBinDir(binDir); err != nil {
		return fmt.Errorf("demo needs the binaries beside its own (run make demo): %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout+wait)
	defer cancel()

	ll, err := startLocalLeague(ctx, localSetup{
		binDir: binDir, cfgPath: *cfgPath, dataDir: *dataDir, logDir: *logDir, gameType: *gameType, strategy: *strategy,
		players: *players, referees: *referees, seed: *seed, window: wait, out: os.Stdout,
		// The demo's usual ports, so its live view is always at the same address.
		ports: [3]int{8000, 8001, 9001},
	})
	if ll != nil {
		defer ll.procs.stop(*grace, ll.auditPath)
	}
	if err != nil {
		return err
	}
	if *extra > 0 {
		if err := waitExtra(ctx, ll.procs, ll.base, ll.lmURL, ll.ours, *extra, *extraWait, *gameType); err != nil {
			return err
		}
	}
	started := time.Now()
	if _, err := adminCall(ctx, ll.lmURL, ll.adminToken, protocol.AdminStartLeagueRequest, map[string]any{}); err != nil {
		return fmt.Errorf("start league: %w", err)
	}
	var last league.Status
	lastShown := -1
	err = waitFor(ctx, ll.procs, func() bool {
		s, err := getStatus(ll.base)
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
	ans, err := adminCall(ctx, ll.lmURL, ll.adminToken, protocol.QueryStandings, map[string]any{})
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
	fmt.Printf("\nleague time %.3fs, %.1f matches/s\ndatabase %s, audit log %s\n", wall.Seconds(), float64(last.MatchesTotal)/wall.Seconds(), ll.dbPath, ll.auditPath)
	return nil
}

// localSetup is a league startLocalLeague runs on this machine: a League Manager, its
// referees and its players, each a process of the binaries in binDir.
type localSetup struct {
	binDir, cfgPath, dataDir, logDir string
	gameType, strategy               string
	players, referees                int
	seed                             int64
	// window is added to the registration window, for players started by hand.
	window time.Duration
	// think is passed to every player as --think when positive.
	think time.Duration
	// profileDir, when set, gets each process's CPU profile (--cpuprofile).
	profileDir string
	// ports are the preferred first ports of the League Manager, the referees and the
	// players (taken in turn when free); zero lets the kernel choose every port.
	ports [3]int
	// out receives what a person watching wants to know: addresses and ports.
	out io.Writer
	// poll is how often registration is polled; zero is demoPoll.
	poll time.Duration
}

// demoPoll is how often a demo polls the League Manager while it waits.
const demoPoll = 50 * time.Millisecond

// localLeague is a started league: its processes, registered and idle until the admin
// starts the league.
type localLeague struct {
	procs               *procSet
	lmURL, base         string // the JSON-RPC endpoint and the URL beside it (live view, /status)
	adminToken          string
	dbPath, auditPath   string
	refURLs, playerURLs []string // the agents' base URLs, for their /status
	ours                map[string]bool
	// playersStarted is when the first player process was started.
	playersStarted time.Time
}

// startLocalLeague replaces the previous league's database and audit log, starts the
// League Manager, then the referees and the players, and waits until every one has
// registered. The league it returns (also on error, once any process started) must be
// stopped with procs.stop.
func startLocalLeague(ctx context.Context, ls localSetup) (*localLeague, error) {
	dbPath := filepath.Join(ls.dataDir, "league.db")
	auditPath := filepath.Join(ls.logDir, "audit.jsonl")
	// A local league is fresh: the previous run's database and audit log are replaced.
	for _, p := range []string{dbPath, dbPath + "-wal", dbPath + "-shm", auditPath} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("remove previous %s: %w", p, err)
		}
	}
	if err := os.MkdirAll(ls.logDir, 0o755); err != nil {
		return nil, fmt.Errorf("create log folder: %w", err)
	}
	raw := make([]byte, 16)
	_, _ = rand.Read(raw)
	ll := &localLeague{procs: &procSet{logDir: ls.logDir, out: ls.out}, adminToken: hex.EncodeToString(raw),
		dbPath: dbPath, auditPath: auditPath, ours: map[string]bool{}}
	procs := ll.procs
	port := func(next *int) int {
		if *next == 0 {
			return freePort()
		}
		p := pickPort(*next, ls.out)
		*next = p + 1
		return p
	}
	profile := func(name string) []string {
		if ls.profileDir == "" {
			return nil
		}
		return []string{"--cpuprofile", filepath.Join(ls.profileDir, name+".pprof")}
	}
	nextLM, nextRef, nextPlayer := ls.ports[0], ls.ports[1], ls.ports[2]
	lmPort := port(&nextLM)
	ll.lmURL = fmt.Sprintf("http://127.0.0.1:%d/mcp", lmPort)
	ll.base = strings.TrimSuffix(ll.lmURL, "/mcp")
	fmt.Fprintf(ls.out, "League Manager on %s (live view: %s/)\n", ll.lmURL, ll.base)
	err := procs.start(roleLeagueManager, "", filepath.Join(ls.binDir, "league"), []string{"LEAGUE_ADMIN_TOKEN=" + ll.adminToken},
		append([]string{"serve", "--config", ls.cfgPath, "--addr", fmt.Sprintf("127.0.0.1:%d", lmPort), "--db", dbPath, "--audit", auditPath,
			"--log", filepath.Join(ls.logDir, "league_manager.log"), "--game", ls.gameType, "--seed", strconv.FormatInt(ls.seed, 10),
			"--window", strconv.Itoa(3600 + int(ls.window.Seconds())), "--drain", demoDrain.String()}, profile(roleLeagueManager)...)...)
	if err != nil {
		return nil, err
	}
	if err := waitFor(ctx, procs, func() bool { _, err := getStatus(ll.base); return err == nil }); err != nil {
		return ll, fmt.Errorf("league manager did not come up: %w", err)
	}
	var refPorts []string
	for i := 1; i <= ls.referees; i++ {
		p := port(&nextRef)
		refPorts = append(refPorts, strconv.Itoa(p))
		ll.refURLs = append(ll.refURLs, fmt.Sprintf("http://127.0.0.1:%d", p))
		id := fmt.Sprintf("ref%d", i)
		// A referee drains its matches for as long as the League Manager does, so one
		// stopped mid-match still leaves well inside the grace period.
		if err := procs.start(roleReferee, id, filepath.Join(ls.binDir, "referee"), nil, append([]string{"--id", id, "--addr", fmt.Sprintf("127.0.0.1:%d", p),
			"--league", ll.lmURL, "--games", ls.gameType, "--log-dir", ls.logDir,
			"--drain-timeout-ms", strconv.FormatInt(demoDrain.Milliseconds(), 10)}, profile(roleReferee+"_"+id)...)...); err != nil {
			return ll, err
		}
	}
	if err := waitFor(ctx, procs, func() bool { s, err := getStatus(ll.base); return err == nil && s.Referees == ls.referees }); err != nil {
		return ll, fmt.Errorf("referees did not register: %w", err)
	}
	var playerPorts []string
	for i := 1; i <= ls.players; i++ {
		p := port(&nextPlayer)
		playerPorts = append(playerPorts, strconv.Itoa(p))
		ll.playerURLs = append(ll.playerURLs, fmt.Sprintf("http://127.0.0.1:%d", p))
		id := fmt.Sprintf("p%02d", i)
		ll.ours[id] = true
		args := []string{"--id", id, "--addr", fmt.Sprintf("127.0.0.1:%d", p),
			"--league", ll.lmURL, "--strategy", ls.strategy, "--seed", strconv.FormatInt(ls.seed+int64(i), 10), "--log-dir", ls.logDir}
		// Only when asked: a player built before --think existed refuses the flag.
		if ls.think > 0 {
			args = append(args, "--think", ls.think.String())
		}
		if i == 1 {
			ll.playersStarted = time.Now()
		}
		if err := procs.start(rolePlayer, id, filepath.Join(ls.binDir, "player"), nil, append(args, profile(rolePlayer+"_"+id)...)...); err != nil {
			return ll, err
		}
	}
	fmt.Fprintf(ls.out, "%d referees on ports %s\n%d players on ports %s\n", ls.referees, strings.Join(refPorts, ","), ls.players, strings.Join(playerPorts, ","))
	// Counted by id: an extra player started early may register before ours.
	if err := waitEvery(ctx, procs, cmp.Or(ls.poll, demoPoll), func() bool {
		s, err := getStatus(ll.base)
		return err == nil && len(registeredPlayers(s, ll.ours, true)) == ls.players
	}); err != nil {
		return ll, fmt.Errorf("players did not register: %w", err)
	}
	return ll, nil
}

// ownBinDir is the folder of the running binary, where make build puts the others.
func ownBinDir() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find own binary: %w", err)
	}
	return filepath.Dir(exe), nil
}

// checkBinDir checks that dir holds the three binaries a local league runs.
func checkBinDir(dir string) error {
	for _, b := range []string{"league", "referee", "player"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return fmt.Errorf("no %s binary in %s: %w", b, dir, err)
		}
	}
	return nil
}

// pickPort returns want when it is free on 127.0.0.1, else a free port chosen by the
// kernel (and says so on out).
func pickPort(want int, out io.Writer) int {
	if ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", want)); err == nil {
		ln.Close()
		return want
	}
	got := freePort()
	if got == 0 {
		return want
	}
	fmt.Fprintf(out, "port %d is taken; using %d\n", want, got)
	return got
}

// freePort is a port of 127.0.0.1 the kernel says is free (0 if it cannot say). Another
// process may take it before the caller listens on it; the caller then fails to start.
func freePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
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

// waitFor polls cond every demoPoll until it holds, ctx ends, or a child process dies.
func waitFor(ctx context.Context, procs *procSet, cond func() bool) error {
	return waitEvery(ctx, procs, demoPoll, cond)
}

// waitEvery polls cond every poll until it holds, ctx ends, or a child process dies.
func waitEvery(ctx context.Context, procs *procSet, poll time.Duration, cond func() bool) error {
	t := time.NewTicker(poll)
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
