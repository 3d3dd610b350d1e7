package protocol

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
)

// readCall reads a request body in one pass when it is the common case: a single call
// with all four members, a plain id and params that pass their schema. It returns the
// call's id and message, or ok false for anything else, which Process then reads the
// long way (batches, notifications, errors of every kind).
func (v *Validator) readCall(body []byte) (id json.RawMessage, m *Message, ok bool) {
	// A copy: the message keeps its payload and tape beyond the caller's use of body.
	t := readTape(bytes.Clone(body))
	if t == nil || t.nodes[0].kind != '{' || t.nodes[0].count != 4 {
		return nil, nil, false
	}
	idNode, params := t.member(0, "id"), t.member(0, "params")
	if idNode < 0 || params < 0 || !t.isString(t.member(0, "jsonrpc"), JSONRPCVersion) || !t.isString(t.member(0, "method"), Method) {
		return nil, nil, false
	}
	// The id goes back as encoding/json writes it: the same bytes for these kinds.
	switch t.nodes[idNode].kind {
	case '"':
		if !t.plainString(idNode) {
			return nil, nil, false
		}
	case '0', 'n':
	default:
		return nil, nil, false
	}
	m, ok = v.tapeMessage(t, params)
	return bytes.Clone(t.bytes(idNode)), m, ok
}

// readAnswer reads an HTTP answer in one pass when it is a valid answer to the call
// with id from conversation conv: a JSON-RPC response with that id whose result passes
// its schema. ok is false for anything else.
func (v *Validator) readAnswer(raw, id []byte, conv string) (*Message, bool) {
	// A copy: raw is also the response the recorder was given.
	t := readTape(bytes.Clone(raw))
	if t == nil || t.nodes[0].kind != '{' || t.nodes[0].count != 3 {
		return nil, false
	}
	idNode, result := t.member(0, "id"), t.member(0, "result")
	if idNode < 0 || result < 0 || !bytes.Equal(t.bytes(idNode), id) || !t.isString(t.member(0, "jsonrpc"), JSONRPCVersion) {
		return nil, false
	}
	m, ok := v.tapeMessage(t, result)
	if !ok || m.Envelope.ConversationID != conv {
		return nil, false
	}
	return m, true
}

// tapeMessage validates node i of t as a message (params or result) and builds it.
func (v *Validator) tapeMessage(t *tape, i int) (*Message, bool) {
	if t.nodes[i].kind != '{' {
		return nil, false
	}
	env, payload := t.member(i, "envelope"), t.member(i, "payload")
	if env < 0 || payload < 0 || t.nodes[env].kind != '{' {
		return nil, false
	}
	mt, ok := t.str(t.member(env, "message_type"))
	if !ok {
		return nil, false
	}
	compiled, ok := v.messages[string(mt)]
	if !ok {
		return nil, false
	}
	s, err := compiled()
	if err != nil || !s.fast.tapeValid(s.Schema, t, i, 0) {
		return nil, false
	}
	str := func(name string) string { return t.stringValue(t.member(env, name)) }
	// Its own capacity: appending to the payload must not write over what follows it.
	p := t.bytes(payload)
	p = p[:len(p):len(p)]
	return &Message{
		Envelope: Envelope{
			Protocol: str("protocol"), MessageType: string(mt), Sender: str("sender"),
			Timestamp: str("timestamp"), ConversationID: str("conversation_id"), AuthToken: str("auth_token"),
			LeagueID: str("league_id"), RoundID: str("round_id"), MatchID: str("match_id"), GameType: str("game_type"),
		},
		Payload: p,
		decoded: &decodedPayload{raw: p, tape: t, node: payload},
	}, true
}

// isString reports whether node i is the unescaped string want.
func (t *tape) isString(i int, want string) bool {
	if i < 0 {
		return false
	}
	s, ok := t.str(i)
	return ok && string(s) == want
}

// stringValue is the value of string node i, "" when i is -1 or not a string.
func (t *tape) stringValue(i int) string {
	if i < 0 || t.nodes[i].kind != '"' {
		return ""
	}
	if s, ok := t.str(i); ok {
		return string(s)
	}
	var s string
	_ = json.Unmarshal(t.bytes(i), &s) // a string jsontext accepted
	return s
}

// memberCaseOK is memberCaseOK over node i of a tape; sure is false when it meets a
// member name with an escape where the name matters.
func (t *tape) memberCaseOK(i int, typ reflect.Type) (ok, sure bool) {
	typ, checked := structType(typ)
	if !checked {
		return true, true
	}
	n := &t.nodes[i]
	switch typ.Kind() {
	case reflect.Struct:
		if n.kind != '{' {
			return true, true
		}
		fields := jsonFieldsOf(typ)
		for c, k := 0, t.firstMember(i); c < int(n.count); c, k = c+1, t.nextMember(k) {
			name, plain := t.str(k)
			if !plain {
				return false, false
			}
			if ft, declared := fields[string(name)]; declared {
				if ok, sure := t.memberCaseOK(k+1, ft); !ok || !sure {
					return ok, sure
				}
				continue
			}
			for f := range fields {
				if strings.EqualFold(f, view(name)) {
					return false, true
				}
			}
		}
	case reflect.Map:
		if n.kind != '{' {
			return true, true
		}
		for c, k := 0, t.firstMember(i); c < int(n.count); c, k = c+1, t.nextMember(k) {
			if ok, sure := t.memberCaseOK(k+1, typ.Elem()); !ok || !sure {
				return ok, sure
			}
		}
	case reflect.Slice, reflect.Array:
		if n.kind != '[' {
			return true, true
		}
		for c, j := 0, i+1; c < int(n.count); c, j = c+1, int(t.nodes[j].next) {
			if ok, sure := t.memberCaseOK(j, typ.Elem()); !ok || !sure {
				return ok, sure
			}
		}
	}
	return true, true
}
