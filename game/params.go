package game

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentleague/agentleague/internal/problem"
)

// ParamType is the type of a game parameter: one of the types of seed 003's
// VariableDefinition.
type ParamType string

// Parameter types.
const (
	ParamInt         ParamType = "int"
	ParamFloat       ParamType = "float"
	ParamBool        ParamType = "bool"
	ParamCategorical ParamType = "categorical"
	ParamStr         ParamType = "str"
	ParamList        ParamType = "list"
	ParamTuple       ParamType = "tuple"
	ParamDict        ParamType = "dict"
	ParamObject      ParamType = "object"
)

// Seed 003's bounds on declared params and on their values.
const (
	maxCollection = 1000 // items of a list, entries of a dict or object
	// Characters of a str, also when it sets a max_length: params travel in a match
	// assignment, whose strings are shorter still.
	maxStrLength   = 10000
	maxDictNesting = 4  // dicts inside one another
	maxListNesting = 3  // lists inside one another
	maxNesting     = 10 // lists, tuples, dicts and objects inside one another
	// Int bounds stay within ±2^53, so that JSON numbers carry every allowed value exactly.
	maxExactInt = 1 << 53
)

// Param declares the type, the bounds and optionally the default of a game parameter,
// or of a part of one (a list's items, an object's field): seed 003's VariableDefinition.
// Build one with Int, Float, Bool, Categorical, Str, List, Tuple, Dict, DictSchema or
// Object; NewParamSchema checks it. A Param is a value: its constructors copy what they
// are given.
type Param struct {
	typ        ParamType
	imin, imax int64   // int
	fmin, fmax float64 // float
	values     []string
	pattern    string         // str, as declared
	re         *regexp.Regexp // str: pattern matching the whole string; nil without one
	reErr      error          // str: why pattern does not compile
	maxLength  int            // str (characters), list (items)
	key        ParamType      // dict with dynamic keys: ParamStr or ParamInt
	elem       *Param         // list item, dict value
	items      []Param        // tuple elements
	fields     map[string]Param
	def        any
	hasDef     bool
}

// Int declares an integer between min and max inclusive.
func Int(min, max int64) Param { return Param{typ: ParamInt, imin: min, imax: max} }

// Float declares a number between min and max inclusive.
func Float(min, max float64) Param { return Param{typ: ParamFloat, fmin: min, fmax: max} }

// Bool declares true or false.
func Bool() Param { return Param{typ: ParamBool} }

// Categorical declares one of values.
func Categorical(values ...string) Param {
	return Param{typ: ParamCategorical, values: slices.Clone(values)}
}

// Str declares a string of at most maxLength characters (0: 10,000) that matches
// pattern as a whole (RE2 syntax; "" allows any string).
func Str(pattern string, maxLength int) Param {
	p := Param{typ: ParamStr, pattern: pattern, maxLength: maxLength}
	if maxLength == 0 {
		p.maxLength = maxStrLength
	}
	if pattern != "" {
		p.re, p.reErr = regexp.Compile(`^(?:` + pattern + `)$`)
	}
	return p
}

// List declares a list of items, at most maxLength long (0: 1000, also the most allowed).
func List(item Param, maxLength int) Param {
	p := Param{typ: ParamList, elem: &item, maxLength: maxLength}
	if maxLength == 0 {
		p.maxLength = maxCollection
	}
	return p
}

// Tuple declares a list of fixed length whose element i is items[i].
func Tuple(items ...Param) Param { return Param{typ: ParamTuple, items: slices.Clone(items)} }

// Dict declares a mapping of up to 1000 keys of type key (ParamStr or ParamInt)
// to values. Params travel as JSON, so an int key is normalized to its decimal string.
func Dict(key ParamType, value Param) Param { return Param{typ: ParamDict, key: key, elem: &value} }

// DictSchema declares a dict with fixed keys (seed 003's dict with a schema): it is checked
// as Object's mapping is, and counts as a dict toward the nesting bound.
func DictSchema(fields map[string]Param) Param {
	return Param{typ: ParamDict, fields: maps.Clone(fields)}
}

// Object declares a mapping with the given fields. A field with a default may be left
// out; one without must be set.
func Object(fields map[string]Param) Param {
	return Param{typ: ParamObject, fields: maps.Clone(fields)}
}

// Default returns p with the default v, used when the param or field is left out.
func (p Param) Default(v any) Param {
	p.def, p.hasDef = v, true
	return p
}

// ParamSchema is the checked declaration of a game's params: each param by name, with its
// default. The zero value declares none.
type ParamSchema struct {
	params map[string]Param
}

// NewParamSchema checks the declaration of a game's params and returns it as a schema.
// Every param needs a default, so that a game can be played with no params; each
// declaration must keep seed 003's bounds (lists at most 1000 items, strs at most 10,000
// characters, dicts nested at most 4 deep, lists 3, everything 10), and each
// default must conform. Defaults are normalized and copied, so a caller's later change
// cannot reach the schema.
func NewParamSchema(params map[string]Param) (ParamSchema, error) {
	out := make(map[string]Param, len(params))
	for _, name := range slices.Sorted(maps.Keys(params)) {
		p := params[name]
		if !idPattern.MatchString(name) {
			return ParamSchema{}, fmt.Errorf("param %q: name must be lowercase letters, digits and single underscores", name)
		}
		if !p.hasDef {
			return ParamSchema{}, fmt.Errorf("param %q: no default (a game must be playable without params)", name)
		}
		checked, err := p.checked(name, nesting{})
		if err != nil {
			return ParamSchema{}, err
		}
		out[name] = checked
	}
	return ParamSchema{params: out}, nil
}

// Check validates raw, a game's params as decoded from YAML or JSON or built in Go, and
// returns them normalized with the defaults filled in: an int as int, a float as float64,
// a str or categorical as string, a list or tuple as []any, a dict or object as
// map[string]any. Ints may arrive as any Go integer, an integral float or a json.Number.
// raw is not modified. A violation is reported in a problem.List of every problem, each at its path under
// the params mapping ("heaps[1]", "board.size", `names["a b"]`).
func (s ParamSchema) Check(raw map[string]any) (map[string]any, error) {
	var k paramChecker
	out := k.fields(s.params, raw, "", "unknown parameter")
	if err := k.problems.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// paramChecker collects the problems of one check.
type paramChecker struct {
	problems problem.List
}

// add records a problem at path.
func (k *paramChecker) add(path, format string, args ...any) {
	k.problems.Add(path, format, args...)
}

// nesting counts the containers around a declaration.
type nesting struct{ dicts, lists, all int }

// checked checks the declaration p at path and returns a copy of it with its default
// normalized.
func (p Param) checked(path string, n nesting) (Param, error) {
	fail := func(format string, args ...any) (Param, error) {
		return Param{}, fmt.Errorf("param %q: %s", path, fmt.Sprintf(format, args...))
	}
	switch p.typ {
	case ParamList, ParamTuple, ParamDict, ParamObject:
		n.all++
		if n.all > maxNesting {
			return fail("lists, tuples, dicts and objects nest more than %d deep", maxNesting)
		}
	}
	switch p.typ {
	case ParamInt:
		if p.imin > p.imax {
			return fail("min %d exceeds max %d", p.imin, p.imax)
		}
		if p.imin < -maxExactInt || p.imax > maxExactInt {
			return fail("min and max must lie within ±2^53, got %d and %d", p.imin, p.imax)
		}
	case ParamFloat:
		if math.IsInf(p.fmin, 0) || math.IsInf(p.fmax, 0) || !(p.fmin <= p.fmax) {
			return fail("min and max must be finite, min <= max, got %s and %s", describeValue(p.fmin), describeValue(p.fmax))
		}
	case ParamBool:
	case ParamCategorical:
		if len(p.values) == 0 {
			return fail("no values")
		}
		for i, v := range p.values {
			if slices.Contains(p.values[:i], v) {
				return fail("value %q listed twice", v)
			}
		}
	case ParamStr:
		if p.reErr != nil {
			return fail("pattern: %v", p.reErr)
		}
		if p.maxLength < 1 || p.maxLength > maxStrLength {
			return fail("max_length must be between 1 and %d, got %d", maxStrLength, p.maxLength)
		}
	case ParamList:
		if n.lists++; n.lists > maxListNesting {
			return fail("lists nest more than %d deep", maxListNesting)
		}
		if p.maxLength < 1 || p.maxLength > maxCollection {
			return fail("max_length must be between 1 and %d, got %d", maxCollection, p.maxLength)
		}
		elem, err := p.elem.checked(path+"[]", n)
		if err != nil {
			return Param{}, err
		}
		p.elem = &elem
	case ParamTuple:
		if len(p.items) == 0 {
			return fail("no item types")
		}
		items := make([]Param, len(p.items))
		for i, item := range p.items {
			var err error
			if items[i], err = item.checked(problem.Index(path, i), n); err != nil {
				return Param{}, err
			}
		}
		p.items = items
	case ParamDict, ParamObject:
		if p.typ == ParamDict {
			if n.dicts++; n.dicts > maxDictNesting {
				return fail("dicts nest more than %d deep", maxDictNesting)
			}
		}
		if p.fields != nil {
			fields := make(map[string]Param, len(p.fields))
			for _, name := range slices.Sorted(maps.Keys(p.fields)) {
				if !idPattern.MatchString(name) {
					return fail("field %q: name must be lowercase letters, digits and single underscores", name)
				}
				f, err := p.fields[name].checked(problem.Field(path, name), n)
				if err != nil {
					return Param{}, err
				}
				fields[name] = f
			}
			p.fields = fields
			break
		}
		if p.typ == ParamObject {
			return fail("an object needs its fields")
		}
		if p.key != ParamStr && p.key != ParamInt {
			return fail("key type must be %q or %q, got %q", ParamStr, ParamInt, p.key)
		}
		elem, err := p.elem.checked(path+".*", n)
		if err != nil {
			return Param{}, err
		}
		p.elem = &elem
	default:
		return fail("no type: build it with Int, Str, List or another constructor")
	}
	if p.hasDef {
		var k paramChecker
		def := k.value(p, p.def, "")
		if len(k.problems) > 0 {
			return fail("default: %v", k.problems)
		}
		p.def = def
	}
	return p, nil
}

// fields checks the mapping v against the declared fields at path and returns it
// normalized: a key not declared is reported with unknown, a field left out takes its
// default or is reported.
func (k *paramChecker) fields(declared map[string]Param, v map[string]any, path, unknown string) map[string]any {
	for _, name := range slices.Sorted(maps.Keys(v)) {
		if _, ok := declared[name]; !ok {
			k.add(entryPath(path, name), "%s", unknown)
		}
	}
	out := make(map[string]any, len(declared))
	for _, name := range slices.Sorted(maps.Keys(declared)) {
		p := declared[name]
		switch e, ok := v[name]; {
		case ok:
			out[name] = k.value(p, e, problem.Field(path, name))
		case p.hasDef:
			// Checking the default again hands out a fresh copy of it.
			out[name] = k.value(p, p.def, problem.Field(path, name))
		default:
			k.add(problem.Field(path, name), "is required")
		}
	}
	return out
}

// value checks v against p at path and returns it normalized.
func (k *paramChecker) value(p Param, v any, path string) any {
	switch p.typ {
	case ParamInt:
		n, ok := asInt(v)
		switch {
		case !ok:
			k.add(path, "must be an integer, got %s", describeValue(v))
		case n < p.imin:
			k.add(path, "must be >= %d, got %s", p.imin, describeValue(v))
		case n > p.imax:
			k.add(path, "must be <= %d, got %s", p.imax, describeValue(v))
		default:
			return int(n)
		}
	case ParamFloat:
		f, ok := asFloat(v)
		switch {
		case !ok:
			k.add(path, "must be a number, got %s", describeValue(v))
		case !(f >= p.fmin): // NaN fails here
			k.add(path, "must be >= %s, got %s", describeValue(p.fmin), describeValue(v))
		case f > p.fmax:
			k.add(path, "must be <= %s, got %s", describeValue(p.fmax), describeValue(v))
		default:
			return f
		}
	case ParamBool:
		if b, ok := v.(bool); ok {
			return b
		}
		k.add(path, "must be true or false, got %s", describeValue(v))
	case ParamCategorical:
		if s, ok := v.(string); ok && slices.Contains(p.values, s) {
			return s
		}
		k.add(path, "must be one of %s, got %s", quoteAll(p.values), describeValue(v))
	case ParamStr:
		s, ok := v.(string)
		switch {
		case !ok:
			k.add(path, "must be a string, got %s", describeValue(v))
		case utf8.RuneCountInString(s) > p.maxLength:
			k.add(path, "must be at most %d characters, got %d", p.maxLength, utf8.RuneCountInString(s))
		case p.re != nil && !p.re.MatchString(s):
			k.add(path, "must match %s, got %q", p.pattern, s)
		default:
			return s
		}
	case ParamList, ParamTuple:
		return k.list(p, v, path)
	default: // ParamDict, ParamObject
		return k.mapping(p, v, path)
	}
	return nil
}

// list checks v against the list or tuple p at path.
func (k *paramChecker) list(p Param, v any, path string) any {
	items, ok := asList(v)
	switch {
	case !ok:
		k.add(path, "must be a list, got %s", describeValue(v))
		return nil
	case p.typ == ParamTuple && len(items) != len(p.items):
		k.add(path, "must have %d items, got %d", len(p.items), len(items))
		return nil
	case p.typ == ParamList && len(items) > p.maxLength:
		k.add(path, "must have at most %d items, got %d", p.maxLength, len(items))
		return nil
	}
	out := make([]any, len(items))
	for i, item := range items {
		decl := p.elem
		if p.typ == ParamTuple {
			decl = &p.items[i]
		}
		out[i] = k.value(*decl, item, problem.Index(path, i))
	}
	return out
}

// mapping checks v against the dict or object p at path.
func (k *paramChecker) mapping(p Param, v any, path string) any {
	entries, ok := asMapping(v)
	if !ok {
		k.add(path, "must be a mapping, got %s", describeValue(v))
		return nil
	}
	if len(entries) > maxCollection {
		k.add(path, "must have at most %d entries, got %d", maxCollection, len(entries))
		return nil
	}
	if p.fields != nil {
		named := make(map[string]any, len(entries))
		for _, e := range entries {
			named[e.text] = e.value
		}
		return k.fields(p.fields, named, path, "unknown field")
	}
	out := make(map[string]any, len(entries))
	for _, e := range entries {
		at := entryPath(path, e.text)
		key, ok := dictKey(p.key, e.key)
		switch {
		case !ok && p.key == ParamInt:
			k.add(at, "key must be an integer, got %s", describeValue(e.key))
		case !ok:
			k.add(at, "key must be a string, got %s", describeValue(e.key))
		default:
			if _, dup := out[key]; dup {
				k.add(at, "repeats the key %s", key)
				continue
			}
			out[key] = k.value(*p.elem, e.value, at)
		}
	}
	return out
}

// dictKey returns a dict key normalized for the key type: a string, or an integer in
// decimal (given as an integer, or as the string a JSON object key is).
func dictKey(keyType ParamType, key any) (string, bool) {
	s, isString := key.(string)
	if keyType == ParamStr {
		return s, isString
	}
	if isString {
		n, err := strconv.ParseInt(s, 10, 64)
		return strconv.FormatInt(n, 10), err == nil
	}
	switch rv := reflect.ValueOf(key); {
	case rv.CanInt():
		return strconv.FormatInt(rv.Int(), 10), true
	case rv.CanUint():
		return strconv.FormatUint(rv.Uint(), 10), true
	}
	return "", false
}

// entry is one key and value of a mapping; text is the key as a path shows it.
type entry struct {
	key, value any
	text       string
}

// asMapping returns the entries of a Go map, sorted by key text, so that problems are
// reported in the same order every time.
func asMapping(v any) ([]entry, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Map {
		return nil, false
	}
	entries := make([]entry, 0, rv.Len())
	for it := rv.MapRange(); it.Next(); {
		key := it.Key().Interface()
		text, ok := key.(string)
		if !ok {
			text = fmt.Sprint(key)
		}
		entries = append(entries, entry{key: key, value: it.Value().Interface(), text: text})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.text, b.text) })
	return entries, true
}

// asList returns the elements of a Go slice or array.
func asList(v any) ([]any, bool) {
	if l, ok := v.([]any); ok {
		return l, true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, false
	}
	items := make([]any, rv.Len())
	for i := range items {
		items[i] = rv.Index(i).Interface()
	}
	return items, true
}

// asInt reads an integer from the forms YAML and JSON decoders produce: any Go integer, an
// integral float, a json.Number. A value beyond int64 saturates; the bounds refuse it.
func asInt(v any) (int64, bool) {
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i, true
		}
		f, err := n.Float64()
		if err != nil {
			return 0, false
		}
		v = f
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.CanInt():
		return rv.Int(), true
	case rv.CanUint():
		return int64(min(rv.Uint(), math.MaxInt64)), true
	case rv.CanFloat():
		f := rv.Float()
		if f != math.Trunc(f) { // also NaN
			return 0, false
		}
		// ±2^63 are exact floats; anything at or above 2^63 overflows int64.
		if f >= 1<<63 {
			return math.MaxInt64, true
		}
		return int64(max(f, -(1 << 63))), true
	}
	return 0, false
}

// asFloat reads a number from any Go integer or float, or a json.Number.
func asFloat(v any) (float64, bool) {
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		return f, err == nil
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.CanInt():
		return float64(rv.Int()), true
	case rv.CanUint():
		return float64(rv.Uint()), true
	case rv.CanFloat():
		return rv.Float(), true
	}
	return 0, false
}

// describeValue shows a param value in a problem message as describe shows a YAML value:
// strings quoted, lists and mappings by their kind.
func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Map:
		return "a mapping"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return fmt.Sprint(v)
}

// plainKey is the shape of a mapping key a path shows after a dot; any other is quoted
// in brackets.
var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// entryPath is the path of the entry key of the mapping at path.
func entryPath(path, key string) string {
	if plainKey.MatchString(key) {
		return problem.Field(path, key)
	}
	return path + "[" + strconv.Quote(key) + "]"
}
