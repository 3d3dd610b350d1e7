package player

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/player/strategy"
	"github.com/agentleague/agentleague/player/uci"
	"github.com/agentleague/agentleague/protocol"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Every message the player sends or answers is checked against its schema too, and
	// so is every message the tests send.
	if err := os.Setenv(protocol.SelfCheckEnv, "1"); err != nil {
		panic(err)
	}
	goleak.VerifyTestMain(m)
}

// allFeatures are the protections our League Manager announces to players.
var allFeatures = []string{protocol.FeatureSignedAssignments, protocol.FeatureMatchCredentials, protocol.FeatureMatchQuery}

func TestNewValidatesConfig(t *testing.T) {
	valid := Config{ID: "p01", Addr: "127.0.0.1:0", LeagueURL: "http://127.0.0.1:8000/mcp", Strategy: "random"}
	tests := []struct {
		name    string
		change  func(*Config)
		wantErr string
	}{
		{"valid", func(*Config) {}, ""},
		{"id with underscore and dash", func(c *Config) { c.ID = "p_01-a" }, ""},
		{"empty id", func(c *Config) { c.ID = "" }, "player id"},
		{"id as path", func(c *Config) { c.ID = "../p01" }, "player id"},
		{"id with space", func(c *Config) { c.ID = "p 01" }, "player id"},
		{"id too long", func(c *Config) { c.ID = strings.Repeat("p", 65) }, "player id"},
		{"unknown strategy", func(c *Config) { c.Strategy = "clairvoyant" }, "unknown strategy"},
		{"uci with an engine", func(c *Config) {
			c.Strategy, c.Engine = StrategyUCI, uci.Config{Path: "/usr/games/stockfish", Depth: 5}
		}, ""},
		{"uci without an engine", func(c *Config) { c.Strategy = StrategyUCI }, "strategy uci: no engine path"},
		{"uci with two limits", func(c *Config) {
			c.Strategy, c.Engine = StrategyUCI, uci.Config{Path: "/usr/games/stockfish", Depth: 5, Nodes: 100}
		}, "strategy uci: set one search limit"},
		{"empty address", func(c *Config) { c.Addr = "" }, "listen address"},
		{"league url not http", func(c *Config) { c.LeagueURL = "ftp://127.0.0.1/mcp" }, "league url"},
		{"league url without host", func(c *Config) { c.LeagueURL = "http:///mcp" }, "league url"},
		{"negative timeout", func(c *Config) { c.RegisterFor = -time.Second }, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := valid
			tt.change(&cfg)
			p, err := New(cfg, testLogger(t))
			if tt.wantErr == "" {
				if err != nil || p == nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New: error %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}

// Registration refused with a reason worth waiting for (no referee yet, or the League
// Manager failing or unable to write for now) is sent again over HTTP as the same call:
// the same JSON-RPC id and conversation id. TestRegistrationOutlastsTransientRefusals
// follows the backoff and the deadline on fake time.
func TestRegistrationRetriesWithTheSameConversation(t *testing.T) {
	for _, reason := range append([]protocol.Reason{protocol.ReasonNoRefereeRegistered}, protocol.Transient()...) {
		t.Run(string(reason), func(t *testing.T) { testRegistrationRetries(t, reason) })
	}
}

func testRegistrationRetries(t *testing.T, reason protocol.Reason) {
	lg := startLeague(t, &fakeLeague{features: allFeatures, refusals: 2, refusalReason: reason})
	r := startPlayer(t, lg, Config{ID: "p01", DisplayName: "Player One"}, nil)
	r.waitState(t, StateActive)

	convs := lg.attempts("p01")
	if len(convs) != 3 {
		t.Fatalf("%d registration attempts, want 3 (two refusals, then success)", len(convs))
	}
	for _, c := range convs[1:] {
		if c != convs[0] {
			t.Fatalf("retried registration used conversation %s, want %s", c, convs[0])
		}
	}
	if ids := lg.jsonrpcIDs(convs[0]); len(ids) != 3 || ids[0] == "" || ids[1] != ids[0] || ids[2] != ids[0] {
		t.Errorf("JSON-RPC ids of the registration attempts %v, want the same id three times", ids)
	}
	reg := lg.registration("p01")
	if reg["endpoint_url"] != r.url || reg["player_id"] != "p01" || reg["display_name"] != "Player One" {
		t.Errorf("registration payload %v, want endpoint_url %s, player_id p01, display_name Player One", reg, r.url)
	}
	if _, ok := reg["game_types"]; ok {
		t.Errorf("registration payload has game_types: %v", reg)
	}
	if got, want := fmt.Sprint(reg["features"]), fmt.Sprint([]string{protocol.FeatureMatchCredentials, protocol.FeatureMatchCancellation, protocol.FeatureLeagueCompleted}); got != want {
		t.Errorf("registration announces features %s, want %s", got, want)
	}
	if n := lg.readyCount("p01"); n != 1 {
		t.Errorf("%d AGENT_READY requests, want 1", n)
	}
	st := r.Status()
	if st.LeagueID != testLeagueID || st.PlayerID != "p01" || st.Strategy != "random" {
		t.Errorf("status %+v, want league %s, player p01, strategy random", st, testLeagueID)
	}
}

func TestRegistrationFailure(t *testing.T) {
	tests := []struct {
		name     string
		league   *fakeLeague // nil: nothing listens
		wantText string
		// registerFor is the registration deadline: where a refusal ends the
		// registration, only a hang guard.
		registerFor time.Duration
		// attempts checks how many registrations the League Manager saw.
		attempts func(n int) bool
	}{
		{
			name:        "refused for good",
			league:      &fakeLeague{refuseWith: protocol.ReasonRegistrationClosed},
			wantText:    string(protocol.ReasonRegistrationClosed),
			registerFor: time.Minute,
			attempts:    func(n int) bool { return n == 1 }, // not retried
		},
		{
			name:        "league never reachable",
			wantText:    "deadline exceeded",
			registerFor: time.Second,
		},
		{
			// Wide enough that a loaded CI machine still gets the first refusals in
			// before the deadline: CI once saw only a dial cut short by a 300 ms one.
			// TestRegistrationGivesUpAtRegisterFor times it on fake time.
			name:        "no referee for longer than RegisterFor",
			league:      &fakeLeague{refusals: 1 << 20},
			wantText:    string(protocol.ReasonNoRefereeRegistered),
			registerFor: 3 * time.Second,
			attempts:    func(n int) bool { return n > 1 }, // retried until the deadline
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // they mostly wait for their deadlines
			url := "http://" + freeAddr(t) + "/mcp"
			if tt.league != nil {
				url = startLeague(t, tt.league).url
			}
			p, err := New(Config{
				ID: "p01", Addr: "127.0.0.1:0", LeagueURL: url, Strategy: "random",
				RegisterTimeout: callTimeout, RegisterFor: tt.registerFor, Stdout: io.Discard,
			}, testLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			err = p.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("Run: %v, want an error mentioning %q", err, tt.wantText)
			}
			if tt.league != nil {
				if n := len(tt.league.attempts("p01")); !tt.attempts(n) {
					t.Errorf("the League Manager saw %d registrations", n)
				}
			}
			if st := p.Status().State; st != StateStopped {
				t.Errorf("state %s after Run, want %s", st, StateStopped)
			}
		})
	}
}

// A League Manager shutting down when the player registers ends the player cleanly, as
// its LEAGUE_SHUTDOWN would: no retry, no error. (Its deadlines are hang guards: a 100 ms
// attempt timeout once expired on a loaded machine, and the client sent the registration
// again.)
func TestRegistrationRefusedByAShutdownIsClean(t *testing.T) {
	lg := startLeague(t, &fakeLeague{refuseWith: protocol.ReasonShuttingDown})
	p, err := New(Config{
		ID: "p01", Addr: "127.0.0.1:0", LeagueURL: lg.url, Strategy: "random",
		RegisterTimeout: callTimeout, RegisterFor: time.Minute, Stdout: io.Discard,
	}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v, want a clean stop", err)
	}
	if n := len(lg.attempts("p01")); n != 1 {
		t.Errorf("the League Manager saw %d registrations, want 1", n)
	}
	if st := p.Status().State; st != StateStopped {
		t.Errorf("state %s after Run, want %s", st, StateStopped)
	}
}

func TestStopWhileRegisteringIsClean(t *testing.T) {
	lg := startLeague(t, &fakeLeague{refusals: 1 << 20})
	r := startPlayer(t, lg, Config{ID: "p01"}, nil)
	for len(lg.attempts("p01")) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	// An invitation waits for the registration that never comes, until the player stops.
	refused := make(chan error, 1)
	s := newSender(t)
	go func() {
		_, err := s.invite(r, "R1M1", "")
		refused <- err
	}()
	// Stop only once the invitation waits inside the player: stopped earlier, the
	// player would refuse the connection instead.
	for !goroutineIn("player.(*Player).awaitRegistration") {
		time.Sleep(time.Millisecond)
	}
	r.cancel()
	if err := r.wait(t); err != nil {
		t.Fatalf("Run after cancel while registering: %v, want nil", err)
	}
	wantReason(t, <-refused, protocol.ReasonShuttingDown)
	if err := r.Run(context.Background()); err == nil {
		t.Error("second Run succeeded, want an error")
	}
}

// goroutineIn reports whether a goroutine of the process is running fn.
func goroutineIn(fn string) bool {
	buf := make([]byte, 1<<20)
	return bytes.Contains(buf[:runtime.Stack(buf, true)], []byte(fn))
}

func TestInvitationCredentials(t *testing.T) {
	const matchID = "R1M1"
	// The League Manager's view of the match: the invitations come from ref1.
	held := func(referee, status string) func(*fakeLeague) {
		return func(lg *fakeLeague) {
			lg.setMatch(matchID, fakeMatch{players: [2]string{"p01", "p99"}, refereeID: referee, status: status})
		}
	}
	none := func(*running) string { return "" }
	credentialsOnly := []string{protocol.FeatureSignedAssignments, protocol.FeatureMatchCredentials}
	tests := []struct {
		name       string
		features   []string
		league     func(*fakeLeague) // the League Manager's answer to QUERY_MATCH
		credential func(r *running) string
		wantReason protocol.Reason // "" means accepted
		wantQuery  bool
	}{
		{"right credential", allFeatures, nil, func(r *running) string { return r.credential(matchID) }, "", false},
		{"credential of another match", allFeatures, nil, func(r *running) string { return r.credential("R1M2") }, protocol.ReasonUnauthorized, false},
		{"player token instead of credential", allFeatures, nil, func(r *running) string { return r.league.token("p01") }, protocol.ReasonUnauthorized, false},
		{"no credential, confirmed in progress", allFeatures, held("ref1", "IN_PROGRESS"), none, "", true},
		{"no credential, confirmed assigned", allFeatures, held("ref1", "ASSIGNED"), none, "", true},
		{"no credential, the match is another referee's", allFeatures, held("ref2", "IN_PROGRESS"), none, protocol.ReasonUnauthorized, true},
		{"no credential, the match is held by no referee", allFeatures, held("", "PENDING"), none, protocol.ReasonUnauthorized, true},
		{"no credential, the match is over", allFeatures, held("ref1", "COMPLETED"), none, protocol.ReasonUnauthorized, true},
		{"no credential, a match the league manager does not know", allFeatures, nil, none, protocol.ReasonUnauthorized, true},
		{"no credential, a match of other players", allFeatures, func(lg *fakeLeague) {
			lg.setMatch(matchID, fakeMatch{players: [2]string{"p98", "p99"}, refereeID: "ref1", status: "IN_PROGRESS"})
		}, none, protocol.ReasonUnauthorized, true},
		{"no credential, league manager unreachable", allFeatures, func(lg *fakeLeague) { lg.setQueryAnswer("drop") }, none, protocol.ReasonBusy, true},
		{"no credential, league manager rate limits", allFeatures, func(lg *fakeLeague) { lg.setQueryAnswer(string(protocol.ReasonRateLimited)) }, none, protocol.ReasonBusy, true},
		{"no credential, league manager fails", allFeatures, func(lg *fakeLeague) { lg.setQueryAnswer(string(protocol.ReasonInternal)) }, none, protocol.ReasonBusy, true},
		{"no credential, league manager cannot write", allFeatures, func(lg *fakeLeague) { lg.setQueryAnswer(string(protocol.ReasonStorageUnavailable)) }, none, protocol.ReasonBusy, true},
		{"no credential, league manager fails, then confirms", allFeatures, func(lg *fakeLeague) {
			held("ref1", "IN_PROGRESS")(lg)
			lg.queryAnswer, lg.queryRefusals = string(protocol.ReasonInternal), 2
		}, none, "", true},
		{"no credential, player suspended", allFeatures, func(lg *fakeLeague) { lg.setQueryAnswer(string(protocol.ReasonSuspended)) }, none, protocol.ReasonUnauthorized, true},
		{"no credential, credentials announced without match_query", credentialsOnly, nil, none, "", false},
		{"signed assignments only, no credential", []string{protocol.FeatureSignedAssignments}, nil, none, "", false},
		{"nothing announced, no credential", nil, nil, none, "", false},
		{"nothing announced, some credential", nil, nil, func(*running) string { return "c0ffee" }, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lg := startLeague(t, &fakeLeague{features: tt.features})
			if tt.league != nil {
				tt.league(lg)
			}
			var setup func(*Player)
			if tt.wantReason == protocol.ReasonBusy {
				// QUERY_MATCH is retried until this deadline, then the invitation is
				// answered BUSY (TestMatchQueryRetriesTransientRefusals times it on fake
				// time). These cases mostly wait: they wait together.
				setup = func(p *Player) { p.link.matchQueryFor = 2 * time.Second }
				t.Parallel()
			}
			r := startPlayer(t, lg, Config{ID: "p01"}, setup)
			r.waitState(t, StateActive)
			cred := tt.credential(r)
			s := newSender(t)
			s.timeout = 20 * time.Second // a hang guard: the player answers BUSY at its own deadline
			ans, err := s.invite(r, matchID, cred)
			if asked := lg.queryCount(matchID) > 0; asked != tt.wantQuery {
				t.Errorf("asked the league manager: %v, want %v", asked, tt.wantQuery)
			}
			if tt.wantReason != "" {
				wantReason(t, err, tt.wantReason)
				if n := r.Status().CurrentMatches; n != 0 {
					t.Errorf("%d current matches after a refused invitation, want 0", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("invitation: %v", err)
			}
			e := ans.Envelope
			if e.MessageType != protocol.GameJoinAck || e.Sender != "player:p01" || e.MatchID != matchID || e.AuthToken != cred || e.LeagueID != testLeagueID {
				t.Errorf("answer envelope %+v, want GAME_JOIN_ACK from player:p01 for %s with auth_token %q and league %s", e, matchID, cred, testLeagueID)
			}
			if got := decode[protocol.JoinAck](t, ans); got != (protocol.JoinAck{Status: protocol.StatusAccepted, MatchID: matchID}) {
				t.Errorf("answer payload %+v, want accepted for %s", got, matchID)
			}
			if n := r.Status().CurrentMatches; n != 1 {
				t.Errorf("%d current matches, want 1", n)
			}
		})
	}
}

// A referee without credential that the League Manager confirmed plays the whole match
// on that one confirmation; any other referee without credential is refused.
func TestConfirmedRefereeWithoutCredential(t *testing.T) {
	const matchID = "R1M1"
	lg := startLeague(t, &fakeLeague{features: allFeatures})
	lg.setMatch(matchID, fakeMatch{players: [2]string{"p01", "p99"}, refereeID: "ref1", status: "IN_PROGRESS"})
	lg.setMatch("R1M2", fakeMatch{players: [2]string{"p01", "p98"}, refereeID: "ref1", status: "IN_PROGRESS"})
	r := startPlayer(t, lg, Config{ID: "p01"}, nil)
	r.waitState(t, StateActive)
	s := newSender(t)
	move := func(from, match string) (*protocol.Message, error) {
		return s.send(r.url, protocol.RequestMove, envelope{sender: protocol.RefereeSender(from), matchID: match, gameType: game.TypeTicTacToe},
			map[string]any{"step_number": 1, "step_context": map[string]any{"board": [][]string{{"", "", ""}, {"", "", ""}, {"", "", ""}}, "your_mark": "X", "move_number": 1}})
	}
	// Before any invitation nothing is confirmed, and a move request does not ask.
	_, err := move("ref1", matchID)
	wantReason(t, err, protocol.ReasonUnauthorized)
	if _, err := s.invite(r, matchID, ""); err != nil {
		t.Fatalf("invitation: %v", err)
	}
	ans, err := move("ref1", matchID)
	if err != nil {
		t.Fatalf("move request of the confirmed referee: %v", err)
	}
	if ans.Envelope.AuthToken != "" {
		t.Errorf("answer to a referee without credential carries auth_token %q", ans.Envelope.AuthToken)
	}
	_, err = move("ref2", matchID)
	wantReason(t, err, protocol.ReasonUnauthorized)
	_, err = move("ref1", "R1M2") // confirmed for R1M1 only
	wantReason(t, err, protocol.ReasonUnauthorized)
	if _, err := s.send(r.url, protocol.GameOver, envelope{sender: protocol.RefereeSender("ref2"), matchID: matchID, gameType: game.TypeTicTacToe},
		map[string]any{"outcome": "loss", "final_state": map[string]any{}}); protocol.ReasonOf(err) != protocol.ReasonUnauthorized {
		t.Errorf("GAME_OVER from an unconfirmed referee: %v, want UNAUTHORIZED", err)
	}
	if _, err := s.send(r.url, protocol.GameOver, envelope{matchID: matchID, gameType: game.TypeTicTacToe},
		map[string]any{"outcome": "win", "final_state": map[string]any{}}); err != nil {
		t.Fatalf("GAME_OVER of the confirmed referee: %v", err)
	}
	if st := r.Status(); st.Wins != 1 || st.Losses != 0 || st.CurrentMatches != 0 {
		t.Errorf("status %+v, want the confirmed referee's win only", st)
	}
	if n := lg.queryCount(matchID); n != 1 {
		t.Errorf("%d QUERY_MATCH about %s, want 1 (the invitation's)", n, matchID)
	}
	if n := lg.queryCount("R1M2"); n != 0 {
		t.Errorf("%d QUERY_MATCH about R1M2, want none (no invitation)", n)
	}

	// MATCH_CANCELLED: the match's next referee must be confirmed again.
	if _, err := s.send(r.url, protocol.MatchCancelled, envelope{sender: protocol.SenderLeagueManager, matchID: matchID, gameType: game.TypeTicTacToe, auth: lg.token("p01")},
		map[string]any{"match_id": matchID, "reason": "referee ref1 lost its lease"}); err != nil {
		t.Fatalf("MATCH_CANCELLED: %v", err)
	}
	_, err = move("ref1", matchID)
	wantReason(t, err, protocol.ReasonUnauthorized)
}

// Confirmations are bounded: the oldest is dropped first, and forgetting one keeps the
// order of the others.
func TestConfirmationsAreBounded(t *testing.T) {
	var c confirmations
	for i := range maxConfirmed + 1 {
		c.confirm(fmt.Sprintf("m%d", i), "referee:ref1")
	}
	if len(c.referee) != maxConfirmed || len(c.order) != maxConfirmed {
		t.Fatalf("%d confirmations (%d in order), want %d", len(c.referee), len(c.order), maxConfirmed)
	}
	if c.holds("m0", "referee:ref1") || !c.holds("m1", "referee:ref1") || !c.holds(fmt.Sprintf("m%d", maxConfirmed), "referee:ref1") {
		t.Error("the oldest confirmation must go first")
	}
	c.confirm("m1", "referee:ref2") // a newer answer for a known match replaces the referee
	if c.holds("m1", "referee:ref1") || !c.holds("m1", "referee:ref2") || len(c.order) != maxConfirmed {
		t.Errorf("re-confirming m1: ref1 %v ref2 %v, %d in order", c.holds("m1", "referee:ref1"), c.holds("m1", "referee:ref2"), len(c.order))
	}
	c.forget("m2")
	c.confirm("m2", "referee:ref1")
	c.confirm("new", "referee:ref1") // drops m1, the oldest, and not the re-added m2
	if c.holds("m1", "referee:ref2") || !c.holds("m2", "referee:ref1") || len(c.referee) != maxConfirmed || len(c.order) != maxConfirmed {
		t.Errorf("after forget and re-add: m1 %v, m2 %v, %d confirmations, %d in order", c.holds("m1", "referee:ref2"), c.holds("m2", "referee:ref1"), len(c.referee), len(c.order))
	}
}

func TestInvitationIsIdempotent(t *testing.T) {
	lg := startLeague(t, &fakeLeague{features: allFeatures})
	r := startPlayer(t, lg, Config{ID: "p01"}, nil)
	r.waitState(t, StateActive)
	s := newSender(t)
	var payloads []protocol.JoinAck
	for range 2 {
		ans, err := s.invite(r, "R1M1", r.credential("R1M1"))
		if err != nil {
			t.Fatalf("invitation: %v", err)
		}
		payloads = append(payloads, decode[protocol.JoinAck](t, ans))
	}
	if payloads[0] != payloads[1] || payloads[0].Status != "accepted" {
		t.Errorf("answers %+v, want the same accepted answer twice", payloads)
	}
	if n := r.Status().CurrentMatches; n != 1 {
		t.Errorf("%d current matches, want 1", n)
	}
}

func TestInvitationGames(t *testing.T) {
	tests := []struct {
		name       string
		gameType   string
		params     map[string]any
		wantStatus string
	}{
		{"game with parameters", game.TypeRockPaperScissors, map[string]any{"rounds": 3}, "accepted"},
		{"unknown game", "no_such_game", nil, "declined"},
		{"unknown parameter", game.TypeTicTacToe, map[string]any{"size": 4}, "declined"},
		{"parameter out of bounds", game.TypeRockPaperScissors, map[string]any{"rounds": 0}, "declined"},
	}
	lg := startLeague(t, &fakeLeague{})
	r := startPlayer(t, lg, Config{ID: "p01"}, nil)
	r.waitState(t, StateActive)
	s := newSender(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			matchID := fmt.Sprintf("R1M%d", i)
			payload := map[string]any{"match_id": matchID, "game_type": tt.gameType}
			if tt.params != nil {
				payload["game_params"] = tt.params
			}
			ans, err := s.send(r.url, protocol.GameInvitation, envelope{matchID: matchID, gameType: tt.gameType}, payload)
			if err != nil {
				t.Fatalf("invitation: %v", err)
			}
			got := decode[protocol.JoinAck](t, ans)
			if got.Status != tt.wantStatus || (got.Status == "declined") != (got.Reason != "") {
				t.Errorf("answer %+v, want %s (with a reason when declined)", got, tt.wantStatus)
			}
		})
	}
}

func TestFullMatch(t *testing.T) {
	lg := startLeague(t, &fakeLeague{features: allFeatures})
	seats := [2]*running{
		startPlayer(t, lg, Config{ID: "p01", Strategy: "random", Seed: 7}, nil),
		startPlayer(t, lg, Config{ID: "p02", Strategy: "perfect"}, nil),
	}
	for _, r := range seats {
		r.waitState(t, StateActive)
	}
	const matchID = "R1M1"
	s := newSender(t)
	for _, r := range seats {
		if _, err := s.invite(r, matchID, r.credential(matchID)); err != nil {
			t.Fatalf("invite %s: %v", r.cfg.ID, err)
		}
	}

	// The test is the referee: it runs the rules and asks each seat for its moves.
	g, err := game.Default().New(game.TypeTicTacToe, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := g.NewState(1)
	var last [2]map[string]any
	var asked [2]int64 // REQUEST_MOVEs per seat
	for step := 0; !st.Terminal(); step++ {
		i := st.ToMove()[0]
		asked[i]++
		r := seats[i]
		view, err := json.Marshal(st.Context(i))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(view)
		hash := hex.EncodeToString(sum[:])
		payload := map[string]any{"step_number": step, "step_context": json.RawMessage(view), "context_hash": hash, "deadline_ms": 500}
		if last[i] != nil {
			payload["last_result"] = last[i]
		}
		cred := r.credential(matchID)
		ans, err := s.send(r.url, protocol.RequestMove, envelope{matchID: matchID, gameType: game.TypeTicTacToe, auth: cred, leagueID: testLeagueID}, payload)
		if err != nil {
			t.Fatalf("step %d, %s: %v", step, r.cfg.ID, err)
		}
		if e := ans.Envelope; e.MessageType != protocol.MoveResponse || e.MatchID != matchID || e.AuthToken != cred || e.Sender != protocol.PlayerSender(r.cfg.ID) {
			t.Fatalf("step %d: answer envelope %+v", step, e)
		}
		mv := decode[protocol.MoveAnswer](t, ans)
		if mv.StepNumber == nil || *mv.StepNumber != step || mv.ContextHash != hash {
			t.Errorf("step %d: answer echoes step %v and hash %q, want %d and %q", step, mv.StepNumber, mv.ContextHash, step, hash)
		}
		parsed, err := st.ParseMove(i, mv.MovePayload)
		if err != nil {
			t.Fatalf("step %d: %s played %s: %v", step, r.cfg.ID, mv.MovePayload, err)
		}
		if st, err = st.Apply([]json.RawMessage{parsed}); err != nil {
			t.Fatal(err)
		}
		last[i] = map[string]any{"step_number": step, "intent": "MOVE", "outcome": "SUCCESS", "move": parsed}
	}

	outcomes := st.Outcomes()
	for i, r := range seats {
		ans, err := s.send(r.url, protocol.GameOver, envelope{matchID: matchID, gameType: game.TypeTicTacToe, auth: r.credential(matchID)},
			map[string]any{"outcome": outcomes[i], "final_state": st.Final()})
		if err != nil {
			t.Fatalf("GAME_OVER to %s: %v", r.cfg.ID, err)
		}
		if ans.Envelope.MessageType != protocol.GameOverAck || ans.Envelope.MatchID != matchID || decode[protocol.Ack](t, ans).Status != "acknowledged" {
			t.Errorf("GAME_OVER answer %+v %s", ans.Envelope, ans.Payload)
		}
		// Its endpoint handled the invitation, its moves and GAME_OVER.
		want := Status{PlayerID: r.cfg.ID, State: StateActive, LeagueID: testLeagueID, MatchesPlayed: 1, Strategy: r.cfg.Strategy, Exchanges: 1 + asked[i] + 1}
		switch outcomes[i] {
		case protocol.Win:
			want.Wins = 1
		case protocol.Draw:
			want.Draws = 1
		case protocol.Loss:
			want.Losses = 1
		}
		if got := getStatus(t, r.url); got != want {
			t.Errorf("GET /status of %s: %+v, want %+v", r.cfg.ID, got, want)
		}
	}
}

// getStatus reads GET /status beside the player's /mcp endpoint.
func getStatus(t *testing.T, mcpURL string) Status {
	t.Helper()
	var st Status
	if code := getJSON(t, strings.TrimSuffix(mcpURL, "/mcp")+"/status", &st); code != http.StatusOK {
		t.Fatalf("GET /status: %d", code)
	}
	return st
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{}
	defer c.CloseIdleConnections()
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return res.StatusCode
}

func TestRequestMove(t *testing.T) {
	rps, err := game.Default().New(game.TypeRockPaperScissors, nil)
	if err != nil {
		t.Fatal(err)
	}
	rpsView, err := json.Marshal(rps.NewState(1).Context(0))
	if err != nil {
		t.Fatal(err)
	}
	emptyBoard := json.RawMessage(`{"board":[["","",""],["","",""],["","",""]],"your_mark":"X","move_number":1}`)
	failing := func(string, game.Game, int64, string) (strategy.Strategy, error) { return failingStrategy{}, nil }
	tests := []struct {
		name       string
		strategy   string
		setup      func(*Player)
		gameType   string
		context    json.RawMessage
		invite     bool
		wantMove   string // exact move when set
		wantReason protocol.Reason
	}{
		{name: "after invitation", strategy: "first", gameType: game.TypeTicTacToe, context: emptyBoard, invite: true, wantMove: `{"row":0,"col":0}`},
		{name: "without invitation", strategy: "first", gameType: game.TypeTicTacToe, context: emptyBoard, wantMove: `{"row":0,"col":0}`},
		{name: "strategy that does not play the game falls back", strategy: "perfect", gameType: game.TypeRockPaperScissors, context: rpsView, invite: true},
		{name: "failing strategy plays the first legal move", setup: func(p *Player) { p.newStrategy = failing }, gameType: game.TypeTicTacToe, context: emptyBoard, wantMove: `{"row":0,"col":0}`},
		{name: "unplayable context", gameType: game.TypeTicTacToe, context: json.RawMessage(`{"board":"none"}`), wantReason: protocol.ReasonSchemaViolation},
		{name: "unknown game", gameType: "no_such_game", context: json.RawMessage(`{}`), wantReason: protocol.ReasonUnsupportedGame},
	}
	lg := startLeague(t, &fakeLeague{})
	s := newSender(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startPlayer(t, lg, Config{ID: "p01", Strategy: cmp.Or(tt.strategy, "random")}, tt.setup)
			r.waitState(t, StateActive)
			if tt.invite {
				ans, err := s.send(r.url, protocol.GameInvitation, envelope{matchID: "M1", gameType: tt.gameType}, map[string]any{"match_id": "M1", "game_type": tt.gameType})
				if err != nil || decode[protocol.JoinAck](t, ans).Status != "accepted" {
					t.Fatalf("invitation: %v", err)
				}
			}
			ans, err := s.send(r.url, protocol.RequestMove, envelope{matchID: "M1", gameType: tt.gameType}, map[string]any{"step_number": 3, "step_context": tt.context})
			if tt.wantReason != "" {
				wantReason(t, err, tt.wantReason)
				return
			}
			if err != nil {
				t.Fatalf("REQUEST_MOVE: %v", err)
			}
			mv := decode[protocol.MoveAnswer](t, ans)
			if mv.StepNumber == nil || *mv.StepNumber != 3 || mv.ContextHash != "" {
				t.Errorf("answer echoes step %v and hash %q, want 3 and none", mv.StepNumber, mv.ContextHash)
			}
			if tt.wantMove != "" && string(mv.MovePayload) != tt.wantMove {
				t.Errorf("move %s, want %s", mv.MovePayload, tt.wantMove)
			}
			g, err := game.Default().New(tt.gameType, nil)
			if err != nil {
				t.Fatal(err)
			}
			legal, err := g.LegalMoves(tt.context)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(legal, func(m json.RawMessage) bool { return string(m) == string(mv.MovePayload) }) {
				t.Errorf("move %s is not among the legal moves %s", mv.MovePayload, legal)
			}
			if n := r.Status().CurrentMatches; n != 1 {
				t.Errorf("%d current matches, want 1", n)
			}
		})
	}
}

// failingStrategy never finds a move.
type failingStrategy struct{}

func (failingStrategy) Move(strategy.Request) (json.RawMessage, error) {
	return nil, errors.New("out of ideas")
}

func TestGameOverCountsOnceAndEndsTheMatch(t *testing.T) {
	lg := startLeague(t, &fakeLeague{features: allFeatures})
	r := startPlayer(t, lg, Config{ID: "p01"}, nil)
	r.waitState(t, StateActive)
	s := newSender(t)
	const matchID = "R1M1"
	cred := r.credential(matchID)
	e := envelope{matchID: matchID, gameType: game.TypeTicTacToe, auth: cred}
	if _, err := s.invite(r, matchID, cred); err != nil {
		t.Fatal(err)
	}
	if _, err := s.send(r.url, protocol.GameOver, envelope{matchID: matchID, gameType: game.TypeTicTacToe}, map[string]any{"outcome": "win", "final_state": map[string]any{}}); protocol.ReasonOf(err) != protocol.ReasonUnauthorized {
		t.Fatalf("GAME_OVER without credential: %v, want UNAUTHORIZED", err)
	}
	for range 2 {
		if _, err := s.send(r.url, protocol.GameOver, e, map[string]any{"outcome": "win", "final_state": map[string]any{}}); err != nil {
			t.Fatalf("GAME_OVER: %v", err)
		}
	}
	if st := r.Status(); st.MatchesPlayed != 1 || st.Wins != 1 || st.CurrentMatches != 0 {
		t.Errorf("status %+v, want one match played and won, none current", st)
	}
	_, err := s.send(r.url, protocol.RequestMove, e, map[string]any{"step_number": 9, "step_context": map[string]any{}})
	wantReason(t, err, protocol.ReasonStaleStep)
	// The League Manager invites again only to a match it has no result for (its
	// result was lost, e.g. to a crash): the match is played afresh and the earlier
	// outcome no longer counts.
	ans, err := s.invite(r, matchID, cred)
	if err != nil {
		t.Fatal(err)
	}
	if got := decode[protocol.JoinAck](t, ans); got.Status != "accepted" {
		t.Errorf("invitation to a match played again: %+v, want accepted", got)
	}
	if st := r.Status(); st.CurrentMatches != 1 || st.MatchesPlayed != 0 || st.Wins != 0 {
		t.Errorf("status %+v, want the match current again and its old outcome forgotten", st)
	}
}

func TestLeagueShutdown(t *testing.T) {
	tests := []struct {
		name     string
		features []string
		auth     func(r *running) string
		wantStop bool
	}{
		{"signed, own token", allFeatures, func(r *running) string { return r.league.token("p01") }, true},
		{"signed, no token", allFeatures, func(*running) string { return "" }, false},
		{"signed, another token", allFeatures, func(r *running) string { return r.league.token("p02") }, false},
		{"signed, match credential", allFeatures, func(r *running) string { return r.credential("R1M1") }, false},
		{"unsigned league, no token", nil, func(*running) string { return "" }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lg := startLeague(t, &fakeLeague{features: tt.features})
			r := startPlayer(t, lg, Config{ID: "p01"}, nil)
			r.waitState(t, StateActive)
			ans, err := newSender(t).send(r.url, protocol.LeagueShutdown, envelope{sender: protocol.SenderLeagueManager, auth: tt.auth(r)},
				map[string]any{"reason": "league completed", "league_id": testLeagueID})
			if !tt.wantStop {
				wantReason(t, err, protocol.ReasonUnauthorized)
				select {
				case err := <-r.done:
					t.Fatalf("Run returned %v after a refused LEAGUE_SHUTDOWN", err)
				case <-time.After(50 * time.Millisecond):
				}
				return
			}
			if err != nil {
				t.Fatalf("LEAGUE_SHUTDOWN: %v", err)
			}
			if e := ans.Envelope; e.MessageType != protocol.LeagueShutdownAck || e.Sender != "player:p01" || e.LeagueID != testLeagueID || decode[protocol.Ack](t, ans).Status != "acknowledged" {
				t.Errorf("answer %+v %s", e, ans.Payload)
			}
			if err := r.wait(t); err != nil {
				t.Fatalf("Run after LEAGUE_SHUTDOWN: %v, want nil", err)
			}
			if st := r.Status().State; st != StateStopped {
				t.Errorf("state %s, want %s", st, StateStopped)
			}
		})
	}
}

func TestMatchCancelled(t *testing.T) {
	const matchID = "R1M1"
	lg := startLeague(t, &fakeLeague{features: allFeatures})
	r := startPlayer(t, lg, Config{ID: "p01"}, nil)
	r.waitState(t, StateActive)
	s := newSender(t)
	cancel := func(auth, payloadMatch string) (*protocol.Message, error) {
		return s.send(r.url, protocol.MatchCancelled, envelope{sender: protocol.SenderLeagueManager, matchID: matchID, gameType: game.TypeTicTacToe, auth: auth},
			map[string]any{"match_id": payloadMatch, "reason": "referee ref1 lost its lease; the match is assigned again"})
	}
	if _, err := s.invite(r, matchID, r.credential(matchID)); err != nil {
		t.Fatal(err)
	}
	// Refused: another player's token, the match credential, a payload naming another match.
	_, err := cancel(lg.token("p02"), matchID)
	wantReason(t, err, protocol.ReasonUnauthorized)
	_, err = cancel(r.credential(matchID), matchID)
	wantReason(t, err, protocol.ReasonUnauthorized)
	_, err = cancel(lg.token("p01"), "R1M2")
	wantReason(t, err, protocol.ReasonSchemaViolation)
	if n := r.Status().CurrentMatches; n != 1 {
		t.Fatalf("%d current matches after refused cancellations, want 1", n)
	}

	for i := range 2 { // the second time the match is unknown: acknowledged all the same
		ans, err := cancel(lg.token("p01"), matchID)
		if err != nil {
			t.Fatalf("MATCH_CANCELLED %d: %v", i, err)
		}
		e := ans.Envelope
		if e.MessageType != protocol.MatchCancelledAck || e.Sender != "player:p01" || e.MatchID != matchID || e.LeagueID != testLeagueID {
			t.Errorf("answer envelope %+v", e)
		}
		if got := decode[protocol.MatchAck](t, ans); got != (protocol.MatchAck{Status: protocol.StatusAcknowledged, MatchID: matchID}) {
			t.Errorf("answer payload %+v", got)
		}
	}
	if st := r.Status(); st.CurrentMatches != 0 || st.MatchesPlayed != 0 {
		t.Errorf("status %+v, want no match current and none played", st)
	}
	// The match is assigned again: its new invitation is accepted, not declined as over.
	ans, err := s.invite(r, matchID, r.credential(matchID))
	if err != nil || decode[protocol.JoinAck](t, ans).Status != "accepted" {
		t.Fatalf("invitation after the cancellation: %v", err)
	}

	// Handle is exported: a sender other than the League Manager is refused there too.
	m, err := protocol.NewMessage(protocol.MatchCancelled, protocol.RefereeSender("ref1"), map[string]any{"match_id": matchID, "reason": "x"})
	if err != nil {
		t.Fatal(err)
	}
	m.Envelope.MatchID = matchID
	_, err = r.Handle(context.Background(), m)
	wantReason(t, err, protocol.ReasonUnauthorized)
}

func TestLeagueShutdownFromAnotherSenderIsRefused(t *testing.T) {
	lg := startLeague(t, &fakeLeague{})
	r := startPlayer(t, lg, Config{ID: "p01"}, nil)
	r.waitState(t, StateActive)
	// The schema refuses this sender on the wire; Handle is exported, so it checks too.
	m, err := protocol.NewMessage(protocol.LeagueShutdown, protocol.RefereeSender("ref1"), map[string]any{"reason": "x"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Handle(context.Background(), m)
	wantReason(t, err, protocol.ReasonUnauthorized)
}

func TestRefusals(t *testing.T) {
	tests := []struct {
		name        string
		messageType string
		env         envelope
		payload     map[string]any
		want        protocol.Reason
	}{
		{"message a player does not take", protocol.AgentReadyRequest, envelope{auth: "tok"}, map[string]any{}, protocol.ReasonUnsupportedMessage},
		{"another league", protocol.GameInvitation, envelope{matchID: "M1", gameType: "tic_tac_toe", leagueID: "league-other"},
			map[string]any{"match_id": "M1", "game_type": "tic_tac_toe"}, protocol.ReasonWrongLeague},
		{"payload names another match", protocol.GameInvitation, envelope{matchID: "M1", gameType: "tic_tac_toe"},
			map[string]any{"match_id": "M2", "game_type": "tic_tac_toe"}, protocol.ReasonSchemaViolation},
	}
	lg := startLeague(t, &fakeLeague{})
	r := startPlayer(t, lg, Config{ID: "p01"}, nil)
	r.waitState(t, StateActive)
	s := newSender(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.send(r.url, tt.messageType, tt.env, tt.payload)
			wantReason(t, err, tt.want)
		})
	}
}

func TestRequestBeforeRegistrationWaitsForIt(t *testing.T) {
	lg := startLeague(t, &fakeLeague{features: allFeatures, hold: make(chan struct{})})
	r := startPlayer(t, lg, Config{ID: "p01"}, nil)
	for len(lg.attempts("p01")) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	type result struct {
		ans *protocol.Message
		err error
	}
	got := make(chan result, 1)
	s := newSender(t)
	go func() {
		ans, err := s.invite(r, "R1M1", r.credential("R1M1"))
		got <- result{ans, err}
	}()
	select {
	case res := <-got:
		t.Fatalf("invitation answered before registration completed: %v", res.err)
	case <-time.After(50 * time.Millisecond):
	}
	close(lg.hold)
	res := <-got
	if res.err != nil {
		t.Fatalf("invitation: %v", res.err)
	}
	if st := decode[protocol.JoinAck](t, res.ans).Status; st != "accepted" {
		t.Errorf("invitation %s, want accepted", st)
	}
}

func TestHTTPEndpoints(t *testing.T) {
	lg := startLeague(t, &fakeLeague{features: allFeatures})
	r := startPlayer(t, lg, Config{ID: "p01"}, nil)
	r.waitState(t, StateActive)
	base := strings.TrimSuffix(r.url, "/mcp")

	var health map[string]string
	if code := getJSON(t, base+"/health", &health); code != http.StatusOK || health["status"] != "ok" {
		t.Errorf("GET /health: %d %v", code, health)
	}
	var st protocol.Standings
	if code := getJSON(t, base+"/standings", &st); code != http.StatusOK {
		t.Fatalf("GET /standings: %d", code)
	}
	want := protocol.StandingsRow{Rank: 1, PlayerID: "p01", Points: 3, Wins: 1, MatchesPlayed: 1}
	if len(st.Standings) != 1 || st.Standings[0] != want || st.RoundID == nil || *st.RoundID != "round-1" || st.LeagueState != "ACTIVE" {
		t.Errorf("GET /standings: %+v, want round-1 with %+v", st, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	direct, err := r.Standings(ctx)
	if err != nil || len(direct.Standings) != 1 || direct.Standings[0] != want {
		t.Errorf("Standings: %+v, %v", direct, err)
	}
}

func TestStandingsBeforeRegistration(t *testing.T) {
	lg := startLeague(t, &fakeLeague{refusals: 1 << 20})
	r := startPlayer(t, lg, Config{ID: "p01"}, nil)
	if _, err := r.Standings(context.Background()); !errors.Is(err, ErrNotRegistered) {
		t.Errorf("Standings: %v, want ErrNotRegistered", err)
	}
	var body map[string]string
	if code := getJSON(t, strings.TrimSuffix(r.url, "/mcp")+"/standings", &body); code != http.StatusServiceUnavailable {
		t.Errorf("GET /standings: %d %v, want 503", code, body)
	}
}

func TestLeagueRefusingAfterRegistration(t *testing.T) {
	lg := startLeague(t, &fakeLeague{features: allFeatures, refuseLater: protocol.ReasonSuspended})
	r := startPlayer(t, lg, Config{ID: "p01"}, nil)
	// A refused AGENT_READY leaves the player registered, and still playing.
	r.waitState(t, StateRegistered)
	ans, err := newSender(t).invite(r, "R1M1", r.credential("R1M1"))
	if err != nil || decode[protocol.JoinAck](t, ans).Status != "accepted" {
		t.Fatalf("invitation to a player whose AGENT_READY was refused: %v", err)
	}
	var body map[string]string
	code := getJSON(t, strings.TrimSuffix(r.url, "/mcp")+"/standings", &body)
	if want := "league manager refused: SUSPENDED"; code != http.StatusBadGateway || body["error"] != want {
		t.Errorf("GET /standings: %d %v, want 502 with %q", code, body, want)
	}
}

func TestGameOverFromAFormerRefereeDoesNotEndTheMatch(t *testing.T) {
	lg := startLeague(t, &fakeLeague{features: allFeatures})
	r := startPlayer(t, lg, Config{ID: "p01"}, nil)
	r.waitState(t, StateActive)
	s := newSender(t)
	const matchID = "R1M2"
	cred := r.credential(matchID)
	if _, err := s.invite(r, matchID, cred); err != nil {
		t.Fatal(err)
	}
	old := envelope{sender: protocol.RefereeSender("ref9"), matchID: matchID, gameType: game.TypeTicTacToe, auth: cred}
	if _, err := s.send(r.url, protocol.GameOver, old, map[string]any{"outcome": "loss", "final_state": map[string]any{}}); err != nil {
		t.Fatalf("GAME_OVER from a former referee: %v", err)
	}
	if st := r.Status(); st.CurrentMatches != 1 || st.MatchesPlayed != 0 {
		t.Errorf("status %+v: the match must still run with its current referee", st)
	}
	cur := envelope{matchID: matchID, gameType: game.TypeTicTacToe, auth: cred}
	if _, err := s.send(r.url, protocol.GameOver, cur, map[string]any{"outcome": "win", "final_state": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if st := r.Status(); st.CurrentMatches != 0 || st.Wins != 1 || st.Losses != 0 {
		t.Errorf("status %+v, want the current referee's win", st)
	}
}
