// Package problem is the one shape of a rule broken by a value read from a file or the
// wire: where (a path as the file spells it, "scheduling.rounds", "heaps[1]") and what is
// wrong there ("must be <= 100, got 400"). The league format, the games' params and the
// configuration that reports both all speak it.
package problem

import (
	"fmt"
	"strconv"
	"strings"
)

// Problem is one broken rule.
type Problem struct {
	// Path locates the value; empty for the value checked itself.
	Path string
	// Message says what is wrong, e.g. "must be <= 100, got 400".
	Message string
}

// String formats p as "<path>: <message>", or the message alone without a path.
func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// List is every rule a value breaks, in the order they were found. As an error it reads
// as one line of problems separated by "; ".
type List []Problem

// Add records a problem at path.
func (l *List) Add(path, format string, args ...any) {
	*l = append(*l, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// Err is nil for an empty list, else the list.
func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Error joins the problems: "heaps[1]: must be <= 100, got 400; board: unknown parameter".
func (l List) Error() string {
	parts := make([]string, len(l))
	for i, p := range l {
		parts[i] = p.String()
	}
	return strings.Join(parts, "; ")
}

// Field is the path of the member key of the mapping at path ("games[2]" and "scoring"
// make "games[2].scoring").
func Field(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Index is the path of element i of the list at path ("heaps" and 1 make "heaps[1]").
func Index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }
