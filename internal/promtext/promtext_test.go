package promtext

import (
	"maps"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, text string
		want       map[string]float64
		wantErr    bool
	}{
		{"samples with and without labels", "# HELP a_total A.\n# TYPE a_total counter\na_total 3\nb{kind=\"x y\",result=\"ok\"} 1.5\n\n", map[string]float64{"a_total": 3, `b{kind="x y",result="ok"}`: 1.5}, false},
		{"special values", "c +Inf\nd NaN\n", nil, false},
		{"no value", "a_total\n", nil, true},
		{"bad value", "a_total three\n", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tc.text))
			if (err != nil) != tc.wantErr {
				t.Fatalf("got error %v, want error %v", err, tc.wantErr)
			}
			if tc.want != nil && !maps.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if tc.want == nil && !tc.wantErr && len(got) != 2 {
				t.Errorf("got %v, want two samples", got)
			}
		})
	}
}

func TestWithLabel(t *testing.T) {
	for _, tc := range [][2]string{
		{`league_current_round`, `league_current_round{league_id="l1"}`},
		{`league_matches{status="COMPLETED"}`, `league_matches{league_id="l1",status="COMPLETED"}`},
		{`league_registrations_total{kind="player",result="accepted"}`, `league_registrations_total{kind="player",league_id="l1",result="accepted"}`},
	} {
		if got := WithLabel(tc[0], "league_id", "l1"); got != tc[1] {
			t.Errorf("WithLabel(%s) = %s, want %s", tc[0], got, tc[1])
		}
	}
}
