package game

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// mustSchema returns the schema of params or fails the test.
func mustSchema(t *testing.T, params map[string]Param) ParamSchema {
	t.Helper()
	s, err := NewParamSchema(params)
	if err != nil {
		t.Fatalf("NewParamSchema: %v", err)
	}
	return s
}

// nested declares depth containers, each made by wrap, around an int.
func nested(depth int, wrap func(Param) Param) Param {
	p := Int(0, 9)
	for range depth {
		p = wrap(p)
	}
	return p
}

func TestParamCheck(t *testing.T) {
	town := Object(map[string]Param{
		"name":       Str("^[a-z]+$", 8),
		"population": Int(0, 1000).Default(100),
	})
	tests := []struct {
		name string
		decl Param
		v    any
		want any    // the normalized value of p
		err  string // or the error
	}{
		{"int", Int(1, 100), 7, 7, ""},
		{"int from an integral float", Int(1, 100), 7.0, 7, ""},
		{"int from a json.Number", Int(1, 100), json.Number("7"), 7, ""},
		{"int from an int64", Int(1, 100), int64(7), 7, ""},
		{"int below min", Int(1, 100), 0, nil, "p: must be >= 1, got 0"},
		{"int above max", Int(1, 100), 400, nil, "p: must be <= 100, got 400"},
		{"int fractional", Int(1, 100), 2.5, nil, "p: must be an integer, got 2.5"},
		{"int as a string", Int(1, 100), "7", nil, `p: must be an integer, got "7"`},
		{"int null", Int(1, 100), nil, nil, "p: must be an integer, got null"},
		{"int NaN", Int(1, 100), math.NaN(), nil, "p: must be an integer, got NaN"},

		{"float", Float(0, 1), 0.5, 0.5, ""},
		{"float from an int", Float(0, 1), 1, 1.0, ""},
		{"float below min", Float(0, 1), -0.5, nil, "p: must be >= 0, got -0.5"},
		{"float above max", Float(0, 1), 2, nil, "p: must be <= 1, got 2"},
		{"float NaN", Float(0, 1), math.NaN(), nil, "p: must be >= 0, got NaN"},
		{"float infinite", Float(0, 1), math.Inf(1), nil, "p: must be <= 1, got +Inf"},
		{"float as a bool", Float(0, 1), true, nil, "p: must be a number, got true"},

		{"bool", Bool(), true, true, ""},
		{"bool as a string", Bool(), "yes", nil, `p: must be true or false, got "yes"`},

		{"categorical", Categorical("red", "blue"), "blue", "blue", ""},
		{"categorical not listed", Categorical("red", "blue"), "green", nil, `p: must be one of "red", "blue", got "green"`},
		{"categorical as a list", Categorical("red", "blue"), []any{"red"}, nil, `p: must be one of "red", "blue", got a list`},

		{"str", Str("^[a-z]+$", 5), "abc", "abc", ""},
		{"str empty without a pattern", Str("", 0), "", "", ""},
		{"str counts characters", Str("", 3), "héé", "héé", ""},
		{"str too long", Str("", 3), "héé!", nil, "p: must be at most 3 characters, got 4"},
		{"str default length", Str("", 0), strings.Repeat("x", 10001), nil, "p: must be at most 10000 characters, got 10001"},
		{"str not matching", Str("^[a-z]+$", 20), "Nim", nil, `p: must match ^[a-z]+$, got "Nim"`},
		{"str pattern matches the whole string", Str("[a-z]+", 20), "abc1", nil, `p: must match [a-z]+, got "abc1"`},
		{"str pattern alternation is anchored", Str("a|b", 20), "ab", nil, `p: must match a|b, got "ab"`},
		{"str as a number", Str("", 0), 5, nil, "p: must be a string, got 5"},

		{"list", List(Int(0, 9), 3), []any{1, 2, 3}, []any{1, 2, 3}, ""},
		{"list from a Go slice", List(Int(0, 9), 3), []int{1, 2}, []any{1, 2}, ""},
		{"list empty", List(Int(0, 9), 3), []any{}, []any{}, ""},
		{"list too long", List(Int(0, 9), 3), []any{1, 2, 3, 4}, nil, "p: must have at most 3 items, got 4"},
		{"list default length", List(Int(0, 9), 0), make([]any, 1001), nil, "p: must have at most 1000 items, got 1001"},
		{"list item", List(Int(0, 100), 0), []any{3, 400, 5, -1}, nil, "p[1]: must be <= 100, got 400; p[3]: must be >= 0, got -1"},
		{"list in a list", List(List(Int(0, 9), 0), 0), []any{[]any{1}, []any{2, 10}}, nil, "p[1][1]: must be <= 9, got 10"},
		{"list as a mapping", List(Int(0, 9), 0), map[string]any{}, nil, "p: must be a list, got a mapping"},

		{"tuple", Tuple(Float(-1, 1), Str("", 0)), []any{0, "x"}, []any{0.0, "x"}, ""},
		{"tuple short", Tuple(Float(-1, 1), Str("", 0)), []any{0}, nil, "p: must have 2 items, got 1"},
		{"tuple long", Tuple(Float(-1, 1), Str("", 0)), []any{0, "x", 1}, nil, "p: must have 2 items, got 3"},
		{"tuple element", Tuple(Float(-1, 1), Str("", 0)), []any{0, 1}, nil, "p[1]: must be a string, got 1"},
		{"tuple in a list", List(Tuple(Int(0, 9), Int(0, 9)), 0), []any{[]any{1, 2}, []any{3, 10}}, nil, "p[1][1]: must be <= 9, got 10"},

		{"dict", Dict(ParamStr, Float(0, 10)), map[string]any{"food": 1, "ore": 2.5}, map[string]any{"food": 1.0, "ore": 2.5}, ""},
		{"dict from a Go map", Dict(ParamStr, Int(0, 10)), map[string]int{"a": 1}, map[string]any{"a": 1}, ""},
		{"dict value", Dict(ParamStr, Int(0, 10)), map[string]any{"a": 1, "b c": 11}, nil, `p["b c"]: must be <= 10, got 11`},
		{"dict key not a string", Dict(ParamStr, Int(0, 10)), map[any]any{1: 1}, nil, "p.1: key must be a string, got 1"},
		{"dict too large", Dict(ParamStr, Int(0, 10)), bigMap(1001), nil, "p: must have at most 1000 entries, got 1001"},
		{"dict as a list", Dict(ParamStr, Int(0, 10)), []any{}, nil, "p: must be a mapping, got a list"},
		{"dict int keys from YAML", Dict(ParamInt, Str("", 0)), map[any]any{1: "a", 20: "b"}, map[string]any{"1": "a", "20": "b"}, ""},
		{"dict int keys from JSON", Dict(ParamInt, Str("", 0)), map[string]any{"-3": "a", "007": "b"}, map[string]any{"-3": "a", "7": "b"}, ""},
		{"dict int key not an integer", Dict(ParamInt, Str("", 0)), map[string]any{"x": "a"}, nil, `p.x: key must be an integer, got "x"`},
		{"dict int key repeated", Dict(ParamInt, Str("", 0)), map[any]any{"01": "a", 1: "b"}, nil, "p.1: repeats the key 1"},
		{"dict in a dict", Dict(ParamStr, Dict(ParamStr, Int(0, 9))), map[string]any{"a": map[string]any{"b": 10}}, nil, "p.a.b: must be <= 9, got 10"},

		{"dict with a schema", DictSchema(map[string]Param{"health": Int(0, 100).Default(100), "mana": Int(0, 100)}),
			map[string]any{"mana": 5}, map[string]any{"health": 100, "mana": 5}, ""},
		{"dict with a schema, unknown key", DictSchema(map[string]Param{"mana": Int(0, 100)}),
			map[string]any{"mana": 5, "rage": 1}, nil, "p.rage: unknown field"},

		{"object", town, map[string]any{"name": "ur"}, map[string]any{"name": "ur", "population": 100}, ""},
		{"object field required", town, map[string]any{"population": 5}, nil, "p.name: is required"},
		{"object unknown field", town, map[string]any{"name": "ur", "size": 1}, nil, "p.size: unknown field"},
		{"object key not a string", town, map[any]any{"name": "ur", 1: 2}, nil, "p.1: unknown field"},
		{"object as a string", town, "ur", nil, `p: must be a mapping, got "ur"`},
		{"object in a list in an object", Object(map[string]Param{"towns": List(town, 0)}),
			map[string]any{"towns": []any{map[string]any{"name": "ur"}, map[string]any{"name": "Kish", "population": 2000}}}, nil,
			`p.towns[1].name: must match ^[a-z]+$, got "Kish"; p.towns[1].population: must be <= 1000, got 2000`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			decl, err := tt.decl.checked("p", nesting{})
			if err != nil {
				t.Fatalf("declaration: %v", err)
			}
			var k paramChecker
			got := k.value(decl, tt.v, "p")
			if tt.err != "" {
				if err := k.problems.Error(); err != tt.err {
					t.Fatalf("got %#v, error %q, want error %q", got, err, tt.err)
				}
				return
			}
			if len(k.problems) > 0 {
				t.Fatalf("got problems %+v, want none", k.problems)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

// bigMap is a mapping of n entries.
func bigMap(n int) map[string]any {
	m := make(map[string]any, n)
	for i := range n {
		m[strconv.Itoa(i)] = 0
	}
	return m
}

func TestParamSchemaCheck(t *testing.T) {
	s := mustSchema(t, map[string]Param{
		"heaps": List(Int(1, 100), 10).Default([]any{3, 4, 5}),
		"name":  Str("^[a-z]+$", 20).Default("nim"),
		"board": Object(map[string]Param{"size": Int(3, 19), "wrap": Bool().Default(false)}).Default(map[string]any{"size": 9}),
	})
	defaults := map[string]any{"heaps": []any{3, 4, 5}, "name": "nim", "board": map[string]any{"size": 9, "wrap": false}}
	tests := []struct {
		name string
		raw  map[string]any
		want map[string]any
		err  string
	}{
		{"nil takes every default", nil, defaults, ""},
		{"empty takes every default", map[string]any{}, defaults, ""},
		{"set values are normalized", map[string]any{"heaps": []any{1.0}, "board": map[string]any{"size": json.Number("3")}},
			map[string]any{"heaps": []any{1}, "name": "nim", "board": map[string]any{"size": 3, "wrap": false}}, ""},
		{"unknown parameter", map[string]any{"bord": map[string]any{}}, nil, "bord: unknown parameter"},
		{"unknown parameter with an odd name", map[string]any{"a b": 1}, nil, `["a b"]: unknown parameter`},
		{"every problem, unknown first", map[string]any{"heaps": []any{1, 400}, "name": "Nim", "zz": 1, "board": map[string]any{}},
			nil, `zz: unknown parameter; board.size: is required; heaps[1]: must be <= 100, got 400; name: must match ^[a-z]+$, got "Nim"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Check(tt.raw)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("got %v, %v, want error %q", got, err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, %v, want %#v", got, err, tt.want)
			}
		})
	}
}

func TestParamSchemaLeavesRawAlone(t *testing.T) {
	s := mustSchema(t, map[string]Param{"heaps": List(Int(1, 100), 0).Default([]any{1})})
	raw := map[string]any{"heaps": []any{2.0, 3.0}}
	got, err := s.Check(raw)
	if err != nil {
		t.Fatal(err)
	}
	got["heaps"].([]any)[0] = 99
	if want := (map[string]any{"heaps": []any{2.0, 3.0}}); !reflect.DeepEqual(raw, want) {
		t.Errorf("raw became %v, want %v", raw, want)
	}
}

func TestNewParamSchemaRefuses(t *testing.T) {
	list := func(p Param) Param { return List(p, 0) }
	dict := func(p Param) Param { return Dict(ParamStr, p) }
	tuple := func(p Param) Param { return Tuple(p) }
	tests := []struct {
		name string
		decl Param
		err  string // "" when the declaration is accepted
	}{
		{"dicts 4 deep", nested(4, dict), ""},
		{"dicts 5 deep", nested(5, dict), `param "p.*.*.*.*": dicts nest more than 4 deep`},
		{"dicts 5 deep through a list", dict(list(nested(4, dict))), `param "p.*[].*.*.*": dicts nest more than 4 deep`},
		{"fixed dicts count", DictSchema(map[string]Param{"a": nested(4, dict)}), `param "p.a.*.*.*": dicts nest more than 4 deep`},
		{"lists 3 deep", nested(3, list), ""},
		{"lists 4 deep", nested(4, list), `param "p[][][]": lists nest more than 3 deep`},
		{"10 containers", nested(10, tuple), ""},
		{"11 containers", nested(11, tuple), `param "p[0][0][0][0][0][0][0][0][0][0]": lists, tuples, dicts and objects nest more than 10 deep`},
		{"list max_length 1000", List(Int(0, 9), 1000), ""},
		{"list max_length 1001", List(Int(0, 9), 1001), `param "p": max_length must be between 1 and 1000, got 1001`},
		{"list max_length negative", List(Int(0, 9), -1), `param "p": max_length must be between 1 and 1000, got -1`},
		{"str max_length 10001", Str("", 10001), `param "p": max_length must be between 1 and 10000, got 10001`},
		{"str bad pattern", Str("(", 0), "param \"p\": pattern: error parsing regexp: missing closing ): `^(?:()$`"},
		{"tuple without items", Tuple(), `param "p": no item types`},
		{"tuple item", Tuple(Int(0, 9), Int(2, 1)), `param "p[1]": min 2 exceeds max 1`},
		{"dict key float", Dict(ParamFloat, Int(0, 9)), `param "p": key type must be "str" or "int", got "float"`},
		{"dict without a key type", Dict("", Int(0, 9)), `param "p": key type must be "str" or "int", got ""`},
		{"object without fields", Object(nil), `param "p": an object needs its fields`},
		{"object field name", Object(map[string]Param{"Size": Int(0, 9)}), `param "p": field "Size": name must be lowercase letters, digits and single underscores`},
		{"categorical without values", Categorical(), `param "p": no values`},
		{"categorical value twice", Categorical("a", "b", "a"), `param "p": value "a" listed twice`},
		{"float min above max", Float(1, 0), `param "p": min and max must be finite, min <= max, got 1 and 0`},
		{"float infinite", Float(0, math.Inf(1)), `param "p": min and max must be finite, min <= max, got 0 and +Inf`},
		{"int beyond 2^53", Int(0, 1<<53+1), `param "p": min and max must lie within ±2^53, got 0 and 9007199254740993`},
		{"no type", List(Param{}, 0), `param "p[]": no type: build it with Int, Str, List or another constructor`},
		{"field default", Object(map[string]Param{"n": Int(0, 9).Default(10)}), `param "p.n": default: must be <= 9, got 10`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.decl.checked("p", nesting{})
			if got := errorText(err); got != tt.err {
				t.Errorf("got error %q, want %q", got, tt.err)
			}
		})
	}
}

func TestNewParamSchemaNeedsDefaults(t *testing.T) {
	if _, err := NewParamSchema(map[string]Param{"n": Int(0, 9)}); err == nil {
		t.Error("got no error for a param without a default, want one")
	}
	if _, err := NewParamSchema(map[string]Param{"n": Int(0, 9).Default(1), "l": List(Int(0, 9), 2).Default([]any{1, 2, 3})}); err == nil ||
		err.Error() != `param "l": default: must have at most 2 items, got 3` {
		t.Errorf("got error %v, want the list default refused", err)
	}
}

// errorText is err's message, or "" for nil.
func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
