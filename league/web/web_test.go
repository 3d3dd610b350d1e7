package web

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/league/events"
	"github.com/agentleague/agentleague/protocol"
)

type fakeSource struct{}

func (fakeSource) LeagueView(p Page) (LeagueView, error) {
	if p.Player == "nobody" {
		return LeagueView{}, ErrNotFound
	}
	return LeagueView{LeagueID: "l1", GameType: "tic_tac_toe", State: "ACTIVE", CurrentRound: 1, TotalRounds: 3}, nil
}

func (fakeSource) MatchView(id string) (MatchView, error) {
	if id != "m1" {
		return MatchView{}, ErrNotFound
	}
	return MatchView{MatchID: "m1", GameType: "tic_tac_toe", Players: [2]string{"a", "b"}, Steps: []Step{}}, nil
}

func TestRoutes(t *testing.T) {
	hub := events.NewHub(10)
	defer hub.Close()
	mux := http.NewServeMux()
	Register(mux, fakeSource{}, hub)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	cases := []struct {
		path, contains string
		code           int
	}{
		{"/", "<title>Agent League</title>", 200},
		{"/match?id=m1", "matchPage()", 200},
		{"/static/app.js", "EventSource", 200},
		{"/static/style.css", ".board", 200},
		{"/api/league", `"league_id":"l1"`, 200},
		{"/api/league?offset=10&limit=100", `"league_id":"l1"`, 200},
		{"/api/league?limit=1001", "limit: must be a whole number from 0 to 1000", 400},
		{"/api/league?offset=-1", "offset: must be a whole number", 400},
		{"/api/league?player=p1", "player: needs a limit", 400},
		{"/api/league?limit=10&player=nobody", "no such player", 404},
		{"/api/matches/m1", `"match_id":"m1"`, 200},
		{"/api/matches/nope", "no such match", 404},
		{"/nothing-here", "404", 404},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			res, err := http.Get(srv.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.code || !strings.Contains(string(body), tc.contains) {
				t.Errorf("got %d %q, want %d containing %q", res.StatusCode, body, tc.code, tc.contains)
			}
		})
	}
	// The view only reads: no route accepts a write.
	for _, path := range []string{"/", "/api/league", "/api/matches/m1", "/events"} {
		res, err := http.Post(srv.URL+path, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST %s: got %d, want 405", path, res.StatusCode)
		}
	}
	var v LeagueView
	res, err := http.Get(srv.URL + "/api/league")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil || v.TotalRounds != 3 {
		t.Errorf("got %+v %v", v, err)
	}
}

// The dashboard shows untrusted player ids: its script builds the page from text nodes
// and never parses data as HTML.
func TestDashboardNeverParsesDataAsHTML(t *testing.T) {
	js, err := static.ReadFile("static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("} {
		if strings.Contains(string(js), bad) {
			t.Errorf("app.js uses %s", bad)
		}
	}
	html, err := static.ReadFile("static/index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{`id="standings"`, `id="ratings"`, `id="crosstable"`, `id="bracket"`, `id="matches"`, `id="live"`, `id="format"`, `id="ranking"`} {
		if !strings.Contains(string(html), id) {
			t.Errorf("index.html has no %s", id)
		}
	}
}

// A match under a clock carries its time control and each move's clock in the JSON the
// match page reads, and the page has where to show both clocks; without a clock, neither.
func TestMatchViewClockJSON(t *testing.T) {
	left := int64(9900)
	v := MatchView{MatchID: "m1", Players: [2]string{"a", "b"}, Clock: ClockOf(&protocol.TimeControl{BaseMS: 10000, IncrementMS: 100}),
		Steps: []Step{{Step: 1, Moves: []Move{MoveOf(protocol.MoveRecord{Player: "a", Move: json.RawMessage(`"e2e4"`), Outcome: protocol.MoveSuccess, ClockMS: &left})}}}}
	js, _ := json.Marshal(v)
	for _, want := range []string{`"clock":{"time_control":"10+0.1","base_ms":10000}`, `"moves":[{"player":"a","move":"e2e4","outcome":"SUCCESS","clock_ms":9900}]`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("got %s, want it to hold %s", js, want)
		}
	}
	if ClockOf(nil) != nil || ClockOf(&protocol.TimeControl{}) != nil {
		t.Error("no time control has a clock view")
	}
	js, _ = json.Marshal(MatchView{Steps: []Step{{Moves: []Move{MoveOf(protocol.MoveRecord{Player: "a", Move: json.RawMessage(`1`)})}}}})
	if strings.Contains(string(js), "clock") {
		t.Errorf("a match without a clock: got %s", js)
	}
	html, _ := static.ReadFile("static/match.html")
	app, _ := static.ReadFile("static/app.js")
	if !strings.Contains(string(html), `id="clocks"`) || !strings.Contains(string(app), "clock_ms") || !strings.Contains(string(app), "m.clock.time_control") {
		t.Error("the match page has no place for the clocks")
	}
}

func TestPaginate(t *testing.T) {
	rows := []string{"a", "b", "c", "d", "e"}
	id := func(s string) string { return s }
	cases := []struct {
		p    Page
		want []string
		pv   PageView
	}{
		{Page{}, rows, PageView{Total: 5}},
		{Page{Offset: 1, Limit: 2}, []string{"b", "c"}, PageView{1, 2, 5}},
		{Page{Offset: 4, Limit: 2}, []string{"e"}, PageView{4, 2, 5}},
		{Page{Offset: 9, Limit: 2}, []string{}, PageView{9, 2, 5}},
		{Page{Offset: 3}, []string{"d", "e"}, PageView{3, 0, 5}},
		{Page{Offset: 9}, []string{}, PageView{9, 0, 5}},
		{Page{Limit: 2, Player: "d"}, []string{"c", "d"}, PageView{2, 2, 5}},
		{Page{Offset: 4, Limit: 3, Player: "a"}, []string{"a", "b", "c"}, PageView{0, 3, 5}},
	}
	for _, c := range cases {
		got, pv, err := Paginate(rows, c.p, id)
		if err != nil || !slices.Equal(got, c.want) || pv != c.pv {
			t.Errorf("Paginate(%+v) = %v, %+v, %v; want %v, %+v", c.p, got, pv, err, c.want, c.pv)
		}
	}
	if _, _, err := Paginate(rows, Page{Limit: 2, Player: "z"}, id); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown player: %v, want ErrNotFound", err)
	}
}
