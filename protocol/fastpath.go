package protocol

import (
	"encoding/json"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// maxFastDepth bounds the schema and instance nesting the fast path follows.
const maxFastDepth = 256

// fastPath proves values valid against a compiled schema (provablyValid). It holds the
// fast matchers of the patterns the schema reaches, made when it was compiled and never
// changed after, so reading it takes no lock; a pattern without one is matched by its
// regexp.
type fastPath map[*regexp.Regexp]*patternMatcher

// newFastPath finds the patterns provablyValid can reach from s, following the keywords
// it follows, and their fast matchers.
func newFastPath(s *jsonschema.Schema) fastPath {
	f := fastPath{}
	seen := map[*jsonschema.Schema]bool{}
	var walk func(s *jsonschema.Schema)
	walk = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		if s.Pattern != nil {
			if m := cachedPattern(s.Pattern); m != nil {
				f[s.Pattern] = m
			}
		}
		for _, sub := range []*jsonschema.Schema{s.Ref, s.If, s.Then, s.Else, s.PropertyNames, s.Items2020} {
			walk(sub)
		}
		for _, sub := range slices.Concat(s.AllOf, s.AnyOf) {
			walk(sub)
		}
		for _, sub := range s.Properties {
			walk(sub)
		}
		if ap, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
			walk(ap)
		}
	}
	walk(s)
	return f
}

// matchPattern reports whether x matches re, with its fast matcher if it has one.
func (f fastPath) matchPattern(re *regexp.Regexp, x string) bool {
	if m := f[re]; m != nil {
		return m.match(x)
	}
	return re.MatchString(x)
}

// settledBySchema is what both fast paths decide before they look at the value: too deep
// or with a keyword they do not check, they are not sure (false); a schema that is true
// or false answers alone.
func settledBySchema(s *jsonschema.Schema, depth int) (valid, settled bool) {
	switch {
	case depth > maxFastDepth:
		return false, true
	case s.Always != nil:
		return *s.Always, true
	case !fastKeywordsOnly(s):
		return false, true
	}
	return false, false
}

// provablyValid reports whether v certainly satisfies the compiled schema s, checking
// the keywords our schemas use without allocating. It answers false whenever it is not
// sure (a keyword it does not know, a number it cannot compare cheaply, any violation),
// and the caller then asks the schema library, whose answer and violations stand. So it
// can only ever spare the library's work on a valid message, never accept what the
// library refuses: the schema library allocates at every node it visits, which made it
// the largest CPU cost of an exchange.
func (f fastPath) provablyValid(s *jsonschema.Schema, v any, depth int) bool {
	if valid, settled := settledBySchema(s, depth); settled {
		return valid
	}
	if len(s.Types) > 0 && !typeMatches(s.Types, v) {
		return false
	}
	if len(s.Constant) > 0 && !plainEqual(v, s.Constant[0]) {
		return false
	}
	if len(s.Enum) > 0 && !inEnum(v, s.Enum) {
		return false
	}
	if s.Format != "" {
		// The compiler asserts formats (AssertFormat) with these same functions.
		f, ok := jsonschema.Formats[s.Format]
		if !ok || !f(v) {
			return false
		}
	}
	switch x := v.(type) {
	case map[string]any:
		if !f.objectValid(s, x, depth) {
			return false
		}
	case []any:
		if !f.arrayValid(s, x, depth) {
			return false
		}
	case string:
		if s.MinLength != -1 || s.MaxLength != -1 {
			n := utf8.RuneCountInString(x)
			if (s.MinLength != -1 && n < s.MinLength) || (s.MaxLength != -1 && n > s.MaxLength) {
				return false
			}
		}
		if s.Pattern != nil && !f.matchPattern(s.Pattern, x) {
			return false
		}
	case json.Number:
		if !numberValid(s, x) {
			return false
		}
	case nil, bool:
	default:
		// Not decoded with UseNumber (a float64): the library decides.
		return false
	}
	if s.Ref != nil && !f.provablyValid(s.Ref, v, depth+1) {
		return false
	}
	for _, sub := range s.AllOf {
		if !f.provablyValid(sub, v, depth+1) {
			return false
		}
	}
	if s.If != nil && !f.conditionValid(s, v, depth) {
		return false
	}
	if len(s.AnyOf) > 0 {
		for _, sub := range s.AnyOf {
			if f.provablyValid(sub, v, depth+1) {
				return true
			}
		}
		return false
	}
	return true
}

// conditionValid reports whether v certainly satisfies s's if/then/else: then when the
// if schema provably holds, else when it certainly fails, which is known only from a
// required member that v lacks (any failing keyword fails the whole schema).
func (f fastPath) conditionValid(s *jsonschema.Schema, v any, depth int) bool {
	branch := s.Then
	if !f.provablyValid(s.If, v, depth+1) {
		obj, ok := v.(map[string]any)
		if !ok || !slices.ContainsFunc(s.If.Required, func(k string) bool { _, has := obj[k]; return !has }) {
			return false // not sure whether if holds
		}
		branch = s.Else
	}
	return branch == nil || f.provablyValid(branch, v, depth+1)
}

// fastKeywordsOnly reports whether s uses only keywords provablyValid checks.
func fastKeywordsOnly(s *jsonschema.Schema) bool {
	return s.RecursiveRef == nil && s.DynamicRef == nil && s.Not == nil && len(s.OneOf) == 0 &&
		!s.RegexProperties && len(s.PatternProperties) == 0 && len(s.Dependencies) == 0 &&
		len(s.DependentRequired) == 0 && len(s.DependentSchemas) == 0 && s.UnevaluatedProperties == nil &&
		s.Items == nil && s.AdditionalItems == nil && len(s.PrefixItems) == 0 && s.Contains == nil &&
		s.UnevaluatedItems == nil && s.ContentEncoding == "" && s.ContentMediaType == "" && s.ContentSchema == nil &&
		s.MultipleOf == nil && len(s.Extensions) == 0
}

func typeMatches(types []string, v any) bool {
	for _, t := range types {
		switch x := v.(type) {
		case nil:
			if t == "null" {
				return true
			}
		case bool:
			if t == "boolean" {
				return true
			}
		case string:
			if t == "string" {
				return true
			}
		case []any:
			if t == "array" {
				return true
			}
		case map[string]any:
			if t == "object" {
				return true
			}
		case json.Number:
			if t == "number" || (t == "integer" && plainInteger(string(x))) {
				return true
			}
		}
	}
	return false
}

// plainInteger reports whether a number literal is digits with an optional minus sign,
// which is an integer however it is read.
func plainInteger(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// plainEqual reports whether v certainly equals c: both null, equal strings or booleans,
// or the same number literal.
func plainEqual(v, c any) bool {
	switch x := v.(type) {
	case json.Number:
		y, ok := c.(json.Number)
		return ok && x == y
	case nil:
		return c == nil
	case string:
		y, ok := c.(string)
		return ok && x == y
	case bool:
		y, ok := c.(bool)
		return ok && x == y
	}
	return false
}

func inEnum(v any, enum []any) bool {
	for _, e := range enum {
		if plainEqual(v, e) {
			return true
		}
	}
	return false
}

func (f fastPath) objectValid(s *jsonschema.Schema, x map[string]any, depth int) bool {
	if (s.MinProperties != -1 && len(x) < s.MinProperties) || (s.MaxProperties != -1 && len(x) > s.MaxProperties) {
		return false
	}
	for _, name := range s.Required {
		if _, ok := x[name]; !ok {
			return false
		}
	}
	for name, sub := range s.Properties {
		if pv, ok := x[name]; ok && !f.provablyValid(sub, pv, depth+1) {
			return false
		}
	}
	for name, pv := range x {
		if s.PropertyNames != nil && !f.provablyValid(s.PropertyNames, name, depth+1) {
			return false
		}
		if _, declared := s.Properties[name]; declared {
			continue
		}
		switch ap := s.AdditionalProperties.(type) {
		case bool:
			if !ap {
				return false
			}
		case *jsonschema.Schema:
			if !f.provablyValid(ap, pv, depth+1) {
				return false
			}
		}
	}
	return true
}

// maxFastUnique bounds the items compared pairwise for uniqueItems.
const maxFastUnique = 64

func (f fastPath) arrayValid(s *jsonschema.Schema, x []any, depth int) bool {
	if (s.MinItems != -1 && len(x) < s.MinItems) || (s.MaxItems != -1 && len(x) > s.MaxItems) {
		return false
	}
	if s.UniqueItems {
		if len(x) > maxFastUnique {
			return false
		}
		for i := range x {
			si, ok := x[i].(string)
			if !ok {
				return false
			}
			for j := range i {
				if sj, _ := x[j].(string); sj == si {
					return false
				}
			}
		}
	}
	if s.Items2020 != nil {
		for _, e := range x {
			if !f.provablyValid(s.Items2020, e, depth+1) {
				return false
			}
		}
	}
	return true
}

// numberValid checks the bounds of a number: only an integer literal that fits int64
// against integer bounds, which covers every bound the schemas set.
func numberValid(s *jsonschema.Schema, x json.Number) bool {
	if s.Minimum == nil && s.Maximum == nil && s.ExclusiveMinimum == nil && s.ExclusiveMaximum == nil {
		return true
	}
	if !plainInteger(string(x)) {
		return false
	}
	n, err := strconv.ParseInt(string(x), 10, 64)
	if err != nil {
		return false
	}
	minB, ok1 := intBound(s.Minimum)
	maxB, ok2 := intBound(s.Maximum)
	exMinB, ok3 := intBound(s.ExclusiveMinimum)
	exMaxB, ok4 := intBound(s.ExclusiveMaximum)
	return ok1 && ok2 && ok3 && ok4 &&
		(s.Minimum == nil || n >= minB) && (s.Maximum == nil || n <= maxB) &&
		(s.ExclusiveMinimum == nil || n > exMinB) && (s.ExclusiveMaximum == nil || n < exMaxB)
}

// intBound reads a bound as an int64; ok is false when it is set but not one.
func intBound(r *big.Rat) (b int64, ok bool) {
	if r == nil {
		return 0, true
	}
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}
