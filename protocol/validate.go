package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

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
	// MaxNumberBytes bounds a number literal; its exponent is bounded by maxExponent, so
	// that no number costs more than a small big.Rat to compare (the schema library would
	// otherwise build 10^exponent, or fail on it and panic).
	MaxNumberBytes = 64
)

// maxExponent bounds the decimal exponent of a number literal.
const maxExponent = 999

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

// Validator checks messages against the JSON Schemas in schemas/. Each message type's
// schema is compiled on its first use, so a process pays only for the types it sees;
// CompileAll compiles every one (tests use it, so no broken schema waits for runtime).
type Validator struct {
	// mu guards compiler: a jsonschema.Compiler is not safe for concurrent use.
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	envelope func() (*jsonschema.Schema, error)
	metadata func() (*jsonschema.Schema, error)
	messages map[string]func() (*jsonschema.Schema, error)
	// SelfCheck makes servers check their own answers and clients their own requests
	// before sending. Receivers always check what they receive, so this only moves the
	// error to the side that made it: tests and debugging turn it on (SelfCheckEnv).
	SelfCheck bool
}

// SelfCheckEnv, when set to a non-empty value, turns SelfCheck on in NewValidator.
const SelfCheckEnv = "LEAGUE_SELF_CHECK"

// NewValidator loads every embedded schema; each is compiled when first needed.
func NewValidator() (*Validator, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	// Compiling happens while serving: a reference must never reach outside the
	// embedded files.
	c.LoadURL = func(s string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("%s is not an embedded schema", s)
	}
	names, err := fs.Glob(schemas.FS, "*.json")
	if err != nil {
		return nil, fmt.Errorf("list schemas: %w", err)
	}
	v := &Validator{compiler: c, messages: map[string]func() (*jsonschema.Schema, error){}, SelfCheck: os.Getenv(SelfCheckEnv) != ""}
	for _, name := range names {
		b, err := schemas.FS.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read schema %s: %w", name, err)
		}
		if err := c.AddResource(schemas.BaseURI+name, bytes.NewReader(b)); err != nil {
			return nil, fmt.Errorf("add schema %s: %w", name, err)
		}
		// Every file but these two is a message type's.
		if name != "defs.json" && name != gameMetadataSchema {
			v.messages[strings.ToUpper(strings.TrimSuffix(name, ".json"))] = v.lazy(schemas.BaseURI + name)
		}
	}
	v.envelope = v.lazy(schemas.BaseURI + "defs.json#/$defs/envelope")
	v.metadata = v.lazy(schemas.BaseURI + gameMetadataSchema)
	return v, nil
}

// lazy returns the schema at url, compiled on the first call.
func (v *Validator) lazy(url string) func() (*jsonschema.Schema, error) {
	return sync.OnceValues(func() (*jsonschema.Schema, error) {
		v.mu.Lock()
		defer v.mu.Unlock()
		s, err := v.compiler.Compile(url)
		if err != nil {
			return nil, fmt.Errorf("compile schema %s: %w", strings.TrimPrefix(url, schemas.BaseURI), err)
		}
		return s, nil
	})
}

// Warm compiles now the schemas of the message types a role receives, so that its first
// match does not wait for them: compiling one costs milliseconds (checking it against
// the JSON Schema meta-schema, mostly), a validation microseconds.
func (v *Validator) Warm(messageTypes ...string) error {
	for _, t := range messageTypes {
		compiled, ok := v.messages[t]
		if !ok {
			return fmt.Errorf("warm schemas: no schema for message type %q", t)
		}
		if _, err := compiled(); err != nil {
			return err
		}
	}
	return nil
}

// The message types each role receives in a match, as requests or as answers, and the
// League Manager the admin request that starts the league: what a role warms before it
// registers, so that starting the league waits for no compilation either.
var (
	// PlayerReceives are the player's.
	PlayerReceives = []string{GameInvitation, RequestMove, GameOver}
	// RefereeReceives are the referee's.
	RefereeReceives = []string{MatchAssignment, GameJoinAck, MoveResponse, GameOverAck, MoveEventAck, MatchResultAck}
	// LeagueManagerReceives are the League Manager's.
	LeagueManagerReceives = []string{AdminStartLeagueRequest, MatchAssignmentAck, MoveEvent, MatchResultReport}
)

// CompileAll compiles every schema now and returns the first failure.
func (v *Validator) CompileAll() error {
	if _, err := v.envelope(); err != nil {
		return err
	}
	if _, err := v.metadata(); err != nil {
		return err
	}
	for _, t := range v.MessageTypes() {
		if _, err := v.messages[t](); err != nil {
			return err
		}
	}
	return nil
}

// MessageTypes lists the message types that have a schema, sorted.
func (v *Validator) MessageTypes() []string {
	return slices.Sorted(maps.Keys(v.messages))
}

// ValidateParams checks a decoded params object (decoded with UseNumber): generic
// bounds first, then the schema of its message type, which covers the envelope and the
// payload, so every violation of both is returned together. When the message type is
// not known, only the envelope can be checked and its violations are returned.
func (v *Validator) ValidateParams(params any) []Violation {
	if vs := checkBounds(params, "", 0); vs != nil {
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
	envObj, _ := env.(map[string]any)
	mt, _ := envObj["message_type"].(string)
	if compiled, ok := v.messages[mt]; ok {
		s, err := compiled()
		if err != nil {
			// Our defect, not the sender's: the type is not served, and the compiler's
			// details stay here (CompileAll reports them).
			return []Violation{{Path: "/envelope/message_type", Message: fmt.Sprintf("no usable schema for message type %q", mt)}}
		}
		return collect(s.Validate(params), "")
	}
	envSchema, err := v.envelope()
	if err != nil {
		return []Violation{{Path: "/envelope", Message: "no usable envelope schema"}}
	}
	if vs := collect(envSchema.Validate(env), "/envelope"); len(vs) > 0 {
		return vs
	}
	return []Violation{{Path: "/envelope/message_type", Message: fmt.Sprintf("no schema for message type %q", mt)}}
}

// gameMetadataSchema is the schema of what the League Manager reads of game_metadata.
const gameMetadataSchema = "game_metadata.json"

// GameMetadataPath is where game_metadata sits in MATCH_RESULT_REPORT: the paths of its
// violations start with it.
const GameMetadataPath = "/payload/game_metadata"

// ValidateGameMetadata checks a decoded game_metadata (decoded with UseNumber) against
// schemas/game_metadata.json, after the generic bounds as they apply to it inside a
// message. Violation paths start with GameMetadataPath. ReadGameMetadata is its reader.
func (v *Validator) ValidateGameMetadata(md any) []Violation {
	// game_metadata is two levels down in params (payload, then it).
	if vs := checkBounds(md, GameMetadataPath, 2); vs != nil {
		return vs
	}
	s, err := v.metadata()
	if err != nil {
		// Our defect: CompileAll reports the details.
		return []Violation{{Path: GameMetadataPath, Message: "no usable game_metadata schema"}}
	}
	return collect(s.Validate(md), GameMetadataPath)
}

// ValidateMessage checks a message this process built or received as a result, as
// encoding it would put it on the wire.
func (v *Validator) ValidateMessage(m *Message) error {
	if m == nil {
		return fmt.Errorf("no message")
	}
	// Judged as it goes on the wire: encoded, and the bytes decoded again.
	raw, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	params, err := decodeValue(raw)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
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
			out = append(out, Violation{Path: prefix + e.InstanceLocation, Message: sortPropertyNames(e.Message)})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	// The schema library visits properties in map order: sort, so that the same message
	// always gets the same answer.
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Message < out[j].Message
	})
	return dedupe(out)
}

// sortPropertyNames sorts the names listed by the schema library's "additionalProperties
// 'a', 'b' not allowed", which come in map order. Names are quoted with every ' escaped,
// so "', '" only ever separates two names.
func sortPropertyNames(msg string) string {
	const head, tail = "additionalProperties '", "' not allowed"
	if !strings.HasPrefix(msg, head) || !strings.HasSuffix(msg, tail) || len(msg) < len(head)+len(tail) {
		return msg
	}
	names := strings.Split(msg[len(head):len(msg)-len(tail)], "', '")
	slices.Sort(names)
	return head + strings.Join(names, "', '") + tail
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

// checkBounds returns the first bounds violation of v, members visited in sorted order.
func checkBounds(v any, path string, depth int) []Violation {
	if depth > MaxDepth {
		return []Violation{{Path: path, Message: fmt.Sprintf("nesting deeper than %d levels", MaxDepth)}}
	}
	switch x := v.(type) {
	case string:
		if len(x) > MaxStringBytes {
			return []Violation{{Path: path, Message: fmt.Sprintf("string longer than %d bytes", MaxStringBytes)}}
		}
	case json.Number:
		if !numberInBounds(string(x)) {
			return []Violation{{Path: path, Message: fmt.Sprintf("number longer than %d bytes or with an exponent beyond %d", MaxNumberBytes, maxExponent)}}
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
		// Sorted, so that the violation reported is the same on every run.
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if len(k) > MaxStringBytes {
				return []Violation{{Path: path, Message: "member name too long"}}
			}
			if vs := checkBounds(x[k], path+"/"+escapePointer(k), depth+1); vs != nil {
				return vs
			}
		}
	}
	return nil
}

// numberInBounds reports whether a JSON number literal is short and its exponent small.
func numberInBounds(s string) bool {
	if len(s) > MaxNumberBytes {
		return false
	}
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return true
	}
	exp, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
	return err == nil && exp >= -maxExponent && exp <= maxExponent
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
