package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/internal/logging"
	"github.com/agentleague/agentleague/league"
	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
)

// adminTokenEnv names the environment variable holding the admin token.
const adminTokenEnv = "LEAGUE_ADMIN_TOKEN"

// serve runs the League Manager until SIGTERM or SIGINT (ctx) or an authenticated
// ADMIN_SHUTDOWN_REQUEST, then shuts the league down gracefully (league/faults.go): a
// second signal during the drain cuts it short.
func serve(ctx context.Context, args []string) (err error) {
	fset := flag.NewFlagSet("league serve", flag.ContinueOnError)
	cfgPath := fset.String("config", "config/league.yaml", "league.yaml (game_registry.yaml and timeout_policy.yaml are read beside it)")
	addr := fset.String("addr", "127.0.0.1:8000", "address to listen on (port 0 picks a free port)")
	dbPath := fset.String("db", "", "SQLite database (default: database.path of league.yaml)")
	auditPath := fset.String("audit", "", "audit log (default: logging.audit_log_path of league.yaml)")
	logPath := fset.String("log", "", "application log (default: logging.application_log_path of league.yaml)")
	gameType := fset.String("game", "", "game of this league (overrides league.game_type)")
	seed := fset.Int64("seed", 0, "league seed (overrides league.seed when not 0)")
	leagueID := fset.String("league-id", "", "league id (overrides league.league_id)")
	window := fset.Float64("window", -1, "registration window in seconds (overrides registration.window_seconds)")
	minPlayers := fset.Int("min-players", 0, "overrides registration.min_players when not 0")
	drain := fset.Duration("drain", league.DefaultDrain, "on shutdown, how long matches in flight may finish before they are cancelled")
	if _, err := cli.Parse(fset, args); err != nil {
		return usageError{err}
	}
	cfg, err := config.Load(*cfgPath, game.Default())
	if err != nil {
		return err
	}
	if *gameType != "" {
		cfg.League.GameType = *gameType
	}
	if *seed != 0 {
		cfg.League.Seed = *seed
	}
	if *leagueID != "" {
		cfg.League.LeagueID = *leagueID
	}
	if *window >= 0 {
		cfg.Registration.WindowSeconds = *window
	}
	if *minPlayers != 0 {
		cfg.Registration.MinPlayers = *minPlayers
	}
	if *dbPath != "" {
		cfg.Database.Path = *dbPath
	}
	if *auditPath != "" {
		cfg.Logging.AuditLogPath = *auditPath
	}
	if *logPath != "" {
		cfg.Logging.ApplicationLogPath = *logPath
	}
	if *drain < 0 {
		return usageError{fmt.Errorf("--drain must not be negative, got %s", *drain)}
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	log, logFile, err := logging.Open("league_manager", cfg.Logging.ApplicationLogPath, cfg.Logging.LogLevel)
	if err != nil {
		return err
	}
	defer logFile.Close()

	adminToken, err := adminTokenFor(cfg.Database.Path, true)
	if err != nil {
		return err
	}
	store, err := store.Open(cfg.Database.Path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := store.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close database: %w", cerr)
		}
	}()
	auditLog, err := audit.Open(cfg.Logging.AuditLogPath, protocol.SenderLeagueManager)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := auditLog.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close audit log: %w", cerr)
		}
	}()
	store.TrackAudit(auditLog)
	// The final position of the audit log goes to the database when serve returns.
	defer func() {
		if err := store.SaveMark(); err != nil {
			log.Error().Err(err).Msg("record final audit mark")
		}
	}()
	validator, err := protocol.NewValidator()
	if err != nil {
		return err
	}
	client := protocol.NewClient(validator, auditLog)
	defer client.Close()
	mgr, err := league.NewManager(league.Options{Config: cfg, Store: store, Audit: auditLog, Client: client, AdminToken: adminToken, Log: log})
	if err != nil {
		return err
	}
	defer mgr.Close()
	rpc := protocol.NewServer(mgr, validator, auditLog, log)
	srv, err := httpserve.StartWith(*addr, league.Routes(mgr, rpc), httpserve.DefaultTimeouts)
	if err != nil {
		return err
	}
	if err := mgr.Start(); err != nil {
		_ = srv.Shutdown(context.Background())
		return err
	}
	log.Info().Str("url", srv.URL()).Str("live_view", "http://"+srv.Addr()+"/").Str("league_id", cfg.League.LeagueID).Str("game_type", cfg.League.GameType).Str("db", cfg.Database.Path).Msg("league manager listening")
	// Tools and tests read the endpoint from this first stdout line.
	fmt.Printf("league manager listening on %s\n", srv.URL())

	var reason string
	select {
	case <-ctx.Done():
		reason = "the League Manager was stopped by a signal"
	case reason = <-mgr.ShutdownRequests():
	}
	log.Info().Str("reason", reason).Dur("drain", *drain).Msg("shutting down")
	dctx, cutDrain := context.WithCancel(context.Background())
	defer cutDrain()
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	// Ends with the first of a second signal and the end of serve.
	go func() {
		select {
		case <-again:
			log.Warn().Msg("second signal: the drain is cut short")
			cutDrain()
		case <-dctx.Done():
		}
	}()
	if err := mgr.Shutdown(dctx, reason, *drain); err != nil {
		log.Error().Err(err).Msg("graceful shutdown")
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// adminTokenFor returns the admin token: LEAGUE_ADMIN_TOKEN, else admin.token beside
// the database, created (mode 0600) when create is set.
func adminTokenFor(dbPath string, create bool) (string, error) {
	if t := strings.TrimSpace(os.Getenv(adminTokenEnv)); t != "" {
		return t, nil
	}
	path := filepath.Join(filepath.Dir(dbPath), "admin.token")
	b, err := os.ReadFile(path)
	if err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, nil
		}
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read admin token: %w", err)
	}
	if !create {
		return "", fmt.Errorf("no admin token: set %s or run league serve with the same database folder (%s)", adminTokenEnv, path)
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("generate admin token: %w", err)
	}
	tok := hex.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("create database folder: %w", err)
	}
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write admin token: %w", err)
	}
	return tok, nil
}
