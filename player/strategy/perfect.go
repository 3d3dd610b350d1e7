package strategy

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/agentleague/agentleague/game"
)

// perfect plays tic_tac_toe by minimax and never loses. Among equally good moves it takes the
// first row-major, and it prefers quicker wins and slower losses.
type perfect struct{}

// Move implements Strategy.
func (perfect) Move(req Request) (json.RawMessage, error) {
	ctx, err := game.ParseTicTacToeContext(req.Context)
	if err != nil {
		return nil, err
	}
	b := ctx.Board
	values := minimaxValues()
	var best int8
	bestRow, bestCol := -1, -1
	for r := range 3 {
		for c := range 3 {
			if b[r][c] != "" {
				continue
			}
			b[r][c] = ctx.YourMark
			// The child's value is for the opponent, who moves next.
			v := -values[key(b)]
			b[r][c] = ""
			if bestRow < 0 || v > best {
				best, bestRow, bestCol = v, r, c
			}
		}
	}
	return json.RawMessage(fmt.Sprintf(`{"row":%d,"col":%d}`, bestRow, bestCol)), nil
}

// minimaxValues holds, for every position reachable from the empty board, its value for the
// player to move: 0 for a draw with best play, otherwise ±(10 - marks on the board when the game
// ends), so sooner wins score higher. Computed once; 3^9 entries indexed by key.
var minimaxValues = sync.OnceValue(func() *[19683]int8 {
	var values [19683]int8
	var known [19683]bool
	var solve func(b game.Board, marks int) int8
	solve = func(b game.Board, marks int) int8 {
		k := key(b)
		if known[k] {
			return values[k]
		}
		var v int8
		switch {
		case b.Winner() != "":
			// The previous mover completed a line, so the player to move has lost.
			v = -int8(10 - marks)
		case marks == 9:
			v = 0
		default:
			mark := "X"
			if marks%2 == 1 {
				mark = "O"
			}
			v = -127
			for r := range 3 {
				for c := range 3 {
					if b[r][c] != "" {
						continue
					}
					b[r][c] = mark
					v = max(v, -solve(b, marks+1))
					b[r][c] = ""
				}
			}
		}
		values[k], known[k] = v, true
		return v
	}
	solve(game.Board{}, 0)
	return &values
})

// key numbers a board in base 3, row-major: 0 empty, 1 X, 2 O.
func key(b game.Board) int {
	k := 0
	for r := range 3 {
		for c := range 3 {
			k *= 3
			switch b[r][c] {
			case "X":
				k++
			case "O":
				k += 2
			}
		}
	}
	return k
}
