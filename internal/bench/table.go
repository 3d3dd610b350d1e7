package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
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
		fmt.Fprintf(w, "ratio: how many times better this build does than %s (above 1 is better)\n", builds[1].name)
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
