package e2e

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// delayProxy forwards TCP connections from its own port to target, each chunk of bytes
// in either direction held for delay from the moment it arrived: a link with that much
// one-way latency (and no bandwidth limit), as netem would add, which this machine's
// kernel lacks. Chunks keep their order and are not serialised behind each other's
// delay, so a request of several chunks takes delay, not delay per chunk.
type delayProxy struct {
	ln     net.Listener
	target string
	delay  time.Duration
	wg     sync.WaitGroup
}

func startDelayProxy(t *testing.T, target string, delay time.Duration) *delayProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &delayProxy{ln: ln, target: target, delay: delay}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.wg.Wait()
	})
	return p
}

func (p *delayProxy) addr() string { return p.ln.Addr().String() }

func (p *delayProxy) serve() {
	defer p.wg.Done()
	var conns sync.WaitGroup
	defer conns.Wait()
	var mu sync.Mutex
	open := map[net.Conn]bool{}
	defer func() {
		// The listener closed: the test is over, so are the links.
		mu.Lock()
		for c := range open {
			c.Close()
		}
		mu.Unlock()
	}()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		mu.Lock()
		open[in], open[out] = true, true
		mu.Unlock()
		conns.Add(1)
		go func() {
			defer conns.Done()
			var halves sync.WaitGroup
			halves.Add(2)
			go func() { defer halves.Done(); p.pipe(out, in) }()
			go func() { defer halves.Done(); p.pipe(in, out) }()
			halves.Wait()
			in.Close()
			out.Close()
			mu.Lock()
			delete(open, in)
			delete(open, out)
			mu.Unlock()
		}()
	}
}

// pipe copies src to dst, each chunk delay after it was read; at src's end it closes
// dst's writing side once the chunks in flight are delivered.
func (p *delayProxy) pipe(dst, src net.Conn) {
	type chunk struct {
		data []byte
		due  time.Time
	}
	line := make(chan chunk, 1024)
	go func() {
		defer close(line)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				line <- chunk{buf[:n], time.Now().Add(p.delay)}
			}
			if err != nil {
				return
			}
		}
	}()
	failed := false
	for c := range line {
		if failed {
			continue // drain, so that the reader ends
		}
		time.Sleep(time.Until(c.due))
		if _, err := dst.Write(c.data); err != nil {
			failed = true
			src.Close()
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok && !failed {
		_ = tc.CloseWrite()
	} else {
		dst.Close()
	}
}

// freePort is a loopback port nobody listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// The proxy adds its delay each way: a round trip through it takes twice the delay.
func TestDelayProxyAddsItsDelay(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	p := startDelayProxy(t, ln.Addr().String(), 100*time.Millisecond)
	c, err := net.Dial("tcp", p.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 5)
	for i := range 3 {
		start := time.Now()
		if _, err := c.Write([]byte("ping" + fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
		if rtt := time.Since(start); rtt < 200*time.Millisecond || rtt > 400*time.Millisecond {
			t.Errorf("round trip %d took %v through a proxy of 100 ms each way, want about 200 ms", i, rtt)
		}
		if string(buf) != "ping"+fmt.Sprint(i) {
			t.Errorf("echo %q, want %q", buf, "ping"+fmt.Sprint(i))
		}
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(buf); !errors.Is(err, io.EOF) {
		t.Errorf("after our end, read %v; want EOF passed through", err)
	}
}

// clockMove is a move record under a clock, as these tests read it.
type clockMove struct {
	player                                   string
	elapsed, rtt, network, clock             int64
	hasElapsed, hasRTT, hasNetwork, hasClock bool
}

func clockMoves(t *testing.T, r playedResult) []clockMove {
	t.Helper()
	raw, _ := r.metadata["moves"].([]any)
	var out []clockMove
	for _, m := range raw {
		mv := m.(map[string]any)
		var c clockMove
		c.player, _ = mv["player"].(string)
		var f float64
		f, c.hasElapsed = mv["elapsed_ms"].(float64)
		c.elapsed = int64(f)
		f, c.hasRTT = mv["rtt_ms"].(float64)
		c.rtt = int64(f)
		f, c.hasNetwork = mv["network_ms"].(float64)
		c.network = int64(f)
		f, c.hasClock = mv["clock_ms"].(float64)
		c.clock = int64(f)
		if !c.hasElapsed || !c.hasRTT || !c.hasNetwork || !c.hasClock {
			t.Errorf("match %v: move %v lacks elapsed_ms, rtt_ms, network_ms or clock_ms", r.players, mv)
		}
		if c.network > c.rtt {
			t.Errorf("match %v: move %v credits more than the round trip measured", r.players, mv)
		}
		out = append(out, c)
	}
	return out
}

// Issue 38, "Must show": 200 ms added each way on one player's link, under 5+0.1.
//
//   - p01 plays through a delaying proxy (its registered endpoint is the proxy's port),
//     so every referee call to it takes 400 ms more, and thinks 0: its invitation's round
//     trip (about 400 ms) is credited back on every move, so its clock only grows by the
//     increment, and it never flags.
//   - p02 sits beside the referee and thinks 400 ms a move: the same total time a move as
//     p01, all of it its own, so each move is charged about 400 ms and its clock drops by
//     about 300 ms a move (its own round trip beside the referee, a few ms, is credited
//     too). A tic-tac-toe player makes at most 5 moves: at most about
//     2.1 s charged of 5 s, so it never flags either (computed, and checked below).
//   - p03 sits beside the referee and thinks 5.5 s a move, longer than its whole clock: it
//     flags on its first move, every match it plays.
//
// Every move record shows the raw time (elapsed_ms), the round trip measured (rtt_ms), the
// network time credited back (network_ms) and the clock left (clock_ms), and the clock of every move follows the
// rule from those: clock after = clock before + increment - (elapsed - network).
func TestClockCreditsAProxiedPlayersNetworkTime(t *testing.T) {
	const (
		oneWay  = 200 * time.Millisecond
		think   = 400 // ms, p02's: the proxy's round trip
		slow    = "5500ms"
		baseMS  = 5000
		incMS   = 100
		slack   = 80 // ms a move may take beyond its network or thinking on a busy machine
		maxMove = 5  // moves of one tic-tac-toe player at most
	)
	playerPort := freePort(t)
	proxy := startDelayProxy(t, fmt.Sprintf("127.0.0.1:%d", playerPort), oneWay)
	cfg := fastConfig(t, func(league, _ map[string]any) {
		league["time_control"] = map[string]any{"clock": "5+0.1"}
	})
	run := runLeague(t, leagueOpts{players: 3, referees: 2, seed: 38, config: cfg,
		playerArgs: map[string][]string{
			"p01": {"--addr", fmt.Sprintf("127.0.0.1:%d", playerPort), "--advertise", "http://" + proxy.addr() + "/mcp"},
			"p02": {"--think", fmt.Sprintf("%dms", think)},
			"p03": {"--think", slow},
		}})
	if got := run.players[0].url; got != "http://"+proxy.addr()+"/mcp" {
		t.Fatalf("p01 announces %s, want the proxy's %s", got, "http://"+proxy.addr()+"/mcp")
	}
	run.checkLeague(t, 1)

	rs := results(t, run)
	if len(rs) != 3 {
		t.Fatalf("%d results, want the 3 matches of 3 players", len(rs))
	}
	charged := map[string][]int64{}
	for _, r := range rs {
		moves := clockMoves(t, r)
		clocks := map[string]int64{r.players[0]: baseMS, r.players[1]: baseMS}
		for i, m := range moves {
			// The rule, from the record's own figures (each rounded down to the ms, so a
			// few ms apart at most).
			want := clocks[m.player] + incMS - (m.elapsed - m.network)
			if d := m.clock - want; d < -3 || d > 3 {
				t.Errorf("match %v move %d by %s: clock_ms %d, want %d (before %d + increment %d - (elapsed %d - network %d))",
					r.players, i+1, m.player, m.clock, want, clocks[m.player], incMS, m.elapsed, m.network)
			}
			clocks[m.player] = m.clock
			charged[m.player] = append(charged[m.player], m.elapsed-m.network)
			switch m.player {
			case "p01":
				if m.elapsed < 2*oneWay.Milliseconds() || m.rtt < 2*oneWay.Milliseconds() || m.network < 2*oneWay.Milliseconds()-20 || m.elapsed-m.network > slack {
					t.Errorf("match %v move %d by p01 (through the proxy): elapsed %d ms, round trip %d ms, network %d ms; want all about %d ms and at most %d ms charged",
						r.players, i+1, m.elapsed, m.rtt, m.network, 2*oneWay.Milliseconds(), slack)
				}
			case "p02":
				if m.elapsed < think || m.network > slack || m.elapsed-m.network < think-slack {
					t.Errorf("match %v move %d by p02 (beside the referee, thinking %d ms): elapsed %d ms, network %d ms; want at least %d ms charged",
						r.players, i+1, think, m.elapsed, m.network, think-slack)
				}
			case "p03":
				t.Errorf("match %v: p03, who thinks longer than its clock, made move %d", r.players, i+1)
			}
		}
		has := func(p string) bool { return r.players[0] == p || r.players[1] == p }
		switch {
		case has("p03"):
			if r.termination != "timeout" || r.loser != "p03" {
				t.Errorf("match %v: %s, loser %q; want p03 lost on time", r.players, r.termination, r.loser)
			}
		default:
			// p01 against p02: neither flags, as computed above.
			if r.termination != "normal" {
				t.Errorf("match %v (the proxied player against the one thinking as long beside the referee) ended %s, loser %q; want by play",
					r.players, r.termination, r.loser)
			}
		}
	}
	// The computed bound behind p02's "never flags": its worst game.
	if worst := int64(maxMove) * (think + slack); worst >= baseMS {
		t.Fatalf("the numbers are wrong: p02 could be charged %d ms of a %d ms clock", worst, baseMS)
	}
	var sum01, sum02 int64
	for _, c := range charged["p01"] {
		sum01 += c
	}
	for _, c := range charged["p02"] {
		sum02 += c
	}
	if len(charged["p01"]) == 0 || len(charged["p02"]) == 0 {
		t.Fatalf("moves charged: p01 %v, p02 %v; want some of each", charged["p01"], charged["p02"])
	}
	t.Logf("charged a move: p01 through the proxy %v ms (mean %d), p02 thinking %d ms beside the referee %v ms (mean %d)",
		charged["p01"], sum01/int64(len(charged["p01"])), think, charged["p02"], sum02/int64(len(charged["p02"])))
	for _, r := range rs {
		for _, m := range clockMoves(t, r) {
			t.Logf("match %v: %s elapsed %d network %d clock %d", r.players, m.player, m.elapsed, m.network, m.clock)
		}
	}
}
