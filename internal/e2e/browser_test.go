package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

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
	run := startLeague(t, leagueOpts{players: 4, referees: 2, seed: 31, faults: slow, hold: true})
	base := run.lm.base()

	do(t, ctx, "open the dashboard", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#live.on")))
	poll(t, ctx, "four players with no points", standingsPoints+`.join() === "0,0,0,0"`, 5*time.Second)
	run.admin(t, protocol.AdminStartLeagueRequest, map[string]any{})
	// The page is never reloaded: what changes arrives over the event stream.
	poll(t, ctx, "a player with points", `Math.max(...`+standingsPoints+`) > 0`, 30*time.Second)
	screenshot(t, ctx, dir, "dashboard.png")

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
