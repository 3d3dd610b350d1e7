// Package localleague runs a league on this machine with every role as a process of its
// own, for league demo and league bench: the League Manager, its referees and its players,
// registered and ready for the admin to start the league, and their orderly stop.
package localleague

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentleague/agentleague/league"
)

// Setup is a league Start runs on this machine: a League Manager, its referees and its
// players, each a process of the binaries in BinDir.
type Setup struct {
	BinDir, CfgPath, DataDir, LogDir string
	GameType, Strategy               string
	Players, Referees                int
	// OutboundPlayers of the players, the last ones (p09 and p10 of ten when 2), run with
	// --outbound: they listen on no port and take their requests from the League
	// Manager's relay.
	OutboundPlayers int
	Seed            int64
	// Window is added to the registration window, for players started by hand.
	Window time.Duration
	// Think is passed to every player as --think when positive.
	Think time.Duration
	// ProfileDir, when set, gets each process's CPU profile (--cpuprofile).
	ProfileDir string
	// Ports are the preferred first ports of the League Manager, the referees and the
	// players (taken in turn when free); zero lets the kernel choose every port.
	Ports [3]int
	// Out receives what a person watching wants to know: addresses and ports.
	Out io.Writer
	// Poll is how often registration is polled; zero is DefaultPoll.
	Poll time.Duration
}

// DefaultPoll is how often a local league's League Manager is polled while waiting.
const DefaultPoll = 50 * time.Millisecond

// League is a started league: its processes, registered and idle until the admin
// starts the league.
type League struct {
	Procs               *Procs
	LMURL, Base         string // the JSON-RPC endpoint and the URL beside it (live view, /status)
	AdminToken          string
	DBPath, AuditPath   string
	RefURLs, PlayerURLs []string // the agents' base URLs, for their /status; none for an outbound player
	Ours                map[string]bool
	// Outbound are the ids of the players started with --outbound.
	Outbound map[string]bool
	// PlayersStarted is when the first player process was started.
	PlayersStarted time.Time
}

// Start replaces the previous league's database and audit log, starts the
// League Manager, then the referees and the players, and waits until every one has
// registered. The league it returns (also on error, once any process started) must be
// stopped with Procs.Stop.
func Start(ctx context.Context, ls Setup) (*League, error) {
	dbPath := filepath.Join(ls.DataDir, "league.db")
	auditPath := filepath.Join(ls.LogDir, "audit.jsonl")
	// A local league is fresh: the previous run's database and audit log are replaced.
	for _, p := range []string{dbPath, dbPath + "-wal", dbPath + "-shm", auditPath} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("remove previous %s: %w", p, err)
		}
	}
	if err := os.MkdirAll(ls.LogDir, 0o755); err != nil {
		return nil, fmt.Errorf("create log folder: %w", err)
	}
	raw := make([]byte, 16)
	_, _ = rand.Read(raw)
	ll := &League{Procs: &Procs{logDir: ls.LogDir, out: ls.Out}, AdminToken: hex.EncodeToString(raw),
		DBPath: dbPath, AuditPath: auditPath, Ours: map[string]bool{}, Outbound: map[string]bool{}}
	procs := ll.Procs
	port := func(next *int) int {
		if *next == 0 {
			return freePort()
		}
		p := pickPort(*next, ls.Out)
		*next = p + 1
		return p
	}
	profile := func(name string) []string {
		if ls.ProfileDir == "" {
			return nil
		}
		return []string{"--cpuprofile", filepath.Join(ls.ProfileDir, name+".pprof")}
	}
	nextLM, nextRef, nextPlayer := ls.Ports[0], ls.Ports[1], ls.Ports[2]
	lmPort := port(&nextLM)
	ll.LMURL = fmt.Sprintf("http://127.0.0.1:%d/mcp", lmPort)
	ll.Base = strings.TrimSuffix(ll.LMURL, "/mcp")
	fmt.Fprintf(ls.Out, "League Manager on %s (live view: %s/)\n", ll.LMURL, ll.Base)
	err := procs.start(RoleLeagueManager, "", filepath.Join(ls.BinDir, "league"), []string{"LEAGUE_ADMIN_TOKEN=" + ll.AdminToken},
		append([]string{"serve", "--config", ls.CfgPath, "--addr", fmt.Sprintf("127.0.0.1:%d", lmPort), "--db", dbPath, "--audit", auditPath,
			"--log", filepath.Join(ls.LogDir, "league_manager.log"), "--game", ls.GameType, "--seed", strconv.FormatInt(ls.Seed, 10),
			"--window", strconv.Itoa(3600 + int(ls.Window.Seconds())), "--drain", drain.String()}, profile(RoleLeagueManager)...)...)
	if err != nil {
		return nil, err
	}
	if err := WaitFor(ctx, procs, func() bool { _, err := Status(ll.Base); return err == nil }); err != nil {
		return ll, fmt.Errorf("league manager did not come up: %w", err)
	}
	var refPorts []string
	for i := 1; i <= ls.Referees; i++ {
		p := port(&nextRef)
		refPorts = append(refPorts, strconv.Itoa(p))
		ll.RefURLs = append(ll.RefURLs, fmt.Sprintf("http://127.0.0.1:%d", p))
		id := fmt.Sprintf("ref%d", i)
		// A referee drains its matches for as long as the League Manager does, so one
		// stopped mid-match still leaves well inside the grace period.
		if err := procs.start(RoleReferee, id, filepath.Join(ls.BinDir, "referee"), nil, append([]string{"--id", id, "--addr", fmt.Sprintf("127.0.0.1:%d", p),
			"--league", ll.LMURL, "--games", ls.GameType, "--log-dir", ls.LogDir,
			"--drain-timeout-ms", strconv.FormatInt(drain.Milliseconds(), 10)}, profile(RoleReferee+"_"+id)...)...); err != nil {
			return ll, err
		}
	}
	if err := WaitFor(ctx, procs, func() bool { s, err := Status(ll.Base); return err == nil && s.Referees == ls.Referees }); err != nil {
		return ll, fmt.Errorf("referees did not register: %w", err)
	}
	var playerPorts []string
	for i := 1; i <= ls.Players; i++ {
		id := fmt.Sprintf("p%02d", i)
		ll.Ours[id] = true
		listen := []string{"--outbound"}
		if i <= ls.Players-ls.OutboundPlayers {
			p := port(&nextPlayer)
			playerPorts = append(playerPorts, strconv.Itoa(p))
			ll.PlayerURLs = append(ll.PlayerURLs, fmt.Sprintf("http://127.0.0.1:%d", p))
			listen = []string{"--addr", fmt.Sprintf("127.0.0.1:%d", p)}
		} else {
			ll.Outbound[id] = true
		}
		args := append([]string{"--id", id}, append(listen, "--league", ll.LMURL, "--strategy", ls.Strategy,
			"--seed", strconv.FormatInt(ls.Seed+int64(i), 10), "--log-dir", ls.LogDir)...)
		// Only when asked: a player built before --think existed refuses the flag.
		if ls.Think > 0 {
			args = append(args, "--think", ls.Think.String())
		}
		if i == 1 {
			ll.PlayersStarted = time.Now()
		}
		if err := procs.start(RolePlayer, id, filepath.Join(ls.BinDir, "player"), nil, append(args, profile(RolePlayer+"_"+id)...)...); err != nil {
			return ll, err
		}
	}
	fmt.Fprintf(ls.Out, "%d referees on ports %s\n%d players on ports %s\n", ls.Referees, strings.Join(refPorts, ","), len(playerPorts), strings.Join(playerPorts, ","))
	if len(ll.Outbound) > 0 {
		fmt.Fprintf(ls.Out, "%d players outbound, through the League Manager's relay\n", len(ll.Outbound))
	}
	// Counted by id: an extra player started early may register before ours.
	if err := WaitEvery(ctx, procs, cmp.Or(ls.Poll, DefaultPoll), func() bool {
		s, err := Status(ll.Base)
		return err == nil && len(RegisteredPlayers(s, ll.Ours, true)) == ls.Players
	}); err != nil {
		return ll, fmt.Errorf("players did not register: %w", err)
	}
	return ll, nil
}

// OwnBinDir is the folder of the running binary, where make build puts the others.
func OwnBinDir() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find own binary: %w", err)
	}
	return filepath.Dir(exe), nil
}

// CheckBinDir checks that dir holds the three binaries a local league runs.
func CheckBinDir(dir string) error {
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

// Status reads the GET /status of the League Manager at base.
func Status(base string) (league.Status, error) {
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

// WaitFor polls cond every DefaultPoll until it holds, ctx ends, or a child process dies.
func WaitFor(ctx context.Context, procs *Procs, cond func() bool) error {
	return WaitEvery(ctx, procs, DefaultPoll, cond)
}

// WaitEvery polls cond every poll until it holds, ctx ends, or a child process dies.
func WaitEvery(ctx context.Context, procs *Procs, poll time.Duration, cond func() bool) error {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if cond() {
			return nil
		}
		if name := procs.Dead(); name != "" {
			return fmt.Errorf("process %s exited early (see %s)", name, filepath.Join(procs.logDir, name+".out"))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
