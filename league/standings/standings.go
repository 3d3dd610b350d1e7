// Package standings ranks league players from match results. Ranking follows the
// architecture's tie-breaks: points, then wins, then draws, all descending, then player id
// ascending, so the order is total and repeatable from persisted results.
package standings

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"

	"github.com/agentleague/agentleague/protocol"
)

// Result is one match result: each player's outcome (a protocol.Outcome) and points.
type Result struct {
	Outcomes map[string]string
	Points   map[string]int
}

// Table keeps standings up to date as results arrive. A Table is not safe for concurrent
// use; guard it, or hand readers a Clone.
type Table struct {
	index map[string]int          // player id -> position in rows
	rows  []protocol.StandingsRow // in New's order; Rank is unset
}

// New returns a table in which every player has played nothing. A repeated id counts once.
func New(players []string) *Table {
	t := &Table{index: make(map[string]int, len(players))}
	for _, p := range players {
		if _, ok := t.index[p]; ok {
			continue
		}
		t.index[p] = len(t.rows)
		t.rows = append(t.rows, protocol.StandingsRow{PlayerID: p})
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
	return nil
}

// Rows returns the ranked standings as a new slice the caller may keep. Ranks run 1..N
// without ties: players level on points, wins and draws are ranked by player id.
func (t *Table) Rows() []protocol.StandingsRow {
	rows := slices.Clone(t.rows)
	Sort(rows)
	return rows
}

// Clone returns an independent copy of the table.
func (t *Table) Clone() *Table {
	return &Table{index: maps.Clone(t.index), rows: slices.Clone(t.rows)}
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
