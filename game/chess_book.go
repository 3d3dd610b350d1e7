package game

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentleague/agentleague/protocol"
	"github.com/corentings/chess/v2"
)

// MaxBookEntries bounds an opening book: every entry is checked when the league loads.
const MaxBookEntries = 100000

// ReadChessBook reads a chess opening book, by the extension of name:
//   - .epd: one position a line, as fastchess and cutechess take them: the four FEN fields,
//     then operations, of which hmvc and fmvn set the move clocks (a full six-field FEN is
//     taken too); blank lines and lines starting with # are skipped.
//   - .pgn: one opening a game: its moves from its start (the FEN tag's position when it
//     has one), at most plies of them when plies > 0.
//
// Each opening is named "<base name>#<n>" (n from 1) and checked against the rules: a
// legal position, legal moves, the game not over at its end. An error names the entry.
func ReadChessBook(name string, r io.Reader, plies int) ([]protocol.Opening, error) {
	base := filepath.Base(name)
	var out []protocol.Opening
	var err error
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".epd":
		out, err = readEPD(base, r)
	case ".pgn":
		out, err = readPGNBook(base, r, plies)
	default:
		return nil, fmt.Errorf("opening book %s: the name must end with .epd or .pgn, not %q", base, ext)
	}
	if err != nil {
		return nil, fmt.Errorf("opening book %s: %w", base, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("opening book %s: no openings", base)
	}
	g := chessGame{maxPlies: chessMaxPlies}
	for _, o := range out {
		if _, err := Open(g, 0, &o); err != nil {
			return nil, fmt.Errorf("opening book %s: %w", base, err)
		}
	}
	return out, nil
}

func readEPD(base string, r io.Reader) ([]protocol.Opening, error) {
	var out []protocol.Opening
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if len(out) == MaxBookEntries {
			return nil, fmt.Errorf("more than %d openings", MaxBookEntries)
		}
		fen, err := epdFEN(text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, protocol.Opening{Name: fmt.Sprintf("%s#%d", base, len(out)+1), FEN: fen, Moves: []json.RawMessage{}})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// epdFEN is the FEN of one EPD line: its four position fields and the move clocks of its
// hmvc and fmvn operations (0 and 1 without them), or of a full FEN's two number fields,
// whatever operations follow them.
func epdFEN(line string) (string, error) {
	fields := strings.Fields(line)
	if len(fields) < 4 {
		return "", fmt.Errorf("%q: an EPD position has four fields (placement, side, castling, en passant)", clipText(line))
	}
	if len(fields) >= 6 && isNumber(fields[4]) && isNumber(strings.TrimSuffix(fields[5], ";")) {
		return strings.Join(fields[:5], " ") + " " + strings.TrimSuffix(fields[5], ";"), nil
	}
	clocks := map[string]string{"hmvc": "0", "fmvn": "1"}
	for _, op := range strings.Split(strings.Join(fields[4:], " "), ";") {
		opcode, operand, _ := strings.Cut(strings.TrimSpace(op), " ")
		if _, ok := clocks[opcode]; ok {
			if !isNumber(strings.TrimSpace(operand)) {
				return "", fmt.Errorf("%s %q is not a number", opcode, operand)
			}
			clocks[opcode] = strings.TrimSpace(operand)
		}
	}
	return strings.Join(fields[:4], " ") + " " + clocks["hmvc"] + " " + clocks["fmvn"], nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseUint(s, 10, 31)
	return err == nil
}

func clipText(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// readPGNBook reads each game of a PGN with the library's scanner and parser.
func readPGNBook(base string, r io.Reader, plies int) ([]protocol.Opening, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	// The parser decodes FEN tags with the library's FEN decoder: serialised as decodeFEN is.
	fenMu.Lock()
	defer fenMu.Unlock()
	var out []protocol.Opening
	sc := chess.NewScanner(bytes.NewReader(data))
	for n := 1; sc.HasNext(); n++ {
		if n > MaxBookEntries {
			return nil, fmt.Errorf("more than %d openings", MaxBookEntries)
		}
		g, err := sc.ParseNext()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("game %d: %w", n, err)
		}
		o := protocol.Opening{Name: fmt.Sprintf("%s#%d", base, n), FEN: g.GetTagPair("FEN"), Moves: []json.RawMessage{}}
		for k, mv := range g.Moves() {
			if plies > 0 && k == plies {
				break
			}
			raw, _ := json.Marshal(mv.String())
			o.Moves = append(o.Moves, raw)
		}
		out = append(out, o)
	}
	return out, nil
}
