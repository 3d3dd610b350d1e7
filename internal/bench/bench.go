package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/internal/localleague"
	"github.com/agentleague/agentleague/protocol"
	"gopkg.in/yaml.v3"
)

// plural is noun with an s unless n is 1: run for 1, runs for 3.
func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// benchPoll is how often a bench polls registration: often, since the time from the
// first player to the last result counts the wait.
const benchPoll = 2 * time.Millisecond

// benchGrace is how long a bench run's agents may take to leave on LEAGUE_SHUTDOWN.
const benchGrace = 5 * time.Second

// floorTime is how long each half of each floor (sequential, concurrent) is measured.
const floorTime = 500 * time.Millisecond

// benchBuild is one build league bench runs: its binaries and its League Manager's
// configuration.
type benchBuild struct {
	name            string // the column's title
	binDir, cfgPath string
	profileDir      string // where its processes write CPU profiles; "" for none
	// outbound is how many of its players run with --outbound (the last ones).
	outbound int
}

// benchOptions are the settings every run shares.
type benchOptions struct {
	players, referees int
	gameType          string
	strategy          string
	think             time.Duration
	seed              int64
	dataDir, logDir   string // "" for a fresh temporary folder per run
	keep              bool
	timeout           time.Duration
	// clock, when set, plays every match under it (league.yaml time_control).
	clock *protocol.TimeControl
}

// runFigures are the figures of one run of one build.
type runFigures struct {
	leagueTime time.Duration
	// fromFirstPlayer runs from the start of the first player process to the last result:
	// start-up and registration as well as play.
	fromFirstPlayer time.Duration
	matches         int
	// overheadP50 and overheadP99 are per-move overheads in milliseconds.
	overheadP50, overheadP99 float64
	// cpu is in seconds: the League Manager, the referees summed, the players summed.
	cpu       [3]float64
	exchanges int64
	// derived: the agents do not count exchanges, so they are derived from the audit log.
	derived     bool
	liveMoves   int
	storedMoves int
	// Of a run with outbound players, per kind of match (kindDirect, kindMixed,
	// kindRelayed): its matches with moves and the p50 and p99 of their per-move
	// overheads, in milliseconds, measured as overheadP50 and overheadP99 are.
	kindMatches      [3]int
	kindP50, kindP99 [3]float64
	// relayedMoves are the moves the outbound players made; relayCalls the calls the
	// League Manager's relay answered (league_relay_calls_total{outcome="answered"}).
	relayedMoves int
	relayCalls   int64
	// clock are the figures of a run under --clock.
	clock clockFigures
}

// maxBenchProcesses bounds the agents of a bench: each listens on a port of its own,
// taken from 10000-29999.
const maxBenchProcesses = 5000

// Run is league bench: it runs local leagues of real processes, as league demo does, and
// prints one table of throughput figures: the median of --runs runs, per build when
// --against names another. A bad command line is a cli.UsageError.
func Run(ctx context.Context, args []string) error {
	fset := flag.NewFlagSet("league bench", flag.ContinueOnError)
	var o benchOptions
	fset.IntVar(&o.players, "players", 10, "number of player processes")
	fset.IntVar(&o.referees, "referees", 5, "number of referee processes")
	outbound := fset.Int("outbound", 0, "run N of the players (the last N) with --outbound, through the League Manager's relay, and each run a second time "+
		"all direct with the same seed: the table compares the two leagues, and a report below it sets per-move overhead p50 and p99 of matches "+
		"between relayed players against matches between direct ones of the same runs, and the relay's CPU per relayed move "+
		"(the League Manager's CPU with relayed players less all direct, over the moves of relayed players); 0 for none")
	fset.StringVar(&o.gameType, "game", "tic_tac_toe", "game to play")
	fset.StringVar(&o.strategy, "strategy", "random", "strategy of every player")
	fset.DurationVar(&o.think, "think", 0, "each player waits this long before answering each move (player --think)")
	runs := fset.Int("runs", 3, "runs of each build; the table shows the median of each figure")
	fset.Int64Var(&o.seed, "seed", 1, "league seed (same seed, same schedule)")
	cfgPath := fset.String("config", "config/league.yaml", "league.yaml of this build (game_registry.yaml and timeout_policy.yaml beside it)")
	binDir := fset.String("bin-dir", "", "folder of this build's league, referee and player binaries (default: the folder of this binary)")
	against := fset.String("against", "", "folder of another build's league, referee and player binaries to compare with, run by run")
	againstCfg := fset.String("against-config", "", "league.yaml of the --against build (game_registry.yaml and timeout_policy.yaml beside it)")
	fset.StringVar(&o.dataDir, "data", "", "folder of each run's league.db, in a subfolder per run (default: a fresh temporary folder per run)")
	fset.StringVar(&o.logDir, "log-dir", "", "folder of each run's audit log and process logs, in a subfolder per run (default: a fresh temporary folder per run)")
	fset.BoolVar(&o.keep, "keep", false, "keep the temporary folders of the runs")
	fset.DurationVar(&o.timeout, "timeout", 5*time.Minute, "give up on a run after this long")
	clock := fset.String("clock", "", "play every match under this clock, league.yaml's time_control (\"2+0.02\": 2 s each, 0.02 s a move); "+
		"a report below the table gives the time losses and the moves charged more than the increment")
	profileDir := fset.String("profile", "", "write a CPU profile of every process of this build to DIR/<process>.pprof (each run overwrites the last)")
	if _, err := cli.Parse(fset, args); err != nil {
		return cli.UsageError{Err: err}
	}
	switch {
	case o.players < 2 || o.referees < 1:
		return cli.UsageError{Err: errors.New("need at least 2 players and 1 referee")}
	case o.players+o.referees > maxBenchProcesses:
		return cli.UsageError{Err: fmt.Errorf("at most %d players and referees together, got %d", maxBenchProcesses, o.players+o.referees)}
	case *runs < 1:
		return cli.UsageError{Err: fmt.Errorf("--runs must be at least 1, got %d", *runs)}
	case o.think < 0 || o.timeout <= 0:
		return cli.UsageError{Err: fmt.Errorf("--think must not be negative and --timeout must be positive, got %s and %s", o.think, o.timeout)}
	case (*against == "") != (*againstCfg == ""):
		return cli.UsageError{Err: errors.New("--against and --against-config go together")}
	case *outbound != 0 && (*outbound < 2 || *outbound > o.players-2):
		// Two of each kind at least, so that matches between relayed players and matches
		// between direct ones both exist.
		return cli.UsageError{Err: fmt.Errorf("--outbound must be from 2 to --players less 2 (%d), got %d", o.players-2, *outbound)}
	case *outbound != 0 && *against != "":
		return cli.UsageError{Err: errors.New("--outbound compares a league with outbound players against the same league all direct, not with --against")}
	}
	if *clock != "" {
		tc, err := protocol.ParseTimeControl(*clock)
		if err != nil {
			return cli.UsageError{Err: fmt.Errorf("--clock: %w", err)}
		}
		o.clock = &tc
	}
	if *binDir == "" {
		dir, err := localleague.OwnBinDir()
		if err != nil {
			return err
		}
		*binDir = dir
	}
	builds := []benchBuild{{name: "this build", binDir: *binDir, cfgPath: *cfgPath, profileDir: *profileDir}}
	if *against != "" {
		builds = append(builds, benchBuild{name: *against, binDir: *against, cfgPath: *againstCfg})
	}
	if *outbound > 0 {
		// The same build twice: with outbound players, and all direct.
		builds[0].name, builds[0].outbound = fmt.Sprintf("%d outbound", *outbound), *outbound
		builds = append(builds, benchBuild{name: "all direct", binDir: *binDir, cfgPath: *cfgPath})
	}
	for _, b := range builds {
		if err := checkBuild(b, o.think); err != nil {
			return err
		}
	}
	if o.clock != nil {
		for i := range builds {
			path, remove, err := clockedConfig(builds[i].cfgPath, *clock)
			if err != nil {
				return fmt.Errorf("%s: %w", builds[i].name, err)
			}
			defer remove()
			builds[i].cfgPath = path
		}
	}
	if *profileDir != "" {
		if err := os.MkdirAll(*profileDir, 0o755); err != nil {
			return fmt.Errorf("create profile folder: %w", err)
		}
	}
	fl, err := measureFloor(ctx, floorTime)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own binary: %w", err)
	}
	pf, err := measureProcessFloor(ctx, self, floorTime, fl.workers)
	if err != nil {
		return err
	}
	figures := make([][]runFigures, len(builds))
	for run := 1; run <= *runs; run++ {
		// Alternated, so a machine that warms up or gets busy weighs on both builds alike.
		for i, b := range builds {
			fmt.Fprintf(os.Stderr, "run %d/%d: %s\n", run, *runs, b.name)
			f, err := benchRun(ctx, o, b, fmt.Sprintf("run%d-%d", run, i+1))
			if err != nil {
				return fmt.Errorf("run %d of %s: %w", run, b.name, err)
			}
			figures[i] = append(figures[i], f)
		}
	}
	players := fmt.Sprintf("%d players", o.players)
	if *outbound > 0 {
		players += fmt.Sprintf(" (%d outbound, then all direct)", *outbound)
	}
	clocked := ""
	if o.clock != nil {
		clocked = ", clock " + o.clock.String()
	}
	fmt.Printf("league bench: %s, %d referees, %s, strategy %s, think %s%s, median of %d %s\n",
		players, o.referees, o.gameType, o.strategy, o.think, clocked, *runs, plural(*runs, "run"))
	writeBenchTable(os.Stdout, builds, medians(figures), fl, pf)
	if o.clock != nil {
		writeClockReport(os.Stdout, *o.clock, builds, figures)
	}
	if *outbound > 0 {
		writeOutboundReport(os.Stdout, o.players, *outbound, summariseOutbound(figures[0], figures[1]))
	}
	return nil
}

// checkBuild checks that a build has its binaries and a complete configuration folder,
// and that its player knows --think and --outbound when the bench needs them.
func checkBuild(b benchBuild, think time.Duration) error {
	if err := localleague.CheckBinDir(b.binDir); err != nil {
		return fmt.Errorf("%s: %w", b.name, err)
	}
	dir := filepath.Dir(b.cfgPath)
	for _, f := range []string{filepath.Base(b.cfgPath), "game_registry.yaml", "timeout_policy.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("%s: the League Manager reads %s beside its league.yaml: %w", b.name, f, err)
		}
	}
	if think > 0 || b.outbound > 0 {
		// A player without the flag prints its usage, which then lacks it.
		out, _ := exec.Command(filepath.Join(b.binDir, "player"), "-h").CombinedOutput()
		if think > 0 && !strings.Contains(string(out), "-think") {
			return fmt.Errorf("%s: its player has no --think, so --think cannot be compared", b.name)
		}
		if b.outbound > 0 && !strings.Contains(string(out), "-outbound") {
			return fmt.Errorf("%s: its player has no --outbound", b.name)
		}
	}
	return nil
}

// clockedConfig copies the configuration folder of cfgPath into a temporary one whose
// league.yaml plays under clock (time_control), and returns its league.yaml and how to
// remove the folder.
func clockedConfig(cfgPath, clock string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "league-bench-config-")
	if err != nil {
		return "", nil, fmt.Errorf("clocked configuration: %w", err)
	}
	remove := func() { _ = os.RemoveAll(dir) }
	src := filepath.Dir(cfgPath)
	for _, f := range []string{"game_registry.yaml", "timeout_policy.yaml"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, f), data, 0o644)
		}
		if err != nil {
			remove()
			return "", nil, fmt.Errorf("clocked configuration: %w", err)
		}
	}
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		remove()
		return "", nil, fmt.Errorf("clocked configuration: %w", err)
	}
	var league map[string]any
	if err := yaml.Unmarshal(data, &league); err != nil {
		remove()
		return "", nil, fmt.Errorf("clocked configuration: %s: %w", cfgPath, err)
	}
	if league == nil {
		league = map[string]any{}
	}
	league["time_control"] = map[string]any{"clock": clock}
	if data, err = yaml.Marshal(league); err == nil {
		err = os.WriteFile(filepath.Join(dir, "league.yaml"), data, 0o644)
	}
	if err != nil {
		remove()
		return "", nil, fmt.Errorf("clocked configuration: %w", err)
	}
	return filepath.Join(dir, "league.yaml"), remove, nil
}

// runDirs are the data and log folders of one run, and the temporary folder to remove
// after it ("" when none).
func runDirs(o benchOptions, name string) (dataDir, logDir, tmp string, err error) {
	if o.dataDir == "" || o.logDir == "" {
		if tmp, err = os.MkdirTemp("", "league-bench-"); err != nil {
			return "", "", "", fmt.Errorf("create run folder: %w", err)
		}
	}
	dataDir, logDir = filepath.Join(tmp, "data"), filepath.Join(tmp, "logs")
	if o.dataDir != "" {
		dataDir = filepath.Join(o.dataDir, name)
	}
	if o.logDir != "" {
		logDir = filepath.Join(o.logDir, name)
	}
	for _, d := range []string{dataDir, logDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", "", "", fmt.Errorf("create run folder: %w", err)
		}
	}
	return dataDir, logDir, tmp, nil
}

// benchRun runs one league of build b and measures it.
func benchRun(ctx context.Context, o benchOptions, b benchBuild, name string) (f runFigures, err error) {
	dataDir, logDir, tmp, err := runDirs(o, name)
	if err != nil {
		return f, err
	}
	if tmp != "" {
		defer func() {
			if o.keep {
				fmt.Fprintf(os.Stderr, "run files kept in %s\n", tmp)
				return
			}
			err = errors.Join(err, os.RemoveAll(tmp))
		}()
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	// Ports below the kernel's ephemeral range (32768 and up on Linux), from a random
	// base: a port the kernel picked as free could go to another process's outgoing
	// connection before the process meant to listen on it starts, which with a hundred
	// processes registering at once happens.
	base := 10000 + rand.IntN(20000-maxBenchProcesses-1)
	ll, err := localleague.Start(ctx, localleague.Setup{
		BinDir: b.binDir, CfgPath: b.cfgPath, DataDir: dataDir, LogDir: logDir, GameType: o.gameType, Strategy: o.strategy,
		Players: o.players, Referees: o.referees, OutboundPlayers: b.outbound, Seed: o.seed, Think: o.think, ProfileDir: b.profileDir, Out: io.Discard,
		Poll: benchPoll, Ports: [3]int{base, base + 1, base + 1 + o.referees},
	})
	if ll != nil {
		// Before the folders go: the processes write there until they exit.
		defer ll.Procs.Stop(benchGrace, ll.AuditPath)
	}
	if err != nil {
		return f, err
	}

	lw := newLiveWatch(ll.Base)
	watchCtx, stopWatch := context.WithCancel(ctx)
	go lw.run(watchCtx)
	// Ends the watch before the processes stop (deferred earlier, run later).
	defer func() {
		stopWatch()
		<-lw.done
	}()
	select {
	case <-lw.connected:
	case <-ctx.Done():
		return f, fmt.Errorf("live stream did not open: %w (%v)", ctx.Err(), lw.lastErr())
	}

	admin, err := localleague.NewAdmin(protocol.ClientOptions{}, protocol.AdminStartLeagueResponse)
	if err != nil {
		return f, err
	}
	defer admin.Close()
	cpuBefore, err := cpuByRole(ll.Procs)
	if err != nil {
		return f, err
	}
	exBefore, counted, err := exchangesOf(ctx, ll)
	if err != nil {
		return f, err
	}
	relayBefore, err := relayCallsOf(ctx, ll)
	if err != nil {
		return f, err
	}
	started := time.Now()
	if _, err := admin.StartLeague(ctx, ll.LMURL, ll.AdminToken); err != nil {
		return f, fmt.Errorf("start league: %w", err)
	}
	if err := waitCompleted(ctx, ll.Procs, lw); err != nil {
		return f, err
	}
	moves, end := lw.seen()
	cpuAfter, err := cpuByRole(ll.Procs)
	if err != nil {
		return f, err
	}
	exAfter, _, err := exchangesOf(ctx, ll)
	if err != nil {
		return f, err
	}
	relayAfter, err := relayCallsOf(ctx, ll)
	if err != nil {
		return f, err
	}
	st, err := localleague.Status(ll.Base)
	if err != nil {
		return f, fmt.Errorf("league status: %w", err)
	}

	auditFile, err := os.Open(ll.AuditPath)
	if err != nil {
		return f, fmt.Errorf("open audit log: %w", err)
	}
	// Read after the counters: the lines of the last exchange are written after the
	// League Manager announced the end.
	af, err := parseAudit(auditFile)
	auditFile.Close()
	if err != nil {
		return f, err
	}
	f = runFigures{leagueTime: end.Sub(started), fromFirstPlayer: end.Sub(ll.PlayersStarted), matches: st.MatchesTotal, liveMoves: moves, storedMoves: totalMoves(af.matches)}
	over := moveOverheads(af.matches, o.think)
	f.overheadP50, _ = percentile(over, 50)
	f.overheadP99, _ = percentile(over, 99)
	if o.clock != nil {
		f.clock = clockFiguresOf(af.matches, o.clock.IncrementMS)
	}
	for i := range f.cpu {
		f.cpu[i] = cpuAfter[i] - cpuBefore[i]
	}
	// An outbound player has no GET /status: the relay counts its exchanges.
	f.relayCalls = relayAfter - relayBefore
	f.exchanges, f.derived = exAfter-exBefore+f.relayCalls, !counted
	if !counted {
		f.exchanges = derivedExchanges(af)
	}
	if len(ll.Outbound) > 0 {
		for k, ms := range byKind(af.matches, ll.Outbound) {
			over := moveOverheads(ms, o.think)
			f.kindMatches[k] = len(over)
			f.kindP50[k], _ = percentile(over, 50)
			f.kindP99[k], _ = percentile(over, 99)
		}
		f.relayedMoves = relayedMoves(af.matches, ll.Outbound)
	}
	return f, nil
}

// waitCompleted waits for league_completed on the live stream, ctx's end or a process's
// death.
func waitCompleted(ctx context.Context, procs *localleague.Procs, lw *liveWatch) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-lw.completed:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("league did not complete: %w (live stream: %v)", ctx.Err(), lw.lastErr())
		case <-t.C:
			if name := procs.Dead(); name != "" {
				return fmt.Errorf("process %s exited early (see %s)", name, filepath.Join(procs.LogDir(), name+".out"))
			}
		}
	}
}

// cpuByRole sums the CPU seconds used so far by the League Manager, the referees and the
// players.
func cpuByRole(procs *localleague.Procs) ([3]float64, error) {
	var sum [3]float64
	for _, p := range procs.All() {
		s, err := pidCPUSeconds(p.Cmd.Process.Pid)
		if err != nil {
			return sum, fmt.Errorf("cpu time of %s: %w", p.Name, err)
		}
		switch p.Role {
		case localleague.RoleLeagueManager:
			sum[0] += s
		case localleague.RoleReferee:
			sum[1] += s
		default:
			sum[2] += s
		}
	}
	return sum, nil
}

// exchangesOf sums the exchanges every process's GET /status counts; counted is false
// when one of them does not count (a build from before the field).
func exchangesOf(ctx context.Context, ll *localleague.League) (total int64, counted bool, err error) {
	for _, base := range append([]string{ll.Base}, append(ll.RefURLs, ll.PlayerURLs...)...) {
		n, err := statusExchanges(ctx, base+"/status")
		if err != nil {
			return 0, false, err
		}
		if n == nil {
			return 0, false, nil
		}
		total += *n
	}
	return total, true, nil
}

// relayCallsOf is the number of calls to outbound agents the League Manager's relay
// has answered so far, from its GET /metrics; 0 in a league without outbound players.
func relayCallsOf(ctx context.Context, ll *localleague.League) (int64, error) {
	if len(ll.Outbound) == 0 {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	url := ll.Base + "/metrics"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, fmt.Errorf("read relay calls: %w", err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("read relay calls: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("read relay calls: GET %s: %s", url, res.Status)
	}
	n, err := answeredRelayCalls(res.Body)
	if err != nil {
		return 0, fmt.Errorf("read relay calls: GET %s: %w", url, err)
	}
	return n, nil
}

// statusExchanges reads the exchanges field of a GET /status; nil when it has none.
func statusExchanges(ctx context.Context, url string) (*int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("read exchanges: %w", err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read exchanges: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read exchanges: GET %s: %s", url, res.Status)
	}
	var s struct {
		Exchanges *int64 `json:"exchanges"`
	}
	if err := json.NewDecoder(res.Body).Decode(&s); err != nil {
		return nil, fmt.Errorf("read exchanges: GET %s: %w", url, err)
	}
	return s.Exchanges, nil
}
