package protocol

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"
	"unsafe"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// tapeValid is provablyValid over node i of a tape instead of a decoded value: the same
// keywords, the same answers, false whenever it is not sure. Besides what provablyValid
// leaves to the library, it is not sure of a string whose value it must read (a member
// name, a pattern, an enum, a length) when the string has an escape.
func (f fastPath) tapeValid(s *jsonschema.Schema, t *tape, i, depth int) bool {
	if valid, settled := settledBySchema(s, depth); settled {
		return valid
	}
	if s.Format != "" {
		// The compiler asserts formats (AssertFormat) with these same functions, which
		// read the string and keep nothing of it.
		f, ok := jsonschema.Formats[s.Format]
		v, plain := t.str(i)
		if !ok || !plain || !f(view(v)) {
			return false
		}
	}
	if len(s.Types) > 0 && !t.typeMatches(s.Types, i) {
		return false
	}
	if len(s.Constant) > 0 && !t.plainEqual(i, s.Constant[0]) {
		return false
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(c any) bool { return t.plainEqual(i, c) }) {
		return false
	}
	switch t.nodes[i].kind {
	case '{':
		if !f.tapeObjectValid(s, t, i, depth) {
			return false
		}
	case '[':
		if !f.tapeArrayValid(s, t, i, depth) {
			return false
		}
	case '"':
		if s.MinLength != -1 || s.MaxLength != -1 || s.Pattern != nil {
			v, ok := t.str(i)
			if !ok {
				return false
			}
			if s.MinLength != -1 || s.MaxLength != -1 {
				runes := utf8.RuneCount(v)
				if (s.MinLength != -1 && runes < s.MinLength) || (s.MaxLength != -1 && runes > s.MaxLength) {
					return false
				}
			}
			if s.Pattern != nil && !f.matchPattern(s.Pattern, view(v)) {
				return false
			}
		}
	case '0':
		if !numberValid(s, json.Number(view(t.bytes(i)))) {
			return false
		}
	}
	if s.Ref != nil && !f.tapeValid(s.Ref, t, i, depth+1) {
		return false
	}
	for _, sub := range s.AllOf {
		if !f.tapeValid(sub, t, i, depth+1) {
			return false
		}
	}
	if s.If != nil && !f.tapeConditionValid(s, t, i, depth) {
		return false
	}
	if len(s.AnyOf) > 0 {
		for _, sub := range s.AnyOf {
			if f.tapeValid(sub, t, i, depth+1) {
				return true
			}
		}
		return false
	}
	return true
}

// view is b as a string without a copy, for reading while b does not change.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// tapeConditionValid is conditionValid over a tape.
func (f fastPath) tapeConditionValid(s *jsonschema.Schema, t *tape, i, depth int) bool {
	branch := s.Then
	if !f.tapeValid(s.If, t, i, depth+1) {
		if t.nodes[i].kind != '{' || !slices.ContainsFunc(s.If.Required, func(k string) bool { return t.member(i, k) < 0 && !t.escapedNames(i) }) {
			return false // not sure whether if holds
		}
		branch = s.Else
	}
	return branch == nil || f.tapeValid(branch, t, i, depth+1)
}

// escapedNames reports whether a member name of object i has an escape, so that
// member may miss a member it names.
func (t *tape) escapedNames(i int) bool {
	for n, k := 0, t.firstMember(i); n < int(t.nodes[i].count); n, k = n+1, t.nextMember(k) {
		if t.nodes[k].escaped {
			return true
		}
	}
	return false
}

func (t *tape) typeMatches(types []string, i int) bool {
	n := &t.nodes[i]
	for _, typ := range types {
		switch n.kind {
		case 'n':
			if typ == "null" {
				return true
			}
		case 't', 'f':
			if typ == "boolean" {
				return true
			}
		case '"':
			if typ == "string" {
				return true
			}
		case '[':
			if typ == "array" {
				return true
			}
		case '{':
			if typ == "object" {
				return true
			}
		case '0':
			if typ == "number" || (typ == "integer" && plainInteger(view(t.bytes(i)))) {
				return true
			}
		}
	}
	return false
}

// plainEqual is plainEqual over node i: null, an unescaped string, a boolean or the same
// number literal.
func (t *tape) plainEqual(i int, c any) bool {
	switch y := c.(type) {
	case nil:
		return t.nodes[i].kind == 'n'
	case bool:
		k := t.nodes[i].kind
		return (y && k == 't') || (!y && k == 'f')
	case string:
		s, ok := t.str(i)
		return ok && string(s) == y
	case json.Number:
		return t.nodes[i].kind == '0' && string(t.bytes(i)) == string(y)
	}
	return false
}

func (f fastPath) tapeObjectValid(s *jsonschema.Schema, t *tape, i, depth int) bool {
	count := int(t.nodes[i].count)
	if (s.MinProperties != -1 && count < s.MinProperties) || (s.MaxProperties != -1 && count > s.MaxProperties) {
		return false
	}
	if t.escapedNames(i) {
		return false
	}
	for _, name := range s.Required {
		if t.member(i, name) < 0 {
			return false
		}
	}
	for n, k := 0, t.firstMember(i); n < count; n, k = n+1, t.nextMember(k) {
		if s.PropertyNames != nil && !f.tapeValid(s.PropertyNames, t, k, depth+1) {
			return false
		}
		name, _ := t.str(k)
		if sub, declared := s.Properties[string(name)]; declared {
			if !f.tapeValid(sub, t, k+1, depth+1) {
				return false
			}
			continue
		}
		switch ap := s.AdditionalProperties.(type) {
		case bool:
			if !ap {
				return false
			}
		case *jsonschema.Schema:
			if !f.tapeValid(ap, t, k+1, depth+1) {
				return false
			}
		}
	}
	return true
}

func (f fastPath) tapeArrayValid(s *jsonschema.Schema, t *tape, i, depth int) bool {
	count := int(t.nodes[i].count)
	if (s.MinItems != -1 && count < s.MinItems) || (s.MaxItems != -1 && count > s.MaxItems) {
		return false
	}
	if s.UniqueItems {
		if count > maxFastUnique {
			return false
		}
		for n, j := 0, i+1; n < count; n, j = n+1, int(t.nodes[j].next) {
			sj, ok := t.str(j)
			if !ok {
				return false
			}
			for m, k := 0, i+1; m < n; m, k = m+1, int(t.nodes[k].next) {
				if sk, _ := t.str(k); bytes.Equal(sj, sk) {
					return false
				}
			}
		}
	}
	if s.Items2020 != nil {
		for n, j := 0, i+1; n < count; n, j = n+1, int(t.nodes[j].next) {
			if !f.tapeValid(s.Items2020, t, j, depth+1) {
				return false
			}
		}
	}
	return true
}
