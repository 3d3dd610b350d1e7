package e2e

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/league/web"
	"github.com/agentleague/agentleague/protocol"
	"github.com/chromedp/chromedp"
)

// chromiumPath is Debian's chromium, which make deps installs.
const chromiumPath = "/usr/bin/chromium"

// artifactDir is where tests leave files for people to look at: $AGENT_LEAGUE_ARTIFACTS
// when set, else the test's temporary folder.
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("AGENT_LEAGUE_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser starts a headless chromium with a new empty profile; it stops when the test
// ends.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("the browser test needs chromium at %s (make deps installs it: apt-get install -y chromium): %v", chromiumPath, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	// The first action starts the browser.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// do runs actions in the page within 20 s.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	actx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(actx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// poll waits until expr is true in the page, or fails the test after limit.
func poll(t *testing.T, ctx context.Context, what, expr string, limit time.Duration) {
	t.Helper()
	if err := waitFor(ctx, expr, limit); err != nil {
		t.Fatalf("the browser did not see %s within %v: %v", what, limit, err)
	}
}

// screenshot saves a PNG of the page as an artifact and logs its path.
func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// liveAndRated: the dashboard's live board shows a mark of a running match, the ratings
// table rates at least one player, and two matches are in the standings (round 1 done).
const liveAndRated = `[...document.querySelectorAll("#standings tbody tr")].reduce((n, r) => n + Number(r.children[6].textContent), 0) >= 4 && !document.getElementById("live-box").hidden && document.querySelectorAll("#live-board .cell.X, #live-board .cell.O").length > 0 && document.getElementById("live-status").textContent.startsWith("step ") && [...document.querySelectorAll("#ratings td.rating")].some((td) => td.textContent !== "–")`

// Points of the standings table as the page shows them.
const standingsPoints = `[...document.querySelectorAll("#standings tbody tr")].map((r) => Number(r.children[2].textContent))`

// A real league watched in a real browser: the dashboard's standings change as results
// arrive over the event stream, and the page of a running tic-tac-toe match draws the
// moves as they are made.
func TestDashboardInABrowser(t *testing.T) {
	ctx := browser(t)
	dir := artifactDir(t)
	slow := map[string]string{}
	for i := 1; i <= 4; i++ {
		slow[fmt.Sprintf("p%02d", i)] = "slow:200ms"
	}
	// p01 thinks 2 s a move, so a match of its is in progress for some 10 s of each
	// round: a loaded machine cannot play the league out before the page finds one.
	slow["p01"] = "slow:2s"
	run := startLeague(t, leagueOpts{players: 4, referees: 2, seed: 31, faults: slow, hold: true})
	base := run.lm.base()

	do(t, ctx, "open the dashboard", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#live.on")))
	poll(t, ctx, "four players with no points", standingsPoints+`.join() === "0,0,0,0"`, 5*time.Second)
	run.admin(t, protocol.AdminStartLeagueRequest, map[string]any{})
	// The page is never reloaded: what changes arrives over the event stream.
	poll(t, ctx, "a player with points", `Math.max(...`+standingsPoints+`) > 0`, 30*time.Second)
	// The live board follows a running match from the move events; p01's slow matches
	// keep one running after the first results, so the page shows all three together.
	poll(t, ctx, "two results, a rated player and a move on the live board", liveAndRated, 60*time.Second)
	screenshot(t, ctx, dir, "dashboard.png")
	if path := os.Getenv("AGENT_LEAGUE_DOCS_SCREENSHOT"); path != "" {
		screenshot(t, ctx, filepath.Dir(path), filepath.Base(path))
	}

	// Open a running match from the dashboard and watch its board fill. A match may end
	// before its page shows a move; then the next one is tried.
	const running = `(() => { const b = [...document.querySelectorAll("#matches .badge.IN_PROGRESS")]; if (!b.length) return ""; return b[0].closest("tr").querySelector("a").href; })()`
	const marked = `document.querySelectorAll(".board.ttt .cell.X, .board.ttt .cell.O").length > 0 && document.getElementById("result").textContent === "Status: IN_PROGRESS"`
	for attempt := 1; ; attempt++ {
		do(t, ctx, "open the dashboard", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#live.on")))
		poll(t, ctx, "a match in progress", running+` !== ""`, 30*time.Second)
		href, err := chromedp.Run(ctx, chromedp.Evaluate[string](running))
		if err != nil {
			t.Fatal(err)
		}
		do(t, ctx, "open "+href, chromedp.Navigate(href), chromedp.WaitVisible(chromedp.CSS("#board")))
		err = waitFor(ctx, marked, 5*time.Second)
		if err == nil {
			t.Logf("the page of %s drew a move while the match was running (attempt %d)", href, attempt)
			break
		}
		if attempt == 3 {
			t.Fatalf("no running match page showed an X or an O: %v", err)
		}
	}
	screenshot(t, ctx, dir, "match.png")
	run.waitCompleted(t, 60*time.Second)
}

// Under a clock, the dashboard's live board and the page of a running match show both
// players' clocks as the moves arrive, before the result. Both players think 1 s a move
// under 60+0, so a tic-tac-toe match runs for several seconds and nobody runs out.
func TestClocksInABrowser(t *testing.T) {
	ctx := browser(t)
	dir := artifactDir(t)
	cfg := fastConfig(t, func(league, _ map[string]any) {
		league["time_control"] = map[string]any{"clock": "60+0"}
	})
	run := startLeague(t, leagueOpts{players: 2, referees: 1, seed: 38, config: cfg, hold: true,
		faults: map[string]string{"p01": "slow:1s", "p02": "slow:1s"}})
	base := run.lm.base()
	do(t, ctx, "open the dashboard", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#live.on")))
	run.admin(t, protocol.AdminStartLeagueRequest, map[string]any{})
	// "step 3 · p01 0:58.9 · p02 0:58.9": a clock of each player, as m:ss.t.
	const twoClocks = `/^step \d+ · p0\d \d+:\d\d\.\d · p0\d \d+:\d\d\.\d$/.test(document.getElementById("live-status").textContent)`
	poll(t, ctx, "both clocks on the live board", twoClocks, 30*time.Second)
	screenshot(t, ctx, dir, "dashboard-clocks.png")

	matches, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("live-match").href`))
	if err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "open "+matches, chromedp.Navigate(matches), chromedp.WaitVisible(chromedp.CSS("#board")))
	const running = `document.getElementById("result").textContent === "Status: IN_PROGRESS"`
	const clocks = `[...document.querySelectorAll("#clocks .clock b")].filter((b) => /^\d+:\d\d\.\d$/.test(b.textContent)).length === 2`
	poll(t, ctx, "both clocks on the page of the running match", running+" && "+clocks, 10*time.Second)
	screenshot(t, ctx, dir, "match-clocks.png")
	run.waitCompleted(t, 60*time.Second)
}

var errNotSeen = errors.New("not seen in time")

// waitFor evaluates expr every 50 ms until it is true; errNotSeen after limit.
func waitFor(ctx context.Context, expr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errNotSeen
}

// dashboardDOM is what the dashboard shows of the standings, ratings, crosstable and
// bracket, read from the page.
type dashboardDOM struct {
	Format        string     `json:"format"`
	Ranking       string     `json:"ranking"`
	StandingsHead []string   `json:"standingsHead"`
	Standings     [][]string `json:"standings"`
	Ratings       []struct {
		Player   string     `json:"player"`
		Rating   string     `json:"rating"`
		Interval string     `json:"interval"`
		Ranks    string     `json:"ranks"`
		Bar      bool       `json:"bar"`
		Dot      bool       `json:"dot"`
		Track    [2]float64 `json:"track"` // left and right edge of the row's track
		CI       [2]float64 `json:"ci"`    // left and right edge of the interval bar
		At       float64    `json:"at"`    // centre of the point estimate's dot
	} `json:"ratings"`
	CrossHead []string `json:"crossHead"`
	Cross     []struct {
		Player  string   `json:"player"`
		Cells   []string `json:"cells"`   // "x" on the shaded diagonal
		Classes []string `json:"classes"` // win, loss, draw or ""
	} `json:"cross"`
	BracketShown bool `json:"bracketShown"`
	Stages       []struct {
		Name     string `json:"name"`
		Pairings []struct {
			Players []string `json:"players"`
			Winner  string   `json:"winner"`
			How     string   `json:"how"`
		} `json:"pairings"`
	} `json:"stages"`
	Champion string `json:"champion"`
}

const readDashboard = `(() => {
  const txt = (e) => e ? e.textContent.trim() : "";
  const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.right]; };
  return {
    format: txt(document.getElementById("format")),
    ranking: txt(document.getElementById("ranking")),
    standingsHead: [...document.querySelectorAll("#standings thead th")].map(txt),
    standings: [...document.querySelectorAll("#standings tbody tr")].map((r) => [...r.children].map(txt)),
    ratings: [...document.querySelectorAll("#ratings tbody tr")].map((r) => {
      const ci = r.querySelector(".track .ci"), pt = r.querySelector(".track .pt"), tr = r.querySelector(".track");
      return {
        player: txt(r.querySelector("td.player")), rating: txt(r.querySelector("td.rating")),
        interval: txt(r.querySelector("td.interval")), ranks: txt(r.querySelector("td.ranks")),
        bar: !!ci && ci.getBoundingClientRect().width > 0, dot: !!pt,
        track: tr ? box(tr) : [0, 0], ci: ci ? box(ci) : [0, 0],
        at: pt ? (pt.getBoundingClientRect().left + pt.getBoundingClientRect().right) / 2 : 0,
      };
    }),
    crossHead: [...document.querySelectorAll("#crosstable thead th.xc")].map(txt),
    cross: [...document.querySelectorAll("#crosstable tbody tr")].map((r) => {
      const cells = [...r.querySelectorAll("td.xc")];
      return {
        player: txt(r.querySelector("td.player")),
        cells: cells.map((c) => c.classList.contains("diag") && getComputedStyle(c).backgroundImage !== "none" ? "x" : txt(c)),
        classes: cells.map((c) => ["win", "loss", "draw"].find((k) => c.classList.contains(k)) || ""),
      };
    }),
    bracketShown: !document.getElementById("bracket-box").hidden,
    stages: [...document.querySelectorAll("#bracket .stage")].map((s) => ({
      name: txt(s.querySelector(".stage-name")),
      pairings: [...s.querySelectorAll(".pairing")].map((p) => ({
        players: [...p.querySelectorAll(".side")].map((x) => txt(x.querySelector(".who"))),
        winner: txt(p.querySelector(".side.winner .who")),
        how: txt(p.querySelector(".how")),
      })),
    })),
    champion: txt(document.querySelector("#champion strong")),
  };
})()`

// leagueView is GET /api/league.
func leagueView(t *testing.T, run *leagueRun) web.LeagueView {
	t.Helper()
	var v web.LeagueView
	getJSON(t, run.lm.base()+"/api/league", &v)
	return v
}

// dashboardAgrees reads the page until check finds nothing wrong with what it shows, and
// fails the test with the last problems after limit.
func dashboardAgrees(t *testing.T, ctx context.Context, limit time.Duration, check func(d dashboardDOM) []string) dashboardDOM {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		d, err := chromedp.Run(ctx, chromedp.Evaluate[dashboardDOM](readDashboard))
		if err != nil {
			t.Fatalf("read the dashboard: %v", err)
		}
		problems := check(d)
		if len(problems) == 0 {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dashboard does not show the league's view:\n  %s", strings.Join(problems, "\n  "))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ratingProblems compares the ratings section with the ratings of the view: the same
// rows, each with an interval bar and a dot on one scale shared by every row.
func ratingProblems(d dashboardDOM, v web.LeagueView) []string {
	var p []string
	if len(d.Ratings) != len(v.Ratings) || len(v.Ratings) == 0 {
		return append(p, fmt.Sprintf("%d rating rows, the view has %d", len(d.Ratings), len(v.Ratings)))
	}
	for i, r := range v.Ratings {
		got := d.Ratings[i]
		rating := strconv.Itoa(int(math.Round(r.Rating)))
		interval := strconv.Itoa(int(math.Round(r.Low))) + "–" + strconv.Itoa(int(math.Round(r.High)))
		if r.Games == 0 {
			rating, interval = "–", "–"
		}
		if got.Player != r.PlayerID || got.Rating != rating || got.Interval != interval {
			p = append(p, fmt.Sprintf("rating row %d shows %s %s %s, the view has %s %s %s", i+1, got.Player, got.Rating, got.Interval, r.PlayerID, rating, interval))
			continue
		}
		if r.Games == 0 {
			continue
		}
		if !got.Bar || !got.Dot {
			p = append(p, fmt.Sprintf("rating row %d (%s) has no interval bar or no dot", i+1, r.PlayerID))
			continue
		}
		const slack = 1.5 // pixels
		if got.CI[0] < got.Track[0]-slack || got.CI[1] > got.Track[1]+slack {
			p = append(p, fmt.Sprintf("the interval bar of %s (%v) is outside its track (%v)", r.PlayerID, got.CI, got.Track))
		}
		if got.At < got.CI[0]-slack || got.At > got.CI[1]+slack {
			p = append(p, fmt.Sprintf("the dot of %s (%v) is outside its interval bar (%v)", r.PlayerID, got.At, got.CI))
		}
		// One scale for every row: a better rating is never drawn left of a worse one.
		if i > 0 && v.Ratings[i-1].Games > 0 && got.At > d.Ratings[i-1].At+slack {
			p = append(p, fmt.Sprintf("%s is rated below %s but drawn right of it", r.PlayerID, v.Ratings[i-1].PlayerID))
		}
	}
	return p
}

// crosstableProblems compares the crosstable with the view's: N×N in rank order, a
// shaded diagonal, each cell the scores of the row player against the column player.
func crosstableProblems(d dashboardDOM, v web.LeagueView) []string {
	var p []string
	ps := v.Crosstable.Players
	if len(d.Cross) != len(ps) || len(d.CrossHead) != len(ps) || len(ps) == 0 {
		return append(p, fmt.Sprintf("crosstable of %d rows and %d columns, the view has %d players", len(d.Cross), len(d.CrossHead), len(ps)))
	}
	ones := 0
	for i, row := range d.Cross {
		if row.Player != ps[i] || len(row.Cells) != len(ps) {
			p = append(p, fmt.Sprintf("crosstable row %d is %s with %d cells, want %s with %d", i+1, row.Player, len(row.Cells), ps[i], len(ps)))
			continue
		}
		for j, cell := range row.Cells {
			want := "x"
			if i != j {
				want = strings.Join(v.Crosstable.Cells[i][j], " ")
			}
			if cell != want {
				p = append(p, fmt.Sprintf("crosstable %s vs %s shows %q, want %q", ps[i], ps[j], cell, want))
			}
			if cell == "1" {
				ones++
				if row.Classes[j] != "win" {
					p = append(p, fmt.Sprintf("crosstable %s vs %s: a win is coloured %q", ps[i], ps[j], row.Classes[j]))
				}
			}
			if cell == "0" && row.Classes[j] != "loss" {
				p = append(p, fmt.Sprintf("crosstable %s vs %s: a loss is coloured %q", ps[i], ps[j], row.Classes[j]))
			}
		}
	}
	if ones == 0 {
		p = append(p, "no crosstable cell shows a win")
	}
	return p
}

// standingsProblems compares the standings with the view's, tie-break columns included.
func standingsProblems(d dashboardDOM, v web.LeagueView) []string {
	var p []string
	wantHead := []string{"#", "Player", "Pts", "W", "D", "L", "Played", "SB", "H2H"}
	if !slices.Equal(d.StandingsHead, wantHead) {
		p = append(p, fmt.Sprintf("standings columns %q, want %q", d.StandingsHead, wantHead))
	}
	if len(d.Standings) != len(v.Standings) {
		return append(p, fmt.Sprintf("%d standings rows, the view has %d", len(d.Standings), len(v.Standings)))
	}
	for i, r := range v.Standings {
		want := []string{strconv.Itoa(r.Rank), r.PlayerID, strconv.Itoa(r.Points), strconv.Itoa(r.Wins), strconv.Itoa(r.Draws), strconv.Itoa(r.Losses),
			strconv.Itoa(r.MatchesPlayed), strconv.FormatFloat(math.Round(r.SonnebornBerger*100)/100, 'f', -1, 64), strconv.Itoa(r.HeadToHead)}
		if !slices.Equal(d.Standings[i], want) {
			p = append(p, fmt.Sprintf("standings row %d shows %q, want %q", i+1, d.Standings[i], want))
		}
	}
	return p
}

// A Swiss league with tie-breaks watched from before its start: without a reload, the
// page ends up showing the tie-break columns, the ratings with their intervals and the
// crosstable of GET /api/league.
func TestDashboardRatingsAndCrosstable(t *testing.T) {
	ctx := browser(t)
	dir := artifactDir(t)
	cfg := fastConfig(t, func(league, _ map[string]any) {
		league["scheduling"] = map[string]any{"algorithm": "swiss", "rounds": 3}
		league["ranking"] = map[string]any{"tiebreaks": []string{"sonneborn_berger", "head_to_head"}}
	})
	run := startLeague(t, leagueOpts{players: 7, referees: 2, seed: 41, config: cfg, hold: true})
	do(t, ctx, "open the dashboard", chromedp.Navigate(run.lm.base()+"/"), chromedp.WaitVisible(chromedp.CSS("#live.on")))
	// Before any game nobody is rated: a dash, no interval bar.
	dashboardAgrees(t, ctx, 10*time.Second, func(d dashboardDOM) []string {
		if len(d.Ratings) != 7 {
			return []string{fmt.Sprintf("%d rating rows before the start, want 7", len(d.Ratings))}
		}
		var p []string
		for _, r := range d.Ratings {
			if r.Rating != "–" || r.Interval != "–" || r.Ranks != "–" || r.Bar || r.Dot {
				p = append(p, fmt.Sprintf("%s is shown rated before any game: %q %q %q, bar %v", r.Player, r.Rating, r.Interval, r.Ranks, r.Bar))
			}
		}
		return p
	})
	screenshot(t, ctx, dir, "dashboard-before.png")
	run.admin(t, protocol.AdminStartLeagueRequest, map[string]any{})
	run.waitCompleted(t, 120*time.Second)
	v := leagueView(t, run)
	if v.State != "COMPLETED" || len(v.Ratings) != 7 || len(v.Crosstable.Players) != 7 {
		t.Fatalf("the view of the completed league: state %s, %d ratings, %d crosstable players", v.State, len(v.Ratings), len(v.Crosstable.Players))
	}
	d := dashboardAgrees(t, ctx, 20*time.Second, func(d dashboardDOM) []string {
		p := append(standingsProblems(d, v), ratingProblems(d, v)...)
		p = append(p, crosstableProblems(d, v)...)
		if d.Format != "Swiss, 3 rounds" {
			p = append(p, fmt.Sprintf("format %q, want %q", d.Format, "Swiss, 3 rounds"))
		}
		if !strings.Contains(d.Ranking, "ranked by points, then sonneborn_berger, head_to_head") {
			p = append(p, fmt.Sprintf("the ranking line %q does not name the tie-breaks", d.Ranking))
		}
		if d.BracketShown {
			p = append(p, "a bracket is shown for a Swiss league")
		}
		return p
	})
	t.Logf("ratings: first %s %s (%s), crosstable %d×%d", d.Ratings[0].Player, d.Ratings[0].Rating, d.Ratings[0].Interval, len(d.Cross), len(d.CrossHead))
	screenshot(t, ctx, dir, "dashboard-ratings.png")

	// With every player on one page there is no pager.
	if shown, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("pager").offsetParent !== null`)); err != nil || shown {
		t.Errorf("the pager is shown (%v) with all 7 players on the page", err)
	}
	// Pages of 3: the standings, the crosstable and the ratings show three players, the
	// pager says which; next shows the following three, and finding the last player shows
	// its page.
	const page = `[document.getElementById("page-of").textContent, document.querySelectorAll("#standings tbody tr").length, document.querySelectorAll("#crosstable tbody tr").length, document.querySelectorAll("#ratings tbody tr").length, (document.querySelector("#standings tbody tr td.player") || {}).textContent].join("|")`
	do(t, ctx, "open the dashboard in pages of 3", chromedp.Navigate(run.lm.base()+"/?page_size=3"), chromedp.WaitVisible(chromedp.CSS("#pager")))
	second := v.Standings[3].PlayerID
	poll(t, ctx, "the first page", page+` === "players 1–3 of 7|3|3|3|`+v.Standings[0].PlayerID+`"`, 10*time.Second)
	do(t, ctx, "next page", chromedp.Click(chromedp.CSS("#page-next")))
	poll(t, ctx, "the second page", page+` === "players 4–6 of 7|3|3|3|`+second+`"`, 10*time.Second)
	last := v.Standings[6].PlayerID
	do(t, ctx, "find the last player", chromedp.SetValue(chromedp.CSS("#page-player"), last), chromedp.Click(chromedp.CSS("#page-find button")))
	poll(t, ctx, "the last page", page+` === "players 7–7 of 7|1|1|1|`+last+`"`, 10*time.Second)
	screenshot(t, ctx, dir, "dashboard-page.png")
}

// A knockout of 8 players, best of 3: the page shows the bracket's three stages as the
// view has them, every winner highlighted, and the winner of the final.
func TestDashboardKnockoutBracket(t *testing.T) {
	ctx := browser(t)
	dir := artifactDir(t)
	cfg := fastConfig(t, func(league, _ map[string]any) {
		league["scheduling"] = map[string]any{"algorithm": "knockout", "best_of": 3}
	})
	run := startLeague(t, leagueOpts{players: 8, referees: 2, seed: 43, config: cfg, hold: true})
	do(t, ctx, "open the dashboard", chromedp.Navigate(run.lm.base()+"/"), chromedp.WaitVisible(chromedp.CSS("#live.on")))
	run.admin(t, protocol.AdminStartLeagueRequest, map[string]any{})
	run.waitCompleted(t, 120*time.Second)
	v := leagueView(t, run)
	if len(v.Bracket) != 3 {
		t.Fatalf("the view's bracket has %d stages, want 3", len(v.Bracket))
	}
	final := v.Bracket[2]
	if len(final.Pairings) != 1 || final.Pairings[0].Winner == "" {
		t.Fatalf("the view's final is undecided: %+v", final)
	}
	d := dashboardAgrees(t, ctx, 20*time.Second, func(d dashboardDOM) []string {
		p := ratingProblems(d, v)
		if !d.BracketShown || len(d.Stages) != len(v.Bracket) {
			return append(p, fmt.Sprintf("bracket shown %v with %d stages, want %d", d.BracketShown, len(d.Stages), len(v.Bracket)))
		}
		for i, st := range v.Bracket {
			got := d.Stages[i]
			if got.Name != st.Name || len(got.Pairings) != len(st.Pairings) {
				p = append(p, fmt.Sprintf("stage %d shows %q with %d pairings, want %q with %d", i+1, got.Name, len(got.Pairings), st.Name, len(st.Pairings)))
				continue
			}
			for k, pr := range st.Pairings {
				g := got.Pairings[k]
				if !slices.Equal(g.Players, pr.Players[:]) || g.Winner != pr.Winner || pr.Winner == "" || g.How == "" {
					p = append(p, fmt.Sprintf("%s pairing %d shows %q, winner %q (%s); want %q, winner %q (%s)", st.Name, k+1, g.Players, g.Winner, g.How, pr.Players, pr.Winner, pr.Decided))
				}
			}
		}
		if d.Champion != final.Pairings[0].Winner {
			p = append(p, fmt.Sprintf("the page names %q the winner, the final's winner is %q", d.Champion, final.Pairings[0].Winner))
		}
		if !strings.HasPrefix(d.Format, "Knockout, best of 3") {
			p = append(p, fmt.Sprintf("format %q, want Knockout, best of 3", d.Format))
		}
		return p
	})
	t.Logf("bracket: %s; winner %s", strings.Join(func() []string {
		var s []string
		for _, st := range d.Stages {
			s = append(s, st.Name)
		}
		return s
	}(), ", "), d.Champion)
	screenshot(t, ctx, dir, "dashboard-bracket.png")
}
