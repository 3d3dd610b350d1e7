package web

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
)

// MaxPageLimit bounds Page.Limit: a page a browser draws at once.
const MaxPageLimit = 1000

// Page asks for part of the standings, the crosstable and the ratings: Limit rows from
// Offset, or, with Player, the page of Limit rows that holds that player. The zero Page
// is everything, as the view was before pages.
type Page struct {
	Offset int
	Limit  int
	Player string
}

// PageView says which rows of a list a view holds: from Offset, at most Limit (0: all),
// of Total.
type PageView struct {
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
	Total  int `json:"total"`
}

// ParsePage reads a Page from the query parameters offset, limit and player, refusing
// what is not a count in bounds.
func ParsePage(q url.Values) (Page, error) {
	var p Page
	for _, f := range []struct {
		name string
		to   *int
		max  int
	}{{"offset", &p.Offset, 1 << 30}, {"limit", &p.Limit, MaxPageLimit}} {
		s := q.Get(f.name)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > f.max {
			return Page{}, fmt.Errorf("%s: must be a whole number from 0 to %d, got %q", f.name, f.max, s)
		}
		*f.to = n
	}
	p.Player = q.Get("player")
	if p.Player != "" && p.Limit == 0 {
		return Page{}, fmt.Errorf("player: needs a limit, the size of the page to find %q on", p.Player)
	}
	return p, nil
}

// Paginate is the part of rows p asks for, and which part it is; id names a row's
// player. A Player no row names is ErrNotFound.
func Paginate[T any](rows []T, p Page, id func(T) string) ([]T, PageView, error) {
	pv := PageView{Offset: p.Offset, Limit: p.Limit, Total: len(rows)}
	if p.Player != "" {
		i := slices.IndexFunc(rows, func(r T) bool { return id(r) == p.Player })
		if i < 0 {
			return nil, PageView{}, fmt.Errorf("player %q: %w", p.Player, ErrNotFound)
		}
		pv.Offset = i / p.Limit * p.Limit
	}
	if p.Limit == 0 {
		if pv.Offset >= len(rows) {
			return rows[:0], pv, nil
		}
		return rows[pv.Offset:], pv, nil
	}
	start := min(pv.Offset, len(rows))
	return rows[start:min(start+p.Limit, len(rows))], pv, nil
}
