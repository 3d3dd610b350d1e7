package bench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/protocol"
	"golang.org/x/sys/unix"
)

// The figures of league bench, computed from what a run leaves: the League Manager's
// audit log, the processes' CPU clocks and the agents' GET /status.

// matchFigure is one match as the League Manager's audit log shows it.
type matchFigure struct {
	id string
	// assigned is when the League Manager made its (last) MATCH_ASSIGNMENT: the time in
	// its envelope. The audit line is no use: it is written once the referee's answer is
	// in, and that may be after the referee reported the result.
	assigned time.Time
	// stored is when the League Manager acknowledged its MATCH_RESULT_REPORT: it answers
	// only once the result is stored.
	stored time.Time
	// moves are the moves of the stored game_metadata.
	moves int
	// players are the players its assignment names; movesBy counts the moves of each
	// (nil when the records do not say).
	players []string
	movesBy map[string]int
	// termination is how the match ended (game_metadata termination); charged, under a
	// clock, is each move's time charged to its player's clock in ms: elapsed_ms less the
	// network_ms credited back (nil without a clock).
	termination string
	charged     []float64
}

// auditFigures is what the audit log says of the league between its start and its end.
type auditFigures struct {
	// matches are those whose result a referee reported and the League Manager
	// acknowledged, in that order.
	matches []matchFigure
	// lmExchanges counts the exchanges the League Manager took part in (either side)
	// from the start to the end.
	lmExchanges int
}

// auditMessage is the part of an audited JSON-RPC message the figures read.
type auditMessage struct {
	Params *struct {
		Envelope protocol.Envelope `json:"envelope"`
		Payload  json.RawMessage   `json:"payload"`
	} `json:"params"`
	Error json.RawMessage `json:"error"`
}

// parseAudit reads a League Manager's audit log of a league run: the exchanges from its
// start (ADMIN_START_LEAGUE_REQUEST or SCHEDULE) to the end of the log are counted (lines, not clock times:
// the wall clock may be stepped during a run). A log without the start, a match whose
// report is acknowledged without an assignment before it, and a line that is not an
// audit entry are errors.
func parseAudit(r io.Reader) (auditFigures, error) {
	var f auditFigures
	entries, err := audit.Parse(r)
	if err != nil {
		return f, fmt.Errorf("read audit log: %w", err)
	}
	assigned := map[string][]time.Time{}
	players := map[string][]string{}
	for _, e := range entries {
		var m auditMessage
		if e.Direction != audit.DirRequest || json.Unmarshal(e.Message, &m) != nil || m.Params == nil ||
			m.Params.Envelope.MessageType != protocol.MatchAssignment {
			continue
		}
		at, err := protocol.ParseTime(m.Params.Envelope.Timestamp)
		if err != nil {
			return f, fmt.Errorf("audit line %d: envelope timestamp: %w", e.Line, err)
		}
		assigned[m.Params.Envelope.MatchID] = append(assigned[m.Params.Envelope.MatchID], at)
		var a struct {
			Players []string `json:"players"`
		}
		if json.Unmarshal(m.Params.Payload, &a) == nil && len(a.Players) > 0 {
			players[m.Params.Envelope.MatchID] = a.Players
		}
	}
	// The start request's own lines are written once it is answered, after the schedule
	// and possibly after the first assignments and results: the league starts at
	// whichever comes first, the start or the SCHEDULE event.
	first := slices.IndexFunc(entries, func(e audit.Entry) bool {
		if e.Direction == audit.DirEvent {
			var ev struct {
				Type audit.Event `json:"type"`
			}
			return json.Unmarshal(e.Message, &ev) == nil && ev.Type == audit.EventSchedule
		}
		var m auditMessage
		return e.Direction == audit.DirRequest && json.Unmarshal(e.Message, &m) == nil && m.Params != nil &&
			m.Params.Envelope.MessageType == protocol.AdminStartLeagueRequest
	})
	if first < 0 {
		return f, errors.New("audit log: neither ADMIN_START_LEAGUE_REQUEST nor SCHEDULE, the start of the league")
	}
	stored := map[string]bool{}
	for i, e := range entries[first:] {
		i += first
		if e.Direction != audit.DirRequest {
			continue
		}
		at, err := protocol.ParseTime(e.Timestamp)
		if err != nil {
			return f, fmt.Errorf("audit line %d: timestamp: %w", e.Line, err)
		}
		f.lmExchanges++
		var m auditMessage
		// A request without params (refused, or not JSON) is an exchange too, but never an
		// assignment or a report.
		if json.Unmarshal(e.Message, &m) != nil || m.Params == nil {
			continue
		}
		env := m.Params.Envelope
		if env.MessageType == protocol.MatchResultReport {
			// The answer is the next line: both are written at once.
			if stored[env.MatchID] || !answered(entries, i) {
				continue
			}
			from, ok := lastBefore(assigned[env.MatchID], at)
			if !ok {
				return f, fmt.Errorf("audit line %d: result of match %q, which was never assigned", e.Line, env.MatchID)
			}
			var p struct {
				GameMetadata *struct {
					Termination string `json:"termination"`
					Moves       []struct {
						Player    string `json:"player"`
						ElapsedMS int64  `json:"elapsed_ms"`
						NetworkMS *int64 `json:"network_ms"`
					} `json:"moves"`
				} `json:"game_metadata"`
			}
			if err := json.Unmarshal(m.Params.Payload, &p); err != nil || p.GameMetadata == nil {
				return f, fmt.Errorf("audit line %d: result of match %q without game_metadata", e.Line, env.MatchID)
			}
			stored[env.MatchID] = true
			var by map[string]int
			var charged []float64
			for _, mv := range p.GameMetadata.Moves {
				if mv.Player != "" {
					if by == nil {
						by = map[string]int{}
					}
					by[mv.Player]++
				}
				if mv.NetworkMS != nil {
					charged = append(charged, float64(mv.ElapsedMS-*mv.NetworkMS))
				}
			}
			f.matches = append(f.matches, matchFigure{id: env.MatchID, assigned: from, stored: at, moves: len(p.GameMetadata.Moves),
				players: players[env.MatchID], movesBy: by, termination: p.GameMetadata.Termination, charged: charged})
		}
	}
	return f, nil
}

// lastBefore is the latest of times not after t.
func lastBefore(times []time.Time, t time.Time) (time.Time, bool) {
	var last time.Time
	for _, x := range times {
		if !x.After(t) && x.After(last) {
			last = x
		}
	}
	return last, !last.IsZero()
}

// answered says whether the request at entries[i] was answered with a result, not an
// error.
func answered(entries []audit.Entry, i int) bool {
	if i+1 >= len(entries) || entries[i+1].Direction != audit.DirResponse || entries[i+1].ConversationID != entries[i].ConversationID {
		return false
	}
	var m auditMessage
	return json.Unmarshal(entries[i+1].Message, &m) == nil && m.Error == nil
}

// moveOverheads is, per match with moves, the time the match took beyond its players'
// thinking, per move, in milliseconds.
func moveOverheads(matches []matchFigure, think time.Duration) []float64 {
	var out []float64
	for _, m := range matches {
		if m.moves == 0 {
			continue // a forfeit: nothing was played
		}
		busy := m.stored.Sub(m.assigned) - time.Duration(m.moves)*think
		out = append(out, float64(busy)/float64(time.Millisecond)/float64(m.moves))
	}
	return out
}

// clockFigures are a run's figures under a clock (league bench --clock).
type clockFigures struct {
	// timeLosses are the matches that ended on time (termination timeout, or a draw on
	// time against an opponent who could not win).
	timeLosses int
	// moves are the moves with a clock record; overIncrement those charged more than
	// the increment: with players that think 0, the time the coordinator and the
	// transport cost the player beyond the network credit.
	moves, overIncrement int
	// chargedP50 and chargedP99 are of the moves' charged time, in ms.
	chargedP50, chargedP99 float64
}

// clockFiguresOf counts the time losses and the moves charged more than incrementMS.
func clockFiguresOf(matches []matchFigure, incrementMS int) clockFigures {
	var f clockFigures
	var all []float64
	for _, m := range matches {
		if t := protocol.Termination(m.termination); t == protocol.TerminationTimeout || t == protocol.TerminationTimeoutDraw {
			f.timeLosses++
		}
		for _, c := range m.charged {
			if c > float64(incrementMS) {
				f.overIncrement++
			}
		}
		all = append(all, m.charged...)
	}
	f.moves = len(all)
	f.chargedP50, _ = percentile(all, 50)
	f.chargedP99, _ = percentile(all, 99)
	return f
}

// Kinds of match by how many of its players are outbound, indexes of [3] figures.
const (
	kindDirect  = 0 // neither player is outbound
	kindMixed   = 1 // one is
	kindRelayed = 2 // both are: every request of the match goes through the relay
)

// kindNames name the kinds in the report.
var kindNames = [3]string{"direct", "mixed", "relayed"}

// byKind splits matches by how many of their players are outbound.
func byKind(matches []matchFigure, outbound map[string]bool) [3][]matchFigure {
	var out [3][]matchFigure
	for _, m := range matches {
		k := 0
		for _, p := range m.players {
			if outbound[p] {
				k++
			}
		}
		out[min(k, kindRelayed)] = append(out[min(k, kindRelayed)], m)
	}
	return out
}

// relayedMoves counts the moves the outbound players made: each was a REQUEST_MOVE
// through the relay.
func relayedMoves(matches []matchFigure, outbound map[string]bool) int {
	n := 0
	for _, m := range matches {
		for p, k := range m.movesBy {
			if outbound[p] {
				n += k
			}
		}
	}
	return n
}

// relayCPUPer is the relay's CPU per relayed unit (a move, a call) in µs: the League
// Manager's CPU seconds in a run with outbound players less those in the same league
// all direct, over the units; false when there were none.
func relayCPUPer(lmWith, lmWithout float64, units int64) (float64, bool) {
	if units <= 0 {
		return 0, false
	}
	return 1e6 * (lmWith - lmWithout) / float64(units), true
}

// totalMoves adds up the moves of every match.
func totalMoves(matches []matchFigure) int {
	n := 0
	for _, m := range matches {
		n += m.moves
	}
	return n
}

// Exchanges of one match between its referee and its players, as referee/match.go runs
// it: a GAME_INVITATION to each player (answered with GAME_JOIN_ACK in the same
// exchange), a REQUEST_MOVE per move, a GAME_OVER to each.
const (
	invitationsPerMatch = 2
	gameOversPerMatch   = 2
)

// derivedExchanges estimates every exchange of a league whose agents do not count
// theirs: those of the League Manager (from its audit log) plus those between each
// match's referee and players, derived from the stored moves. It assumes no move was
// asked twice (a warning re-sends REQUEST_MOVE) and every player took part.
func derivedExchanges(f auditFigures) int64 {
	n := int64(f.lmExchanges)
	for _, m := range f.matches {
		n += int64(invitationsPerMatch + m.moves + gameOversPerMatch)
	}
	return n
}

// percentile is the nearest-rank p-th percentile (0 < p <= 100) of xs; false when xs
// is empty.
func percentile(xs []float64, p float64) (float64, bool) {
	if len(xs) == 0 || p <= 0 || p > 100 {
		return 0, false
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[max(rank, 1)-1], true
}

// median is the middle value of xs (the mean of the two middle ones when their number
// is even); 0 when xs is empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// pidCPUSeconds is the CPU time process pid has used so far, that of every thread
// (ended ones too), to the nanosecond: the scheduler's CPU clock of the process, as
// clock_getcpuclockid(3) names it. /proc/<pid>/stat counts in hundredths of a second,
// which rounds the CPU of a small league to nothing.
func pidCPUSeconds(pid int) (float64, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(processCPUClock(pid), &ts); err != nil {
		return 0, fmt.Errorf("cpu clock of process %d: %w", pid, err)
	}
	return float64(ts.Nano()) / 1e9, nil
}

// processCPUClock is the clock id of process pid's CPU time as glibc makes it: the
// complement of pid shifted left by 3, or CPUCLOCK_SCHED (2).
func processCPUClock(pid int) int32 { return (^int32(pid))<<3 | 2 }

// answeredRelayCalls sums the series of league_relay_calls_total{outcome="answered"} in
// a GET /metrics answer (Prometheus text format): one per league of the League Manager.
func answeredRelayCalls(r io.Reader) (int64, error) {
	const name = "league_relay_calls_total{"
	var n float64
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		labels, value, ok := strings.Cut(strings.TrimPrefix(line, name), "} ")
		if !strings.HasPrefix(line, name) || !ok || !strings.Contains(labels, `outcome="answered"`) {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) == 0 {
			return 0, fmt.Errorf("metrics line %q: no value", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return 0, fmt.Errorf("metrics line %q: %w", line, err)
		}
		n += v
	}
	return int64(n), sc.Err()
}
