package game

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/internal/problem"
)

func stubFactory(name string, params map[string]Param) Factory {
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
		{"empty name", stubFactory("", nil), "register game: empty name"},
		{"upper case", stubFactory("TicTacToe", nil), "name must be lowercase"},
		{"dash", stubFactory("tic-tac-toe", nil), "name must be lowercase"},
		{"double underscore", stubFactory("tic__tac", nil), "name must be lowercase"},
		{"leading digit", stubFactory("3d_chess", nil), "name must be lowercase"},
		{"nil constructor", Factory{Name: "chess"}, `register game "chess": nil constructor`},
		{"duplicate", stubFactory("tic_tac_toe", nil), `register game "tic_tac_toe": already registered`},
		{"bad param name", stubFactory("chess", map[string]Param{"Depth": Int(0, 1).Default(0)}), `param "Depth": name must be`},
		{"min above max", stubFactory("chess", map[string]Param{"depth": Int(3, 1).Default(2)}), "min 3 exceeds max 1"},
		{"no default", stubFactory("chess", map[string]Param{"depth": Int(0, 9)}),
			`register game "chess": param "depth": no default (a game must be playable without params)`},
		{"default out of bounds", stubFactory("chess", map[string]Param{"depth": Int(1, 9).Default(0)}),
			`register game "chess": param "depth": default: must be >= 1, got 0`},
		{"default wrong type", stubFactory("chess", map[string]Param{"fast": Bool().Default("yes")}),
			`param "fast": default: must be true or false, got "yes"`},
		{"default not a category", stubFactory("chess", map[string]Param{"side": Categorical("white", "black").Default("red")}),
			`param "side": default: must be one of "white", "black", got "red"`},
		{"bad nested default", stubFactory("chess", map[string]Param{"board": Object(map[string]Param{"size": Int(3, 19)}).Default(map[string]any{"size": 2})}),
			`param "board": default: size: must be >= 3, got 2`},
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
		if err := r.Register(stubFactory(name, nil)); err != nil {
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
	err := r.Register(stubFactory("options", map[string]Param{
		"side":  Categorical("white", "black").Default("white"),
		"name":  Str("", 0).Default("x"),
		"fast":  Bool().Default(false),
		"depth": Int(-5, 5).Default(int64(2)),
	}))
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
		{"chess max_plies too few", TypeChess, map[string]any{"max_plies": 9}, nil, "max_plies: must be >= 10, got 9"},
		{"negative int in bounds", "options", map[string]any{"depth": -5}, map[string]any{"side": "white", "name": "x", "fast": false, "depth": -5}, ""},
		{"all kinds", "options", map[string]any{"side": "black", "name": "", "fast": true, "depth": 5},
			map[string]any{"side": "black", "name": "", "fast": true, "depth": 5}, ""},
		{"unknown game", "go", nil, nil, `unknown game type "go"`},
		{"unknown param", TypeEvenOdd, map[string]any{"round": 3}, nil, "round: unknown parameter"},
		{"unknown params reported sorted", TypeTicTacToe, map[string]any{"b": 1, "a": 1}, nil, "a: unknown parameter; b: unknown parameter"},
		{"every problem", "options", map[string]any{"depth": 6, "fast": "no", "size": 3}, nil,
			`size: unknown parameter; depth: must be <= 5, got 6; fast: must be true or false, got "no"`},
		{"below min", TypeEvenOdd, map[string]any{"rounds": 0}, nil, "rounds: must be >= 1, got 0"},
		{"above max", TypeRockPaperScissors, map[string]any{"rounds": 1000}, nil, "rounds: must be <= 999, got 1000"},
		{"huge uint", TypeEvenOdd, map[string]any{"rounds": uint64(1 << 63)}, nil, "rounds: must be <= 99, got 9223372036854775808"},
		{"huge negative", TypeEvenOdd, map[string]any{"rounds": -1e300}, nil, "rounds: must be >= 1, got -1e+300"},
		{"huge float", TypeEvenOdd, map[string]any{"rounds": 1e300}, nil, "rounds: must be <= 99, got 1e+300"},
		{"fractional float", TypeEvenOdd, map[string]any{"rounds": 2.5}, nil, "rounds: must be an integer, got 2.5"},
		{"bad json number", TypeEvenOdd, map[string]any{"rounds": json.Number("five")}, nil, "rounds: must be an integer, got five"},
		{"string for int", TypeEvenOdd, map[string]any{"rounds": "5"}, nil, `rounds: must be an integer, got "5"`},
		{"null", TypeEvenOdd, map[string]any{"rounds": nil}, nil, "rounds: must be an integer, got null"},
		{"int for bool", "options", map[string]any{"fast": 1}, nil, "fast: must be true or false, got 1"},
		{"int for string", "options", map[string]any{"name": 1}, nil, "name: must be a string, got 1"},
		{"not a category", "options", map[string]any{"side": "red"}, nil, `side: must be one of "white", "black", got "red"`},
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

func TestParamsErrorListsProblems(t *testing.T) {
	_, err := Default().Params(TypeEvenOdd, map[string]any{"rounds": 100, "round": 3})
	var pe problem.List
	if !errors.As(err, &pe) {
		t.Fatalf("got error %v of type %T, want a problem.List", err, err)
	}
	want := problem.List{{Path: "round", Message: "unknown parameter"}, {Path: "rounds", Message: "must be <= 99, got 100"}}
	if !slices.Equal(pe, want) {
		t.Errorf("got problems %+v, want %+v", pe, want)
	}
}

func TestRegisterCopiesDeclarations(t *testing.T) {
	params := map[string]Param{
		"side":  Categorical("white", "black").Default("white"),
		"heaps": List(Int(1, 9), 4).Default([]any{1, 2}),
	}
	var r Registry
	if err := r.Register(stubFactory("options", params)); err != nil {
		t.Fatal(err)
	}
	params["side"] = Categorical("red").Default("red")
	params["extra"] = Bool().Default(true)
	got, err := r.Params("options", map[string]any{"side": "black"})
	if err != nil {
		t.Fatalf("got error %v after the caller changed its declarations, want none", err)
	}
	want := map[string]any{"side": "black", "heaps": []any{1, 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// A game that changes its params must not change the default the next game gets.
	got["heaps"].([]any)[0] = 9
	if again, _ := r.Params("options", nil); !reflect.DeepEqual(again["heaps"], []any{1, 2}) {
		t.Errorf("got default heaps %v after a change to an earlier result, want [1 2]", again["heaps"])
	}
}

func TestRegistryNew(t *testing.T) {
	r := Default()
	failing := Factory{Name: "broken", New: func(map[string]any) (Game, error) { return nil, errors.New("no board") }}
	mislabelled := stubFactory("mislabelled", nil) // builds a tic_tac_toe game
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
		{"bad params", TypeEvenOdd, map[string]any{"rounds": 0}, "", 0, "rounds: must be >= 1, got 0"},
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

// TestBuiltinsRegister registers every built-in game on its own, so that a declaration
// Register refuses (a default out of its bounds, say) fails here by name, not as a panic
// in Default.
func TestBuiltinsRegister(t *testing.T) {
	for _, f := range builtinFactories() {
		var r Registry
		if err := r.Register(f); err != nil {
			t.Errorf("%v", err)
		}
	}
}

// TestBuiltinParamsSurviveTheWire checks that every built-in game's default params, sent
// as JSON in a match assignment and decoded there, check to the same params and build
// the game.
func TestBuiltinParamsSurviveTheWire(t *testing.T) {
	r := Default()
	for _, gameType := range r.Types() {
		t.Run(gameType, func(t *testing.T) {
			params, err := r.Params(gameType, nil)
			if err != nil {
				t.Fatalf("defaults: %v", err)
			}
			var wire map[string]any
			if err := json.Unmarshal([]byte(mustMarshal(t, params)), &wire); err != nil {
				t.Fatal(err)
			}
			again, err := r.Params(gameType, wire)
			if err != nil || !reflect.DeepEqual(again, params) {
				t.Errorf("got %v, %v from the wire, want %v", again, err, params)
			}
			if _, err := r.New(gameType, wire); err != nil {
				t.Errorf("New from the wire: %v", err)
			}
		})
	}
}
