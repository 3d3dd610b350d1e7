//go:build long

package strategy

import "testing"

// TestLongAlphaBetaBeatsRandomAtChess is the 100-game run; make test-long runs it.
func TestLongAlphaBetaBeatsRandomAtChess(t *testing.T) {
	chessVersusRandom(t, 100)
}
