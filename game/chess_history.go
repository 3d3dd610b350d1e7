package game

import (
	"fmt"

	"github.com/corentings/chess/v2"
)

// ChessSAN writes in SAN the moves uci, given in UCI and played from the standard starting
// position, e.g. for a player that shows a game's history to a model, and returns the FEN of
// the position they lead to. It errors at the first move that is not legal in its position.
func ChessSAN(uci []string) (san []string, fen string, err error) {
	pos, err := decodeFEN(chessStartFEN)
	if err != nil {
		return nil, "", err
	}
	san = make([]string, 0, len(uci))
	for k, s := range uci {
		u, err := parseUCI(s)
		if err != nil {
			return nil, "", fmt.Errorf("chess san: move %d: %w", k+1, err)
		}
		var m *chess.Move
		for _, legal := range pos.ValidMoves() {
			if legal.String() == u {
				m = &legal
				break
			}
		}
		if m == nil {
			return nil, "", fmt.Errorf("chess san: move %d: %s is not legal in %s", k+1, u, pos)
		}
		san = append(san, chess.AlgebraicNotation{}.Encode(pos, m))
		pos = pos.Update(m)
	}
	return san, pos.String(), nil
}
