package audit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse reads hostile logs: Parse must never panic; the entries it returns are the
// log's first lines, byte for byte and numbered; it stops only at a LineError naming the
// line after them and where it begins, torn only when nothing but that line (and at
// most its newline) follows. CheckChain and CheckMark on what it returns fail only with
// a LineError naming one of those lines.
func FuzzParse(f *testing.F) {
	ls := chainedLines(f, 4)
	f.Add(cat(ls))
	f.Add(cat(ls[:3], one(string(ls[3][:40]))))
	f.Add(cat(ls[:3], one(string(ls[3][:40])+"\n")))
	f.Add(cat(ls[:1], one("hello\n"), ls[2:]))
	f.Add([]byte("\n\n{}\n"))
	golden, _ := filepath.Glob(filepath.Join("..", "replay", "testdata", "golden", "*.audit.jsonl"))
	for _, path := range golden {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		lines := bytes.SplitAfter(data, []byte("\n"))
		f.Add(bytes.Join(lines[:min(3, len(lines))], nil))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := Parse(bytes.NewReader(data))
		var read []byte
		for i, e := range entries {
			if e.Line != i+1 {
				t.Fatalf("entry %d is line %d", i, e.Line)
			}
			if e.LogID == "" || e.Timestamp == "" || e.Direction == "" || len(e.Message) == 0 {
				t.Fatalf("line %d lacks a field: %q", e.Line, e.Raw)
			}
			read = append(append(read, e.Raw...), '\n')
		}
		if !bytes.HasPrefix(data, read) {
			t.Fatalf("the entries are not the log's first lines")
		}
		if err == nil {
			if len(read) != len(data) {
				t.Fatalf("no error, but %d of %d bytes read", len(read), len(data))
			}
		} else {
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("Parse = %v, want a LineError", err)
			}
			if le.Line != len(entries)+1 || le.Offset != int64(len(read)) || le.Msg == "" {
				t.Fatalf("%v at offset %d after %d entries (%d bytes)", err, le.Offset, len(entries), len(read))
			}
			rest := data[le.Offset:]
			newline := bytes.IndexByte(rest, '\n')
			switch {
			case len(rest) == 0:
				t.Fatalf("%v, but the log ends before it", err)
			case le.Torn && newline >= 0 && newline != len(rest)-1:
				t.Fatalf("%v is torn, but lines follow it: %q", err, rest)
			case !le.Torn && newline < 0:
				t.Fatalf("%v: a last line without a newline is torn", err)
			}
		}
		inRange := func(what string, err error, lo int) {
			if err == nil {
				return
			}
			var le *LineError
			if !errors.As(err, &le) || le.Line < lo || le.Line > len(entries) {
				t.Fatalf("%s = %v, want a LineError naming one of the %d lines", what, err, len(entries))
			}
		}
		inRange("CheckChain", CheckChain(entries), 1)
		for _, n := range []int{1, len(entries), len(entries) + 1} {
			hash := ""
			if len(entries) > 0 {
				hash = entries[len(entries)-1].Hash()
			}
			inRange("CheckMark", CheckMark(entries, n, hash), 0)
		}
	})
}
