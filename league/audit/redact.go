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

// redact makes a message safe to log on one line: the values of secret fields replaced
// anywhere in it. A JSON document is decoded and encoded again, which compacts it and
// reads escaped keys as the names they spell; one that is not an object is wrapped as
// {"value": ...}. A body that is not JSON is wrapped as {"unparsed": ...}.
func redact(raw []byte) json.RawMessage {
	if json.Valid(raw) {
		var v any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&v); err == nil {
			if _, isObj := v.(map[string]any); !isObj {
				v = map[string]any{"value": v}
			}
			if out, err := json.Marshal(redactValue(v)); err == nil {
				return out
			}
		}
	}
	// Redacted before it is cut, so that no secret survives in part.
	s := secretInText.ReplaceAllString(string(raw), `${1}"`+redacted+`"`)
	s = credentialInText.ReplaceAllString(s, redacted)
	if len(s) > 1024 {
		s = s[:1024]
	}
	b, _ := json.Marshal(map[string]string{"unparsed": strings.ToValidUTF8(s, "?")})
	return b
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
