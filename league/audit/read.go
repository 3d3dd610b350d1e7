package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// LineError names the line where the log stops being trustworthy.
type LineError struct {
	Line int
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Read parses every line of the log at path.
func Read(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	defer f.Close()
	return Parse(f)
}

// Parse parses a log from r. A line that is not a complete JSON entry is an error
// naming it.
func Parse(r io.Reader) ([]Entry, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var out []Entry
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			return out, nil
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("read audit log: %w", err)
		}
		if line[len(line)-1] != '\n' {
			return nil, &LineError{Line: n, Msg: "torn line without a newline (cut mid-write)"}
		}
		raw := bytes.TrimSuffix(line, []byte("\n"))
		e := Entry{Line: n, Raw: raw}
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, &LineError{Line: n, Msg: "not a JSON audit entry: " + err.Error()}
		}
		if e.LogID == "" || e.Timestamp == "" || e.Direction == "" || len(e.Message) == 0 {
			return nil, &LineError{Line: n, Msg: "missing log_id, timestamp, direction or message"}
		}
		out = append(out, e)
	}
}

// CheckChain verifies that every line carries the hash of the line before it. An edited
// line breaks the link to the line after it; a removed or moved line breaks the link
// where it was taken from.
func CheckChain(entries []Entry) error {
	prev := ""
	for i := range entries {
		e := &entries[i]
		if e.PrevHash != prev {
			if i == 0 {
				return &LineError{Line: e.Line, Msg: "the first line has a prev_hash: lines before it were removed"}
			}
			return &LineError{Line: e.Line, Msg: fmt.Sprintf("prev_hash does not match line %d: line %d was edited, or lines between them were removed or reordered", e.Line-1, e.Line-1)}
		}
		prev = e.Hash()
	}
	return nil
}

// CheckMark verifies the log still holds the line the League Manager last recorded in
// its database (Log.Mark: its number and hash), so lines cut from the end are found.
func CheckMark(entries []Entry, lines int, hash string) error {
	if lines == 0 {
		return nil
	}
	if lines > len(entries) {
		return &LineError{Line: len(entries), Msg: fmt.Sprintf("the log ends at line %d but the database saw line %d: lines were cut from the end", len(entries), lines)}
	}
	if got := entries[lines-1].Hash(); got != hash {
		return &LineError{Line: lines, Msg: "the line the database recorded has a different hash: the log was rewritten"}
	}
	return nil
}
