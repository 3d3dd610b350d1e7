package game

import (
	"slices"
	"strings"
	"testing"
)

func TestChessSAN(t *testing.T) {
	// Scholar's mate: a capture and the mate mark.
	got, fen, err := ChessSAN([]string{"e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if want := "r1bqkb1r/pppp1Qpp/2n2n2/4p3/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 0 4"; fen != want {
		t.Errorf("fen %s, want %s", fen, want)
	}
	got, _, err = ChessSAN([]string{"e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "E1G1"})
	if err != nil {
		t.Fatal(err)
	}
	if got[len(got)-1] != "O-O" {
		t.Errorf("castling in upper case: got %v, want O-O last", got)
	}
	for _, tc := range []struct {
		moves []string
		want  string
	}{
		{[]string{"e2e4", "e2e4"}, "move 2: e2e4 is not legal"},
		{[]string{"e2"}, "move 1: "},
	} {
		if _, _, err := ChessSAN(tc.moves); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error with %q", tc.moves, err, tc.want)
		}
	}
}
