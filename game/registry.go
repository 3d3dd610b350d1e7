package game

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sync"
)

// Factory builds games of one type.
type Factory struct {
	// Name is the game type, a lowercase underscore id such as "tic_tac_toe".
	Name string
	// Params declares every parameter the game accepts, by name, each with its type,
	// bounds and default (seed 003's typed values, see Param).
	Params map[string]Param
	// New builds a game from params checked against Params: every declared parameter is
	// present, normalized (an int param as int, see ParamSchema.Check).
	New func(params map[string]any) (Game, error)
}

// idPattern is the shape of game type, parameter and field names.
var idPattern = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// Registry maps game types to their factories. The zero value is an empty registry ready to
// use; it is safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	games map[string]registered
}

// registered is a factory's constructor with its checked parameter declarations.
type registered struct {
	new    func(params map[string]any) (Game, error)
	params ParamSchema
}

// Register adds f. It refuses an invalid or duplicate name, a nil constructor and a
// parameter declaration NewParamSchema refuses (a bad name or bound, a nesting
// too deep, a default that is missing or does not conform).
func (r *Registry) Register(f Factory) error {
	if f.Name == "" {
		return errors.New("register game: empty name")
	}
	if !idPattern.MatchString(f.Name) {
		return fmt.Errorf("register game %q: name must be lowercase letters, digits and single underscores", f.Name)
	}
	if f.New == nil {
		return fmt.Errorf("register game %q: nil constructor", f.Name)
	}
	params, err := NewParamSchema(f.Params)
	if err != nil {
		return fmt.Errorf("register game %q: %w", f.Name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.games[f.Name]; dup {
		return fmt.Errorf("register game %q: already registered", f.Name)
	}
	if r.games == nil {
		r.games = make(map[string]registered)
	}
	r.games[f.Name] = registered{new: f.New, params: params}
	return nil
}

// Types lists the registered game types, sorted.
func (r *Registry) Types() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.games))
}

// ParamSchema returns the declared parameters of gameType; it implements
// config.GameParams.
func (r *Registry) ParamSchema(gameType string) (ParamSchema, bool) {
	g, err := r.game(gameType)
	return g.params, err == nil
}

// Params checks raw parameters of gameType, as decoded from YAML or JSON, against its
// declaration and fills in defaults (ParamSchema.Check). Parameter problems come as a
// problem.List.
func (r *Registry) Params(gameType string, raw map[string]any) (map[string]any, error) {
	g, err := r.game(gameType)
	if err != nil {
		return nil, err
	}
	return g.params.Check(raw)
}

// New checks params like Params and builds a game of gameType.
func (r *Registry) New(gameType string, params map[string]any) (Game, error) {
	g, err := r.game(gameType)
	if err != nil {
		return nil, err
	}
	valid, err := g.params.Check(params)
	if err != nil {
		return nil, err
	}
	built, err := g.new(valid)
	if err != nil {
		return nil, fmt.Errorf("new %s: %w", gameType, err)
	}
	// A factory whose game reports another type would break routing by game_type.
	if built.Type() != gameType {
		return nil, fmt.Errorf("new %s: factory built a game of type %q", gameType, built.Type())
	}
	return built, nil
}

// Default returns a new registry holding the built-in games.
func Default() *Registry {
	r := &Registry{}
	for _, f := range builtinFactories() {
		if err := r.Register(f); err != nil {
			panic(err) // the built-ins are fixed; TestBuiltinsRegister catches a bad one
		}
	}
	return r
}

// builtinFactories are the factories of the games compiled in.
func builtinFactories() []Factory {
	return []Factory{evenOddFactory(), rockPaperScissorsFactory(), ticTacToeFactory(), connectFourFactory(), chessFactory()}
}

func (r *Registry) game(gameType string) (registered, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	g, ok := r.games[gameType]
	if !ok {
		return registered{}, fmt.Errorf("unknown game type %q", gameType)
	}
	return g, nil
}
