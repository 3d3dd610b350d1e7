package schemas_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/agentleague/agentleague/schemas"
)

const (
	draft2020    = "https://json-schema.org/draft/2020-12/schema"
	defsFile     = "defs.json"
	metadataFile = "game_metadata.json"
	examplesDir  = "testdata/examples"
	capturesDir  = "testdata/python-peer-wire"
	exampleToken = "b77e536c-2949-41e4-852f-2a0c6fa5c510"
)

// defectiveAnswers names the captured answers that are known not to validate, and why. Each must
// still fail, so the list cannot outlive the defect.
var defectiveAnswers = map[string]string{
	"game_over.wire.json": "the player echoes the GAME_OVER envelope with an empty payload instead of a GAME_OVER_ACK",
}

// schemaFiles lists the embedded schema files.
func schemaFiles(t *testing.T) []string {
	t.Helper()
	names, err := fs.Glob(schemas.FS, "*.json")
	if err != nil {
		t.Fatalf("glob schemas: %v", err)
	}
	if len(names) == 0 {
		t.Fatal("no embedded schema")
	}
	return names
}

// compileAll compiles every embedded schema, keyed by file name, with formats asserted and
// every reference resolved from the embedded files only.
func compileAll(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	c.LoadURL = func(s string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("%s is not an embedded schema", s)
	}
	names := schemaFiles(t)
	for _, name := range names {
		data, err := schemas.FS.ReadFile(name)
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		if err := c.AddResource(schemas.BaseURI+name, bytes.NewReader(data)); err != nil {
			t.Fatalf("add %s: %v", name, err)
		}
	}
	compiled := make(map[string]*jsonschema.Schema, len(names))
	for _, name := range names {
		s, err := c.Compile(schemas.BaseURI + name)
		if err != nil {
			t.Fatalf("compile %s: %v", name, err)
		}
		compiled[name] = s
	}
	return compiled
}

// decode reads JSON the way the server does: numbers stay json.Number.
func decode(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return v
}

func readJSON(t *testing.T, name string) any {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return decode(t, data)
}

func readSchema(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := schemas.FS.ReadFile(name)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	doc, ok := decode(t, data).(map[string]any)
	if !ok {
		t.Fatalf("%s is not a JSON object", name)
	}
	return doc
}

// lookup follows keys through nested objects.
func lookup(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// messageTypes is the envelope's message_type enum from defs.json.
func messageTypes(t *testing.T) []string {
	t.Helper()
	enum, ok := lookup(readSchema(t, defsFile), "$defs", "envelope", "properties", "message_type", "enum").([]any)
	if !ok || len(enum) == 0 {
		t.Fatal("defs.json: no message_type enum in the envelope")
	}
	types := make([]string, 0, len(enum))
	for _, v := range enum {
		s, ok := v.(string)
		if !ok {
			t.Fatalf("defs.json: message type %v is not a string", v)
		}
		types = append(types, s)
	}
	return types
}

func fileOf(messageType string) string { return strings.ToLower(messageType) + ".json" }

func example(t *testing.T, messageType string) any {
	t.Helper()
	return readJSON(t, filepath.Join(examplesDir, fileOf(messageType)))
}

// violations validates v and returns the instance location of every violation.
func violations(t *testing.T, s *jsonschema.Schema, v any) []string {
	t.Helper()
	err := s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("validate: got %v, want a validation error", err)
	}
	var locs []string
	for _, e := range ve.BasicOutput().Errors {
		locs = append(locs, e.InstanceLocation)
	}
	return locs
}

func TestSchemaIdentity(t *testing.T) {
	for _, name := range schemaFiles(t) {
		doc := readSchema(t, name)
		if got, want := doc["$id"], schemas.BaseURI+name; got != want {
			t.Errorf("%s: $id got %v, want %s", name, got, want)
		}
		if got := doc["$schema"]; got != draft2020 {
			t.Errorf("%s: $schema got %v, want %s", name, got, draft2020)
		}
	}
	compileAll(t)
}

func TestOneFilePerMessageType(t *testing.T) {
	types := messageTypes(t)
	compiled := compileAll(t)
	seen := make(map[string]bool, len(types))
	for _, mt := range types {
		if seen[mt] {
			t.Errorf("message type %s is listed twice", mt)
		}
		seen[mt] = true
		if compiled[fileOf(mt)] == nil {
			t.Errorf("message type %s has no schema file %s", mt, fileOf(mt))
		}
	}
	for name := range compiled {
		if name != defsFile && name != metadataFile && !seen[strings.ToUpper(strings.TrimSuffix(name, ".json"))] {
			t.Errorf("%s names no message type of the envelope", name)
		}
	}
}

func TestExamplesValidate(t *testing.T) {
	compiled := compileAll(t)
	types := messageTypes(t)
	for _, mt := range types {
		t.Run(mt, func(t *testing.T) {
			if locs := violations(t, compiled[fileOf(mt)], example(t, mt)); locs != nil {
				t.Errorf("example does not validate: violations at %q", locs)
			}
		})
	}
	entries, err := os.ReadDir(examplesDir)
	if err != nil {
		t.Fatalf("read examples: %v", err)
	}
	for _, e := range entries {
		if !slices.Contains(types, strings.ToUpper(strings.TrimSuffix(e.Name(), ".json"))) {
			t.Errorf("example %s names no message type", e.Name())
		}
	}
}

// TestMessageTypeIsPinned checks that each schema accepts only its own message type.
func TestMessageTypeIsPinned(t *testing.T) {
	compiled := compileAll(t)
	types := messageTypes(t)
	for i, mt := range types {
		other := types[(i+1)%len(types)]
		doc := example(t, mt)
		setPath(t, doc, "/envelope/message_type", fmt.Sprintf("%q", other))
		if locs := violations(t, compiled[fileOf(mt)], doc); !slices.Contains(locs, "/envelope/message_type") {
			t.Errorf("%s schema with message_type %s: violations at %q, want one at /envelope/message_type", mt, other, locs)
		}
	}
}

func TestInteropCaptures(t *testing.T) {
	compiled := compileAll(t)
	names, err := filepath.Glob(filepath.Join(capturesDir, "*.wire.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no capture in %s (err %v)", capturesDir, err)
	}
	for _, name := range names {
		base := filepath.Base(name)
		t.Run(base, func(t *testing.T) {
			capture := readJSON(t, name)
			params := lookup(capture, "request", "params")
			if locs := validateMessage(t, compiled, params); locs != nil {
				t.Errorf("request params: violations at %q", locs)
			}
			result := lookup(capture, "response", "result")
			locs := validateMessage(t, compiled, result)
			if why, defective := defectiveAnswers[base]; defective {
				if locs == nil {
					t.Errorf("response result validates; remove it from defectiveAnswers (%s)", why)
				}
				return
			}
			if locs != nil {
				t.Errorf("response result: violations at %q", locs)
			}
		})
	}
}

// validateMessage validates a params or result object against the schema of its message type.
func validateMessage(t *testing.T, compiled map[string]*jsonschema.Schema, msg any) []string {
	t.Helper()
	mt, ok := lookup(msg, "envelope", "message_type").(string)
	if !ok {
		t.Fatal("message has no envelope.message_type")
	}
	s := compiled[fileOf(mt)]
	if s == nil {
		t.Fatalf("no schema for message type %s", mt)
	}
	return violations(t, s, msg)
}

// setPath sets the value at a slash-separated path of object keys to the JSON in value, or
// deletes it when value is empty.
func setPath(t *testing.T, doc any, p, value string) {
	t.Helper()
	keys := strings.Split(strings.TrimPrefix(p, "/"), "/")
	parent, ok := lookup(doc, keys[:len(keys)-1]...).(map[string]any)
	if !ok {
		t.Fatalf("%s: parent is not an object", p)
	}
	last := keys[len(keys)-1]
	if value == "" {
		if _, ok := parent[last]; !ok {
			t.Fatalf("%s: nothing to delete", p)
		}
		delete(parent, last)
		return
	}
	parent[last] = decode(t, []byte(value))
}

func quoted(s string) string { return fmt.Sprintf("%q", s) }

func TestInvalidMessages(t *testing.T) {
	compiled := compileAll(t)
	tests := []struct {
		name        string
		messageType string
		path        string
		value       string // JSON; empty deletes the field
		want        string // instance location of a violation
	}{
		{"missing payload field", "REGISTER_REFEREE_REQUEST", "/payload/endpoint_url", "", "/payload"},
		{"missing payload", "REGISTER_PLAYER_REQUEST", "/payload", "", ""},
		{"missing envelope field", "GAME_OVER", "/envelope/timestamp", "", "/envelope"},
		{"missing contextual envelope field", "MATCH_RESULT_REPORT", "/envelope/auth_token", "", "/envelope"},
		{"missing match_id in envelope", "REQUEST_MOVE", "/envelope/match_id", "", "/envelope"},
		{"wrong protocol", "QUERY_STANDINGS", "/envelope/protocol", quoted("league.v1"), "/envelope/protocol"},
		{"unknown message type", "MOVE_EVENT", "/envelope/message_type", quoted("MOVE_EVENTS"), "/envelope/message_type"},
		{"extra envelope field", "HEARTBEAT_REQUEST", "/envelope/trace_id", quoted("abc"), "/envelope"},
		{"extra top-level field", "GAME_JOIN_ACK", "/meta", "{}", ""},
		{"timestamp with +02:00", "REGISTER_REFEREE_REQUEST", "/envelope/timestamp", quoted("2026-11-22T03:21:50.5+02:00"), "/envelope/timestamp"},
		{"timestamp without zone", "MOVE_RESPONSE", "/envelope/timestamp", quoted("2026-11-22T03:21:50"), "/envelope/timestamp"},
		{"timestamp in month 13", "MOVE_RESPONSE", "/envelope/timestamp", quoted("2026-13-22T03:21:50Z"), "/envelope/timestamp"},
		{"deadline not UTC", "REQUEST_MOVE", "/payload/deadline", quoted("2026-11-22T03:21:50-01:00"), "/payload/deadline"},
		{"uuid version 1", "AGENT_READY_REQUEST", "/envelope/conversation_id", quoted("3b30ff6a-1474-1b42-acdc-4d7668dd0bed"), "/envelope/conversation_id"},
		{"uuid bad variant", "AGENT_READY_REQUEST", "/envelope/conversation_id", quoted("3b30ff6a-1474-4b42-ccdc-4d7668dd0bed"), "/envelope/conversation_id"},
		{"issued token not a uuid", "REGISTER_PLAYER_RESPONSE", "/payload/auth_token", quoted("token-1"), "/payload/auth_token"},
		{"token with a space", "QUERY_STANDINGS", "/envelope/auth_token", quoted("a b"), "/envelope/auth_token"},
		{"player as referee", "REGISTER_REFEREE_REQUEST", "/envelope/sender", quoted("player:ref1"), "/envelope/sender"},
		{"referee as league manager", "MATCH_ASSIGNMENT", "/envelope/sender", quoted("referee:ref1"), "/envelope/sender"},
		{"player as admin", "ADMIN_START_LEAGUE_REQUEST", "/envelope/sender", quoted("player:p01"), "/envelope/sender"},
		{"admin as agent", "AGENT_READY_REQUEST", "/envelope/sender", quoted("admin"), "/envelope/sender"},
		{"league manager acknowledging a cancellation", "MATCH_CANCELLED_ACK", "/envelope/sender", quoted("league_manager"), "/envelope/sender"},
		{"sender id with a space", "MOVE_EVENT", "/envelope/sender", quoted("referee:ref 1"), "/envelope/sender"},
		{"oversize display name", "REGISTER_PLAYER_REQUEST", "/payload/display_name", quoted(strings.Repeat("n", 129)), "/payload/display_name"},
		{"oversize reason", "LEAGUE_SHUTDOWN", "/payload/reason", quoted(strings.Repeat("r", 257)), "/payload/reason"},
		{"oversize unknown field", "GAME_OVER_ACK", "/payload/note", quoted(strings.Repeat("x", 8193)), "/payload/note"},
		{"oversize id", "REGISTER_PLAYER_REQUEST", "/payload/player_id", quoted(strings.Repeat("p", 65)), "/payload/player_id"},
		{"oversize moves", "MATCH_RESULT_REPORT", "/payload/game_metadata/moves", "[" + strings.Repeat("0,", 4096) + "0]", "/payload/game_metadata/moves"},
		{"3 players", "MATCH_ASSIGNMENT", "/payload/players", `["p01","p02","p03"]`, "/payload/players"},
		{"same player twice", "MATCH_RESULT_REPORT", "/payload/players", `["p01","p01"]`, "/payload/players"},
		{"3 endpoints", "MATCH_ASSIGNMENT", "/payload/player_endpoints/p03", quoted("http://127.0.0.1:9003/mcp"), "/payload/player_endpoints"},
		{"endpoint not http", "REGISTER_REFEREE_REQUEST", "/payload/endpoint_url", quoted("ftp://127.0.0.1/mcp"), "/payload/endpoint_url"},
		{"credential not hex", "MATCH_ASSIGNMENT", "/payload/match_credentials/p01", quoted(exampleToken), "/payload/match_credentials/p01"},
		{"seed beyond int64", "MATCH_ASSIGNMENT", "/payload/match_seed", "9223372036854775808", "/payload/match_seed"},
		{"negative points", "MATCH_RESULT_REPORT", "/payload/points/p01", "-1", "/payload/points/p01"},
		{"fractional points", "GAME_OVER", "/payload/points/p02", "0.5", "/payload/points/p02"},
		{"unknown outcome", "MATCH_RESULT_REPORT", "/payload/outcome/p02", quoted("forfeit"), "/payload/outcome/p02"},
		{"unknown move outcome", "MOVE_EVENT", "/payload/outcome", quoted("OK"), "/payload/outcome"},
		{"batch item with an unknown outcome", "MOVE_EVENT", "/payload", `{"moves":[{"step_number":1,"player_id":"p01","move":1,"outcome":"SUCCESS"},{"step_number":2,"player_id":"p02","move":2,"outcome":"OK"}]}`, "/payload/moves/1/outcome"},
		{"batch item without a player", "MOVE_EVENT", "/payload", `{"moves":[{"step_number":1,"move":1,"outcome":"SUCCESS"}]}`, "/payload/moves/0"},
		{"empty batch", "MOVE_EVENT", "/payload", `{"moves":[]}`, "/payload/moves"},
		{"batch of 257 moves", "MOVE_EVENT", "/payload", `{"moves":[` + strings.Repeat(`{"step_number":1,"player_id":"p01","move":1,"outcome":"SUCCESS"},`, 256) + `{"step_number":1,"player_id":"p01","move":1,"outcome":"SUCCESS"}]}`, "/payload/moves"},
		{"batch beside a single move", "MOVE_EVENT", "/payload/moves", `[{"step_number":2,"player_id":"p02","move":2,"outcome":"SUCCESS"}]`, "/payload/step_number"},
		{"batch not an array", "MOVE_EVENT", "/payload", `{"moves":{"step_number":1}}`, "/payload/moves"},
		{"step number too large", "REQUEST_MOVE", "/payload/step_number", "100001", "/payload/step_number"},
		{"deadline zero", "REQUEST_MOVE", "/payload/deadline_ms", "0", "/payload/deadline_ms"},
		{"standings row without rank", "STANDINGS_RESPONSE", "/payload/standings", `[{"player_id":"p01","points":0,"wins":0,"draws":0,"losses":0,"matches_played":0}]`, "/payload/standings/0"},
		{"unknown ack status", "MATCH_RESULT_ACK", "/payload/status", quoted("ok"), "/payload/status"},
		{"unknown join status", "GAME_JOIN_ACK", "/payload/status", quoted("maybe"), "/payload/status"},
		{"winner not an id", "GAME_OVER", "/payload/winner", "1", "/payload/winner"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := example(t, tt.messageType)
			setPath(t, doc, tt.path, tt.value)
			locs := violations(t, compiled[fileOf(tt.messageType)], doc)
			if !slices.Contains(locs, tt.want) {
				t.Errorf("violations at %q, want one at %q", locs, tt.want)
			}
		})
	}
}

// TestValidVariants checks forms the contract accepts besides those of the examples.
func TestValidVariants(t *testing.T) {
	compiled := compileAll(t)
	tests := []struct {
		name        string
		messageType string
		path        string
		value       string // JSON; empty deletes the field
	}{
		{"timestamp with +00:00", "MATCH_ASSIGNMENT", "/envelope/timestamp", quoted("2026-11-22T01:21:50.311387+00:00")},
		{"timestamp in nanoseconds", "MATCH_ASSIGNMENT", "/envelope/timestamp", quoted("2026-11-22T01:21:50.123456789Z")},
		{"timestamp in whole seconds", "MATCH_ASSIGNMENT", "/envelope/timestamp", quoted("2026-11-22T01:21:50Z")},
		{"unknown payload field", "REGISTER_REFEREE_REQUEST", "/payload/capabilities", `{"streaming":true}`},
		{"https endpoint", "REGISTER_PLAYER_REQUEST", "/payload/endpoint_url", quoted("https://agents.example.org/p01/mcp")},
		{"largest seed", "MATCH_ASSIGNMENT", "/payload/match_seed", "9223372036854775807"},
		{"assignment without credentials", "MATCH_ASSIGNMENT", "/payload/match_credentials", ""},
		{"assignment without token", "MATCH_ASSIGNMENT", "/envelope/auth_token", ""},
		{"admin request without token", "ADMIN_SHUTDOWN_REQUEST", "/envelope/auth_token", ""},
		{"standings of a round", "STANDINGS_RESPONSE", "/payload/round_id", quoted("round-3")},
		{"draw without winner", "GAME_OVER", "/payload/winner", "null"},
		{"move as a string", "MOVE_RESPONSE", "/payload/move_payload", quoted("e2e4")},
		{"match credential as token", "MOVE_RESPONSE", "/envelope/auth_token", quoted(strings.Repeat("ab", 32))},
		{"referee acknowledging a cancellation", "MATCH_CANCELLED_ACK", "/envelope/sender", quoted("referee:ref1")},
		{"batch of moves", "MOVE_EVENT", "/payload", `{"moves":[{"step_number":1,"player_id":"p01","move":{"row":1,"col":1},"outcome":"SUCCESS","state":{"move_count":1}},{"step_number":2,"player_id":"p02","move":{"row":0,"col":0},"outcome":"FORCED"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := example(t, tt.messageType)
			setPath(t, doc, tt.path, tt.value)
			if locs := violations(t, compiled[fileOf(tt.messageType)], doc); locs != nil {
				t.Errorf("violations at %q, want none", locs)
			}
		})
	}
}

// TestSchemasAreBounded checks that every typed schema bounds its input: strings by length,
// arrays by items, objects by properties, integers by range.
func TestSchemasAreBounded(t *testing.T) {
	for _, name := range schemaFiles(t) {
		walkSchemas(readSchema(t, name), "#", func(loc string, s map[string]any) {
			typ, _ := s["type"].(string)
			var missing []string
			need := func(keys ...string) {
				for _, k := range keys {
					if _, ok := s[k]; !ok {
						missing = append(missing, k)
					}
				}
			}
			switch typ {
			case "string":
				need("maxLength")
			case "array":
				need("maxItems")
			case "integer", "number":
				need("minimum", "maximum")
			case "object":
				if s["additionalProperties"] != false {
					need("maxProperties")
				}
			}
			if missing != nil {
				t.Errorf("%s%s: %s schema without %s", name, loc, typ, strings.Join(missing, ", "))
			}
		})
	}
}

// walkSchemas calls fn on every object in a schema document that has a "type" keyword.
func walkSchemas(v any, loc string, fn func(loc string, s map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["type"].(string); ok {
			fn(loc, v)
		}
		for k, child := range v {
			walkSchemas(child, path.Join(loc, k), fn)
		}
	case []any:
		for i, child := range v {
			walkSchemas(child, path.Join(loc, fmt.Sprint(i)), fn)
		}
	}
}

// TestGameMetadata checks schemas/game_metadata.json, what the League Manager reads of a
// MATCH_RESULT_REPORT's game_metadata: the examples' and the Python implementation's
// records are valid, every member is optional, the referee's own members are allowed,
// and a member of the wrong type or out of bounds is a violation at its path.
func TestGameMetadata(t *testing.T) {
	s := compileAll(t)[metadataFile]
	records := map[string]any{
		"example":         lookup(example(t, "MATCH_RESULT_REPORT"), "payload", "game_metadata"),
		"python capture":  lookup(readJSON(t, filepath.Join(capturesDir, "match_result_report.wire.json")), "request", "params", "payload", "game_metadata"),
		"empty":           map[string]any{},
		"forfeit":         decode(t, []byte(`{"forfeit":"suspended","suspended":["p01"]}`)),
		"nulls":           decode(t, []byte(`{"match_seed":null,"game_params":null,"moves":null,"violations":null,"suspended":null,"final_state":null}`)),
		"referee's own":   decode(t, []byte(`{"termination":"checkmate","x_engine":{"depth":12},"moves":[{"player":"p01","x_eval":0.3}]}`)),
		"any RFC 3339":    decode(t, []byte(`{"started_at":"2026-11-22T03:21:50.5+02:00"}`)),
		"integral floats": decode(t, []byte(`{"steps":3.0,"moves":[{"player":"p01","elapsed_ms":1e3}]}`)),
	}
	for name, md := range records {
		if md == nil {
			t.Fatalf("%s: no game_metadata", name)
		}
		if locs := violations(t, s, md); locs != nil {
			t.Errorf("%s: violations at %q", name, locs)
		}
	}
	for _, tt := range []struct{ record, want string }{
		{`{"steps":"3"}`, "/steps"},
		{`{"steps":-1}`, "/steps"},
		{`{"total_moves":1.5}`, "/total_moves"},
		{`{"match_seed":9223372036854775808}`, "/match_seed"},
		{`{"termination":3}`, "/termination"},
		{`{"loser":"p 1"}`, "/loser"},
		{`{"game_params":[1]}`, "/game_params"},
		{`{"moves":{"player":"p01"}}`, "/moves"},
		{`{"moves":[{"step":1}]}`, "/moves/0"},
		{`{"moves":[{"player":"p01","elapsed_ms":"4"}]}`, "/moves/0/elapsed_ms"},
		{`{"moves":[{"player":"p01","elapsed_ms":-1}]}`, "/moves/0/elapsed_ms"},
		{`{"moves":[{"player":"p01","outcome":"OK"}]}`, "/moves/0/outcome"},
		{`{"violations":[{"player":"p01"}]}`, "/violations/0"},
		{`{"violations":[{"player":"p01","kind":7}]}`, "/violations/0/kind"},
		{`{"suspended":["p01","p01"]}`, "/suspended"},
		{`{"finished_at":"yesterday"}`, "/finished_at"},
		{`{"x":"` + strings.Repeat("x", 8193) + `"}`, "/x"},
		{`[]`, ""},
	} {
		if locs := violations(t, s, decode(t, []byte(tt.record))); !slices.Contains(locs, tt.want) {
			t.Errorf("%s: violations at %q, want one at %q", tt.record, locs, tt.want)
		}
	}
}
