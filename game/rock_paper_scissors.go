package game

import "encoding/json"

// TypeRockPaperScissors is the registry key of rock-paper-scissors.
const TypeRockPaperScissors = "rock_paper_scissors"

// beats maps each throw to the throw it beats.
var beats = map[string]string{"rock": "scissors", "paper": "rock", "scissors": "paper"}

var rockPaperScissorsRules = &roundRules{
	gameType: TypeRockPaperScissors,
	choices:  []string{"rock", "paper", "scissors"},
	judge: func(a, b string, _ int) int {
		switch {
		case beats[a] == b:
			return 1
		case beats[b] == a:
			return -1
		default:
			return 0
		}
	},
}

func rockPaperScissorsFactory() Factory {
	return Factory{
		Name: TypeRockPaperScissors,
		Params: map[string]Param{
			// Best of this many throws; the match ends once the leader cannot be caught.
			"rounds": Int(1, 999).Default(5),
		},
		New: func(params map[string]any) (Game, error) {
			return roundsGame{rules: rockPaperScissorsRules, rounds: params["rounds"].(int)}, nil
		},
	}
}

// ParseRockPaperScissorsContext reads the step_context a rock_paper_scissors player was shown,
// erroring unless the referee could have sent it.
func ParseRockPaperScissorsContext(raw json.RawMessage) (RoundsContext, error) {
	return rockPaperScissorsRules.parseContext(raw)
}
