package game

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ParamKind is the type of a game parameter.
type ParamKind string

// Parameter kinds.
const (
	KindInt    ParamKind = "int"
	KindString ParamKind = "string"
	KindBool   ParamKind = "bool"
)

// ParamSpec declares one game parameter with its default and bounds.
type ParamSpec struct {
	// Name is the key under a game's params, a lowercase underscore id.
	Name string
	// Kind is the value's type.
	Kind ParamKind
	// Default is used when the parameter is absent; it must itself be valid.
	Default any
	// Min and Max are the inclusive bounds of an int parameter.
	Min, Max int
	// Enum lists the allowed values of a string parameter; empty allows any string.
	Enum []string
	// Doc says what the parameter does.
	Doc string
}

// Factory builds games of one type.
type Factory struct {
	// Name is the game type, a lowercase underscore id such as "tic_tac_toe".
	Name string
	// Params declares every parameter the game accepts.
	Params []ParamSpec
	// New builds a game from params that were validated against Params, so every declared
	// parameter is present with its kind's Go type (int, string or bool).
	New func(params map[string]any) (Game, error)
}

// ParamError reports an invalid game parameter. Its message begins with the parameter name so a
// config loader can prefix the path to it, e.g. "games[2].params.".
type ParamError struct {
	// Param is the parameter name.
	Param string
	// Reason says what is wrong with the value.
	Reason string
}

// Error returns "param: reason".
func (e *ParamError) Error() string { return e.Param + ": " + e.Reason }

// idPattern is the shape of game type and parameter names.
var idPattern = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// Registry maps game types to their factories. The zero value is an empty registry ready to
// use; it is safe for concurrent use.
type Registry struct {
	mu        sync.RWMutex
	factories map[string]Factory
}

// Register adds f. It refuses an invalid or duplicate name, a nil constructor and parameter
// specs that are inconsistent (bad name or kind, duplicate, default out of bounds).
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
	specs, err := checkSpecs(f.Params)
	if err != nil {
		return fmt.Errorf("register game %q: %w", f.Name, err)
	}
	f.Params = specs
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.factories[f.Name]; dup {
		return fmt.Errorf("register game %q: already registered", f.Name)
	}
	if r.factories == nil {
		r.factories = make(map[string]Factory)
	}
	r.factories[f.Name] = f
	return nil
}

// Types lists the registered game types, sorted.
func (r *Registry) Types() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.factories))
}

// Params validates raw parameters of gameType, as decoded from YAML or JSON, and fills in
// defaults. Ints may arrive as any Go integer, an integral float or a json.Number; the result
// holds int, string and bool values only. A parameter problem is a *ParamError.
func (r *Registry) Params(gameType string, raw map[string]any) (map[string]any, error) {
	f, err := r.factory(gameType)
	if err != nil {
		return nil, err
	}
	return validateParams(f.Params, raw)
}

// New validates params like Params and builds a game of gameType.
func (r *Registry) New(gameType string, params map[string]any) (Game, error) {
	f, err := r.factory(gameType)
	if err != nil {
		return nil, err
	}
	valid, err := validateParams(f.Params, params)
	if err != nil {
		return nil, err
	}
	g, err := f.New(valid)
	if err != nil {
		return nil, fmt.Errorf("new %s: %w", gameType, err)
	}
	// A factory whose game reports another type would break routing by game_type.
	if g.Type() != gameType {
		return nil, fmt.Errorf("new %s: factory built a game of type %q", gameType, g.Type())
	}
	return g, nil
}

// Default returns a new registry holding the built-in games.
func Default() *Registry {
	r := &Registry{}
	for _, f := range []Factory{evenOddFactory(), rockPaperScissorsFactory(), ticTacToeFactory(), connectFourFactory(), chessFactory()} {
		if err := r.Register(f); err != nil {
			panic(err) // the built-ins are fixed; tests catch a bad one
		}
	}
	return r
}

func (r *Registry) factory(gameType string) (Factory, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	f, ok := r.factories[gameType]
	if !ok {
		return Factory{}, fmt.Errorf("unknown game type %q", gameType)
	}
	return f, nil
}

// checkSpecs validates parameter specs and returns a copy with normalised defaults, so a
// caller's later change to its slice cannot reach the registry.
func checkSpecs(specs []ParamSpec) ([]ParamSpec, error) {
	out := make([]ParamSpec, 0, len(specs))
	seen := make(map[string]bool, len(specs))
	for _, s := range specs {
		if !idPattern.MatchString(s.Name) {
			return nil, fmt.Errorf("param %q: name must be lowercase letters, digits and single underscores", s.Name)
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("param %q: declared twice", s.Name)
		}
		seen[s.Name] = true
		switch s.Kind {
		case KindInt:
			if s.Min > s.Max {
				return nil, fmt.Errorf("param %q: min %d exceeds max %d", s.Name, s.Min, s.Max)
			}
		case KindString, KindBool:
		default:
			return nil, fmt.Errorf("param %q: unknown kind %q", s.Name, s.Kind)
		}
		if len(s.Enum) > 0 && s.Kind != KindString {
			return nil, fmt.Errorf("param %q: enum on a %s parameter", s.Name, s.Kind)
		}
		def, err := s.check(s.Default)
		if err != nil {
			return nil, fmt.Errorf("param %q: default: %w", s.Name, err)
		}
		s.Default = def
		s.Enum = slices.Clone(s.Enum)
		out = append(out, s)
	}
	return out, nil
}

func validateParams(specs []ParamSpec, raw map[string]any) (map[string]any, error) {
	// Sorted so the same bad config always reports the same parameter first.
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		if !slices.ContainsFunc(specs, func(s ParamSpec) bool { return s.Name == name }) {
			return nil, &ParamError{Param: name, Reason: "unknown parameter"}
		}
	}
	out := make(map[string]any, len(specs))
	for _, s := range specs {
		v, ok := raw[s.Name]
		if !ok {
			out[s.Name] = s.Default
			continue
		}
		checked, err := s.check(v)
		if err != nil {
			return nil, &ParamError{Param: s.Name, Reason: err.Error()}
		}
		out[s.Name] = checked
	}
	return out, nil
}

// check validates v against the spec and returns it as the kind's Go type.
func (s ParamSpec) check(v any) (any, error) {
	switch s.Kind {
	case KindInt:
		n, ok := asInt(v)
		if !ok {
			return nil, fmt.Errorf("must be an integer (got %s)", describe(v))
		}
		if n < int64(s.Min) || n > int64(s.Max) {
			return nil, fmt.Errorf("must be between %d and %d (got %d)", s.Min, s.Max, n)
		}
		return int(n), nil
	case KindString:
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("must be a string (got %s)", describe(v))
		}
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, str) {
			return nil, fmt.Errorf("must be one of %s (got %q)", quoteAll(s.Enum), str)
		}
		return str, nil
	default: // KindBool; checkSpecs refuses other kinds
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("must be a bool (got %s)", describe(v))
		}
		return b, nil
	}
}

// asInt reads an integer from the forms YAML and JSON decoders produce.
func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case uint:
		return uintToInt(uint64(n))
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint64:
		return uintToInt(n)
	case float32:
		return floatToInt(float64(n))
	case float64:
		return floatToInt(n)
	case json.Number:
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return i, true
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return 0, false
		}
		return floatToInt(f)
	default:
		return 0, false
	}
}

func uintToInt(n uint64) (int64, bool) {
	if n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

func floatToInt(f float64) (int64, bool) {
	// ±2^63 are exact floats; anything at or above 2^63 overflows int64.
	if f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

// describe renders a parameter value for an error message with its type, since "5" and 5 look
// alike once printed.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("string %q", v)
	default:
		return fmt.Sprintf("%T %v", v, v)
	}
}

func quoteAll(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = strconv.Quote(v)
	}
	return strings.Join(quoted, ", ")
}
