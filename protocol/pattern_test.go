package protocol

import (
	"encoding/json"
	"io/fs"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/schemas"
)

// schemaPatterns returns every pattern the schema files set, sorted.
func schemaPatterns(t testing.TB) []string {
	t.Helper()
	names, err := fs.Glob(schemas.FS, "*.json")
	if err != nil || len(names) == 0 {
		t.Fatalf("no schemas: %v", err)
	}
	found := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if p, ok := e.(string); ok && k == "pattern" {
					found[p] = true
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, name := range names {
		b, err := schemas.FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		walk(doc)
	}
	return slices.Sorted(maps.Keys(found))
}

// The patterns the schemas use, named for the tests.
const (
	idPattern     = `^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`
	senderPattern = `^(league_manager|admin|referee:[A-Za-z0-9][A-Za-z0-9_-]{0,63}|player:[A-Za-z0-9][A-Za-z0-9_-]{0,63})$`
	uuidPattern   = `^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$`
	tokenPattern  = `^[A-Za-z0-9_.-]{1,256}$`
)

var rep = strings.Repeat

var patternCases = []struct {
	pattern         string
	match, nonMatch []string
}{
	{idPattern,
		[]string{"a", "p01", "A_b-9", "a" + rep("b", 63)},
		[]string{"", "_a", "-a", "a" + rep("b", 64), "ab c", "abé", "ab\xff", "p01\n", "é", "\xffab"}},
	{senderPattern,
		[]string{"league_manager", "admin", "referee:r1", "player:p01", "player:a" + rep("b", 63)},
		[]string{"", "league_manager:", "admin ", "Admin", "referee:", "player:_p", "player:a" + rep("b", 64), "players:p", "referee:r1\n"}},
	{`^referee:`,
		[]string{"referee:", "referee:r1", "referee:anything é \xff", "referee:\n"},
		[]string{"", "referee", "Referee:", " referee:", "xreferee:", "refere\xff:"}},
	{`^(player|referee):`,
		[]string{"player:", "referee:x"},
		[]string{"playe:", "player", "admin:", "referee;"}},
	{`^(player:|admin$)`,
		[]string{"admin", "player:", "player:x\xff"},
		[]string{"admin\n", "adminx", "xadmin", "player", ""}},
	{uuidPattern,
		[]string{"3b30ff6a-1474-4b42-acdc-4d7668dd0bed", "3B30FF6A-1474-4B42-ACDC-4D7668DD0BED", "3b30ff6a-1474-4b42-8cdc-4d7668dd0bed"},
		[]string{"3b30ff6a-1474-5b42-acdc-4d7668dd0bed", "3b30ff6a-1474-4b42-ccdc-4d7668dd0bed", "3b30ff6a-1474-4b42-acdc-4d7668dd0bed0",
			"3b30ff6a-1474-4b42-acdc-4d7668dd0be", "3b30ff6a14744b42acdc4d7668dd0bed", "3b30ff6g-1474-4b42-acdc-4d7668dd0bed", ""}},
	{timestampPattern.String(),
		[]string{"2026-11-22T01:21:50Z", "2026-11-22T01:21:50.1Z", "2026-11-22T01:21:50.123456789Z", "2026-11-22T01:21:50+00:00", "9999-99-99T99:99:99Z"},
		[]string{"2026-11-22T01:21:50.1234567890Z", "2026-11-22T01:21:50.Z", "2026-11-22T01:21:50+01:00", "2026-11-22t01:21:50Z",
			"2026-11-22T01:21:50", "2026-11-22T01:21:50Z\n", "2026-11-22T01:21:50Zx", "٢٠٢٦-11-22T01:21:50Z", ""}},
	{`^[0-9a-f]{64}$`,
		[]string{rep("0", 64), rep("af", 32)},
		[]string{rep("0", 63), rep("0", 65), rep("A", 64), ""}},
	{`^https?://`,
		[]string{"http://", "https://x/y", "http://\xff"},
		[]string{"ftp://x", "http:/", "HTTP://x", " http://x", "httpss://", ""}},
	{tokenPattern,
		[]string{"a", rep("a", 256), "tok_Secret-4f1c9e2a.b7d3"},
		[]string{"", rep("a", 257), "a b", "a+b", rep("é", 2)}},
	{`^[A-Z][A-Z_]{0,31}$`,
		[]string{"SUCCESS", "A" + rep("_", 31)},
		[]string{"A" + rep("_", 32), "_A", "success"}},
	// Shapes no schema uses yet, each of which the matcher must get right too.
	{`abc`,
		[]string{"abc", "xxabcxx", "aabc", "é\xffabc"},
		[]string{"", "ab", "abxc", "ABC"}},
	{`a.c`,
		[]string{"abc", "a\xffc", "aéc", "xa c"},
		[]string{"a\nc", "ac"}},
	{`(?s)a.c`,
		[]string{"a\nc", "aéc"},
		[]string{"ac", "a\n\nc"}},
	{`^$`,
		[]string{""},
		[]string{"\n", "a"}},
	{`$^`,
		[]string{""},
		[]string{"a", "\n"}},
	{`\x{FFFD}`,
		[]string{"\xff", "a\uFFFDb", "\xe2\x82"},
		[]string{"a", ""}},
	{`^[^a]$`,
		[]string{"\xff", "é", "\n", "\uFFFD"},
		[]string{"a", "", "bb", "\xff\xff"}},
	{`^(a|ab)(c|bcd)(d*)$`,
		[]string{"abcd", "abcdd", "ac", "abc"},
		[]string{"abd", "ab", "abcdx"}},
	{`^(a*)*$`,
		[]string{"", "aaaa"},
		[]string{"aab"}},
	{`^a{2,3}$`,
		[]string{"aa", "aaa"},
		[]string{"a", "aaaa"}},
	{`(^a|b)c`,
		[]string{"ac", "xbc", "bc"},
		[]string{"xac", "a c"}},
	{`x*`,
		[]string{"", "y"},
		nil},
	{`^é+$`,
		[]string{"é", "éé"},
		[]string{"e", "é\xff", "\xc3"}},
	{`[\x{10000}-\x{10FFFF}]`,
		[]string{"𝄞", "a𝄞"},
		[]string{"a", "\uFFFD", "\xf0\x9d\x84"}},
	{`$0`,
		nil,
		[]string{"", "0", "$0"}},
	{`[^\x00-\x{10FFFF}]`,
		nil,
		[]string{"", "a", "\xff", "\U0010FFFF"}},
}

func TestPatternMatcher(t *testing.T) {
	for _, c := range patternCases {
		re := regexp.MustCompile(c.pattern)
		m := compilePattern(re)
		if m == nil {
			t.Errorf("%s: no fast matcher", c.pattern)
			continue
		}
		for want, inputs := range [][]string{c.nonMatch, c.match} {
			for _, s := range inputs {
				if got := re.MatchString(s); got != (want == 1) {
					t.Errorf("%s on %q: the table says %v, regexp %v", c.pattern, s, want == 1, got)
				}
				if got := m.match(s); got != (want == 1) {
					t.Errorf("%s on %q: fast matcher %v, want %v", c.pattern, s, got, want == 1)
				}
			}
		}
	}
}

func TestPatternUnsupported(t *testing.T) {
	for _, p := range []string{
		`(?i)abc`, `\bword`, `a\B`, `a*?`, `(?U)a*`, `(?m)^a$`, `(?m)a$`,
		// Unanchored, it needs more states than the matcher allows.
		`a[ab]{12}`,
	} {
		if m := compilePattern(regexp.MustCompile(p)); m != nil {
			t.Errorf("%s: a fast matcher, want none", p)
		}
	}
}

// TestSchemaPatternsHaveFastMatchers notices a schema pattern that would fall back to
// the regexp package.
func TestSchemaPatternsHaveFastMatchers(t *testing.T) {
	pats := schemaPatterns(t)
	if len(pats) < 10 {
		t.Fatalf("only %d patterns in the schemas: %q", len(pats), pats)
	}
	for _, p := range pats {
		if compilePattern(regexp.MustCompile(p)) == nil {
			t.Errorf("%s: no fast matcher", p)
		}
	}
}

// TestFastPathReachesEveryPattern checks that the fast paths of the message types hold
// a matcher for every pattern of the schema files.
func TestFastPathReachesEveryPattern(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	reached := map[string]bool{}
	for _, mt := range v.MessageTypes() {
		s, err := v.messages[mt]()
		if err != nil {
			t.Fatalf("%s: %v", mt, err)
		}
		for re, m := range s.fast {
			if m == nil {
				t.Errorf("%s: nil matcher for %s", mt, re)
			}
			reached[re.String()] = true
		}
	}
	if got, want := slices.Sorted(maps.Keys(reached)), schemaPatterns(t); !slices.Equal(got, want) {
		t.Errorf("fast paths match %q,\nthe schemas set %q", got, want)
	}
}

func TestPatternMatchAllocatesNothing(t *testing.T) {
	m := compilePattern(regexp.MustCompile(senderPattern))
	if n := testing.AllocsPerRun(100, func() { m.match("referee:ref1") }); n != 0 {
		t.Errorf("%v allocations per match", n)
	}
}

// hostileInputs are strings of MaxStringBytes made to keep a matcher busy.
func hostileInputs() []string {
	fill := func(prefix, unit string) string {
		s := prefix + rep(unit, (MaxStringBytes-len(prefix))/len(unit)+1)
		return s[:MaxStringBytes]
	}
	return []string{
		fill("", "a"), fill("a", "_"), fill("referee:", "a"), fill("player:", "b-"), fill("", "0"),
		fill("2026-11-22T01:21:50.", "1"), fill("", "\xff"), fill("", "é"), fill("", "ab-."), fill("", "referee:"),
	}
}

func TestPatternHostileInput(t *testing.T) {
	for _, p := range schemaPatterns(t) {
		re := regexp.MustCompile(p)
		m := compilePattern(re)
		if m == nil {
			t.Fatalf("%s: no fast matcher", p)
		}
		for _, s := range hostileInputs() {
			if got, want := m.match(s), re.MatchString(s); got != want {
				t.Errorf("%s on %.20q…: fast matcher %v, regexp %v", p, s, got, want)
			}
		}
	}
}

// FuzzPatternMatchesRegexp holds every schema pattern's fast matcher to its regexp, and
// the matchers of the table's other shapes too.
func FuzzPatternMatchesRegexp(f *testing.F) {
	for _, c := range patternCases {
		for _, s := range slices.Concat(c.match, c.nonMatch) {
			f.Add(s)
		}
	}
	type pair struct {
		re *regexp.Regexp
		m  *patternMatcher
	}
	pats := schemaPatterns(f)
	for _, c := range patternCases {
		pats = append(pats, c.pattern)
	}
	var pairs []pair
	for _, p := range pats {
		re := regexp.MustCompile(p)
		m := compilePattern(re)
		if m == nil {
			f.Fatalf("%s: no fast matcher", p)
		}
		pairs = append(pairs, pair{re, m})
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range pairs {
			if got, want := p.m.match(s), p.re.MatchString(s); got != want {
				t.Errorf("%s on %q: fast matcher %v, regexp %v", p.re, s, got, want)
			}
		}
	})
}

func BenchmarkPattern(b *testing.B) {
	for _, c := range []struct{ name, pattern, input string }{
		{"id", idPattern, "p01"},
		{"sender", senderPattern, "referee:ref1"},
		{"prefix", `^referee:`, "referee:ref1"},
		{"uuid", uuidPattern, "3b30ff6a-1474-4b42-acdc-4d7668dd0bed"},
		{"timestamp", timestampPattern.String(), "2026-11-22T01:21:50.123456Z"},
		{"token", tokenPattern, "tok_Secret-4f1c9e2a.b7d3"},
		{"token_64KiB", tokenPattern, hostileInputs()[0]},
	} {
		re := regexp.MustCompile(c.pattern)
		m := compilePattern(re)
		if m == nil || m.match(c.input) != re.MatchString(c.input) {
			b.Fatalf("%s: no fast matcher, or a wrong one", c.name)
		}
		b.Run(c.name+"/fast", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m.match(c.input)
			}
		})
		b.Run(c.name+"/regexp", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				re.MatchString(c.input)
			}
		})
	}
}

// FuzzPatternSyntax holds the matcher of any pattern it accepts to the pattern's regexp.
func FuzzPatternSyntax(f *testing.F) {
	for _, c := range patternCases {
		for _, s := range slices.Concat(c.match, c.nonMatch) {
			f.Add(c.pattern, s)
		}
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		re, err := regexp.Compile(pattern)
		if err != nil {
			return
		}
		if m := compilePattern(re); m != nil {
			if got, want := m.match(s), re.MatchString(s); got != want {
				t.Errorf("%s on %q: fast matcher %v, regexp %v", pattern, s, got, want)
			}
		}
	})
}
