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
//   - llm, only for a player whose moves carry the "llm" note players of strategy llm send
//     beside each move (the entry's metadata.llm, protocol.LLMNote): the legality axis,
//     apart from strength: notes (moves with a note), first_try (those whose first answer
//     was read and legal), unreadable and illegal answers (each refused and asked again:
//     rethinks), call_retries; given_up, the moves the model failed altogether (no note:
//     its refused violations); forfeits, the matches it lost by a technical termination
//     (illegal_move, timeout). And the cost: tokens_in, tokens_out, latency_ms (the
//     spread of its notes' latency_ms), cost_usd (at the prices of its profile, when it
//     has them) and cost_per_game_usd.
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
	// LLM is the figures of a language-model player, from its moves' llm notes; nil for
	// a player whose moves carry none.
	LLM *LLMStats `json:"llm,omitempty"`
	// Clock is the figures of its games under a time control; nil when it played none.
	Clock *ClockStats `json:"clock,omitempty"`
	// totalMS sums the thinking time for the average.
	totalMS int64
	// samples are the clock figures' values, each sorted; latency the llm notes'.
	samples *clockSamples
	latency []int64
	// forfeits counts the matches it lost by a technical termination.
	forfeits int
}

// LLMStats are a language-model player's figures: how well it follows the format
// (legality), apart from how well it plays (the ratings), and what its moves cost.
type LLMStats struct {
	Notes       int64   `json:"notes"`
	FirstTry    int64   `json:"first_try"`
	Unreadable  int64   `json:"unreadable"`
	Illegal     int64   `json:"illegal"`
	Rethinks    int64   `json:"rethinks"`
	CallRetries int64   `json:"call_retries"`
	GivenUp     int     `json:"given_up"`
	Forfeits    int     `json:"forfeits"`
	TokensIn    int64   `json:"tokens_in"`
	TokensOut   int64   `json:"tokens_out"`
	LatencyMS   Spread  `json:"latency_ms"`
	CostUSD     float64 `json:"cost_usd"`
	CostPerGame float64 `json:"cost_per_game_usd"`
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
	forfeited  string                    // the player who lost by a technical termination, if one did
}

// clockFacts are a player's figures of one game under a time control.
type clockFacts struct {
	think, network []int64
	// left is the clock after its last move (-1: no move with a clock).
	left    int64
	flagged bool
}

// llmFacts sum the llm notes of a player's moves in one match.
type llmFacts struct {
	sum             protocol.LLMNote // the notes added up
	notes, firstTry int64
	latency         []int64
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
			l := f.llm[mv.Player]
			l.notes++
			if note.Rethinks == 0 {
				l.firstTry++
			}
			s := &l.sum
			s.TokensIn, s.TokensOut, s.CostUSD = s.TokensIn+note.TokensIn, s.TokensOut+note.TokensOut, s.CostUSD+note.CostUSD
			s.Rethinks, s.Unreadable, s.Illegal, s.CallRetries = s.Rethinks+note.Rethinks, s.Unreadable+note.Unreadable, s.Illegal+note.Illegal, s.CallRetries+note.CallRetries
			if note.LatencyMS > 0 { // a note without latency_ms says nothing of it
				l.latency = append(l.latency, note.LatencyMS)
			}
			f.llm[mv.Player] = l
		}
	}
	// A forfeit for the format: lost by an illegal move or at the end of the timeout
	// ladder, not by a no-show.
	if (md.Termination == protocol.TerminationIllegalMove || md.Termination == protocol.TerminationTimeout) && inMatch(md.Loser) {
		f.forfeited = md.Loser
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
	if f.forfeited == player {
		s.forfeits++
	}
	if l, ok := f.llm[player]; ok {
		s.addLLM(l)
	}
	if st := s.LLM; st != nil {
		// What the notes cannot say, counted for every match, notes or none: the moves
		// the model failed altogether (refused answers) and the matches lost for it.
		st.GivenUp, st.Forfeits = s.Violations[string(protocol.ViolationRefused)], s.forfeits
		st.CostPerGame = st.CostUSD / float64(s.MatchesPlayed)
	}
	if c := f.clock[player]; c != nil {
		s.addClock(c)
	}
}

// addLLM counts the llm notes of one match of a language-model player.
func (s *PlayerStats) addLLM(l llmFacts) {
	if s.LLM == nil {
		s.LLM = &LLMStats{}
	}
	st := s.LLM
	st.Notes += l.notes
	st.FirstTry += l.firstTry
	st.Unreadable += l.sum.Unreadable
	st.Illegal += l.sum.Illegal
	st.Rethinks += l.sum.Rethinks
	st.CallRetries += l.sum.CallRetries
	st.TokensIn += l.sum.TokensIn
	st.TokensOut += l.sum.TokensOut
	st.CostUSD += l.sum.CostUSD
	for _, ms := range l.latency {
		s.latency = insertSorted(s.latency, ms)
	}
	st.LatencyMS = spread(s.latency)
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
	c.samples, c.latency = nil, nil
	if s.Clock != nil {
		cs := *s.Clock
		c.Clock = &cs
	}
	if s.LLM != nil {
		l := *s.LLM
		c.LLM = &l
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
