package server

import (
	"fmt"
	"io"
	"strings"
)

// WriteLeagues writes a line per league of m: where it is served, or why it failed to
// start. It returns an error saying how many failed, nil when none did.
func (m *Many) WriteLeagues(w io.Writer) error {
	failed := 0
	for _, l := range m.Leagues() {
		if l.State == LeagueFailed {
			failed++
			fmt.Fprintf(w, "league in %s failed: %s\n", l.Folder, l.Error)
			continue
		}
		fmt.Fprintf(w, "league %s (%s) at %s%s\n", l.LeagueID, l.GameType, strings.TrimSuffix(m.URL(), "/"), l.Path+"mcp")
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d leagues failed to start", failed, len(m.Leagues()))
	}
	return nil
}
