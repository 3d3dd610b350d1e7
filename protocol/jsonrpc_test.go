package protocol_test

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

func TestReasonCatalogue(t *testing.T) {
	reasons := protocol.Reasons()
	if len(reasons) == 0 {
		t.Fatal("empty catalogue")
	}
	jsonrpc := map[protocol.Reason]int{
		protocol.ReasonParseError:      -32700,
		protocol.ReasonInvalidRequest:  -32600,
		protocol.ReasonMethodNotFound:  -32601,
		protocol.ReasonSchemaViolation: -32602,
		protocol.ReasonInternal:        -32603,
	}
	byCode := map[int]protocol.Reason{}
	for i, r := range reasons {
		c := r.Code()
		if other, dup := byCode[c]; dup {
			t.Errorf("%s and %s share code %d", r, other, c)
		}
		byCode[c] = r
		if want, ok := jsonrpc[r]; ok {
			if c != want {
				t.Errorf("%s: got code %d, want %d", r, c, want)
			}
		} else if c < -32099 || c > -32000 {
			t.Errorf("%s: got code %d, want an application code in -32000..-32099", r, c)
		}
		if !regexp.MustCompile(`^[A-Z][A-Z_]*[A-Z]$`).MatchString(string(r)) {
			t.Errorf("got reason %q, want UPPER_SNAKE_CASE", r)
		}
		if i > 0 && reasons[i-1].Code() < c {
			t.Errorf("Reasons() not in code order: %s (%d) before %s (%d)", reasons[i-1], reasons[i-1].Code(), r, c)
		}
	}
	for r := range jsonrpc {
		if _, ok := byCode[r.Code()]; !ok || byCode[r.Code()] != r {
			t.Errorf("%s missing from Reasons()", r)
		}
	}
	// The reasons the issue names.
	for _, r := range []protocol.Reason{"UNAUTHORIZED", "SENDER_MISMATCH", "DUPLICATE_REGISTRATION", "NO_REFEREE_REGISTERED",
		"REGISTRATION_CLOSED", "UNKNOWN_MATCH", "NOT_ASSIGNED_REFEREE", "DUPLICATE_RESULT", "INVALID_RESULT",
		"LEAGUE_NOT_ACTIVE", "RATE_LIMITED", "SUSPENDED"} {
		if byCode[r.Code()] != r {
			t.Errorf("%s is not in the catalogue", r)
		}
	}
	if got := protocol.Reason("NO_SUCH_REASON").Code(); got != -32603 {
		t.Errorf("unknown reason: got code %d, want -32603", got)
	}
}

// TestReadmeCatalogue parses the error table of README.md: it lists exactly the reasons and
// codes of Reasons(), in the same order.
func TestReadmeCatalogue(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatalf("read README.md: %v", err)
	}
	row := regexp.MustCompile("^\\| `([A-Z_]+)` \\| (-?[0-9]+) \\| ([^|]+) \\| ([^|]+) \\|$")
	var got []string
	for line := range strings.SplitSeq(string(raw), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		code, _ := strconv.Atoi(m[2])
		got = append(got, fmt.Sprintf("%s %d", m[1], code))
		if strings.TrimSpace(m[3]) == "" || strings.TrimSpace(m[4]) == "" {
			t.Errorf("README row %s: meaning and retry must not be empty", m[1])
		}
	}
	var want []string
	for _, r := range protocol.Reasons() {
		want = append(want, fmt.Sprintf("%s %d", r, r.Code()))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("README catalogue:\ngot\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestErrorf(t *testing.T) {
	e := protocol.Errorf(protocol.ReasonUnknownMatch, "match %q is not in the schedule", "m9")
	if e.Code != -32005 || e.Message != `match "m9" is not in the schedule` || e.Data == nil || e.Data.Reason != protocol.ReasonUnknownMatch {
		t.Errorf("got %+v, want code -32005, the message and reason UNKNOWN_MATCH", e)
	}
	if got, want := e.Error(), `match "m9" is not in the schedule (-32005 UNKNOWN_MATCH)`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("assign: %w", e)
	if got := protocol.ReasonOf(wrapped); got != protocol.ReasonUnknownMatch {
		t.Errorf("ReasonOf(wrapped): got %q, want UNKNOWN_MATCH", got)
	}
	if got := protocol.ReasonOf(errors.New("x")); got != "" {
		t.Errorf("ReasonOf(plain): got %q, want empty", got)
	}
	if got := protocol.ReasonOf(&protocol.Error{Code: 1, Message: "m"}); got != "" {
		t.Errorf("ReasonOf(no data): got %q, want empty", got)
	}
}
