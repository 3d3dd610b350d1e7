package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// LineError names the line where the log stops being trustworthy.
type LineError struct {
	Line int
	Msg  string
	// Torn marks a line Parse stopped at that a crash mid-write explains: the log's last
	// line, either without its newline or with JSON that ends early. Nothing follows it,
	// so it changes nothing before it: the lines Parse returned with it can all be
	// checked. Any other bad line (one that more lines follow, or a complete line that is
	// not an entry) is not torn: the log was changed or damaged there.
	Torn bool
	// Offset is where the line begins in the file, in bytes (set by Parse): cutting the
	// file there leaves the lines before it.
	Offset int64
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// IsTorn reports whether err is, or wraps, a torn last line (LineError.Torn).
func IsTorn(err error) bool {
	var le *LineError
	return errors.As(err, &le) && le.Torn
}

// Read parses every line of the log at path, as Parse does.
func Read(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	defer f.Close()
	return Parse(f)
}

// Parse parses a log from r. It stops at the first line that is not a complete JSON
// entry and returns the entries before it with a *LineError naming it, Torn when the
// line is the log's last and cut short (see LineError.Torn), which the League Manager
// cuts when it starts. A
// read error returns the entries before it and the error.
func Parse(r io.Reader) ([]Entry, error) {
	size := 1 << 20
	if b, ok := r.(interface{ Len() int }); ok { // a log in memory needs no larger buffer
		size = min(size, b.Len()+1)
	}
	br := bufio.NewReaderSize(r, size)
	var out []Entry
	var offset int64
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			return out, nil
		}
		if err != nil && err != io.EOF {
			return out, fmt.Errorf("read audit log: %w", err)
		}
		bad := func(torn bool, msg string) ([]Entry, error) {
			return out, &LineError{Line: n, Msg: msg, Torn: torn, Offset: offset}
		}
		if line[len(line)-1] != '\n' {
			return bad(true, fmt.Sprintf("torn last line: %d bytes without a newline, cut mid-write (the League Manager cuts them when it starts)", len(line)))
		}
		raw := line[:len(line)-1]
		e := Entry{Line: n, Raw: raw}
		if err := json.Unmarshal(raw, &e); err != nil {
			last := lastLine(br)
			if last && cutShort(raw) {
				return bad(true, fmt.Sprintf("torn last line: its JSON is cut short, then a newline (the League Manager cuts the file to its first %d bytes when it starts)", offset))
			}
			return bad(false, "not a JSON audit entry: "+err.Error()+followed(last))
		}
		if e.LogID == "" || e.Timestamp == "" || e.Direction == "" || len(e.Message) == 0 {
			return bad(false, "missing log_id, timestamp, direction or message"+followed(lastLine(br)))
		}
		out = append(out, e)
		offset += int64(len(line))
	}
}

// lastLine reports whether nothing follows the line br has just read.
func lastLine(br *bufio.Reader) bool {
	_, err := br.Peek(1)
	return err != nil
}

// followed says, for a bad line that is not torn, whether lines follow it.
func followed(last bool) string {
	if last {
		return " (the last line)"
	}
	return "; more lines follow it: the log was changed or damaged here"
}

// cutShort reports whether line is the beginning of an entry cut short: an object whose
// JSON is valid as far as it goes and ends early.
func cutShort(line []byte) bool {
	if len(line) == 0 || line[0] != '{' {
		return false
	}
	var v json.RawMessage
	return errors.Is(json.NewDecoder(bytes.NewReader(line)).Decode(&v), io.ErrUnexpectedEOF)
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
