package league

import (
	"strings"
	"testing"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// A database belongs to one league: another league id, game, seed or openings is refused.
func TestNewManagerRefusesAnotherLeaguesDatabase(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.stop()
	tests := []struct {
		name   string
		mutate func(*config.Config)
		want   string
	}{
		{"another league id", func(c *config.Config) { c.League.LeagueID = "league-2" }, "database already holds another league"},
		{"another game", func(c *config.Config) { c.League.GameType = "even_odd" }, "plays tic_tac_toe with seed 1, config says even_odd with seed 1"},
		{"another seed", func(c *config.Config) { c.League.Seed = 9 }, "config says tic_tac_toe with seed 9"},
		{"a game not in the registry", func(c *config.Config) { c.League.GameType = "no_such_game" }, `game "no_such_game" is not in the game registry`},
		{"other openings", func(c *config.Config) {
			c.Openings = &config.Openings{Plies: 2, Order: config.OrderRandom}
		}, "started with other openings than league.yaml's"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := store.Open(h.dbPath())
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			m, err := NewManager(Options{Config: testConfig(t, tc.mutate), Store: st, Log: zerolog.Nop(), Client: protocol.NewClient(testValidator(t), nil)})
			if err == nil {
				m.Close()
				t.Fatalf("NewManager accepted the database of another league")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
		})
	}
}

// A referee's acknowledgement makes a match IN_PROGRESS for the Manager and in the
// database at once.
func TestInProgressReachesTheDatabase(t *testing.T) {
	clock := newFakeClock()
	h := newHarness(t, harnessOptions{clock: clock})
	l := h.registerLive([]string{"ref1", "ref2"}, nil, []string{"p1", "p2", "p3", "p4"})
	l.start()
	h.settle()
	_, ms := h.round()
	for _, mt := range ms {
		if mt.Status != protocol.MatchStateInProgress {
			t.Fatalf("match %s acknowledged: %s, want IN_PROGRESS", mt.ID, mt.Status)
		}
		var st string
		if err := h.store.DB().QueryRow(`SELECT status FROM matches WHERE match_id = ?`, mt.ID).Scan(&st); err != nil {
			t.Fatal(err)
		}
		if st != protocol.MatchStateInProgress {
			t.Errorf("match %s acknowledged, in the database: %s, want IN_PROGRESS", mt.ID, st)
		}
	}
}
