package conform

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
)

// maxReason bounds a reason in the report: it quotes what the subject sent.
const maxReason = 1000

// clean makes a reason safe for one report line: what the subject sent may hold
// control characters (a newline would forge a line) and be long.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return truncate(s, maxReason)
}

// checkDef declares one check of a subject. The declarations are the list the report
// follows, so every run prints the same checks in the same order.
type checkDef struct {
	id    string
	level Level
	// pass is the reason of a pass counted with ok: a format with one %d, the count.
	pass string
	// hint says how to fix the check when it does not pass.
	hint string
}

// verdict is what a run found for one check.
type verdict struct {
	failed, skipped bool
	// reason is the first failure, the skip's reason, or an explicit pass reason.
	reason string
	// hint, when set, replaces the declared hint.
	hint string
	// count is how many times the check held (ok).
	count int
}

// verdicts collects the findings of a run, safe for concurrent use: the tool's
// servers record what they see while the run drives the subject. The first failure of
// a check stands; later passes do not undo it.
type verdicts struct {
	defs []checkDef

	mu  sync.Mutex
	got map[string]*verdict
	// stopped says why the run ended early; checks it never reached are skipped with it.
	stopped string
}

func newVerdicts(defs []checkDef) *verdicts {
	return &verdicts{defs: defs, got: map[string]*verdict{}}
}

func (v *verdicts) entry(id string) *verdict {
	e := v.got[id]
	if e == nil {
		e = &verdict{}
		v.got[id] = e
	}
	return e
}

// ok counts one instance of check id holding.
func (v *verdicts) ok(id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.entry(id)
	e.count++
	if e.skipped {
		e.skipped, e.reason = false, ""
	}
}

// pass records that check id holds, with the reason to print.
func (v *verdicts) pass(id, reason string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.entry(id)
	if !e.failed {
		e.skipped, e.reason = false, clean(reason)
		e.count++
	}
}

// fail records that check id does not hold; only the first failure is kept.
func (v *verdicts) fail(id, reason string) { v.failHint(id, reason, "") }

// failf is fail with a formatted reason.
func (v *verdicts) failf(id, format string, args ...any) { v.fail(id, fmt.Sprintf(format, args...)) }

// failHint is fail with a hint for this failure instead of the declared one.
func (v *verdicts) failHint(id, reason, hint string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.entry(id)
	if !e.failed {
		*e = verdict{failed: true, reason: clean(reason), hint: hint, count: e.count}
	}
}

// check records a pass with reason pass when err is nil, else a failure with err's text.
func (v *verdicts) check(id string, err error, pass string) {
	if err != nil {
		v.fail(id, err.Error())
		return
	}
	v.pass(id, pass)
}

// skip records that check id could not run, unless it already has a result.
func (v *verdicts) skip(id, why string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.entry(id)
	if !e.failed && e.count == 0 && e.reason == "" {
		e.skipped, e.reason = true, clean(why)
	}
}

// failed reports whether check id has failed so far.
func (v *verdicts) failed(id string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.got[id]
	return e != nil && e.failed
}

// decided reports whether check id has any result so far.
func (v *verdicts) decided(id string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.got[id]
	return e != nil && (e.failed || e.skipped || e.count > 0 || e.reason != "")
}

// stop records why the run ended early; the first reason stands.
func (v *verdicts) stop(why string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.stopped == "" {
		v.stopped = why
	}
}

// emit writes one result per declared check to r, in declaration order.
func (v *verdicts) emit(r *Report) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, d := range v.defs {
		e := v.got[d.id]
		switch {
		case e != nil && e.failed:
			hint := d.hint
			if e.hint != "" {
				hint = e.hint
			}
			r.Fail(d.id, d.level, e.reason, hint)
		case e != nil && !e.skipped && e.reason != "":
			r.Pass(d.id, d.level, e.reason)
		case e != nil && e.count > 0:
			r.Pass(d.id, d.level, fmt.Sprintf(d.pass, e.count))
		case e != nil && e.skipped:
			r.Skip(d.id, d.level, e.reason)
		default:
			why := "not reached"
			if v.stopped != "" {
				why = "not reached: " + v.stopped
			}
			r.Skip(d.id, d.level, why)
		}
	}
}
