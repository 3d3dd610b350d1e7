package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// chainedLines returns n lines of a valid log (events chained by prev_hash), each with
// its newline, built without a Log.
func chainedLines(tb testing.TB, n int) [][]byte {
	tb.Helper()
	out := make([][]byte, n)
	prev := ""
	for i := range out {
		line := fmt.Sprintf(`{"log_id":"id-%d","timestamp":"2025-01-01T00:00:0%dZ","direction":"event","source":"league_manager","destination":"league_manager","conversation_id":"","message":{"body":{"i":%d},"type":"NOTE"},"prev_hash":%q}`, i, i%10, i, prev)
		prev = lineHash([]byte(line))
		out[i] = []byte(line + "\n")
	}
	return out
}

func cat(parts ...[][]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, bytes.Join(p, nil)...)
	}
	return b
}

func one(b string) [][]byte { return [][]byte{[]byte(b)} }

// Parse stops at the first line that is not an entry and returns the entries before it
// with a LineError naming it, torn only when it is the last line and cut short.
func TestParseStopsAtTheBadLine(t *testing.T) {
	ls := chainedLines(t, 5)
	good := ls[:4]
	half := string(ls[4][:len(ls[4])/2])
	offset := int64(len(cat(good)))
	cases := []struct {
		name string
		log  []byte
		torn bool
		msg  string
	}{
		{"last line cut mid-write", cat(good, one(half)), true, "torn last line: " + fmt.Sprint(len(half)) + " bytes without a newline"},
		{"last line without its newline", cat(good, one(strings.TrimSuffix(string(ls[4]), "\n"))), true, "without a newline"},
		{"last line of NUL bytes", cat(good, one("\x00\x00\x00\x00")), true, "without a newline"},
		{"last line cut, then a newline", cat(good, one(half+"\n")), true, fmt.Sprintf("its JSON is cut short, then a newline (the League Manager cuts the file to its first %d bytes when it starts)", offset)},
		{"cut line followed by lines", cat(good, one(half+"\n"), ls[4:]), false, "not a JSON audit entry: unexpected end of JSON input; more lines follow it: the log was changed or damaged here"},
		{"garbage followed by lines", cat(good, one("hello\n"), ls[4:]), false, "more lines follow it"},
		{"garbage last line", cat(good, one("hello\n")), false, "not a JSON audit entry: invalid character 'h' looking for beginning of value (the last line)"},
		{"two values on the last line", cat(good, one(`{"a":1} {"b`+"\n")), false, "(the last line)"},
		{"empty last line", cat(good, one("\n")), false, "not a JSON audit entry: unexpected end of JSON input (the last line)"},
		{"last line of NUL bytes, then a newline", cat(good, one("\x00\x00\n")), false, "(the last line)"},
		{"last line not an entry", cat(good, one(`{"log_id":"x"}`+"\n")), false, "missing log_id, timestamp, direction or message (the last line)"},
		{"entry without fields followed by lines", cat(good, one(`{"log_id":"x"}`+"\n"), ls[4:]), false, "missing log_id, timestamp, direction or message; more lines follow it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			entries, err := Parse(bytes.NewReader(tc.log))
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("Parse = %v, want a LineError", err)
			}
			if le.Line != 5 || le.Offset != offset || le.Torn != tc.torn || IsTorn(err) != tc.torn {
				t.Errorf("got line %d at %d, torn %v; want line 5 at %d, torn %v", le.Line, le.Offset, le.Torn, offset, tc.torn)
			}
			if !strings.Contains(le.Msg, tc.msg) {
				t.Errorf("message %q, want it to hold %q", le.Msg, tc.msg)
			}
			if len(entries) != 4 {
				t.Fatalf("%d entries before the bad line, want 4", len(entries))
			}
			for i, e := range entries {
				if e.Line != i+1 || !bytes.Equal(append(bytes.Clone(e.Raw), '\n'), ls[i]) {
					t.Errorf("entry %d is line %d %q, want line %d", i, e.Line, e.Raw, i+1)
				}
			}
			if err := CheckChain(entries); err != nil {
				t.Errorf("the lines before the bad one: %v", err)
			}
		})
	}
	entries, err := Parse(bytes.NewReader(cat(ls)))
	if err != nil || len(entries) != 5 {
		t.Fatalf("intact log: %d entries, %v", len(entries), err)
	}
	if err := CheckChain(entries); err != nil {
		t.Fatal(err)
	}
}

// IsTorn sees through wrapping, and only a torn LineError is torn.
func TestIsTorn(t *testing.T) {
	torn := &LineError{Line: 3, Msg: "torn", Torn: true}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{torn, true},
		{fmt.Errorf("read: %w", torn), true},
		{&LineError{Line: 3, Msg: "garbled"}, false},
		{errors.New("line 3: torn"), false},
		{nil, false},
	} {
		if got := IsTorn(tc.err); got != tc.want {
			t.Errorf("IsTorn(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// failingReader gives data, then fails.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// A read that fails is not a line of the log: Parse returns the entries read before it
// and the error, which is no LineError.
func TestParseReadErrorKeepsTheEntriesBefore(t *testing.T) {
	ls := chainedLines(t, 3)
	boom := errors.New("disk gone")
	entries, err := Parse(&failingReader{data: cat(ls[:2], one(string(ls[2][:10]))), err: boom})
	var le *LineError
	if !errors.Is(err, boom) || errors.As(err, &le) {
		t.Errorf("Parse = %v, want the read error and no LineError", err)
	}
	if len(entries) != 2 {
		t.Errorf("%d entries, want the 2 read before the error", len(entries))
	}
	if _, err := Parse(&failingReader{err: io.ErrUnexpectedEOF}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Parse of a failing reader = %v", err)
	}
}
