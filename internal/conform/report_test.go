package conform

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A failed required check fails the run; a failed recommended one only warns.
func TestReportVerdict(t *testing.T) {
	r := NewReport("player", "tic_tac_toe")
	r.Pass("player.registration", Required, "registered as p1")
	r.Fail("player.match_credentials", Recommended, "no credential echoed", "echo match_credential")
	if r.Failed() {
		t.Fatal("a recommended failure failed the run")
	}
	r.Check("player.move.legal", Required, errors.New("move {\"row\":9} is off the board"), "", "answer with an empty cell")
	if !r.Failed() {
		t.Fatal("a required failure did not fail the run")
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"pass  required     player.registration: registered as p1\n",
		"warn  recommended  player.match_credentials: no credential echoed\n      hint: echo match_credential\n",
		"fail  required     player.move.legal: move {\"row\":9} is off the board\n      hint: answer with an empty cell\n",
		"player conformance (tic_tac_toe): 1 pass, 1 fail, 1 warn, 0 skip. DOES NOT CONFORM",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Conforms bool     `json:"conforms"`
		Results  []Result `json:"results"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || doc.Conforms || len(doc.Results) != 3 || doc.Results[2].Status != Fail {
		t.Errorf("JSON report %s (%v)", js.String(), err)
	}
}

// A required check that could not run is not a pass.
func TestSkippedRequiredCheckFails(t *testing.T) {
	r := NewReport("referee", "nim")
	r.Skip("referee.result", Required, "the referee never registered")
	if !r.Failed() {
		t.Error("a skipped required check counted as passed")
	}
}
