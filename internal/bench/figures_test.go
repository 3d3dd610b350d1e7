package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// t0 is the start of the league in the audit logs of these tests.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(ms float64) string {
	return t0.Add(time.Duration(ms * float64(time.Millisecond))).Format("2006-01-02T15:04:05.000000Z")
}

// auditLine is one line of an audit log: direction, conversation, line time (ms after
// t0) and the message.
func auditLine(dir, conv string, ms float64, msg any) string {
	b, err := json.Marshal(map[string]any{"log_id": "x", "timestamp": at(ms), "direction": dir, "conversation_id": conv,
		"source": "s", "destination": "d", "message": msg})
	if err != nil {
		panic(err)
	}
	return string(b) + "\n"
}

// request is a JSON-RPC request of messageType for match, made at envMS.
func request(messageType, match string, envMS float64, payload any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": "1", "method": "league.handle", "params": map[string]any{
		"envelope": map[string]any{"message_type": messageType, "match_id": match, "timestamp": at(envMS)}, "payload": payload}}
}

var okAnswer = map[string]any{"jsonrpc": "2.0", "id": "1", "result": map[string]any{}}

// assignment is an acknowledged MATCH_ASSIGNMENT made at envMS and written at ms.
func assignment(match, conv string, envMS, ms float64) string {
	return auditLine("request", conv, ms, request("MATCH_ASSIGNMENT", match, envMS, map[string]any{})) + auditLine("response", conv, ms, okAnswer)
}

// report is a MATCH_RESULT_REPORT of moves moves, written at ms with answer.
func report(match, conv string, ms float64, moves int, answer any) string {
	mv := make([]map[string]any, moves)
	for i := range mv {
		mv[i] = map[string]any{"step": i + 1}
	}
	return auditLine("request", conv, ms, request("MATCH_RESULT_REPORT", match, ms, map[string]any{"game_metadata": map[string]any{"moves": mv}})) +
		auditLine("response", conv, ms, answer)
}

func TestParseAudit(t *testing.T) {
	refused := map[string]any{"jsonrpc": "2.0", "id": "1", "error": map[string]any{"code": -32000, "message": "no"}}
	start := auditLine("request", "c0", 0, request("ADMIN_START_LEAGUE_REQUEST", "", 0, map[string]any{})) + auditLine("response", "c0", 0, okAnswer)
	tests := []struct {
		name      string
		log       string
		want      []matchFigure
		exchanges int
		wantErr   string
	}{
		{name: "two matches",
			log: start + assignment("m1", "c1", 1, 2) + assignment("m2", "c2", 1.5, 2.5) + report("m1", "c3", 10, 5, okAnswer) + report("m2", "c4", 20, 9, okAnswer),
			want: []matchFigure{{id: "m1", assigned: t0.Add(time.Millisecond), stored: t0.Add(10 * time.Millisecond), moves: 5},
				{id: "m2", assigned: t0.Add(1500 * time.Microsecond), stored: t0.Add(20 * time.Millisecond), moves: 9}},
			exchanges: 5},
		// The assignment's line is written once the referee answered, which may be after
		// the result: its envelope says when it was made.
		{name: "assignment written after its result",
			log:       start + report("m1", "c3", 10, 5, okAnswer) + assignment("m1", "c1", 1, 11),
			want:      []matchFigure{{id: "m1", assigned: t0.Add(time.Millisecond), stored: t0.Add(10 * time.Millisecond), moves: 5}},
			exchanges: 3},
		{name: "reassigned match counts from its last assignment",
			log:       start + assignment("m1", "c1", 1, 1) + assignment("m1", "c2", 30, 30) + report("m1", "c3", 40, 7, okAnswer),
			want:      []matchFigure{{id: "m1", assigned: t0.Add(30 * time.Millisecond), stored: t0.Add(40 * time.Millisecond), moves: 7}},
			exchanges: 4},
		{name: "refused and repeated reports are not results",
			log: start + assignment("m1", "c1", 1, 1) + report("m1", "c2", 5, 7, refused) + report("m1", "c3", 6, 7, okAnswer) +
				report("m1", "c4", 7, 7, okAnswer),
			want:      []matchFigure{{id: "m1", assigned: t0.Add(time.Millisecond), stored: t0.Add(6 * time.Millisecond), moves: 7}},
			exchanges: 5},
		{name: "exchanges before the start are not counted",
			log: auditLine("request", "c", -5, request("REGISTER_PLAYER_REQUEST", "", -5, map[string]any{})) + start +
				auditLine("request", "c9", 10, map[string]any{"unparsed": "garbage"}) + auditLine("request", "c8", 60, request("LEAGUE_SHUTDOWN", "", 60, map[string]any{})),
			exchanges: 3},
		// The wall clock may be stepped back during a run: lines count by position.
		{name: "a clock stepped back", log: start + assignment("m1", "c1", -50, -50) + report("m1", "c3", -40, 5, okAnswer),
			want:      []matchFigure{{id: "m1", assigned: t0.Add(-50 * time.Millisecond), stored: t0.Add(-40 * time.Millisecond), moves: 5}},
			exchanges: 3},
		{name: "no start", log: assignment("m1", "c1", 1, 1), wantErr: "neither ADMIN_START_LEAGUE_REQUEST nor SCHEDULE"},
		// The start's lines follow the schedule and the first exchanges it caused.
		{name: "results before the start's own lines",
			log: auditLine("request", "c", -5, request("REGISTER_PLAYER_REQUEST", "", -5, map[string]any{})) +
				auditLine("event", "", 0, map[string]any{"type": "SCHEDULE", "body": map[string]any{}}) +
				assignment("m1", "c1", 1, 1) + report("m1", "c3", 5, 7, okAnswer) + start,
			want:      []matchFigure{{id: "m1", assigned: t0.Add(time.Millisecond), stored: t0.Add(5 * time.Millisecond), moves: 7}},
			exchanges: 3},
		{name: "result never assigned", log: start + report("m1", "c3", 10, 5, okAnswer), wantErr: `match "m1", which was never assigned`},
		{name: "assigned only after its result", log: start + assignment("m1", "c1", 20, 20) + report("m1", "c3", 10, 5, okAnswer),
			wantErr: "never assigned"},
		{name: "result without game_metadata",
			log:     start + assignment("m1", "c1", 1, 1) + auditLine("request", "c3", 10, request("MATCH_RESULT_REPORT", "m1", 10, map[string]any{})) + auditLine("response", "c3", 10, okAnswer),
			wantErr: "without game_metadata"},
		{name: "not an audit log", log: "hello\n", wantErr: "line 1"},
		{name: "bad timestamp", log: strings.ReplaceAll(start, at(0), "yesterday"), wantErr: "timestamp"},
		{name: "bad envelope timestamp", log: strings.Replace(assignment("m1", "c1", 1, 2), at(1), "soon", 1), wantErr: "envelope timestamp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseAudit(strings.NewReader(tt.log))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got.matches) != fmt.Sprint(tt.want) {
				t.Errorf("got matches %v, want %v", got.matches, tt.want)
			}
			if got.lmExchanges != tt.exchanges {
				t.Errorf("got %d exchanges of the League Manager, want %d", got.lmExchanges, tt.exchanges)
			}
		})
	}
}

func TestMoveOverheads(t *testing.T) {
	ms := func(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Millisecond))) }
	matches := []matchFigure{
		{id: "m1", assigned: ms(0), stored: ms(100), moves: 9},
		{id: "forfeit", assigned: ms(0), stored: ms(3), moves: 0},
		{id: "m2", assigned: ms(10), stored: ms(60), moves: 5},
	}
	tests := []struct {
		think time.Duration
		want  []float64
	}{
		{0, []float64{100.0 / 9, 10}},
		// Thinking is not overhead: 9 moves of 10 ms leave 10 ms in 100.
		{10 * time.Millisecond, []float64{10.0 / 9, 0}},
	}
	for _, tt := range tests {
		got := moveOverheads(matches, tt.think)
		if len(got) != len(tt.want) {
			t.Fatalf("think %s: got %v, want %v", tt.think, got, tt.want)
		}
		for i := range got {
			if math.Abs(got[i]-tt.want[i]) > 1e-9 {
				t.Errorf("think %s: got %v, want %v", tt.think, got, tt.want)
			}
		}
	}
	if n := totalMoves(matches); n != 14 {
		t.Errorf("got %d moves in all, want 14", n)
	}
}

// Per match: two invitations (each answered by GAME_JOIN_ACK in the same exchange), a
// REQUEST_MOVE per move and two GAME_OVER notices, besides the League Manager's own.
func TestDerivedExchanges(t *testing.T) {
	tests := []struct {
		name string
		f    auditFigures
		want int64
	}{
		{"no match", auditFigures{lmExchanges: 3}, 3},
		{"two matches", auditFigures{lmExchanges: 10, matches: []matchFigure{{moves: 9}, {moves: 5}}}, 10 + (4 + 9) + (4 + 5)},
		{"a forfeit without moves", auditFigures{lmExchanges: 1, matches: []matchFigure{{moves: 0}}}, 1 + 4},
	}
	for _, tt := range tests {
		if got := derivedExchanges(tt.f); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(100 - i) // 100..1, unsorted
	}
	tests := []struct {
		name   string
		xs     []float64
		p      float64
		want   float64
		wantOK bool
	}{
		{"empty", nil, 50, 0, false},
		{"p zero", []float64{1}, 0, 0, false},
		{"p above 100", []float64{1}, 101, 0, false},
		{"one value", []float64{7}, 99, 7, true},
		{"p50 of 1..100", hundred, 50, 50, true},
		{"p99 of 1..100", hundred, 99, 99, true},
		{"p100 is the largest", hundred, 100, 100, true},
		{"p99 of three is the largest", []float64{3, 1, 2}, 99, 3, true},
		{"p50 of four", []float64{4, 1, 3, 2}, 50, 2, true},
	}
	for _, tt := range tests {
		got, ok := percentile(tt.xs, tt.p)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: got %v %v, want %v %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{5}, 5},
		{[]float64{9, 1, 5}, 5},
		{[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		if got := median(tt.xs); got != tt.want {
			t.Errorf("median(%v): got %v, want %v", tt.xs, got, tt.want)
		}
	}
}

// pidCPUSeconds reads a process's CPU clock: for this process, between what getrusage
// says before and after; for a process that is gone, an error.
func TestPidCPUSeconds(t *testing.T) {
	before, err := selfCPUSeconds()
	if err != nil {
		t.Fatal(err)
	}
	// Burn 20 ms of CPU, so that a clock that counted nothing, or in hundredths of a
	// second, cannot pass.
	for {
		now, err := selfCPUSeconds()
		if err != nil {
			t.Fatal(err)
		}
		if now-before >= 0.02 {
			break
		}
	}
	low, err := selfCPUSeconds()
	if err != nil {
		t.Fatal(err)
	}
	got, err := pidCPUSeconds(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	high, err := selfCPUSeconds()
	if err != nil {
		t.Fatal(err)
	}
	const slack = 0.002 // getrusage splits the same clock by tick samples
	if got < low-slack || got > high+slack || got == math.Trunc(got*100)/100 {
		t.Errorf("pidCPUSeconds(self) = %.9f s, want between %.9f and %.9f s, finer than a hundredth", got, low, high)
	}

	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := pidCPUSeconds(cmd.Process.Pid); err == nil {
		t.Errorf("pidCPUSeconds of reaped process %d: no error", cmd.Process.Pid)
	}
}

func TestRatio(t *testing.T) {
	tests := []struct {
		this, other float64
		more        bool
		want        string
	}{
		{0.1, 0.5, false, "5.00x"}, // this build takes a fifth of the time
		{500, 100, true, "5.00x"},  // this build does five times as many
		{0.5, 0.1, false, "0.20x"},
		{0, 1, false, "-"},
		{1, 0, true, "-"},
	}
	for _, tt := range tests {
		if got := ratio(tt.this, tt.other, tt.more); got != tt.want {
			t.Errorf("ratio(%v, %v, more %v): got %s, want %s", tt.this, tt.other, tt.more, got, tt.want)
		}
	}
}
