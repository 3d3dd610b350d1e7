package audit

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// secretFields are redacted wherever they appear in an audited message.
var secretFields = map[string]bool{
	"auth_token": true, "token": true, "admin_token": true, "credential": true,
	"match_credentials": true, "password": true, "secret": true,
}

const redacted = "[REDACTED]"

// secretInText is a secret field and its value in a body that is not JSON (torn or
// malformed), quoted or not, possibly cut short; credentialInText is a match credential.
var (
	secretInText     = regexp.MustCompile(`(?i)([a-z_]*(?:token|credentials?|password|secret)["']?\s*[:=]\s*)("(?:[^"\\]|\\.)*"?|'[^']*'?|\{[^}]*\}?|[^\s,;}\]]*)`)
	credentialInText = regexp.MustCompile(`[0-9a-fA-F]{64}`)
)

// wireMessage makes a wire message safe to log: secrets redacted, non-JSON wrapped.
func wireMessage(raw []byte) json.RawMessage {
	if obj, ok := scannable(raw); ok {
		return redactScan(obj)
	}
	if !json.Valid(raw) {
		// Redacted before it is cut, so that no secret survives in part.
		s := secretInText.ReplaceAllString(string(raw), `${1}"`+redacted+`"`)
		s = credentialInText.ReplaceAllString(s, redacted)
		if len(s) > 1024 {
			s = s[:1024]
		}
		b, _ := json.Marshal(map[string]string{"unparsed": strings.ToValidUTF8(s, "?")})
		return b
	}
	return redactDecoded(raw)
}

// redact replaces the values of secret fields anywhere in a JSON document and compacts
// it; a document that is not an object is wrapped as {"value": ...}.
func redact(raw []byte) json.RawMessage {
	if obj, ok := scannable(raw); ok {
		return redactScan(obj)
	}
	return redactDecoded(raw)
}

// scannable returns raw trimmed when redactScan can take it: a valid JSON object
// without \u escapes, which could spell a secret field's name.
func scannable(raw []byte) ([]byte, bool) {
	obj := bytes.TrimSpace(raw)
	if len(obj) == 0 || obj[0] != '{' || bytes.Contains(obj, []byte(`\u`)) || !json.Valid(obj) {
		return nil, false
	}
	return obj, true
}

// redactDecoded is redact by decoding and encoding again: for escaped keys and
// documents that are not objects.
func redactDecoded(raw []byte) json.RawMessage {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return raw
	}
	if _, isObj := v.(map[string]any); !isObj {
		wrapped, _ := json.Marshal(map[string]any{"value": redactValue(v)})
		return wrapped
	}
	out, err := json.Marshal(redactValue(v))
	if err != nil {
		return raw
	}
	return out
}

func redactValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if secretFields[k] {
				x[k] = redacted
			} else {
				x[k] = redactValue(e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = redactValue(e)
		}
	}
	return v
}

// redactScan is redact for a valid JSON object without \u escapes, the shape of every
// message our agents send: one pass over the bytes, compacting and putting [REDACTED] in
// place of each secret field's value, keys kept in their order. Without \u escapes a
// key's bytes are its name, since no other escape can spell a secret field's letters.
func redactScan(raw []byte) []byte {
	out := make([]byte, 0, len(raw))
	var stack []byte // '{' or '[' of each open container
	key := false     // the next string in the open object is a key
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{', '[':
			stack = append(stack, c)
			key = c == '{'
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			key = len(stack) > 0 && stack[len(stack)-1] == '{'
		case '"':
			end := stringEnd(raw, i)
			if key {
				key = false
				name := raw[i+1 : end-1]
				out = append(out, raw[i:end]...)
				i = end - 1
				if secretFields[string(name)] {
					i = skipSeparator(raw, end)
					out = append(out, ':', '"')
					out = append(out, redacted...)
					out = append(out, '"')
					i = skipValue(raw, i) - 1
				}
				continue
			}
			out = append(out, raw[i:end]...)
			i = end - 1
			continue
		}
		out = append(out, c)
	}
	return out
}

// stringEnd is the index after the closing quote of the string that opens at i.
func stringEnd(raw []byte, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(raw)
}

// skipSeparator is the index of the value after the key that ended at i: past the
// whitespace and the colon.
func skipSeparator(raw []byte, i int) int {
	for ; i < len(raw) && raw[i] != ':'; i++ {
	}
	i++
	for ; i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r'); i++ {
	}
	return i
}

// skipValue is the index after the JSON value that starts at i.
func skipValue(raw []byte, i int) int {
	depth := 0
	for ; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '"':
			i = stringEnd(raw, i) - 1
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}
