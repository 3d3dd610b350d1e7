package llm

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/game"
)

func TestLLMReadAnswer(t *testing.T) {
	tests := []struct {
		name, text    string
		wantMove      string // "" when refused
		wantReasoning string
		wantErr       string
	}{
		{name: "bare", text: `{"reasoning":"r","move":"1,1"}`, wantMove: `"1,1"`, wantReasoning: "r"},
		{name: "in prose and a fence", text: "Sure.\n```json\n{\"move\": \"e2e4\", \"reasoning\": \"centre\"}\n```\nGood luck!", wantMove: `"e2e4"`, wantReasoning: "centre"},
		{name: "braces in thinking first", text: `<think>the set {a, b} and {"plan": 1}</think> {"move": 3}`, wantMove: `3`},
		{name: "nested", text: `{"answer": {"move": "rock", "reasoning": "x"}}`, wantMove: `"rock"`, wantReasoning: "x"},
		{name: "reasoning of another type", text: `{"move":"odd","reasoning":["a"]}`, wantMove: `"odd"`},
		{name: "a brace in a string", text: `{"reasoning":"it is a } trap","move":"0,0"}`, wantMove: `"0,0"`, wantReasoning: "it is a } trap"},
		{name: "prose", text: "I play the centre.", wantErr: "no JSON object was found in the answer"},
		{name: "empty", text: "", wantErr: "no JSON object was found in the answer"},
		{name: "cut", text: `{"reasoning": "long`, wantErr: "no JSON object was found in the answer"},
		{name: "no move member", text: `{"Move": "1,1"}`, wantErr: `the JSON object has no "move" member`},
		{name: "past the bound", text: strings.Repeat(" ", maxAnswerBytes) + `{"move":"1,1"}`, wantErr: "no JSON object was found in the answer"},
		{name: "more braces than tried", text: strings.Repeat("{", maxObjectTries) + `{"move":"1,1"}`, wantErr: "no JSON object was found in the answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := readAnswer(tt.text)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || string(a.move) != tt.wantMove || a.reasoning != tt.wantReasoning {
				t.Errorf("move %s, reasoning %q, error %v; want %s and %q", a.move, a.reasoning, err, tt.wantMove, tt.wantReasoning)
			}
		})
	}
}

func TestLLMExcerpt(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"  two\n\tlines \x00 and\xffbytes ", 100, "two lines and bytes"},
		{"ééééé", 3, "ééé…"},
	} {
		if got := excerpt(tt.in, tt.n); got != tt.want {
			t.Errorf("excerpt(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// Nothing a model writes makes reading its answer panic, and a move it names is a legal one.
func FuzzAnswer(f *testing.F) {
	for _, s := range []string{`{"move":"1,1"}`, "```{\"move\":{\"row\":0,\"col\":0}}```", `{"move":3}`, `{{{"move":null}`, `{"move":"\ud800"}`, "{\"move\":\"0,0\"}\xff"} {
		f.Add(s)
	}
	g, err := game.Default().New(game.TypeTicTacToe, nil)
	if err != nil {
		f.Fatal(err)
	}
	pos, err := describe(g, emptyBoard)
	if err != nil {
		f.Fatal(err)
	}
	legal, _ := g.LegalMoves(emptyBoard)
	f.Fuzz(func(t *testing.T, text string) {
		a, err := readAnswer(text)
		if err != nil {
			return
		}
		k, err := pos.find(a.move)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("reason %q spans lines", err)
			}
			return
		}
		if !json.Valid(pos.choices[k].move) || string(pos.choices[k].move) != string(legal[k]) {
			t.Errorf("found %s, not a legal move", pos.choices[k].move)
		}
	})
}
