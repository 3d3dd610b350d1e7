package game

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
)

func stubFactory(name string, params ...ParamSpec) Factory {
	return Factory{
		Name:   name,
		Params: params,
		New:    func(map[string]any) (Game, error) { return ticTacToe{}, nil },
	}
}

func TestRegisterRefuses(t *testing.T) {
	tests := []struct {
		name    string
		factory Factory
		wantErr string
	}{
		{"empty name", stubFactory(""), "register game: empty name"},
		{"upper case", stubFactory("TicTacToe"), "name must be lowercase"},
		{"dash", stubFactory("tic-tac-toe"), "name must be lowercase"},
		{"double underscore", stubFactory("tic__tac"), "name must be lowercase"},
		{"leading digit", stubFactory("3d_chess"), "name must be lowercase"},
		{"nil constructor", Factory{Name: "chess"}, `register game "chess": nil constructor`},
		{"duplicate", stubFactory("tic_tac_toe"), `register game "tic_tac_toe": already registered`},
		{"bad param name", stubFactory("chess", ParamSpec{Name: "Depth", Kind: KindInt}), `param "Depth": name must be`},
		{"param twice", stubFactory("chess",
			ParamSpec{Name: "depth", Kind: KindInt, Default: 0},
			ParamSpec{Name: "depth", Kind: KindInt, Default: 0}), `param "depth": declared twice`},
		{"unknown kind", stubFactory("chess", ParamSpec{Name: "depth", Kind: "float"}), `param "depth": unknown kind "float"`},
		{"min above max", stubFactory("chess", ParamSpec{Name: "depth", Kind: KindInt, Min: 3, Max: 1, Default: 2}), "min 3 exceeds max 1"},
		{"enum on int", stubFactory("chess", ParamSpec{Name: "depth", Kind: KindInt, Enum: []string{"a"}}), "enum on a int parameter"},
		{"no default", stubFactory("chess", ParamSpec{Name: "depth", Kind: KindInt}),
			`param "depth": default: must be an integer (got null)`},
		{"default out of bounds", stubFactory("chess", ParamSpec{Name: "depth", Kind: KindInt, Default: 0, Min: 1, Max: 9}),
			`param "depth": default: must be between 1 and 9 (got 0)`},
		{"default wrong kind", stubFactory("chess", ParamSpec{Name: "fast", Kind: KindBool, Default: "yes"}),
			`param "fast": default: must be a bool (got string "yes")`},
		{"default not in enum", stubFactory("chess", ParamSpec{Name: "side", Kind: KindString, Default: "red", Enum: []string{"white", "black"}}),
			`param "side": default: must be one of "white", "black" (got "red")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Default()
			err := r.Register(tt.factory)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
			}
			if got, want := r.Types(), Default().Types(); !slices.Equal(got, want) {
				t.Errorf("got types %v after a refused Register, want %v", got, want)
			}
		})
	}
}

func TestRegistryTypes(t *testing.T) {
	var r Registry
	if got := r.Types(); len(got) != 0 {
		t.Fatalf("got types %v from a zero Registry, want none", got)
	}
	for _, name := range []string{"zebra", "alpha", "mid_game"} {
		if err := r.Register(stubFactory(name)); err != nil {
			t.Fatalf("register %s: %v", name, err)
		}
	}
	if got, want := r.Types(), []string{"alpha", "mid_game", "zebra"}; !slices.Equal(got, want) {
		t.Errorf("got types %v, want %v", got, want)
	}
	if got, want := Default().Types(), []string{TypeChess, TypeConnectFour, TypeEvenOdd, TypeRockPaperScissors, TypeTicTacToe}; !slices.Equal(got, want) {
		t.Errorf("got default types %v, want %v", got, want)
	}
}

func TestRegistryParams(t *testing.T) {
	r := Default()
	err := r.Register(stubFactory("options",
		ParamSpec{Name: "side", Kind: KindString, Default: "white", Enum: []string{"white", "black"}},
		ParamSpec{Name: "name", Kind: KindString, Default: "x"},
		ParamSpec{Name: "fast", Kind: KindBool, Default: false},
		ParamSpec{Name: "depth", Kind: KindInt, Default: int64(2), Min: -5, Max: 5},
	))
	if err != nil {
		t.Fatalf("register options: %v", err)
	}
	tests := []struct {
		name     string
		gameType string
		raw      map[string]any
		want     map[string]any
		wantErr  string
	}{
		{"defaults", TypeEvenOdd, nil, map[string]any{"rounds": 5}, ""},
		{"int", TypeEvenOdd, map[string]any{"rounds": 7}, map[string]any{"rounds": 7}, ""},
		{"int64", TypeRockPaperScissors, map[string]any{"rounds": int64(999)}, map[string]any{"rounds": 999}, ""},
		{"uint8", TypeRockPaperScissors, map[string]any{"rounds": uint8(3)}, map[string]any{"rounds": 3}, ""},
		{"integral float", TypeEvenOdd, map[string]any{"rounds": 9.0}, map[string]any{"rounds": 9}, ""},
		{"json number", TypeEvenOdd, map[string]any{"rounds": json.Number("11")}, map[string]any{"rounds": 11}, ""},
		{"json number float form", TypeEvenOdd, map[string]any{"rounds": json.Number("1.2e1")}, map[string]any{"rounds": 12}, ""},
		{"no params game", TypeTicTacToe, map[string]any{}, map[string]any{}, ""},
		{"connect_four", TypeConnectFour, nil, map[string]any{}, ""},
		{"chess default", TypeChess, nil, map[string]any{"max_plies": 200}, ""},
		{"chess max_plies", TypeChess, map[string]any{"max_plies": 700}, map[string]any{"max_plies": 700}, ""},
		{"chess max_plies too few", TypeChess, map[string]any{"max_plies": 9}, nil, "max_plies: must be between 10 and 700 (got 9)"},
		{"negative int in bounds", "options", map[string]any{"depth": -5}, map[string]any{"side": "white", "name": "x", "fast": false, "depth": -5}, ""},
		{"all kinds", "options", map[string]any{"side": "black", "name": "", "fast": true, "depth": 5},
			map[string]any{"side": "black", "name": "", "fast": true, "depth": 5}, ""},
		{"unknown game", "go", nil, nil, `unknown game type "go"`},
		{"unknown param", TypeEvenOdd, map[string]any{"round": 3}, nil, "round: unknown parameter"},
		{"unknown params reported sorted", TypeTicTacToe, map[string]any{"b": 1, "a": 1}, nil, "a: unknown parameter"},
		{"below min", TypeEvenOdd, map[string]any{"rounds": 0}, nil, "rounds: must be between 1 and 99 (got 0)"},
		{"above max", TypeRockPaperScissors, map[string]any{"rounds": 1000}, nil, "rounds: must be between 1 and 999 (got 1000)"},
		{"huge uint", TypeEvenOdd, map[string]any{"rounds": uint64(1 << 63)}, nil, "rounds: must be an integer (got uint64 9223372036854775808)"},
		{"huge float", TypeEvenOdd, map[string]any{"rounds": 1e300}, nil, "rounds: must be an integer (got float64 1e+300)"},
		{"fractional float", TypeEvenOdd, map[string]any{"rounds": 2.5}, nil, "rounds: must be an integer (got float64 2.5)"},
		{"bad json number", TypeEvenOdd, map[string]any{"rounds": json.Number("five")}, nil, "rounds: must be an integer"},
		{"string for int", TypeEvenOdd, map[string]any{"rounds": "5"}, nil, `rounds: must be an integer (got string "5")`},
		{"null", TypeEvenOdd, map[string]any{"rounds": nil}, nil, "rounds: must be an integer (got null)"},
		{"int for bool", "options", map[string]any{"fast": 1}, nil, "fast: must be a bool (got int 1)"},
		{"int for string", "options", map[string]any{"name": 1}, nil, "name: must be a string (got int 1)"},
		{"not in enum", "options", map[string]any{"side": "red"}, nil, `side: must be one of "white", "black" (got "red")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Params(tt.gameType, tt.raw)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestParamErrorNamesParam(t *testing.T) {
	_, err := Default().Params(TypeEvenOdd, map[string]any{"rounds": 100})
	var pe *ParamError
	if !errors.As(err, &pe) {
		t.Fatalf("got error %v of type %T, want a *ParamError", err, err)
	}
	if pe.Param != "rounds" {
		t.Errorf("got param %q, want %q", pe.Param, "rounds")
	}
}

func TestRegisterCopiesSpecs(t *testing.T) {
	specs := []ParamSpec{{Name: "side", Kind: KindString, Default: "white", Enum: []string{"white", "black"}}}
	var r Registry
	if err := r.Register(stubFactory("options", specs...)); err != nil {
		t.Fatal(err)
	}
	specs[0].Enum[1] = "red"
	specs[0].Default = "red"
	got, err := r.Params("options", map[string]any{"side": "black"})
	if err != nil {
		t.Fatalf("got error %v after the caller changed its specs, want none", err)
	}
	if got["side"] != "black" {
		t.Errorf("got side %v, want black", got["side"])
	}
	if got, _ := r.Params("options", nil); got["side"] != "white" {
		t.Errorf("got default side %v, want white", got["side"])
	}
}

func TestRegistryNew(t *testing.T) {
	r := Default()
	failing := Factory{Name: "broken", New: func(map[string]any) (Game, error) { return nil, errors.New("no board") }}
	mislabelled := stubFactory("mislabelled") // builds a tic_tac_toe game
	for _, f := range []Factory{failing, mislabelled} {
		if err := r.Register(f); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name       string
		gameType   string
		params     map[string]any
		wantType   string
		wantRounds int
		wantErr    string
	}{
		{"even_odd default", TypeEvenOdd, nil, TypeEvenOdd, 5, ""},
		{"rps rounds", TypeRockPaperScissors, map[string]any{"rounds": 3.0}, TypeRockPaperScissors, 3, ""},
		{"tic_tac_toe", TypeTicTacToe, nil, TypeTicTacToe, 0, ""},
		{"bad params", TypeEvenOdd, map[string]any{"rounds": 0}, "", 0, "rounds: must be between 1 and 99 (got 0)"},
		{"unknown type", "go", nil, "", 0, `unknown game type "go"`},
		{"constructor error", "broken", nil, "", 0, "new broken: no board"},
		{"type mismatch", "mislabelled", nil, "", 0, `new mislabelled: factory built a game of type "tic_tac_toe"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := r.New(tt.gameType, tt.params)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if g.Type() != tt.wantType {
				t.Errorf("got type %q, want %q", g.Type(), tt.wantType)
			}
			if rg, ok := g.(roundsGame); ok && rg.rounds != tt.wantRounds {
				t.Errorf("got %d rounds, want %d", rg.rounds, tt.wantRounds)
			}
		})
	}
}
