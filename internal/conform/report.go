// Package conform certifies an agent or a League Manager written by anyone: it plays the
// other roles of the protocol against the subject, drives it through a match and through
// bad inputs, and reports one result per check with the reason and a hint to fix it.
package conform

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// Level says whether a check is one seed 004 demands (Required) or one of our protocol
// extensions and good practices (Recommended).
type Level string

// Levels of a check.
const (
	Required    Level = "required"
	Recommended Level = "recommended"
)

// Status is how a check ended. A recommended check that does not hold is a Warn, a
// required one a Fail; Skip means the check could not run (e.g. the subject never got
// that far), and says why.
type Status string

// Statuses of a check.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Warn Status = "warn"
	Skip Status = "skip"
)

// Result is the outcome of one check.
type Result struct {
	// ID names the check, e.g. "player.registration.schema"; stable, for scripts.
	ID     string `json:"id"`
	Level  Level  `json:"level"`
	Status Status `json:"status"`
	// Reason says what was seen: for a pass what held, otherwise what went wrong.
	Reason string `json:"reason"`
	// Hint says how to fix a check that did not pass.
	Hint string `json:"hint,omitempty"`
}

// Report collects the results of a run, safe for concurrent use.
type Report struct {
	// Subject is "player", "referee" or "league-manager"; Game the game_type used.
	Subject string `json:"subject"`
	Game    string `json:"game"`

	mu      sync.Mutex
	results []Result
}

// NewReport starts the report of a run against subject playing game.
func NewReport(subject, game string) *Report {
	return &Report{Subject: subject, Game: game}
}

// Pass records a check that held.
func (r *Report) Pass(id string, level Level, reason string) {
	r.add(Result{ID: id, Level: level, Status: Pass, Reason: reason})
}

// Fail records a check that did not hold: a Fail if it is required, a Warn if only
// recommended.
func (r *Report) Fail(id string, level Level, reason, hint string) {
	st := Fail
	if level == Recommended {
		st = Warn
	}
	r.add(Result{ID: id, Level: level, Status: st, Reason: reason, Hint: hint})
}

// Check records a pass with passReason when err is nil, else a failure with err's text
// and hint.
func (r *Report) Check(id string, level Level, err error, passReason, hint string) {
	if err == nil {
		r.Pass(id, level, passReason)
		return
	}
	r.Fail(id, level, err.Error(), hint)
}

// Skip records a check that could not run, and why.
func (r *Report) Skip(id string, level Level, why string) {
	r.add(Result{ID: id, Level: level, Status: Skip, Reason: why})
}

func (r *Report) add(res Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.results = append(r.results, res)
}

// Results returns the results so far, in the order they were recorded.
func (r *Report) Results() []Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Result(nil), r.results...)
}

// Failed reports whether a required check failed or could not run: what the exit code
// of `league conform` says.
func (r *Report) Failed() bool {
	for _, res := range r.Results() {
		if res.Level == Required && (res.Status == Fail || res.Status == Skip) {
			return true
		}
	}
	return false
}

// WriteText writes one line per check, then a summary line.
func (r *Report) WriteText(w io.Writer) error {
	counts := map[Status]int{}
	for _, res := range r.Results() {
		counts[res.Status]++
		line := fmt.Sprintf("%-4s  %-11s  %s: %s", res.Status, res.Level, res.ID, res.Reason)
		if res.Hint != "" && res.Status != Pass {
			line += "\n      hint: " + res.Hint
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	verdict := "CONFORMS: every required check passed"
	if r.Failed() {
		verdict = "DOES NOT CONFORM: a required check failed or could not run"
	}
	_, err := fmt.Fprintf(w, "%s %s (%s): %d pass, %d fail, %d warn, %d skip. %s\n",
		r.Subject, "conformance", r.Game, counts[Pass], counts[Fail], counts[Warn], counts[Skip], verdict)
	return err
}

// WriteJSON writes the report as one JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	doc := struct {
		Subject  string   `json:"subject"`
		Game     string   `json:"game"`
		Conforms bool     `json:"conforms"`
		Results  []Result `json:"results"`
	}{r.Subject, r.Game, !r.Failed(), r.Results()}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
