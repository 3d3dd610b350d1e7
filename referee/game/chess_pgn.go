package game

import (
	"strconv"
	"strings"

	"github.com/corentings/chess/v2"
)

// pgnLineWidth keeps movetext lines within the PGN export format's 79 columns.
const pgnLineWidth = 79

// chessPGN renders a game as PGN: the seven-tag roster with the values a referee knows ("?" for
// the rest), SetUp and FEN when the game did not start from the standard position, PlyCount
// and Termination, then the moves from start in SAN and the result.
func chessPGN(start *chess.Position, san []string, result, termination string) string {
	var b strings.Builder
	tags := [][2]string{
		{"Event", "Agent League"}, {"Site", "?"}, {"Date", "????.??.??"}, {"Round", "?"},
		{"White", "?"}, {"Black", "?"}, {"Result", result},
	}
	if fen := start.String(); fen != chessStartFEN {
		tags = append(tags, [2]string{"SetUp", "1"}, [2]string{"FEN", fen})
	}
	tags = append(tags, [2]string{"PlyCount", strconv.Itoa(len(san))}, [2]string{"Termination", pgnTermination(termination)})
	for _, t := range tags {
		b.WriteString("[" + t[0] + ` "` + t[1] + `"]` + "\n")
	}
	b.WriteString("\n")
	line := 0
	write := func(token string) {
		switch {
		case line == 0:
		case line+1+len(token) > pgnLineWidth:
			b.WriteString("\n")
			line = 0
		default:
			b.WriteString(" ")
			line++
		}
		b.WriteString(token)
		line += len(token)
	}
	// Ply numbers half-moves from 1 for White's first, so odd plies are White's.
	first := start.Ply()
	for k, m := range san {
		ply := first + k
		switch {
		case ply%2 == 1:
			write(strconv.Itoa((ply+1)/2) + ".")
		case k == 0:
			write(strconv.Itoa(ply/2) + "...")
		}
		write(m)
	}
	write(result)
	b.WriteString("\n")
	return b.String()
}

// pgnTermination is the PGN Termination tag value of a termination.
func pgnTermination(termination string) string {
	switch termination {
	case chessMoveCap:
		return "adjudication"
	case chessInProgress:
		return "unterminated"
	default:
		return "normal"
	}
}
