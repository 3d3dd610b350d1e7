package server_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/league/server"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// inFlight starts a League Manager on clock with the drain given, with one match in
// flight (oneMatchInFlight).
func inFlight(t *testing.T, dir string, clock *fakeClock, drain time.Duration, edit func(*server.Options)) (*lmRun, *wire, *fakeRef) {
	t.Helper()
	lm := startServer(t, dir, func(o *server.Options) {
		o.Clock, o.Drain = clock, drain
		if edit != nil {
			edit(o)
		}
	})
	w, ref := oneMatchInFlight(t, lm)
	return lm, w, ref
}

// oneMatchInFlight registers ref1 (a fake referee that acknowledges and never reports),
// p01 and p02 with lm, starts the league and waits for its one match to be in progress.
func oneMatchInFlight(t *testing.T, lm *lmRun) (*wire, *fakeRef) {
	t.Helper()
	w := newWire(t, lm)
	ref := newFakeRef(t, w.v, "ref1")
	w.ok(regReferee(t, "ref1", ref.url()))
	w.ok(regPlayer(t, "p01"))
	w.ok(regPlayer(t, "p02"))
	w.ok(adminStartMsg(t, e2eAdminToken))
	lm.waitStatus(t, "the match in progress", func(s map[string]any) bool { return matchesIn(s, "IN_PROGRESS") == 1 })
	return w, ref
}

// drains checks that the League Manager is shutting down and does not end while the
// drain deadline has not passed, then passes it.
func drains(t *testing.T, lm *lmRun, clock *fakeClock, drain time.Duration) {
	t.Helper()
	select {
	case <-lm.srv.ShuttingDown():
	case <-time.After(10 * time.Second):
		t.Fatal("the shutdown did not begin")
	}
	clock.armed(t, drain, "the drain deadline")
	if s := lm.status(t); s["shutting_down"] != true {
		t.Errorf("status while draining %v, want shutting_down", s)
	}
	select {
	case <-lm.srv.Done():
		t.Fatalf("the League Manager ended before the %v drain of the match in flight", drain)
	case <-time.After(50 * time.Millisecond):
	}
	clock.Advance(drain)
}

// shutdownRecorded checks what a graceful shutdown with one match in flight leaves:
// the league still ACTIVE, the match CANCELLED, the shutdown and its reason in meta,
// LEAGUE_SHUTDOWN to the three agents, no secret in the audit log.
func shutdownRecorded(t *testing.T, dir string, w *wire, reason string) {
	t.Helper()
	db := openRO(t, filepath.Join(dir, "league.db"))
	var league, shutdownAt, gotReason string
	var cancelled int
	if err := db.QueryRow(`SELECT (SELECT status FROM leagues), (SELECT count(*) FROM matches WHERE status = 'CANCELLED'),
		(SELECT coalesce(max(value), '') FROM meta WHERE key = 'shutdown_at'),
		(SELECT coalesce(max(value), '') FROM meta WHERE key = 'shutdown_reason')`).Scan(&league, &cancelled, &shutdownAt, &gotReason); err != nil {
		t.Fatal(err)
	}
	if league != "ACTIVE" || cancelled != 1 || shutdownAt == "" {
		t.Errorf("after the shutdown: league %s, %d cancelled, shutdown_at %q; want ACTIVE, 1, a time", league, cancelled, shutdownAt)
	}
	if gotReason != reason {
		t.Errorf("shutdown_reason %q, want %q", gotReason, reason)
	}
	audit, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(audit), `"message_type":"LEAGUE_SHUTDOWN"`); n < 3 {
		t.Errorf("%d LEAGUE_SHUTDOWN messages in the audit log, want one to each of 3 agents", n)
	}
	w.noSecretIn("audit log", audit)
}

// resumes restarts the League Manager on dir's database and checks that the cancelled
// match is assigned again, then stops it.
func resumes(t *testing.T, dir string, w *wire, ref *fakeRef) {
	t.Helper()
	again := startLM(t, dir)
	w.lm = again
	again.waitStatus(t, "the match in progress again", func(s map[string]any) bool { return matchesIn(s, "IN_PROGRESS") == 1 })
	ref.mu.Lock()
	n := len(ref.got)
	ref.mu.Unlock()
	if n != 2 {
		t.Errorf("the referee got %d assignments, want 2 (before and after the restart)", n)
	}
	again.stop()
}

// An authenticated ADMIN_SHUTDOWN_REQUEST shuts the League Manager down gracefully: it
// tells the agents, waits the drain for the match in flight, cancels it, Wait returns
// nil, and a restart on the same database plays the match again. (Moved from the
// `league serve` binary test; SIGTERM is in process_test.go.)
func TestShutdownOnAdminRequest(t *testing.T) {
	const drain = 45 * time.Second
	dir, clock := t.TempDir(), newFakeClock()
	lm, w, ref := inFlight(t, dir, clock, drain, nil)

	msg := msgOf(t, protocol.AdminShutdownRequest, protocol.SenderAdmin, map[string]any{"reason": "end of the day"})
	msg.Envelope.AuthToken = e2eAdminToken
	var p map[string]string
	if err := w.ok(msg).Decode(&p); err != nil || p["status"] != "shutting_down" || p["league_status"] != "ACTIVE" {
		t.Errorf("answer %v (%v), want shutting_down / ACTIVE", p, err)
	}
	drains(t, lm, clock, drain)
	lm.ended()
	shutdownRecorded(t, dir, w, "end of the day")
	resumes(t, dir, w, ref)
}

// The end of ctx shuts the League Manager down the same way, with Options.StopReason as
// the reason.
func TestShutdownOnContext(t *testing.T) {
	const drain = 45 * time.Second
	dir, clock := t.TempDir(), newFakeClock()
	lm, w, ref := inFlight(t, dir, clock, drain, func(o *server.Options) { o.StopReason = "end of the test" })
	lm.cancel()
	drains(t, lm, clock, drain)
	lm.ended()
	shutdownRecorded(t, dir, w, "end of the test")
	if !strings.Contains(lm.stderr.String(), "shutting down") {
		t.Errorf("stderr does not log the shutdown:\n%s", lm.stderr)
	}
	resumes(t, dir, w, ref)
}

// CutDrain ends the drain at once, whether ctx or the admin began the shutdown, and its
// cause is logged; the match in flight is cancelled as after a full drain.
func TestDrainCutShort(t *testing.T) {
	const drain = time.Hour
	for _, tc := range []struct {
		name, reason string
		stop         func(t *testing.T, lm *lmRun, w *wire)
	}{
		{"stopped by ctx", server.DefaultStopReason, func(_ *testing.T, lm *lmRun, _ *wire) { lm.cancel() }},
		{"stopped by the admin", "shutdown requested by the admin", func(t *testing.T, _ *lmRun, w *wire) {
			msg := msgOf(t, protocol.AdminShutdownRequest, protocol.SenderAdmin, map[string]any{})
			msg.Envelope.AuthToken = e2eAdminToken
			w.ok(msg)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, clock := t.TempDir(), newFakeClock()
			cutCtx, cut := context.WithCancelCause(context.Background())
			defer cut(nil)
			lm, w, _ := inFlight(t, dir, clock, drain, func(o *server.Options) { o.CutDrain = cutCtx })
			tc.stop(t, lm, w)
			<-lm.srv.ShuttingDown()
			clock.armed(t, drain, "the drain deadline")
			cut(errors.New("operator impatient"))
			// The clock does not move: only CutDrain can end the drain.
			lm.ended()
			shutdownRecorded(t, dir, w, tc.reason)
			if !strings.Contains(lm.stderr.String(), "operator impatient: the drain is cut short") {
				t.Errorf("stderr does not say why the drain was cut short:\n%s", lm.stderr)
			}
		})
	}
}

// With no match in flight the shutdown does not wait for the drain.
func TestShutdownWithNothingInFlightEndsAtOnce(t *testing.T) {
	clock := newFakeClock()
	lm := startServer(t, t.TempDir(), func(o *server.Options) { o.Clock, o.Drain = clock, time.Hour })
	lm.cancel()
	lm.ended() // the clock never moves
}

// Options that cannot run a league are refused with an error that says why, before
// anything is created where the database would be.
func TestBadOptions(t *testing.T) {
	cfg, err := config.Load(configPath(t), game.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		edit  func(*server.Options)
		wants []string
		is    error
	}{
		{"no configuration", func(o *server.Options) { o.ConfigPath = "" }, []string{"no configuration", "Config or ConfigPath"}, nil},
		{"two configurations", func(o *server.Options) { o.Config = cfg }, []string{"both Config and ConfigPath"}, nil},
		{"missing league.yaml", func(o *server.Options) { o.ConfigPath = filepath.Join(t.TempDir(), "league.yaml") }, []string{"league.yaml"}, nil},
		{"negative drain", func(o *server.Options) { o.Drain = -time.Second }, []string{"drain must not be negative, got -1s"}, server.ErrNegativeDrain},
		{"min players out of range", func(o *server.Options) { o.Overrides.MinPlayers = 1 }, []string{"registration.min_players", "must be between 2 and 1000, got 1"}, nil},
		{"game not registered", func(o *server.Options) { o.Overrides.GameType = "no_such_game" }, []string{"league.game_type", `"no_such_game" is not in game_registry.yaml`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := baseOptions(t, dir, &syncBuffer{})
			tc.edit(&opts)
			srv, err := server.Start(context.Background(), opts)
			if err == nil {
				srv.Wait()
				t.Fatal("Start succeeded")
			}
			for _, want := range tc.wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("%d files created despite the bad options", len(entries))
			}
		})
	}
}

// Start fails cleanly when the address is taken or the database is of another schema
// version: the error says so, and nothing it opened stays open (goleak checks the
// goroutines), so the same files serve a League Manager right after.
func TestStartFailsCleanly(t *testing.T) {
	t.Run("address in use", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		dir := t.TempDir()
		opts := baseOptions(t, dir, &syncBuffer{})
		opts.Addr = ln.Addr().String()
		if _, err := server.Start(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "listen on "+ln.Addr().String()) {
			t.Fatalf("Start on a taken address: %v, want a listen error", err)
		}
		startLM(t, dir).stop()
	})
	t.Run("database of another schema version", func(t *testing.T) {
		dir := t.TempDir()
		oldSchemaDB(t, dir)
		_, err := server.Start(context.Background(), baseOptions(t, dir, &syncBuffer{}))
		for _, want := range oldSchemaRefused {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v does not say %q", err, want)
			}
		}
	})
}

// oldSchemaDB writes dir/league.db as a database of schema version 7, which the League
// Manager refuses, saying oldSchemaRefused.
func oldSchemaDB(t *testing.T, dir string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "league.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"CREATE TABLE leagues (league_id TEXT)", "PRAGMA user_version = 7"} {
		if _, err := db.ExecContext(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
}

var oldSchemaRefused = []string{"schema version mismatch", "user_version 7", fmt.Sprintf("needs %d", store.SchemaVersion)}

// A Config given whole is used with the overrides applied to a copy; a Log given is used
// instead of the application log file.
func TestConfigAndLogGiven(t *testing.T) {
	cfg, err := config.Load(configPath(t), game.Default())
	if err != nil {
		t.Fatal(err)
	}
	before := cfg.League.LeagueID
	var logged syncBuffer
	log := zerolog.New(&logged)
	dir := t.TempDir()
	lm := startServer(t, dir, func(o *server.Options) {
		o.ConfigPath, o.Config, o.Log = "", cfg, &log
		o.Overrides.LeagueID = "league-given"
	})
	if s := lm.status(t); s["league_id"] != "league-given" {
		t.Errorf("league_id %v, want the override league-given", s["league_id"])
	}
	lm.stop()
	if cfg.League.LeagueID != before {
		t.Errorf("the Config given was modified: league_id %q, was %q", cfg.League.LeagueID, before)
	}
	if !strings.Contains(logged.String(), "league manager listening") || lm.stderr.String() != "" {
		t.Errorf("log given holds %q, Stderr %q; want the log in the logger given only", logged.String(), lm.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "league.log")); err == nil {
		t.Error("an application log file was written although a Log was given")
	}
}

// Without Options.AdminToken the token is kept in admin.token beside the database, mode
// 0600, and a restart uses the same one.
func TestAdminTokenBesideTheDatabase(t *testing.T) {
	dir := t.TempDir()
	noToken := func(o *server.Options) { o.AdminToken = "" }
	startServer(t, dir, noToken).stop()
	path := server.TokenPath(filepath.Join(dir, "league.db"))
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("admin.token mode %v, want 0600", st.Mode().Perm())
	}
	tok, err := server.LoadAdminToken(filepath.Join(dir, "league.db"), false)
	if err != nil || len(tok) != 48 {
		t.Fatalf("admin token %q (%v), want 48 hex digits", tok, err)
	}
	lm := startServer(t, dir, noToken)
	w := newWire(t, lm)
	asAdmin := func(token string) *protocol.Message {
		m := msgOf(t, protocol.QueryStandings, protocol.SenderAdmin, map[string]any{})
		m.Envelope.AuthToken = token
		return m
	}
	w.refused(asAdmin(e2eAdminToken), protocol.ReasonUnauthorized)
	if ans := w.ok(asAdmin(tok)); ans.Envelope.MessageType != protocol.StandingsResponse {
		t.Errorf("the admin with the kept token got %s, want STANDINGS_RESPONSE", ans.Envelope.MessageType)
	}
	lm.stop()
	if again, _ := server.LoadAdminToken(filepath.Join(dir, "league.db"), true); again != tok {
		t.Errorf("token after the restart %q, want %q", again, tok)
	}
	if tok, err := server.LoadAdminToken(filepath.Join(t.TempDir(), "league.db"), false); tok != "" || err != nil {
		t.Errorf("no token file: got %q (%v), want none", tok, err)
	}
	// The admin commands send LEAGUE_ADMIN_TOKEN when set, else the kept token.
	if got, err := server.AdminTokenFor(" from-env ", filepath.Join(dir, "league.db")); got != "from-env" || err != nil {
		t.Errorf("token with the variable set: %q (%v), want from-env", got, err)
	}
	if got, err := server.AdminTokenFor("", filepath.Join(dir, "league.db")); got != tok || err != nil {
		t.Errorf("token without the variable: %q (%v), want the kept %q", got, err, tok)
	}
	if _, err := server.AdminTokenFor("", filepath.Join(t.TempDir(), "league.db")); err == nil || !strings.Contains(err.Error(), server.AdminTokenEnv) {
		t.Errorf("no token anywhere: %v, want an error naming %s", err, server.AdminTokenEnv)
	}
}
