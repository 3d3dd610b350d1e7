package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/agentleague/agentleague/schemas"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Generic bounds applied to every decoded message before schema validation, so open
// payload objects cannot be used to exhaust a server.
const (
	MaxDepth        = 32
	MaxStringBytes  = 64 << 10
	MaxArrayItems   = 10000
	MaxObjectFields = 1000
)

// Violation is one schema or bounds violation at an instance path (a JSON pointer).
type Violation struct {
	Path    string
	Message string
}

// String formats the violation as "instance path: message".
func (v Violation) String() string {
	p := v.Path
	if p == "" {
		p = "/"
	}
	return p + ": " + v.Message
}

// Validator checks messages against the JSON Schemas in schemas/.
type Validator struct {
	envelope *jsonschema.Schema
	messages map[string]*jsonschema.Schema
}

// NewValidator compiles every embedded schema.
func NewValidator() (*Validator, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	names, err := fs.Glob(schemas.FS, "*.json")
	if err != nil {
		return nil, fmt.Errorf("list schemas: %w", err)
	}
	for _, name := range names {
		b, err := schemas.FS.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read schema %s: %w", name, err)
		}
		if err := c.AddResource(schemas.BaseURI+name, bytes.NewReader(b)); err != nil {
			return nil, fmt.Errorf("add schema %s: %w", name, err)
		}
	}
	v := &Validator{messages: map[string]*jsonschema.Schema{}}
	if v.envelope, err = c.Compile(schemas.BaseURI + "defs.json#/$defs/envelope"); err != nil {
		return nil, fmt.Errorf("compile envelope schema: %w", err)
	}
	for _, name := range names {
		if name == "defs.json" {
			continue
		}
		s, err := c.Compile(schemas.BaseURI + name)
		if err != nil {
			return nil, fmt.Errorf("compile schema %s: %w", name, err)
		}
		v.messages[strings.ToUpper(strings.TrimSuffix(name, ".json"))] = s
	}
	return v, nil
}

// MessageTypes lists the message types that have a schema, sorted.
func (v *Validator) MessageTypes() []string {
	out := make([]string, 0, len(v.messages))
	for t := range v.messages {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// ValidateParams checks a decoded params object (decoded with UseNumber): generic
// bounds, then the envelope, then the schema of its message type. It returns every
// violation found at the first failing stage.
func (v *Validator) ValidateParams(params any) []Violation {
	if vs := checkBounds(params, "", 0); len(vs) > 0 {
		return vs
	}
	obj, ok := params.(map[string]any)
	if !ok {
		return []Violation{{Path: "", Message: "params must be an object with envelope and payload"}}
	}
	env, ok := obj["envelope"]
	if !ok {
		return []Violation{{Path: "", Message: "missing property 'envelope'"}}
	}
	if vs := collect(v.envelope.Validate(env), "/envelope"); len(vs) > 0 {
		return vs
	}
	mt, _ := env.(map[string]any)["message_type"].(string)
	s, ok := v.messages[mt]
	if !ok {
		return []Violation{{Path: "/envelope/message_type", Message: fmt.Sprintf("no schema for message type %q", mt)}}
	}
	return collect(s.Validate(params), "")
}

// ValidateMessage checks a message this process built or received as a result.
func (v *Validator) ValidateMessage(m *Message) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	params, err := decodeValue(raw)
	if err != nil {
		return err
	}
	if vs := v.ValidateParams(params); len(vs) > 0 {
		return fmt.Errorf("%s violates its schema: %s", m.Envelope.MessageType, joinViolations(vs))
	}
	return nil
}

func joinViolations(vs []Violation) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.String()
	}
	return strings.Join(s, "; ")
}

// collect flattens a jsonschema error tree into its leaf violations.
func collect(err error, prefix string) []Violation {
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []Violation{{Path: prefix, Message: err.Error()}}
	}
	var out []Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, Violation{Path: prefix + e.InstanceLocation, Message: e.Message})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return dedupe(out)
}

func dedupe(vs []Violation) []Violation {
	out := vs[:0]
	seen := map[Violation]bool{}
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func checkBounds(v any, path string, depth int) []Violation {
	if depth > MaxDepth {
		return []Violation{{Path: path, Message: fmt.Sprintf("nesting deeper than %d levels", MaxDepth)}}
	}
	switch x := v.(type) {
	case string:
		if len(x) > MaxStringBytes {
			return []Violation{{Path: path, Message: fmt.Sprintf("string longer than %d bytes", MaxStringBytes)}}
		}
	case []any:
		if len(x) > MaxArrayItems {
			return []Violation{{Path: path, Message: fmt.Sprintf("array longer than %d items", MaxArrayItems)}}
		}
		for i, e := range x {
			if vs := checkBounds(e, path+"/"+strconv.Itoa(i), depth+1); vs != nil {
				return vs
			}
		}
	case map[string]any:
		if len(x) > MaxObjectFields {
			return []Violation{{Path: path, Message: fmt.Sprintf("object with more than %d members", MaxObjectFields)}}
		}
		for k, e := range x {
			if len(k) > MaxStringBytes {
				return []Violation{{Path: path, Message: "member name too long"}}
			}
			if vs := checkBounds(e, path+"/"+escapePointer(k), depth+1); vs != nil {
				return vs
			}
		}
	}
	return nil
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// decodeValue decodes one JSON value with numbers kept exact, refusing trailing data.
func decodeValue(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode json: %w", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("decode json: trailing data after value")
	}
	return v, nil
}
