package conform

import (
	"strings"
	"testing"
)

// Every check id is declared once, with a hint, and a counted check has a pass format.
func TestCheckDeclarations(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range append(append([]checkDef{}, playerChecks...), refereeChecks...) {
		if seen[d.id] {
			t.Errorf("%s declared twice", d.id)
		}
		seen[d.id] = true
		if d.hint == "" || (d.level != Required && d.level != Recommended) {
			t.Errorf("%s: level %q, hint %q", d.id, d.level, d.hint)
		}
		if d.pass != "" && strings.Count(d.pass, "%d") != 1 {
			t.Errorf("%s: pass format %q needs one %%d", d.id, d.pass)
		}
	}
}

// The first failure of a check stands, a counted check passes with its count, and a
// check never reached is skipped with the reason the run stopped.
func TestVerdicts(t *testing.T) {
	v := newVerdicts([]checkDef{
		{id: "a", level: Required, pass: "%d ok", hint: "fix a"},
		{id: "b", level: Recommended, hint: "fix b"},
		{id: "c", level: Required, hint: "fix c"},
	})
	v.ok("a")
	v.ok("a")
	v.fail("b", "first\nforged line")
	v.fail("b", "second")
	v.pass("b", "too late")
	v.stop("the agent left")
	r := NewReport("player", "tic_tac_toe")
	v.emit(r)
	got := r.Results()
	want := []Result{
		{ID: "a", Level: Required, Status: Pass, Reason: "2 ok"},
		{ID: "b", Level: Recommended, Status: Warn, Reason: "first forged line", Hint: "fix b"},
		{ID: "c", Level: Required, Status: Skip, Reason: "not reached: the agent left"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("result %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if long := clean(strings.Repeat("é", maxReason)); len(long) > maxReason+len("…") || !strings.HasSuffix(long, "…") {
		t.Errorf("a long reason is not cut: %d bytes", len(long))
	}
}
