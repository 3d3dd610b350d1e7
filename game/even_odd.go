package game

// TypeEvenOdd is the registry key of the even/odd game.
const TypeEvenOdd = "even_odd"

// evenOddRules: each round both players call the parity of a number in 1..10 that the referee
// draws from the match seed; being right while the opponent is wrong wins the round.
var evenOddRules = &roundRules{
	gameType:  TypeEvenOdd,
	choices:   []string{"even", "odd"},
	numberMax: 10,
	judge: func(a, b string, number int) int {
		parity := "odd"
		if number%2 == 0 {
			parity = "even"
		}
		switch aRight, bRight := a == parity, b == parity; {
		case aRight && !bRight:
			return 1
		case bRight && !aRight:
			return -1
		default:
			return 0
		}
	},
}

func evenOddFactory() Factory {
	return Factory{
		Name: TypeEvenOdd,
		Params: map[string]Param{
			// Best of this many rounds; the match ends once the leader cannot be caught.
			"rounds": Int(1, 99).Default(5),
		},
		New: func(params map[string]any) (Game, error) {
			return roundsGame{rules: evenOddRules, rounds: params["rounds"].(int)}, nil
		},
	}
}
