package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/agentleague/agentleague/internal/problem"
	"gopkg.in/yaml.v3"
)

// DecodeYAML parses one YAML document from data and decodes it into into, a pointer to a
// struct already holding the defaults. The configuration files use it, and so may other
// YAML files of the project (agent profiles) whose fields are strings, ints, float64s,
// bools, pointers to those (optional values, nil unless set), structs, lists or maps. It walks the node tree itself instead of
// using yaml.Decoder.KnownFields, so that every unknown field and mistyped value is
// reported, with its field path, rather than yaml's "field x not found in type y".
// Scalars must carry the YAML type of their field: yaml.v3 alone would truncate 2.5 into
// an int or read "yes" as true. Null values and missing fields keep their defaults.
// Duplicate keys are reported on their own, as the rest of the file is then ambiguous. A
// syntax error is returned as an error that keeps yaml's line number.
func DecodeYAML(file string, data []byte, into any) ([]Problem, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		return nil, fmt.Errorf("%s: line %d: more than one YAML document", file, next.Line)
	case !errors.Is(err, io.EOF):
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	d := decoder{file: file}
	d.duplicates(root.Content[0], "")
	if len(d.problems) == 0 {
		d.value(root.Content[0], reflect.ValueOf(into).Elem(), "")
	}
	return d.problems, nil
}

// elementDefaulter is implemented by list elements that have defaults of their own.
type elementDefaulter interface {
	applyDefaults()
}

// decoder collects the problems of one file.
type decoder struct {
	file     string
	problems []Problem
}

// add records a problem at path, located at n's line.
func (d *decoder) add(path string, n *yaml.Node, format string, args ...any) {
	d.problems = append(d.problems, Problem{File: d.file, Path: path, Message: fmt.Sprintf(format, args...), Line: n.Line})
}

// duplicates reports every mapping key of the tree under n that repeats an earlier key.
func (d *decoder) duplicates(n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.MappingNode:
		first := make(map[string]int)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i]
			p := problem.Field(path, key.Value)
			if line, ok := first[key.Value]; ok {
				d.add(p, key, "duplicate key, first set at line %d", line)
			} else {
				first[key.Value] = key.Line
			}
			d.duplicates(n.Content[i+1], p)
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			d.duplicates(e, problem.Index(path, i))
		}
	}
}

// value decodes n into v, the field at path.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return
	}
	t := v.Type()
	switch {
	case t.Kind() == reflect.Struct:
		d.mapping(n, v, path)
	case t.Kind() == reflect.Slice:
		d.list(n, v, path)
	case t.Kind() == reflect.Pointer:
		// An optional value: nil stays nil (null or missing), anything else is decoded.
		p := reflect.New(t.Elem())
		before := len(d.problems)
		d.value(n, p.Elem(), path)
		if len(d.problems) == before {
			v.Set(p)
		}
	case t.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			d.add(path, n, "must be a mapping, got %s", describe(n))
		} else if err := n.Decode(v.Addr().Interface()); err != nil {
			d.add(path, n, "must be a mapping with string keys")
		}
	default:
		sk := scalarKinds[t.Kind()]
		if n.Kind != yaml.ScalarNode || !slices.Contains(sk.tags, n.ShortTag()) || n.Decode(v.Addr().Interface()) != nil {
			d.add(path, n, "must be %s, got %s", sk.name, describe(n))
		}
	}
}

// mapping decodes the mapping n into the struct v, matching keys to yaml tags.
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.add(path, n, "must be a mapping, got %s", describe(n))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i]
		p := problem.Field(path, key.Value)
		f, ok := fieldByTag(v, key.Value)
		if !ok {
			d.add(p, key, "unknown field")
			continue
		}
		d.value(n.Content[i+1], f, p)
	}
}

// list decodes the sequence n into the slice v (of structs or scalars), replacing its
// elements.
func (d *decoder) list(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.add(path, n, "must be a list, got %s", describe(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, e := range n.Content {
		if def, ok := s.Index(i).Addr().Interface().(elementDefaulter); ok {
			def.applyDefaults()
		}
		d.value(e, s.Index(i), problem.Index(path, i))
	}
	v.Set(s)
}

// fieldByTag returns the exported field of the struct v whose yaml tag names key.
func fieldByTag(v reflect.Value, key string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if f.IsExported() && name != "-" && name == key {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// scalarKind is what a field of one scalar kind accepts.
type scalarKind struct {
	name string   // the expected value, for messages
	tags []string // the YAML tags that may decode into the field
}

// scalarKinds lists the kinds of the scalar fields of the configuration types.
var scalarKinds = map[reflect.Kind]scalarKind{
	reflect.Int:     {"an integer", []string{"!!int"}},
	reflect.Int64:   {"an integer", []string{"!!int"}},
	reflect.Float64: {"a number", []string{"!!int", "!!float"}},
	reflect.Bool:    {"true or false", []string{"!!bool"}},
	reflect.String:  {"a string", []string{"!!str"}},
}

// describe shows the YAML value n in a problem message.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if n.ShortTag() == "!!str" {
		return fmt.Sprintf("%q", n.Value)
	}
	return n.Value
}
