package league

// Per-player statistics, from the results the League Manager accepted (reported ones and
// forfeits):
//   - matches_played: the player's matches with a stored result (as in the standings);
//   - illegal_moves: its invalid_move and malformed_move violations;
//   - timeouts: its timeout, unreachable, malformed_answer, refused and stale_answer
//     violations (a missed or unusable answer to REQUEST_MOVE);
//   - violations_by_kind: every known violation kind of game_metadata.violations with its
//     count (no_join included);
//   - moves, avg_thinking_ms and max_thinking_ms: over the elapsed_ms of the player's
//     entries in game_metadata.moves (forced moves included: the time the player used);
//   - tokens_in, tokens_out and llm_errors: from the "llm" note players of strategy llm
//     send beside each move (the entry's metadata.llm): its tokens_in and tokens_out, and
//     its rethinks plus call_retries (answers refused, calls failed) as errors. A move the
//     model failed altogether has no note: it is a violation (refused, timeout).
//   - clock, only for a player that played under a time control (a result with
//     time_control, or whose moves carry clock_ms): games, the games it played under a
//     clock; think_ms and network_ms, the spread (min, p50, p99, max) over its moves
//     with clock_ms of elapsed_ms - network_ms and of network_ms (the network time
//     credited back); left_ms, the spread over those games of its time left at the end
//     (its last clock_ms, 0 in a game it lost on time); flags, those games it lost on time.
//
// They are derived data: kept in memory, updated after each stored result and
// recomputed from match_results when the League Manager starts, so no table can
// disagree with the results they come from.

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/agentleague/agentleague/protocol"
)

// PlayerStats are one player's statistics (GET /status, per player).
type PlayerStats struct {
	MatchesPlayed int            `json:"matches_played"`
	IllegalMoves  int            `json:"illegal_moves"`
	Timeouts      int            `json:"timeouts"`
	Violations    map[string]int `json:"violations_by_kind"`
	Moves         int            `json:"moves"`
	AvgThinkingMS float64        `json:"avg_thinking_ms"`
	MaxThinkingMS int64          `json:"max_thinking_ms"`
	TokensIn      int64          `json:"tokens_in,omitempty"`
	TokensOut     int64          `json:"tokens_out,omitempty"`
	LLMErrors     int64          `json:"llm_errors,omitempty"`
	// Clock is the figures of its games under a time control; nil when it played none.
	Clock *ClockStats `json:"clock,omitempty"`
	// totalMS sums the thinking time for the average.
	totalMS int64
	// samples are the clock figures' values, each sorted.
	samples *clockSamples
}

// ClockStats are a player's figures under a time control.
type ClockStats struct {
	Games     int    `json:"games"`
	Moves     int    `json:"moves"`
	ThinkMS   Spread `json:"think_ms"`
	NetworkMS Spread `json:"network_ms"`
	LeftMS    Spread `json:"left_ms"`
	Flags     int    `json:"flags"`
}

// Spread summarizes values in ms: the least, the median and 99th percentile (nearest
// rank), the most; all 0 without values.
type Spread struct {
	Min int64 `json:"min"`
	P50 int64 `json:"p50"`
	P99 int64 `json:"p99"`
	Max int64 `json:"max"`
}

// spread is the Spread of sorted values.
func spread(sorted []int64) Spread {
	n := len(sorted)
	if n == 0 {
		return Spread{}
	}
	rank := func(p int) int64 { return sorted[max((p*n+99)/100, 1)-1] } // ceil(p% of n)
	return Spread{Min: sorted[0], P50: rank(50), P99: rank(99), Max: sorted[n-1]}
}

// clockSamples keep every value of a player's clock figures, sorted.
type clockSamples struct {
	think, network, left []int64
}

// insertSorted adds v to the sorted values.
func insertSorted(sorted []int64, v int64) []int64 {
	i, _ := slices.BinarySearch(sorted, v)
	return slices.Insert(sorted, i, v)
}

// resultFacts is what the League Manager reads in a result's game_metadata
// (protocol.ReadGameMetadata), per player of the match.
type resultFacts struct {
	violations map[string]map[string]int // player -> kind -> count, known kinds only
	elapsed    map[string][]int64        // player -> elapsed_ms of each of its moves
	llm        map[string]llmFacts       // player -> what its moves' llm notes add up to
	clock      map[string]*clockFacts    // player -> its game under a clock (nil map: no clock)
}

// clockFacts are a player's figures of one game under a time control.
type clockFacts struct {
	think, network []int64
	// left is the clock after its last move (-1: no move with a clock).
	left    int64
	flagged bool
}

// llmFacts sum the llm notes of a player's moves.
type llmFacts struct {
	tokensIn, tokensOut, errors int64
}

// storedMetadata reads the game_metadata of a stored result. One stored before the
// League Manager refused what violates schemas/game_metadata.json may hold some: what
// cannot be read is left out (the match page says what).
func storedMetadata(raw json.RawMessage) protocol.GameMetadata {
	md, _ := protocol.ReadGameMetadata(raw)
	return md
}

// readFacts reads what a result's game_metadata says of the two players of a match.
func readFacts(players [2]string, md protocol.GameMetadata) resultFacts {
	f := resultFacts{violations: map[string]map[string]int{}, elapsed: map[string][]int64{}, llm: map[string]llmFacts{}}
	inMatch := func(p string) bool { return p == players[0] || p == players[1] }
	for _, v := range md.Violations {
		if inMatch(v.Player) && v.Kind.Known() {
			if f.violations[v.Player] == nil {
				f.violations[v.Player] = map[string]int{}
			}
			f.violations[v.Player][string(v.Kind)]++
		}
	}
	clocked := md.TimeControl != nil && md.TimeControl.On()
	for _, mv := range md.Moves {
		clocked = clocked || (inMatch(mv.Player) && mv.ClockMS != nil)
	}
	if clocked {
		f.clock = map[string]*clockFacts{players[0]: {left: -1}, players[1]: {left: -1}}
		if md.Termination == protocol.TerminationTimeout && inMatch(md.Loser) {
			f.clock[md.Loser].flagged = true
		}
		for _, v := range md.Violations { // a draw on time flags too
			if v.Action == protocol.ActionDraw && inMatch(v.Player) {
				f.clock[v.Player].flagged = true
			}
		}
	}
	for _, mv := range md.Moves {
		if !inMatch(mv.Player) {
			continue
		}
		if c := f.clock[mv.Player]; c != nil && mv.ClockMS != nil {
			c.left = *mv.ClockMS
			if mv.ElapsedMS >= 0 {
				network := int64(0)
				if mv.NetworkMS != nil {
					network = *mv.NetworkMS
				}
				c.think = append(c.think, max(mv.ElapsedMS-network, 0))
				c.network = append(c.network, network)
			}
		}
		if mv.ElapsedMS >= 0 {
			f.elapsed[mv.Player] = append(f.elapsed[mv.Player], mv.ElapsedMS)
		}
		if note, ok := mv.LLMNote(); ok {
			sum := f.llm[mv.Player]
			sum.tokensIn += note.TokensIn
			sum.tokensOut += note.TokensOut
			sum.errors += note.Errors
			f.llm[mv.Player] = sum
		}
	}
	return f
}

// count is the number of violations of player.
func (f resultFacts) count(player string) int {
	n := 0
	for _, c := range f.violations[player] {
		n += c
	}
	return n
}

// add counts one result of a match the player played.
func (s *PlayerStats) add(f resultFacts, player string) {
	s.MatchesPlayed++
	for kind, n := range f.violations[player] {
		if s.Violations == nil {
			s.Violations = map[string]int{}
		}
		s.Violations[kind] += n
		switch k := protocol.ViolationKind(kind); {
		case k.IllegalMove():
			s.IllegalMoves += n
		case k.MissedAnswer():
			s.Timeouts += n
		}
	}
	for _, ms := range f.elapsed[player] {
		s.Moves++
		s.totalMS += ms
		s.MaxThinkingMS = max(s.MaxThinkingMS, ms)
	}
	if s.Moves > 0 {
		s.AvgThinkingMS = float64(s.totalMS) / float64(s.Moves)
	}
	l := f.llm[player]
	s.TokensIn += l.tokensIn
	s.TokensOut += l.tokensOut
	s.LLMErrors += l.errors
	if c := f.clock[player]; c != nil {
		s.addClock(c)
	}
}

// addClock counts one game the player played under a time control.
func (s *PlayerStats) addClock(c *clockFacts) {
	if s.Clock == nil {
		s.Clock, s.samples = &ClockStats{}, &clockSamples{}
	}
	cs, sm := s.Clock, s.samples
	cs.Games++
	for i := range c.think {
		sm.think = insertSorted(sm.think, c.think[i])
		sm.network = insertSorted(sm.network, c.network[i])
	}
	cs.Moves += len(c.think)
	switch {
	case c.flagged:
		cs.Flags++
		sm.left = insertSorted(sm.left, 0)
	case c.left >= 0:
		sm.left = insertSorted(sm.left, c.left)
	}
	cs.ThinkMS, cs.NetworkMS, cs.LeftMS = spread(sm.think), spread(sm.network), spread(sm.left)
}

// clone is a copy the caller may keep.
func (s *PlayerStats) clone() *PlayerStats {
	c := *s
	c.samples = nil
	if s.Clock != nil {
		cs := *s.Clock
		c.Clock = &cs
	}
	c.Violations = maps.Clone(s.Violations)
	if c.Violations == nil {
		c.Violations = map[string]int{}
	}
	return &c
}

// statsBook holds every player's statistics, by player id.
type statsBook map[string]*PlayerStats

// count adds a stored result to the statistics of its players.
func (b statsBook) count(mt *match, f resultFacts) {
	for _, id := range mt.players {
		s := b[id]
		if s == nil {
			s = &PlayerStats{}
			b[id] = s
		}
		s.add(f, id)
	}
}
