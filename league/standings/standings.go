// Package standings ranks league players from match results. Ranking follows the
// architecture's tie-breaks: points, then wins, then draws, all descending, then player id
// ascending, so the order is total and repeatable from persisted results. A table may
// instead order by tie-break columns after points (ranking.tiebreaks): Sonneborn-Berger
// and head-to-head, which every table computes and shows either way.
package standings

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/agentleague/agentleague/league/ratings"
	"github.com/agentleague/agentleague/protocol"
)

// Result is one match result: each player's outcome (a protocol.Outcome) and points.
type Result struct {
	Outcomes map[string]string
	Points   map[string]int
}

// Tie-break columns, as ranking.tiebreaks names them.
const (
	// SonnebornBerger is the sum of the final points of the opponents a player beat,
	// plus half those of the opponents it drew with.
	SonnebornBerger = "sonneborn_berger"
	// HeadToHead is the points a player scored in its games against the players level
	// with it on points.
	HeadToHead = "head_to_head"
)

// Tiebreaks lists the tie-break names a table accepts.
var Tiebreaks = []string{SonnebornBerger, HeadToHead}

// Row is a standings row with its tie-break columns.
type Row struct {
	protocol.StandingsRow
	SonnebornBerger float64 `json:"sonneborn_berger"`
	HeadToHead      int     `json:"head_to_head"`
	// ByePoints is the part of Points that byes scored.
	ByePoints int `json:"bye_points,omitempty"`
}

// Table keeps standings up to date as results arrive. A Table is not safe for concurrent
// use; guard it, or hand readers a Clone.
type Table struct {
	index map[string]int          // player id -> position in rows
	rows  []protocol.StandingsRow // in New's order; Rank is unset
	byes  []int                   // bye points, by position
	games []Result                // every applied result, in order
	// tiebreaks replace wins and draws after points in the order; nil keeps the seed's.
	tiebreaks []string
}

// New returns a table in which every player has played nothing, ranked by points, then
// tiebreaks (any of Tiebreaks) when given, else wins and draws, then player id. A
// repeated id counts once; an unknown tie-break panics, as configuration checks names.
func New(players []string, tiebreaks ...string) *Table {
	for _, tb := range tiebreaks {
		if !slices.Contains(Tiebreaks, tb) {
			panic(fmt.Sprintf("standings: unknown tie-break %q", tb))
		}
	}
	t := &Table{index: make(map[string]int, len(players)), tiebreaks: slices.Clone(tiebreaks)}
	for _, p := range players {
		if _, ok := t.index[p]; ok {
			continue
		}
		t.index[p] = len(t.rows)
		t.rows = append(t.rows, protocol.StandingsRow{PlayerID: p})
		t.byes = append(t.byes, 0)
	}
	return t
}

// Apply adds one match result: every player in outcomes gets one match played, the
// outcome, and its points. outcomes and points must name the same known players, outcomes
// must be protocol outcomes (win, loss or draw), and points must not be negative. On
// error the table is unchanged.
func (t *Table) Apply(outcomes map[string]string, points map[string]int) error {
	// Validate everything before touching a row so a bad result changes nothing.
	if err := validate(outcomes, points, func(p string) bool { _, ok := t.index[p]; return ok }); err != nil {
		return err
	}
	for p, o := range outcomes {
		add(&t.rows[t.index[p]], o, points[p])
	}
	t.games = append(t.games, Result{Outcomes: maps.Clone(outcomes), Points: maps.Clone(points)})
	return nil
}

// Check reports the error Apply would return, changing nothing.
func (t *Table) Check(outcomes map[string]string, points map[string]int) error {
	return validate(outcomes, points, func(p string) bool { _, ok := t.index[p]; return ok })
}

// Bye adds the points of a bye (a round without a game) to player: no match is played.
func (t *Table) Bye(player string, points int) error {
	i, ok := t.index[player]
	switch {
	case !ok:
		return fmt.Errorf("bye of unknown player %q", player)
	case points < 0:
		return fmt.Errorf("bye of %q: negative points %d", player, points)
	}
	t.rows[i].Points += points
	t.byes[i] += points
	return nil
}

// Rows returns the ranked standings as a new slice the caller may keep. Ranks run 1..N
// without ties: players level on every key are ranked by player id.
func (t *Table) Rows() []protocol.StandingsRow {
	// The tie-break columns cost a pass over every game: only an order by them needs it.
	ranked := t.ranked(len(t.tiebreaks) > 0)
	rows := make([]protocol.StandingsRow, len(ranked))
	for i, r := range ranked {
		rows[i] = r.StandingsRow
	}
	return rows
}

// Detailed returns the ranked standings with their tie-break columns.
func (t *Table) Detailed() []Row { return t.ranked(true) }

// ranked returns the rows in order, with the tie-break columns when columns is set.
func (t *Table) ranked(columns bool) []Row {
	rows := make([]Row, len(t.rows))
	for i, r := range t.rows {
		rows[i] = Row{StandingsRow: r, ByePoints: t.byes[i]}
	}
	if columns {
		t.columns(rows)
	}
	slices.SortFunc(rows, func(a, b Row) int {
		if c := cmp.Compare(b.Points, a.Points); c != 0 {
			return c
		}
		if len(t.tiebreaks) == 0 {
			if c := cmp.Or(cmp.Compare(b.Wins, a.Wins), cmp.Compare(b.Draws, a.Draws)); c != 0 {
				return c
			}
		}
		for _, tb := range t.tiebreaks {
			var c int
			switch tb {
			case SonnebornBerger:
				c = cmp.Compare(b.SonnebornBerger, a.SonnebornBerger)
			case HeadToHead:
				c = cmp.Compare(b.HeadToHead, a.HeadToHead)
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(a.PlayerID, b.PlayerID)
	})
	for i := range rows {
		rows[i].Rank = i + 1
	}
	return rows
}

// columns fills the tie-break columns of rows, which are in New's order.
func (t *Table) columns(rows []Row) {
	for _, g := range t.games {
		for p, o := range g.Outcomes {
			opp, ok := opponent(g, p)
			if !ok {
				continue
			}
			me, them := &rows[t.index[p]], rows[t.index[opp]]
			switch protocol.Outcome(o) {
			case protocol.Win:
				me.SonnebornBerger += float64(them.Points)
			case protocol.Draw:
				me.SonnebornBerger += float64(them.Points) / 2
			}
			if me.Points == them.Points {
				me.HeadToHead += g.Points[p]
			}
		}
	}
}

// opponent is the other player of a two-player result.
func opponent(g Result, p string) (string, bool) {
	if len(g.Outcomes) != 2 {
		return "", false
	}
	for q := range g.Outcomes {
		if q != p {
			return q, true
		}
	}
	return "", false
}

// Crosstable is every pairing's games: Cells[i][j] lists the scores of Players[i]
// against Players[j] ("1", "½" or "0"), in the order the results were applied.
type Crosstable struct {
	Players []string     `json:"players"`
	Cells   [][][]string `json:"cells"`
}

// Crosstable returns the crosstable among only, in that order, or among every player in
// rank order when only is nil: at thousands of players the whole table has millions of
// cells, so a view asks for a page of it.
func (t *Table) Crosstable(only []string) Crosstable {
	if only == nil {
		for _, r := range t.Detailed() {
			only = append(only, r.PlayerID)
		}
	}
	ct := Crosstable{Players: slices.Clone(only), Cells: make([][][]string, len(only))}
	at := make(map[string]int, len(only))
	for i, id := range only {
		at[id] = i
		ct.Cells[i] = make([][]string, len(only))
	}
	score := map[string]string{string(protocol.Win): "1", string(protocol.Draw): "½", string(protocol.Loss): "0"}
	for _, g := range t.games {
		for _, p := range slices.Sorted(maps.Keys(g.Outcomes)) {
			i, in := at[p]
			if opp, ok := opponent(g, p); ok && in {
				if j, in := at[opp]; in {
					ct.Cells[i][j] = append(ct.Cells[i][j], score[g.Outcomes[p]])
				}
			}
		}
	}
	return ct
}

// Clone returns an independent copy of the table.
func (t *Table) Clone() *Table {
	return &Table{index: maps.Clone(t.index), rows: slices.Clone(t.rows), byes: slices.Clone(t.byes),
		games: slices.Clone(t.games), tiebreaks: t.tiebreaks}
}

// Sort orders rows by points, wins and draws (descending), then player id (ascending), and
// sets each Rank to its 1-based position, so equal records still get distinct ranks. It is
// for rows from elsewhere, such as a database; Table.Rows already returns sorted rows.
func Sort(rows []protocol.StandingsRow) {
	slices.SortFunc(rows, func(a, b protocol.StandingsRow) int {
		return cmp.Or(
			cmp.Compare(b.Points, a.Points),
			cmp.Compare(b.Wins, a.Wins),
			cmp.Compare(b.Draws, a.Draws),
			cmp.Compare(a.PlayerID, b.PlayerID),
		)
	})
	for i := range rows {
		rows[i].Rank = i + 1
	}
}

// Recount computes ranked standings from scratch, for example from every result stored for
// a league. A repeated player id counts once. It fails on the first invalid result, with
// the same rules as Table.Apply.
func Recount(players []string, results []Result) ([]protocol.StandingsRow, error) {
	byID := make(map[string]*protocol.StandingsRow, len(players))
	for _, p := range players {
		if byID[p] == nil {
			byID[p] = &protocol.StandingsRow{PlayerID: p}
		}
	}
	known := func(p string) bool { return byID[p] != nil }
	for i, r := range results {
		if err := validate(r.Outcomes, r.Points, known); err != nil {
			return nil, fmt.Errorf("result %d: %w", i, err)
		}
		for p, o := range r.Outcomes {
			add(byID[p], o, r.Points[p])
		}
	}
	rows := make([]protocol.StandingsRow, 0, len(byID))
	for _, r := range byID {
		rows = append(rows, *r)
	}
	Sort(rows)
	return rows, nil
}

// validate checks one result without changing anything. Players are checked in id order
// so the same bad result always gives the same error.
func validate(outcomes map[string]string, points map[string]int, known func(string) bool) error {
	if len(outcomes) == 0 {
		return fmt.Errorf("result has no outcomes")
	}
	for _, p := range slices.Sorted(maps.Keys(outcomes)) {
		o := outcomes[p]
		if !known(p) {
			return fmt.Errorf("unknown player %q", p)
		}
		if !protocol.Outcome(o).Valid() {
			return fmt.Errorf("player %q: bad outcome %q", p, o)
		}
		if _, ok := points[p]; !ok {
			return fmt.Errorf("player %q: missing points", p)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(points)) {
		n := points[p]
		if _, ok := outcomes[p]; !ok {
			return fmt.Errorf("player %q: points without an outcome", p)
		}
		if n < 0 {
			return fmt.Errorf("player %q: negative points %d", p, n)
		}
	}
	return nil
}

// add records one validated outcome on row.
func add(row *protocol.StandingsRow, outcome string, points int) {
	row.MatchesPlayed++
	row.Points += points
	switch protocol.Outcome(outcome) {
	case protocol.Win:
		row.Wins++
	case protocol.Loss:
		row.Losses++
	case protocol.Draw:
		row.Draws++
	}
}

// WriteTable writes rows as an aligned text table.
func WriteTable(w io.Writer, rows []protocol.StandingsRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\tplayer\tpoints\twins\tdraws\tlosses\tplayed\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%d\t\n", r.Rank, r.PlayerID, r.Points, r.Wins, r.Draws, r.Losses, r.MatchesPlayed)
	}
	tw.Flush()
}

// WriteCrosstable writes ct as an aligned table: row i, column j holds the scores of
// player i against player j ("1 ½"), "x" on the diagonal, "." for no game.
func WriteCrosstable(w io.Writer, ct Crosstable) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "\tplayer\t")
	for i := range ct.Players {
		fmt.Fprintf(tw, "%d\t", i+1)
	}
	fmt.Fprintln(tw)
	for i, p := range ct.Players {
		fmt.Fprintf(tw, "%d\t%s\t", i+1, p)
		for j := range ct.Players {
			switch {
			case i == j:
				fmt.Fprint(tw, "x\t")
			case len(ct.Cells[i][j]) == 0:
				fmt.Fprint(tw, ".\t")
			default:
				fmt.Fprintf(tw, "%s\t", strings.Join(ct.Cells[i][j], " "))
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// WriteRated writes rows (with their tie-break columns) beside each player's rating, its
// 95% interval and the ranks the interval allows.
func WriteRated(w io.Writer, rows []Row, rated []ratings.Rating) {
	byID := make(map[string]ratings.Rating, len(rated))
	for _, r := range rated {
		byID[r.PlayerID] = r
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\tplayer\tpoints\twins\tdraws\tlosses\tplayed\tsb\th2h\trating\t95% interval\trank range\t")
	for _, r := range rows {
		rt, ok := byID[r.PlayerID]
		rating, interval, ranks := "-", "-", "-"
		if ok {
			rating = fmt.Sprintf("%.0f", rt.Rating)
			if rt.Provisional {
				rating += "?" // fewer games than ranking.provisional_games
			}
			interval = fmt.Sprintf("%.0f..%.0f", rt.Low, rt.High)
			ranks = fmt.Sprintf("%d-%d", rt.RankLow, rt.RankHigh)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%s\t%s\t%s\t\n", r.Rank, r.PlayerID, r.Points, r.Wins, r.Draws, r.Losses, r.MatchesPlayed,
			strconv.FormatFloat(r.SonnebornBerger, 'f', -1, 64), r.HeadToHead, rating, interval, ranks)
	}
	tw.Flush()
}
