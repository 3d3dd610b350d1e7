package bench

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentleague/agentleague/internal/testtools"
)

// The CPU per exchange of each build, its multiple of the floor between processes and
// both floors' lines; every row's figures end in the same column.
func TestWriteBenchTableCPUPerExchange(t *testing.T) {
	run := func(cpu [3]float64, exchanges int64, derived bool) runFigures {
		return runFigures{leagueTime: 2 * time.Second, matches: 10, cpu: cpu, exchanges: exchanges, derived: derived}
	}
	// 1 s of CPU over 4000 exchanges is 250 µs each; 2 s over 4000, 500 µs.
	figures := [][]runFigures{
		{run([3]float64{0.1, 0.3, 0.6}, 4000, false), run([3]float64{0.1, 0.3, 0.6}, 5000, false), run([3]float64{0.1, 0.3, 0.6}, 2000, false)},
		{run([3]float64{0.2, 0.6, 1.2}, 4000, true)},
	}
	builds := []benchBuild{{name: "this build"}, {name: "/tmp/before"}}
	fl := floor{sequential: 30000, roundTrip: 33 * time.Microsecond, concurrent: 60000, workers: 4}
	pf := processFloor{floor: floor{sequential: 10000, roundTrip: 100 * time.Microsecond, concurrent: 20000, workers: 4},
		clientCPU: 60 * time.Microsecond, serverCPU: 40 * time.Microsecond, concurrentCPU: 80 * time.Microsecond}
	var b strings.Builder
	writeBenchTable(&b, builds, medians(figures), fl, pf)
	text := b.String()
	t.Log(text)

	rows := testtools.BenchRows(text)
	for label, want := range map[string]string{
		// The median of 200, 250 and 500 µs; less is better, so this build is 2x better.
		"CPU per exchange": "250 µs ≈500 µs 2.00x",
		// Over the 100 µs of client and server CPU of a round trip between processes.
		"CPU per exchange / floor between processes": "2.5x ≈5.0x 2.00x",
	} {
		if got := strings.Join(strings.Fields(rows[label]), " "); got != want {
			t.Errorf("row %q: got %q, want %q", label, got, want)
		}
	}
	for _, want := range []string{
		"floor in one process: net/http loopback echo, sequential 30000 req/s (33 µs), concurrent 60000 req/s (4 goroutines)\n",
		"floor between processes: the echo in a child process, sequential 10000 req/s (100 µs), CPU 100 µs per round trip (client 60 + server 40), concurrent 20000 req/s (4 goroutines, CPU 80 µs per round trip)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no line %q", want)
		}
	}

	// Every ratio ends where the header's does, however long the label.
	lines := strings.Split(text, "\n")
	end := utf8.RuneCountInString(lines[0])
	for _, line := range lines[1:] {
		label, _, ok := strings.Cut(line, "  ")
		if !ok || label == "" || label == "matches" || label == "moves in live view" {
			continue // not a row, or one without a ratio
		}
		if n := utf8.RuneCountInString(line); n != end {
			t.Errorf("row %q ends at %d, the header at %d", line, n, end)
		}
	}
}
