package uci

import (
	"encoding/json"
	"strconv"
)

// maxPV bounds the principal variation kept with a move.
const maxPV = 8

// searchInfo is what the engine said of its search in its info lines, the latest value of
// each field.
type searchInfo struct {
	Depth     int64    `json:"depth,omitempty"`
	SelDepth  int64    `json:"seldepth,omitempty"`
	ScoreCP   *int64   `json:"score_cp,omitempty"`
	ScoreMate *int64   `json:"score_mate,omitempty"`
	Nodes     int64    `json:"nodes,omitempty"`
	NPS       int64    `json:"nps,omitempty"`
	TimeMS    int64    `json:"time_ms,omitempty"`
	PV        []string `json:"pv,omitempty"`
}

// update reads one info line (words[0] is "info"). Lines about another line of a multi-PV
// search are ignored, so are unknown words and numbers that do not parse; "string" ends
// the line's data, since the rest is free text.
func (s *searchInfo) update(words []string) {
	num := func(k int) (int64, bool) {
		if k >= len(words) {
			return 0, false
		}
		n, err := strconv.ParseInt(words[k], 10, 64)
		return n, err == nil
	}
	for k := 1; k < len(words); k++ {
		if words[k] == "multipv" {
			if n, ok := num(k + 1); ok && n != 1 {
				return
			}
		}
	}
	for k := 1; k < len(words); k++ {
		switch words[k] {
		case "string":
			return
		case "depth", "seldepth", "nodes", "nps", "time":
			n, ok := num(k + 1)
			if !ok {
				continue
			}
			k++
			switch words[k-1] {
			case "depth":
				s.Depth = n
			case "seldepth":
				s.SelDepth = n
			case "nodes":
				s.Nodes = n
			case "nps":
				s.NPS = n
			case "time":
				s.TimeMS = n
			}
		case "score":
			if k+1 >= len(words) {
				continue
			}
			n, ok := num(k + 2)
			if !ok {
				continue
			}
			switch words[k+1] {
			case "cp":
				s.ScoreCP, s.ScoreMate = &n, nil
			case "mate":
				s.ScoreCP, s.ScoreMate = nil, &n
			}
			k += 2
		case "pv":
			s.PV = s.PV[:0]
			for k++; k < len(words) && len(s.PV) < maxPV && isUCIMove(words[k]); k++ {
				s.PV = append(s.PV, words[k])
			}
			return // the pv runs to the end of the line
		}
	}
}

// moveNote is the metadata kept with a move.
type moveNote struct {
	Name string `json:"name,omitempty"`
	searchInfo
	// ElapsedMS is the whole move as the player timed it.
	ElapsedMS int64 `json:"elapsed_ms"`
	// Stopped: the engine was told to stop at the deadline.
	Stopped bool `json:"stopped,omitempty"`
	// Restarts counts the engines started again in this match so far.
	Restarts int `json:"restarts,omitempty"`
}

// metadata is the note as the player sends it beside the move: {"engine": {...}}. Every
// field is bounded, so it stays well under the 1 KiB a referee keeps.
func (n moveNote) metadata() json.RawMessage {
	// Strings, numbers and bools only: Marshal cannot fail.
	raw, _ := json.Marshal(map[string]moveNote{"engine": n})
	return raw
}

// isUCIMove reports whether s is a move in UCI's long algebraic notation, e.g. e2e4 or e7e8q.
func isUCIMove(s string) bool {
	square := func(f, r byte) bool { return f >= 'a' && f <= 'h' && r >= '1' && r <= '8' }
	switch len(s) {
	case 4:
		return square(s[0], s[1]) && square(s[2], s[3])
	case 5:
		return square(s[0], s[1]) && square(s[2], s[3]) && (s[4] == 'q' || s[4] == 'r' || s[4] == 'b' || s[4] == 'n')
	}
	return false
}
