package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentleague/agentleague/protocol"
)

// benchSummary is the median of each figure over the runs of one build.
type benchSummary struct {
	leagueTime               time.Duration
	fromFirstPlayer          time.Duration
	matches                  float64
	matchesPerSec            float64
	overheadP50, overheadP99 float64 // ms
	cpu                      [3]float64
	exchangesPerMatch        float64
	exchangesPerSec          float64
	cpuPerExchange           float64 // µs, every role's CPU over every exchange
	derived                  bool    // some run's exchanges were derived, not counted
	liveMoves, storedMoves   float64
}

// medians summarises the runs of each build.
func medians(figures [][]runFigures) []benchSummary {
	out := make([]benchSummary, len(figures))
	for i, runs := range figures {
		of := func(v func(runFigures) float64) float64 {
			xs := make([]float64, len(runs))
			for j, r := range runs {
				xs[j] = v(r)
			}
			return median(xs)
		}
		s := &out[i]
		s.leagueTime = time.Duration(of(func(r runFigures) float64 { return float64(r.leagueTime) }))
		s.fromFirstPlayer = time.Duration(of(func(r runFigures) float64 { return float64(r.fromFirstPlayer) }))
		s.matches = of(func(r runFigures) float64 { return float64(r.matches) })
		s.matchesPerSec = of(func(r runFigures) float64 { return float64(r.matches) / r.leagueTime.Seconds() })
		s.overheadP50 = of(func(r runFigures) float64 { return r.overheadP50 })
		s.overheadP99 = of(func(r runFigures) float64 { return r.overheadP99 })
		for k := range s.cpu {
			s.cpu[k] = of(func(r runFigures) float64 { return r.cpu[k] })
		}
		s.exchangesPerMatch = of(func(r runFigures) float64 { return float64(r.exchanges) / float64(max(r.matches, 1)) })
		s.exchangesPerSec = of(func(r runFigures) float64 { return float64(r.exchanges) / r.leagueTime.Seconds() })
		s.cpuPerExchange = of(func(r runFigures) float64 {
			return 1e6 * (r.cpu[0] + r.cpu[1] + r.cpu[2]) / float64(max(r.exchanges, 1))
		})
		s.liveMoves = of(func(r runFigures) float64 { return float64(r.liveMoves) })
		s.storedMoves = of(func(r runFigures) float64 { return float64(r.storedMoves) })
		for _, r := range runs {
			s.derived = s.derived || r.derived
		}
	}
	return out
}

// benchRow is one figure of the table: its value per build, and whether more is better
// (for the ratio); ratio false leaves the ratio out.
type benchRow struct {
	label  string
	value  func(benchSummary) float64
	format func(benchSummary) string
	more   bool
	ratio  bool
}

// writeBenchTable prints the table: a column per build and, with two, the ratio of how
// many times better this build is. fl is the floor in one process, pf the floor between
// two.
func writeBenchTable(w io.Writer, builds []benchBuild, sums []benchSummary, fl floor, pf processFloor) {
	ms := func(v float64) string { return fmt.Sprintf("%.3f ms", v) }
	sec := func(v float64) string { return fmt.Sprintf("%.2f s", v) }
	rows := []benchRow{
		{label: "league time", value: func(s benchSummary) float64 { return s.leagueTime.Seconds() },
			format: func(s benchSummary) string { return fmt.Sprintf("%.3f s", s.leagueTime.Seconds()) }, ratio: true},
		{label: "first player to last result", value: func(s benchSummary) float64 { return s.fromFirstPlayer.Seconds() },
			format: func(s benchSummary) string { return fmt.Sprintf("%.3f s", s.fromFirstPlayer.Seconds()) }, ratio: true},
		{label: "matches", value: func(s benchSummary) float64 { return s.matches },
			format: func(s benchSummary) string { return fmt.Sprintf("%.0f", s.matches) }},
		{label: "matches/s", value: func(s benchSummary) float64 { return s.matchesPerSec },
			format: func(s benchSummary) string { return fmt.Sprintf("%.1f", s.matchesPerSec) }, more: true, ratio: true},
		{label: "per-move overhead p50", value: func(s benchSummary) float64 { return s.overheadP50 },
			format: func(s benchSummary) string { return ms(s.overheadP50) }, ratio: true},
		{label: "per-move overhead p99", value: func(s benchSummary) float64 { return s.overheadP99 },
			format: func(s benchSummary) string { return ms(s.overheadP99) }, ratio: true},
		{label: "CPU league manager", value: func(s benchSummary) float64 { return s.cpu[0] },
			format: func(s benchSummary) string { return sec(s.cpu[0]) }, ratio: true},
		{label: "CPU referees (sum)", value: func(s benchSummary) float64 { return s.cpu[1] },
			format: func(s benchSummary) string { return sec(s.cpu[1]) }, ratio: true},
		{label: "CPU players (sum)", value: func(s benchSummary) float64 { return s.cpu[2] },
			format: func(s benchSummary) string { return sec(s.cpu[2]) }, ratio: true},
		{label: "exchanges per match", value: func(s benchSummary) float64 { return s.exchangesPerMatch },
			format: func(s benchSummary) string { return approx(s.derived) + fmt.Sprintf("%.1f", s.exchangesPerMatch) }, ratio: true},
		{label: "exchanges/s", value: func(s benchSummary) float64 { return s.exchangesPerSec },
			format: func(s benchSummary) string { return approx(s.derived) + fmt.Sprintf("%.0f", s.exchangesPerSec) }, more: true, ratio: true},
		{label: "CPU per exchange", value: func(s benchSummary) float64 { return s.cpuPerExchange },
			format: func(s benchSummary) string { return approx(s.derived) + fmt.Sprintf("%.0f µs", s.cpuPerExchange) }, ratio: true},
		{label: "moves in live view", format: func(s benchSummary) string { return fmt.Sprintf("%.0f of %.0f", s.liveMoves, s.storedMoves) }},
		{label: "exchanges/s of floor", value: func(s benchSummary) float64 { return s.exchangesPerSec / fl.concurrent },
			format: func(s benchSummary) string {
				return approx(s.derived) + fmt.Sprintf("%.1f %%", 100*s.exchangesPerSec/fl.concurrent)
			}, more: true, ratio: true},
		{label: "overhead p50 / round trip", value: func(s benchSummary) float64 { return s.overheadP50 / msOf(fl.roundTrip) },
			format: func(s benchSummary) string { return fmt.Sprintf("%.1fx", s.overheadP50/msOf(fl.roundTrip)) }, ratio: true},
		{label: "CPU per exchange / floor between processes", value: func(s benchSummary) float64 { return s.cpuPerExchange / usOf(pf.cpu()) },
			format: func(s benchSummary) string {
				return approx(s.derived) + fmt.Sprintf("%.1fx", s.cpuPerExchange/usOf(pf.cpu()))
			}, ratio: true},
	}
	width := 28
	for _, r := range rows {
		width = max(width, utf8.RuneCountInString(r.label)+2)
	}
	header := fmt.Sprintf("%-*s", width, "")
	for _, b := range builds {
		header += fmt.Sprintf("%16s", b.name)
	}
	if len(builds) == 2 {
		header += fmt.Sprintf("%10s", "ratio")
	}
	fmt.Fprintln(w, strings.TrimRight(header, " "))
	for _, r := range rows {
		line := fmt.Sprintf("%-*s", width, r.label)
		for _, s := range sums {
			line += fmt.Sprintf("%16s", r.format(s))
		}
		if len(sums) == 2 && r.ratio {
			line += fmt.Sprintf("%10s", ratio(r.value(sums[0]), r.value(sums[1]), r.more))
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "floor in one process: net/http loopback echo, sequential %.0f req/s (%.0f µs), concurrent %.0f req/s (%d goroutines)\n",
		fl.sequential, usOf(fl.roundTrip), fl.concurrent, fl.workers)
	fmt.Fprintf(w, "floor between processes: the echo in a child process, sequential %.0f req/s (%.0f µs), CPU %.0f µs per round trip (client %.0f + server %.0f), concurrent %.0f req/s (%d goroutines, CPU %.0f µs per round trip)\n",
		pf.sequential, usOf(pf.roundTrip), usOf(pf.cpu()), usOf(pf.clientCPU), usOf(pf.serverCPU), pf.concurrent, pf.workers, usOf(pf.concurrentCPU))
	if len(builds) == 2 {
		fmt.Fprintf(w, "ratio: how many times better %s does than %s (above 1 is better)\n", builds[0].name, builds[1].name)
	}
	for i, s := range sums {
		if s.derived {
			fmt.Fprintf(w, "≈ %s: its agents do not count exchanges; derived from the audit log and the stored moves\n", builds[i].name)
		}
	}
}

// ratio is how many times better this is than other: other/this when less is better,
// this/other when more is.
func ratio(this, other float64, more bool) string {
	if more {
		this, other = other, this
	}
	if this <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", other/this)
}

func approx(derived bool) string {
	if derived {
		return "≈"
	}
	return ""
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func usOf(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// outboundSummary is the median over the runs of the figures of relayed against direct
// players.
type outboundSummary struct {
	matches  [3]float64 // per kind of match, those with moves
	p50, p99 [3]float64 // ms, per kind of match
	// relayedMoves and relayCalls are of the runs with outbound players.
	relayedMoves, relayCalls float64
	// lmWith and lmWithout are the League Manager's CPU seconds with outbound players
	// and all direct.
	lmWith, lmWithout float64
	// cpuPerMove and cpuPerCall are the relay's CPU in µs per relayed move and call:
	// the median of each pair of runs' League Manager CPU difference over the moves of
	// the outbound players (the calls its relay answered); ok false when a run had none.
	cpuPerMove, cpuPerCall float64
	ok                     bool
}

// summariseOutbound summarises the runs with outbound players (with) and the same
// league's runs all direct (without), run by run in pairs.
func summariseOutbound(with, without []runFigures) outboundSummary {
	s := outboundSummary{ok: len(with) > 0 && len(with) == len(without)}
	of := func(v func(runFigures) float64) float64 {
		xs := make([]float64, len(with))
		for j, r := range with {
			xs[j] = v(r)
		}
		return median(xs)
	}
	for k := range s.p50 {
		s.matches[k] = of(func(r runFigures) float64 { return float64(r.kindMatches[k]) })
		s.p50[k] = of(func(r runFigures) float64 { return r.kindP50[k] })
		s.p99[k] = of(func(r runFigures) float64 { return r.kindP99[k] })
	}
	s.relayedMoves = of(func(r runFigures) float64 { return float64(r.relayedMoves) })
	s.relayCalls = of(func(r runFigures) float64 { return float64(r.relayCalls) })
	s.lmWith = of(func(r runFigures) float64 { return r.cpu[0] })
	if !s.ok {
		return s
	}
	var perMove, perCall, lmWithout []float64
	for j := range with {
		m, okMove := relayCPUPer(with[j].cpu[0], without[j].cpu[0], int64(with[j].relayedMoves))
		c, okCall := relayCPUPer(with[j].cpu[0], without[j].cpu[0], with[j].relayCalls)
		s.ok = s.ok && okMove && okCall
		perMove, perCall, lmWithout = append(perMove, m), append(perCall, c), append(lmWithout, without[j].cpu[0])
	}
	s.cpuPerMove, s.cpuPerCall, s.lmWithout = median(perMove), median(perCall), median(lmWithout)
	return s
}

// writeOutboundReport prints, below the table, per-move overhead of matches between
// relayed players against matches between direct ones of the same runs, their ratio,
// and the relay's CPU per relayed move.
func writeOutboundReport(w io.Writer, players, outbound int, s outboundSummary) {
	fmt.Fprintf(w, "\nrelayed against direct, in the same runs with %d outbound (p%02d-p%02d); a match is relayed when both its players are outbound, direct when neither is:\n",
		outbound, players-outbound+1, players)
	const width = 28
	fmt.Fprintf(w, "%-*s%16s%16s%16s%16s\n", width, "", kindNames[kindRelayed], kindNames[kindMixed], kindNames[kindDirect], "relayed/direct")
	fmt.Fprintf(w, "%-*s%16.0f%16.0f%16.0f\n", width, "matches", s.matches[kindRelayed], s.matches[kindMixed], s.matches[kindDirect])
	for _, row := range []struct {
		label string
		v     [3]float64
	}{{"per-move overhead p50", s.p50}, {"per-move overhead p99", s.p99}} {
		r := "-"
		if row.v[kindDirect] > 0 {
			r = fmt.Sprintf("%.2fx", row.v[kindRelayed]/row.v[kindDirect])
		}
		fmt.Fprintf(w, "%-*s%16s%16s%16s%16s\n", width, row.label, fmt.Sprintf("%.3f ms", row.v[kindRelayed]),
			fmt.Sprintf("%.3f ms", row.v[kindMixed]), fmt.Sprintf("%.3f ms", row.v[kindDirect]), r)
	}
	if !s.ok {
		fmt.Fprintln(w, "relay CPU per relayed move: - (no relayed move)")
		return
	}
	fmt.Fprintf(w, "relay CPU per relayed move: %.0f µs (%.0f µs per relayed call): the League Manager's CPU with %d outbound (%.3f s) less all direct (%.3f s), "+
		"over the %.0f moves of outbound players (the %.0f calls its relay answered), the median of the runs' pairs\n",
		s.cpuPerMove, s.cpuPerCall, outbound, s.lmWith, s.lmWithout, s.relayedMoves, s.relayCalls)
}

// writeClockReport prints, below the table, what the clock did in each build's runs:
// the matches ended on time, the moves charged more than the increment (with players
// that think 0, the coordinator's and the transport's cost beyond the network credit)
// and the p50 and p99 of a move's charged time, each the median of the runs.
func writeClockReport(w io.Writer, tc protocol.TimeControl, builds []benchBuild, figures [][]runFigures) {
	fmt.Fprintf(w, "\nunder the clock %s (a move is charged its elapsed time less the network time credited back):\n", tc)
	const width = 36
	fmt.Fprintf(w, "%-*s", width, "")
	for _, b := range builds {
		fmt.Fprintf(w, "%24s", b.name)
	}
	fmt.Fprintln(w)
	rows := []struct {
		label  string
		value  func(runFigures) float64
		format string
	}{
		{"matches ended on time", func(r runFigures) float64 { return float64(r.clock.timeLosses) }, "%.0f"},
		{"moves with a clock", func(r runFigures) float64 { return float64(r.clock.moves) }, "%.0f"},
		{fmt.Sprintf("moves charged over %d ms", tc.IncrementMS), func(r runFigures) float64 { return float64(r.clock.overIncrement) }, "%.0f"},
		{"charged per move p50", func(r runFigures) float64 { return r.clock.chargedP50 }, "%.0f ms"},
		{"charged per move p99", func(r runFigures) float64 { return r.clock.chargedP99 }, "%.0f ms"},
	}
	for _, row := range rows {
		fmt.Fprintf(w, "%-*s", width, row.label)
		for _, runs := range figures {
			xs := make([]float64, len(runs))
			for j, r := range runs {
				xs[j] = row.value(r)
			}
			fmt.Fprintf(w, "%24s", fmt.Sprintf(row.format, median(xs)))
		}
		fmt.Fprintln(w)
	}
}
