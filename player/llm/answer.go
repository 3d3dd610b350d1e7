package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of what is read from a model's answer.
const (
	// maxAnswerBytes is the part of an answer that is searched for the JSON object.
	maxAnswerBytes = 64 << 10
	// maxObjectTries bounds the opening braces tried as the start of the object.
	maxObjectTries = 32
	// maxQuotedRunes bounds a model's text quoted back in a reason.
	maxQuotedRunes = 40
)

// answer is the object a model answers with.
type answer struct {
	move      json.RawMessage
	reasoning string
}

// readAnswer finds the answer in a model's text: the first JSON object with a "move"
// member, so prose or a code fence around it does no harm. Only the first maxAnswerBytes
// are read, and at most maxObjectTries braces are tried. The error is the reason the
// model is told.
func readAnswer(text string) (answer, error) {
	if len(text) > maxAnswerBytes {
		text = text[:maxAnswerBytes]
	}
	sawObject := false
	from := 0
	for range maxObjectTries {
		i := strings.IndexByte(text[from:], '{')
		if i < 0 {
			break
		}
		start := from + i
		from = start + 1
		var obj map[string]json.RawMessage
		if json.NewDecoder(strings.NewReader(text[start:])).Decode(&obj) != nil {
			continue
		}
		sawObject = true
		mv, ok := obj["move"]
		if !ok {
			continue
		}
		a := answer{move: mv}
		_ = json.Unmarshal(obj["reasoning"], &a.reasoning) // optional: any other type is ignored
		return a, nil
	}
	if sawObject {
		return answer{}, errors.New(`the JSON object has no "move" member`)
	}
	return answer{}, errors.New("no JSON object was found in the answer")
}

// find returns the index of the legal move the answer names: its label (case, spaces,
// brackets and dashes aside), its SAN in chess, or the move_payload itself as an object.
// The error is the reason the model is told.
func (p position) find(move json.RawMessage) (int, error) {
	var text string
	switch first := firstByte(move); {
	case first == '"':
		if err := json.Unmarshal(move, &text); err != nil {
			return 0, errors.New(`"move" is not a valid JSON string`)
		}
	case first == '-' || (first >= '0' && first <= '9'):
		text = string(move)
	case first == '{':
		if k, ok := p.findObject(move); ok {
			return k, nil
		}
		return 0, fmt.Errorf("%s is not one of the legal moves", quote(string(move)))
	default:
		return 0, fmt.Errorf(`"move" must be a string naming one of the legal moves, got %s`, quote(string(move)))
	}
	key := normalize(text)
	san := strings.TrimRight(strings.TrimSpace(text), "+#!?")
	for k, c := range p.choices {
		if normalize(c.label) == key || (c.san != "" && strings.TrimRight(c.san, "+#") == san) {
			return k, nil
		}
	}
	return 0, fmt.Errorf("%s is not one of the legal moves", quote(text))
}

// findObject matches an answer written as a move_payload: every member of a legal move
// must be there with the same value; other members are ignored.
func (p position) findObject(move json.RawMessage) (int, bool) {
	var got map[string]any
	if json.Unmarshal(move, &got) != nil {
		return 0, false
	}
	for k, c := range p.choices {
		var want map[string]any
		if json.Unmarshal(c.move, &want) != nil {
			continue
		}
		match := true
		for name, v := range want {
			if !reflect.DeepEqual(got[name], v) {
				match = false
				break
			}
		}
		if match {
			return k, true
		}
	}
	return 0, false
}

// normalize is a label as compared: lower case, without spaces, quotes, brackets or dashes.
func normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || strings.ContainsRune(`"'()[]-`, r) {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

func firstByte(raw json.RawMessage) byte {
	s := strings.TrimSpace(string(raw))
	if s == "" {
		return 0
	}
	return s[0]
}

// quote shows a model's text in a reason: quoted, on one line, at most maxQuotedRunes.
func quote(s string) string {
	return fmt.Sprintf("%q", excerpt(s, maxQuotedRunes))
}

// excerpt is s on one line (runs of spaces, control characters and invalid bytes become
// one space) cut to at most n runes, with an ellipsis when cut.
func excerpt(s string, n int) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError
	}), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
