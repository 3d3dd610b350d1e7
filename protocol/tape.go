package protocol

import (
	"bytes"
	"io"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// A tape is a JSON document read once by jsontext into a flat list of its values in
// document order, each with its kind and bytes, so that the fast path can validate a
// message, read its envelope and check a payload's member names without decoding it into
// Go values: decoding into maps was the largest CPU cost of an exchange after the
// schema library. A tape is only ever built from a document jsontext accepts (valid
// JSON, valid UTF-8, no duplicate member names) that is within the generic bounds; for
// anything else the caller takes the long way, which says what is wrong.
type tape struct {
	src   []byte
	nodes []tapeNode
}

// tapeNode is one value of a tape. An object's members follow it as name and value
// pairs, an array's items follow it; each value's subtree ends at next.
type tapeNode struct {
	kind       jsontext.Kind
	escaped    bool  // a string with a backslash: its bytes are not its value
	start, end int32 // src[start:end] is the value, a string with its quotes
	next       int32 // index of the node after this value's subtree
	count      int32 // members of an object, items of an array
}

// tapeDecoders recycles the decoders that read tapes.
var tapeDecoders = sync.Pool{New: func() any { return new(jsontext.Decoder) }}

// noInput is what a decoder reads between uses, so that the pool keeps no document alive.
var noInput = bytes.NewReader(nil)

// readTape reads src into a tape, or returns nil when src is not one JSON value within
// the generic bounds that jsontext accepts. The tape refers to src, which must not
// change while it is in use.
func readTape(src []byte) *tape {
	if len(src) > MaxBodyBytes || len(src) >= 1<<31 {
		return nil
	}
	d := tapeDecoders.Get().(*jsontext.Decoder)
	defer tapeDecoders.Put(d)
	// A bytes.Buffer is read in place, not copied.
	d.Reset(bytes.NewBuffer(src))
	defer d.Reset(noInput)
	t := &tape{src: src, nodes: make([]tapeNode, 0, 64)}
	if !t.value(d, 0) {
		return nil
	}
	// One value and nothing after it.
	if _, err := d.ReadToken(); err != io.EOF {
		return nil
	}
	return t
}

// value appends the next value of d and its subtree, checking the generic bounds.
func (t *tape) value(d *jsontext.Decoder, depth int) bool {
	if depth > MaxDepth {
		return false
	}
	i := len(t.nodes)
	switch k := d.PeekKind(); k {
	case '{', '[':
		if _, err := d.ReadToken(); err != nil {
			return false
		}
		t.nodes = append(t.nodes, tapeNode{kind: k, start: int32(d.InputOffset()) - 1})
		limit := MaxArrayItems
		if k == '{' {
			limit = MaxObjectFields
		}
		n := 0
		for d.PeekKind() != k+2 { // '}' is '{'+2, ']' is '['+2
			if n++; n > limit {
				return false
			}
			if k == '{' && !t.value(d, depth+1) { // the member's name
				return false
			}
			if !t.value(d, depth+1) {
				return false
			}
		}
		if _, err := d.ReadToken(); err != nil {
			return false
		}
		t.nodes[i].count, t.nodes[i].end = int32(n), int32(d.InputOffset())
	case '"', '0', 't', 'f', 'n':
		v, err := d.ReadValue()
		if err != nil {
			return false
		}
		end := int32(d.InputOffset())
		node := tapeNode{kind: k, start: end - int32(len(v)), end: end}
		switch k {
		case '"':
			// Unescaped, a string is never longer than its bytes, and escaped one is
			// checked the long way when it is longer.
			if len(v)-2 > MaxStringBytes {
				return false
			}
			node.escaped = bytes.IndexByte(v, '\\') >= 0
		case '0':
			if !numberInBounds(string(v)) {
				return false
			}
		}
		t.nodes = append(t.nodes, node)
	default:
		return false
	}
	t.nodes[i].next = int32(len(t.nodes))
	return true
}

// bytes is node i's bytes.
func (t *tape) bytes(i int) []byte { n := &t.nodes[i]; return t.src[n.start:n.end] }

// str is the value of string node i when it has no escape: its bytes between the
// quotes. i may be -1, a member that is not there.
func (t *tape) str(i int) ([]byte, bool) {
	if i < 0 {
		return nil, false
	}
	n := &t.nodes[i]
	if n.kind != '"' || n.escaped {
		return nil, false
	}
	return t.src[n.start+1 : n.end-1], true
}

// firstMember is the name node of object i's first member; the value follows it.
func (t *tape) firstMember(i int) int { return i + 1 }

// nextMember is the name node of the member after the one named at node k.
func (t *tape) nextMember(k int) int { return int(t.nodes[k+1].next) }

// member is the value node of object i's member called name, or -1. A member whose
// name is escaped is not matched.
func (t *tape) member(i int, name string) int {
	for n, k := 0, t.firstMember(i); n < int(t.nodes[i].count); n, k = n+1, t.nextMember(k) {
		if s, ok := t.str(k); ok && string(s) == name {
			return k + 1
		}
	}
	return -1
}

// plainString reports whether string node i is encoded as encoding/json encodes its
// value: printable ASCII without escapes or characters it escapes for HTML.
func (t *tape) plainString(i int) bool {
	s, ok := t.str(i)
	if !ok {
		return false
	}
	for _, c := range s {
		if c < 0x20 || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
