package game

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/corentings/chess/v2"
)

// pgnLineWidth keeps movetext lines within the PGN export format's 79 columns.
const pgnLineWidth = 79

// PGNTag is one tag pair of a PGN header.
type PGNTag struct {
	Name, Value string
}

// ChessPGN renders a chess game played from the standard starting position in the PGN
// export format: the tags in the order given, their values escaped, then the moves in SAN
// and result as the game termination marker, which must agree with the Result tag.
func ChessPGN(tags []PGNTag, san []string, result string) string {
	return ChessPGNCommented(tags, san, nil, result)
}

// ChessPGNCommented is ChessPGN with a comment after each move: comments[k], when not
// empty, follows san[k] in braces (a "}" in it becomes ")"); a Black move after a comment
// gets its move number again ("1..."), as the export format asks.
func ChessPGNCommented(tags []PGNTag, san, comments []string, result string) string {
	// The standard position has White to move at ply 1.
	return formatPGN(tags, 1, san, comments, result)
}

// ChessPGNFrom is ChessPGNCommented for a game that started from startFEN: the SetUp and
// FEN tags follow the first seven tags, and the moves are numbered from the position's
// move number and side to move. An empty startFEN is the standard position.
func ChessPGNFrom(tags []PGNTag, startFEN string, san, comments []string, result string) (string, error) {
	if startFEN == "" || startFEN == chessStartFEN {
		return ChessPGNCommented(tags, san, comments, result), nil
	}
	start, err := decodeFEN(startFEN)
	if err != nil {
		return "", fmt.Errorf("pgn from %q: %w", startFEN, err)
	}
	at := min(7, len(tags))
	tags = slices.Concat(tags[:at], []PGNTag{{"SetUp", "1"}, {"FEN", startFEN}}, tags[at:])
	return formatPGN(tags, start.Ply(), san, comments, result), nil
}

// PGNClock is the comment of a clock after a move, in the form lichess and cutechess
// write and chess tools read: "[%clk H:MM:SS]", with tenths of a second when they are
// not zero ("[%clk 0:00:09.9]"); the time is cut, not rounded, to the tenth.
func PGNClock(ms int64) string {
	ms = max(ms, 0)
	tenths := ms / 100
	s := fmt.Sprintf("[%%clk %d:%02d:%02d", tenths/36000, tenths/600%60, tenths/10%60)
	if t := tenths % 10; t != 0 {
		s += "." + strconv.FormatInt(t, 10)
	}
	return s + "]"
}

// ChessPGNTermination is the PGN Termination tag value of a chess game that ended by the
// rules, given the termination Final reports: the move cap is the league adjudicating a
// draw, and a game stopped early is unterminated.
func ChessPGNTermination(termination string) string {
	switch termination {
	case chessMoveCap:
		return "adjudication"
	case chessInProgress:
		return "unterminated"
	default:
		return "normal"
	}
}

// chessPGN renders a game as PGN: the seven-tag roster with the values a referee knows ("?" for
// the rest), SetUp and FEN when the game did not start from the standard position, PlyCount
// and Termination, then the moves from start in SAN and the result. It is part of the final
// state, which league verify compares with a re-play: changing it fails the logs of past leagues.
func chessPGN(start *chess.Position, san []string, result, termination string) string {
	tags := []PGNTag{
		{"Event", "Agent League"}, {"Site", "?"}, {"Date", "????.??.??"}, {"Round", "?"},
		{"White", "?"}, {"Black", "?"}, {"Result", result},
	}
	if fen := start.String(); fen != chessStartFEN {
		tags = append(tags, PGNTag{"SetUp", "1"}, PGNTag{"FEN", fen})
	}
	tags = append(tags, PGNTag{"PlyCount", strconv.Itoa(len(san))}, PGNTag{"Termination", ChessPGNTermination(termination)})
	return formatPGN(tags, start.Ply(), san, nil, result)
}

// formatPGN writes the tags, an empty line, and the movetext of san, whose first move is
// ply firstPly of the game, each move followed by its comment (if any), wrapped within
// pgnLineWidth.
func formatPGN(tags []PGNTag, firstPly int, san, comments []string, result string) string {
	var b strings.Builder
	for _, t := range tags {
		b.WriteString("[" + t.Name + ` "` + pgnString(t.Value) + `"]` + "\n")
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
	commented := false // the last move has a comment
	for k, m := range san {
		ply := firstPly + k
		switch {
		case ply%2 == 1:
			write(strconv.Itoa((ply+1)/2) + ".")
		case k == 0 || commented:
			write(strconv.Itoa(ply/2) + "...")
		}
		write(m)
		commented = k < len(comments) && comments[k] != ""
		if commented {
			write("{" + strings.ReplaceAll(comments[k], "}", ")") + "}")
		}
	}
	write(result)
	b.WriteString("\n")
	return b.String()
}

// pgnString escapes a tag value as a PGN string token (standard section 7): a quote or a
// backslash is preceded by a backslash, and characters strings may not hold (newline, tab
// and other controls) become spaces.
func pgnString(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteRune('\\')
			b.WriteRune(r)
		case r < ' ' || r == 0x7f:
			b.WriteRune(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
