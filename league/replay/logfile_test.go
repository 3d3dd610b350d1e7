package replay

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// VerifyLog and ReplayLog name the line an audit log stops at and check the lines before
// it. Their error tells a torn tail (TornTailError: the last line cut mid-write, every
// line before it good), which the League Manager recovers from when it starts, from a
// log changed or damaged in its middle, a broken chain or a check that fails.
func TestVerifyAndReplayOfTornAndGarbledLogs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "golden", "tic_tac_toe_4.audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	orig := bytes.SplitAfter(data, []byte("\n"))[:bytes.Count(data, []byte("\n"))]
	n := len(orig)
	report := slices.IndexFunc(orig, func(l []byte) bool { return bytes.Contains(l, []byte(`"message_type":"MATCH_RESULT_REPORT"`)) }) + 1
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	half := func(l []byte) []byte { return slices.Clone(l[:len(l)/2]) }
	edited := bytes.Replace(orig[1], []byte(`"direction":"`), []byte(`"direction":"x`), 1)
	cases := []struct {
		name  string
		lines [][]byte
		torn  bool
		// what VerifyLog and ReplayLog write, and what their error says
		verify, replay []string
		errs           []string
		chainOnly      bool // replay does not check the chain
	}{
		{name: "whole log", lines: orig, verify: []string{fmt.Sprintf("verified %d lines: hash chain intact", n)}, replay: []string{"standings:", "pairings:"}},
		{name: "last line without its newline", lines: append(slices.Clone(orig[:n-1]), orig[n-1][:len(orig[n-1])-1]), torn: true,
			verify: []string{fmt.Sprintf("verified the %d lines before line %d: hash chain intact", n-1, n)},
			replay: []string{fmt.Sprintf("the log stops at line %d", n), "standings:"},
			errs:   []string{fmt.Sprintf("line %d: torn last line:", n), "without a newline"}},
		{name: "last line cut mid-write", lines: append(slices.Clone(orig[:n-1]), half(orig[n-1])), torn: true,
			verify: []string{fmt.Sprintf("verified the %d lines before line %d", n-1, n)}, replay: []string{"pairings:"},
			errs: []string{fmt.Sprintf("line %d: torn last line:", n)}},
		{name: "last line cut, then a newline", lines: append(slices.Clone(orig[:n-1]), append(half(orig[n-1]), '\n')), torn: true,
			verify: []string{fmt.Sprintf("verified the %d lines before line %d", n-1, n)}, replay: []string{"pairings:"},
			errs: []string{fmt.Sprintf("line %d: torn last line: its JSON is cut short", n), fmt.Sprintf("cuts the file to its first %d bytes when it starts", len(bytes.Join(orig[:n-1], nil)))}},
		{name: "the result report cut mid-write", lines: append(slices.Clone(orig[:report-1]), half(orig[report-1])), torn: true,
			verify: []string{fmt.Sprintf("verified the %d lines before line %d", report-1, report)}, replay: []string{"0 results"},
			errs: []string{fmt.Sprintf("line %d: torn last line:", report)}},
		{name: "a garbled line in the middle", lines: append(append(slices.Clone(orig[:report-1]), half(orig[report-1])), orig[report:]...),
			verify: []string{fmt.Sprintf("verified the %d lines before line %d", report-1, report)}, replay: []string{"0 results"},
			errs: []string{fmt.Sprintf("line %d: not a JSON audit entry", report), "more lines follow it: the log was changed or damaged here"}},
		{name: "a garbled line in the middle, cut JSON", lines: append(append(slices.Clone(orig[:report-1]), append(half(orig[report-1]), '\n')), orig[report:]...),
			verify: []string{fmt.Sprintf("verified the %d lines before line %d", report-1, report)},
			errs:   []string{fmt.Sprintf("line %d: not a JSON audit entry", report), "more lines follow it"}},
		{name: "a complete last line that is no entry", lines: append(slices.Clone(orig), []byte("{\"log_id\":\"x\"}\n")),
			verify: []string{fmt.Sprintf("verified the %d lines before line %d", n, n+1)},
			errs:   []string{fmt.Sprintf("line %d: missing log_id, timestamp, direction or message (the last line)", n+1)}},
		{name: "an edited line", lines: append(append(slices.Clone(orig[:1]), edited), orig[2:]...), chainOnly: true,
			errs: []string{"line 3: prev_hash does not match line 2"}},
		{name: "an edited line and a torn tail", lines: append(append(append(slices.Clone(orig[:1]), edited), orig[2:n-1]...), half(orig[n-1])), chainOnly: true,
			errs: []string{"line 3: prev_hash does not match line 2", fmt.Sprintf("and the log stops at line %d: torn last line", n)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, bytes.Join(tc.lines, nil), 0o600); err != nil {
				t.Fatal(err)
			}
			check := func(what string, err error, out string, want []string) {
				t.Helper()
				var torn TornTailError
				if (err == nil) != (tc.errs == nil) || errors.As(err, &torn) != tc.torn {
					t.Errorf("%s: %v, want torn tail %v, failure %v", what, err, tc.torn, tc.errs != nil)
				}
				for _, s := range tc.errs {
					if err == nil || !strings.Contains(err.Error(), s) {
						t.Errorf("%s: error %v lacks %q", what, err, s)
					}
				}
				for _, s := range want {
					if !strings.Contains(out, s) {
						t.Errorf("%s wrote no %q:\n%s", what, s, out)
					}
				}
			}
			var out bytes.Buffer
			check("VerifyLog", VerifyLog(&out, path, ""), out.String(), tc.verify)
			if tc.chainOnly {
				return
			}
			out.Reset()
			check("ReplayLog", ReplayLog(&out, path, ReplayOptions{Rounds: true, Ratings: true, Crosstable: true}), out.String(), tc.replay)
		})
	}
}
