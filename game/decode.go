package game

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// maxMoveSize bounds a move_payload so a hostile player cannot make the referee decode megabytes.
const maxMoveSize = 4 << 10

// decodeObject decodes a JSON object into its raw fields. Unknown fields are kept, not refused,
// so a player may send extra data; callers pick the fields they need.
func decodeObject(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if err := checkObject(raw); err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	return fields, nil
}

// checkObject refuses anything but an object up front, because Unmarshal accepts null into a
// map or a struct and leaves it empty.
func checkObject(raw json.RawMessage) error {
	if trimmed := bytes.TrimSpace(raw); len(trimmed) == 0 || trimmed[0] != '{' {
		return errors.New("not a JSON object")
	}
	return nil
}

// decodeMoveObject is decodeObject for a player's move: size-bounded and wrapping ErrMalformedMove.
func decodeMoveObject(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if len(raw) > maxMoveSize {
		return nil, fmt.Errorf("%w: %d bytes exceeds the %d byte limit", ErrMalformedMove, len(raw), maxMoveSize)
	}
	fields, err := decodeObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedMove, err)
	}
	return fields, nil
}

// intField reads a required integer field. Only integer literals qualify: 1.0 and 1e0 are refused
// because a well-behaved peer never sends them for a count or a cell index.
func intField(fields map[string]json.RawMessage, name string) (int, error) {
	raw, ok := fields[name]
	if !ok {
		return 0, fmt.Errorf("missing field %q", name)
	}
	var v *int
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		return 0, fmt.Errorf("field %q must be an integer (got %s)", name, clip(raw))
	}
	return *v, nil
}

// stringField reads a required string field; null is refused rather than read as "".
func stringField(fields map[string]json.RawMessage, name string) (string, error) {
	raw, ok := fields[name]
	if !ok {
		return "", fmt.Errorf("missing field %q", name)
	}
	var v *string
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		return "", fmt.Errorf("field %q must be a string (got %s)", name, clip(raw))
	}
	return *v, nil
}

// clip shortens a raw value for an error message so errors stay small whatever a peer sent.
func clip(raw json.RawMessage) string {
	const limit = 32
	if len(raw) <= limit {
		return string(raw)
	}
	return string(raw[:limit]) + "..."
}
