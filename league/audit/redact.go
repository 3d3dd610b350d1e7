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
	return redact(raw)
}

// redact replaces the values of secret fields anywhere in a JSON document.
func redact(raw []byte) json.RawMessage {
	if !mayHoldSecret(raw) {
		// Nothing to redact: compacting keeps the line a single line without the cost
		// of decoding and re-encoding large answers.
		var buf bytes.Buffer
		if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 && trimmed[0] == '{' && json.Compact(&buf, trimmed) == nil {
			return buf.Bytes()
		}
	}
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

// mayHoldSecret reports whether raw could carry a secret field: a secret key name in
// plain text, or any \u escape that could spell one.
func mayHoldSecret(raw []byte) bool {
	if bytes.Contains(raw, []byte(`\u`)) {
		return true
	}
	for name := range secretFields {
		if bytes.Contains(raw, []byte(`"`+name+`"`)) {
			return true
		}
	}
	return false
}
