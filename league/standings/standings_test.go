package standings

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

// result builds a two-player result with 3/1/0 scoring from a's point of view.
// Outcomes as the tests write them.
const (
	win  = string(protocol.Win)
	loss = string(protocol.Loss)
	draw = string(protocol.Draw)
)

func result(a, b, aOutcome string) Result {
	opposite := map[string]string{win: loss, loss: win, draw: draw}
	score := map[string]int{win: 3, draw: 1, loss: 0}
	bOutcome := opposite[aOutcome]
	return Result{
		Outcomes: map[string]string{a: aOutcome, b: bOutcome},
		Points:   map[string]int{a: score[aOutcome], b: score[bOutcome]},
	}
}

func TestTableRows(t *testing.T) {
	tests := []struct {
		name    string
		players []string
		results []Result
		want    []protocol.StandingsRow
	}{
		{
			name:    "nothing played ranks by id",
			players: []string{"carol", "alice", "bob"},
			want: []protocol.StandingsRow{
				{Rank: 1, PlayerID: "alice"},
				{Rank: 2, PlayerID: "bob"},
				{Rank: 3, PlayerID: "carol"},
			},
		},
		{
			// Losses and matches played are not tie-breaks: alice's extra loss does not rank her below bob.
			name:    "points first, losses ignored",
			players: []string{"alice", "bob", "carol"},
			results: []Result{result("carol", "alice", win), result("bob", "alice", draw)},
			want: []protocol.StandingsRow{
				{Rank: 1, PlayerID: "carol", Points: 3, Wins: 1, MatchesPlayed: 1},
				{Rank: 2, PlayerID: "alice", Points: 1, Draws: 1, Losses: 1, MatchesPlayed: 2},
				{Rank: 3, PlayerID: "bob", Points: 1, Draws: 1, MatchesPlayed: 1},
			},
		},
		{
			// Points are whatever the game reports, so equal points can hide different records.
			// Ids run against the tie-breaks so that dropping either one changes the order.
			name:    "wins then draws break equal points",
			players: []string{"alice", "bob", "carol", "dave"},
			results: []Result{
				{Outcomes: map[string]string{"dave": draw, "bob": draw}, Points: map[string]int{"dave": 2, "bob": 2}},
				{Outcomes: map[string]string{"carol": win, "alice": loss}, Points: map[string]int{"carol": 2, "alice": 0}},
				{Outcomes: map[string]string{"alice": loss, "bob": loss}, Points: map[string]int{"alice": 2, "bob": 0}},
			},
			want: []protocol.StandingsRow{
				{Rank: 1, PlayerID: "carol", Points: 2, Wins: 1, MatchesPlayed: 1},
				{Rank: 2, PlayerID: "bob", Points: 2, Draws: 1, Losses: 1, MatchesPlayed: 2},
				{Rank: 3, PlayerID: "dave", Points: 2, Draws: 1, MatchesPlayed: 1},
				{Rank: 4, PlayerID: "alice", Points: 2, Losses: 2, MatchesPlayed: 2},
			},
		},
		{
			name:    "identical records get distinct ranks by id",
			players: []string{"zed", "amy", "bob", "amy"},
			results: []Result{result("zed", "bob", draw), result("amy", "zed", draw), result("bob", "amy", draw)},
			want: []protocol.StandingsRow{
				{Rank: 1, PlayerID: "amy", Points: 2, Draws: 2, MatchesPlayed: 2},
				{Rank: 2, PlayerID: "bob", Points: 2, Draws: 2, MatchesPlayed: 2},
				{Rank: 3, PlayerID: "zed", Points: 2, Draws: 2, MatchesPlayed: 2},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := New(tt.players)
			for _, r := range tt.results {
				if err := table.Apply(r.Outcomes, r.Points); err != nil {
					t.Fatalf("Apply: %v", err)
				}
			}
			if got := table.Rows(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Rows: got %+v, want %+v", got, tt.want)
			}
			got, err := Recount(tt.players, tt.results)
			if err != nil {
				t.Fatalf("Recount: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Recount: got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestTableApplyErrors(t *testing.T) {
	tests := []struct {
		name     string
		outcomes map[string]string
		points   map[string]int
		want     string
	}{
		{"empty", map[string]string{}, map[string]int{}, "result has no outcomes"},
		// alice sorts before the bad entry, so a partial update would show on her row.
		{"unknown player", map[string]string{"alice": win, "zed": loss}, map[string]int{"alice": 3, "zed": 0}, `unknown player "zed"`},
		{"bad outcome", map[string]string{"alice": win, "bob": "lose"}, map[string]int{"alice": 3, "bob": 0}, `player "bob": bad outcome "lose"`},
		{"missing points", map[string]string{"alice": win, "bob": loss}, map[string]int{"alice": 3}, `player "bob": missing points`},
		{"points without outcome", map[string]string{"alice": win}, map[string]int{"alice": 3, "bob": 0}, `player "bob": points without an outcome`},
		{"unknown player in points", map[string]string{"alice": win}, map[string]int{"alice": 3, "zed": 0}, `player "zed": points without an outcome`},
		{"negative points", map[string]string{"alice": win, "bob": loss}, map[string]int{"alice": 3, "bob": -1}, `player "bob": negative points -1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := New([]string{"alice", "bob"})
			if err := table.Apply(map[string]string{"alice": draw, "bob": draw}, map[string]int{"alice": 1, "bob": 1}); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			before := table.Rows()
			err := table.Apply(tt.outcomes, tt.points)
			if err == nil || err.Error() != tt.want {
				t.Errorf("got error %v, want %q", err, tt.want)
			}
			if got := table.Rows(); !reflect.DeepEqual(got, before) {
				t.Errorf("failed Apply changed the table: got %+v, want %+v", got, before)
			}
		})
	}
}

func TestRecountError(t *testing.T) {
	results := []Result{result("alice", "bob", win), result("alice", "zed", draw)}
	_, err := Recount([]string{"alice", "bob"}, results)
	if want := `result 1: unknown player "zed"`; err == nil || err.Error() != want {
		t.Errorf("got error %v, want %q", err, want)
	}
}

func TestSort(t *testing.T) {
	rows := []protocol.StandingsRow{
		{Rank: 1, PlayerID: "c", Points: 1, Draws: 1},
		{Rank: 1, PlayerID: "b", Points: 3, Wins: 1},
		{Rank: 9, PlayerID: "a", Points: 1, Draws: 1},
		{Rank: 0, PlayerID: "d", Points: 4, Draws: 4}, // more points, fewer wins than b
	}
	Sort(rows)
	want := []protocol.StandingsRow{
		{Rank: 1, PlayerID: "d", Points: 4, Draws: 4},
		{Rank: 2, PlayerID: "b", Points: 3, Wins: 1},
		{Rank: 3, PlayerID: "a", Points: 1, Draws: 1},
		{Rank: 4, PlayerID: "c", Points: 1, Draws: 1},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("got %+v, want %+v", rows, want)
	}
}

func TestRowJSON(t *testing.T) {
	b, err := json.Marshal(protocol.StandingsRow{Rank: 1, PlayerID: "p", Points: 7, Wins: 2, Draws: 1, Losses: 3, MatchesPlayed: 6})
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	want := `{"rank":1,"player_id":"p","points":7,"wins":2,"draws":1,"losses":3,"matches_played":6}`
	if got := string(b); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestClone(t *testing.T) {
	table := New([]string{"alice", "bob"})
	snapshot := table.Clone()
	want := snapshot.Rows()
	if err := table.Apply(result("alice", "bob", win).Outcomes, result("alice", "bob", win).Points); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if got := snapshot.Rows(); !reflect.DeepEqual(got, want) {
		t.Errorf("clone changed with the original: got %+v, want %+v", got, want)
	}
	if reflect.DeepEqual(table.Rows(), want) {
		t.Errorf("original did not change after Apply")
	}
}

// TestTableMatchesRecount applies random results one at a time, reading rows and taking
// clones along the way, and checks every snapshot against a recount of its prefix.
func TestTableMatchesRecount(t *testing.T) {
	rng := rand.New(rand.NewPCG(2025, 121))
	outcomes := []string{win, loss, draw}
	for trial := range 200 {
		n := 2 + rng.IntN(30)
		players := make([]string, n)
		for i := range players {
			players[i] = fmt.Sprintf("p%03d", rng.IntN(1000)) // collisions exercise repeated ids
		}
		table := New(players)
		var results []Result
		type snapshot struct {
			table *Table
			count int
		}
		var snapshots []snapshot
		for range rng.IntN(200) {
			a, b := players[rng.IntN(n)], players[rng.IntN(n)]
			if a == b {
				continue
			}
			r := Result{
				Outcomes: map[string]string{a: outcomes[rng.IntN(3)], b: outcomes[rng.IntN(3)]},
				Points:   map[string]int{a: rng.IntN(4), b: rng.IntN(4)},
			}
			if err := table.Apply(r.Outcomes, r.Points); err != nil {
				t.Fatalf("trial %d: Apply: %v", trial, err)
			}
			results = append(results, r)
			switch rng.IntN(10) {
			case 0:
				table.Rows() // must not disturb the table's own order
			case 1:
				snapshots = append(snapshots, snapshot{table.Clone(), len(results)})
			}
		}
		snapshots = append(snapshots, snapshot{table, len(results)})
		for _, s := range snapshots {
			want, err := Recount(players, results[:s.count])
			if err != nil {
				t.Fatalf("trial %d: Recount: %v", trial, err)
			}
			if got := s.table.Rows(); !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d after %d results: got %+v, want %+v", trial, s.count, got, want)
			}
		}
	}
}

func BenchmarkRows100(b *testing.B)  { benchmarkRows(b, 100) }
func BenchmarkRows1000(b *testing.B) { benchmarkRows(b, 1000) }

// benchmarkRows measures Rows on a table holding a full round robin of n players.
func benchmarkRows(b *testing.B, n int) {
	players := make([]string, n)
	for i := range players {
		players[i] = fmt.Sprintf("player-%04d", i)
	}
	table := New(players)
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	for i := range players {
		for j := i + 1; j < n; j++ {
			r := result(players[i], players[j], []string{win, loss, draw}[rng.IntN(3)])
			if err := table.Apply(r.Outcomes, r.Points); err != nil {
				b.Fatalf("Apply: %v", err)
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		table.Rows()
	}
}

// tiebreakResults: a 7, b and c 4, d 1.
func tiebreakResults() []Result {
	return []Result{
		result("a", "b", win),  // a 3, b 0
		result("b", "c", win),  // b 3, c 0
		result("c", "a", draw), // c 1, a 1
		result("c", "d", win),  // c 3
		result("d", "a", loss), // a 3
		result("b", "d", draw), // b 1, d 1
	}
}

func TestTiebreakColumns(t *testing.T) {
	tb := New([]string{"a", "b", "c", "d"})
	for _, r := range tiebreakResults() {
		if err := tb.Apply(r.Outcomes, r.Points); err != nil {
			t.Fatal(err)
		}
	}
	// Points: a 7, b 4, c 4, d 1.
	got := map[string]Row{}
	for _, r := range tb.Detailed() {
		got[r.PlayerID] = r
	}
	want := map[string][2]float64{
		// a beat b (4) and d (1), drew c (4/2): 7.
		"a": {7, 0},
		// b beat c (4), drew d (1/2): 4.5; level with c on 4, scored 3 against c.
		"b": {4.5, 3},
		// c beat d (1), drew a (7/2): 4.5; scored 0 against b.
		"c": {4.5, 0},
		// d drew b (4/2): 2.
		"d": {2, 0},
	}
	for p, w := range want {
		if got[p].SonnebornBerger != w[0] || float64(got[p].HeadToHead) != w[1] {
			t.Errorf("%s: sonneborn_berger %v head_to_head %d, want %v and %v", p, got[p].SonnebornBerger, got[p].HeadToHead, w[0], w[1])
		}
	}
}

func TestTiebreakOrder(t *testing.T) {
	results := []Result{
		result("a", "b", win),
		result("b", "c", win),
		result("b", "d", win),
		result("a", "c", loss),
		result("a", "d", draw),
		result("c", "d", draw),
	}
	// b 6; a and c 4 with a win, a draw and a loss each; d 2. Head-to-head: c beat a.
	// Sonneborn-Berger: a beat b (6) and drew d (1) = 7; c beat a (4) and drew d = 5.
	order := func(tbs ...string) []string {
		tb := New([]string{"a", "b", "c", "d"}, tbs...)
		for _, r := range results {
			if err := tb.Apply(r.Outcomes, r.Points); err != nil {
				t.Fatal(err)
			}
		}
		var ids []string
		for _, r := range tb.Rows() {
			ids = append(ids, r.PlayerID)
		}
		return ids
	}
	for _, tc := range []struct {
		tiebreaks []string
		want      []string
	}{
		{nil, []string{"b", "a", "c", "d"}}, // wins and draws level: player id
		{[]string{}, []string{"b", "a", "c", "d"}},
		{[]string{HeadToHead}, []string{"b", "c", "a", "d"}},
		{[]string{SonnebornBerger}, []string{"b", "a", "c", "d"}},
		{[]string{HeadToHead, SonnebornBerger}, []string{"b", "c", "a", "d"}},
		{[]string{SonnebornBerger, HeadToHead}, []string{"b", "a", "c", "d"}},
	} {
		if got := order(tc.tiebreaks...); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("tiebreaks %v: order %v, want %v", tc.tiebreaks, got, tc.want)
		}
	}
	tb := New([]string{"a", "c"}, SonnebornBerger)
	if err := tb.Apply(results[3].Outcomes, results[3].Points); err != nil {
		t.Fatal(err)
	}
	if rows := tb.Detailed(); rows[0].PlayerID != "c" || rows[0].SonnebornBerger != 0 {
		t.Errorf("rows %+v: c beat a, who has 0 points", rows)
	}
}

func TestByePointsCountWithoutAGame(t *testing.T) {
	tb := New([]string{"a", "b", "c"})
	if err := tb.Bye("c", 3); err != nil {
		t.Fatal(err)
	}
	r := result("a", "b", draw)
	if err := tb.Apply(r.Outcomes, r.Points); err != nil {
		t.Fatal(err)
	}
	rows := tb.Detailed()
	if rows[0].PlayerID != "c" || rows[0].Points != 3 || rows[0].MatchesPlayed != 0 || rows[0].Wins != 0 || rows[0].ByePoints != 3 {
		t.Errorf("first row %+v, want c with 3 bye points and no match", rows[0])
	}
	if err := tb.Bye("zed", 3); err == nil {
		t.Error("a bye of an unknown player was accepted")
	}
	if err := tb.Bye("a", -1); err == nil {
		t.Error("a negative bye was accepted")
	}
	if rows := tb.Rows(); rows[1].Points != 1 || rows[2].Points != 1 {
		t.Errorf("a refused bye changed the table: %+v", rows)
	}
}

func TestCrosstable(t *testing.T) {
	tb := New([]string{"a", "b", "c"})
	for _, r := range []Result{result("a", "b", win), result("b", "a", draw), result("c", "a", loss)} {
		if err := tb.Apply(r.Outcomes, r.Points); err != nil {
			t.Fatal(err)
		}
	}
	ct := tb.Crosstable(nil)
	if want := []string{"a", "b", "c"}; !reflect.DeepEqual(ct.Players, want) {
		t.Fatalf("players %v, want %v", ct.Players, want)
	}
	want := [][][]string{
		{nil, {"1", "½"}, {"1"}},
		{{"0", "½"}, nil, nil},
		{{"0"}, nil, nil},
	}
	if !reflect.DeepEqual(ct.Cells, want) {
		t.Errorf("cells %q, want %q", ct.Cells, want)
	}
}

// BenchmarkApplyAndRank is what a League Manager does per result of a 100-player round
// robin: apply it, then rank the table for standings_changed.
func BenchmarkApplyAndRank(b *testing.B) {
	for _, tbs := range [][]string{nil, {SonnebornBerger, HeadToHead}} {
		b.Run(fmt.Sprintf("tiebreaks=%d", len(tbs)), func(b *testing.B) {
			players := make([]string, 100)
			for i := range players {
				players[i] = fmt.Sprintf("p%03d", i)
			}
			var results []Result
			for i := range players {
				for j := i + 1; j < len(players); j++ {
					results = append(results, result(players[i], players[j], []string{win, draw, loss}[(i+j)%3]))
				}
			}
			b.ResetTimer()
			for range b.N {
				t := New(players, tbs...)
				for _, r := range results {
					_ = t.Apply(r.Outcomes, r.Points)
					_ = t.Rows()
				}
			}
		})
	}
}
