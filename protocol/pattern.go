package protocol

import (
	"encoding/binary"
	"regexp"
	"regexp/syntax"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"
)

// patternMatcher answers re.MatchString for a schema pattern without the regexp
// package, whose matcher took 5-8% of an exchange's CPU: a DFA built when the schema is
// compiled, from the program regexp itself runs. Matching reads each rune of the text
// once and finds its edge by binary search, so it costs O(len(text) × log(edges of a
// state)) whatever the text (maxPatternWork bounds the edges), never backtracks and
// allocates nothing: a 64 KiB string from a hostile peer costs one pass at most.
type patternMatcher struct {
	// states[0] is the state at the text's beginning.
	states []dfaState
}

// A dfaState is the set of positions of the pattern a prefix of the text can reach.
type dfaState struct {
	// edges are sorted and disjoint; a rune outside them leaves no match possible.
	edges []dfaEdge
	// matchHere: a match ends at this point of the text, whatever follows.
	matchHere bool
	// matchAtEnd: a match ends here if the text ends here (a $ is satisfied).
	matchAtEnd bool
}

type dfaEdge struct {
	lo, hi rune
	next   int32
}

// maxPatternWork bounds the work of building a DFA: instructions followed, pieces of the
// rune space and rune ranges examined. A pattern that needs more keeps its regexp: an
// unanchored counted repetition, say, needs a state per count. The largest schema
// pattern, ^[A-Za-z0-9_.-]{1,256}$, needs ~20,000 (257 states).
const maxPatternWork = 1 << 17

// patternCache holds the matcher of each pattern source compiled so far, nil when it
// has none. A matcher depends on its source alone, so the validators of a process share
// them; the sources are the embedded schemas' few.
var patternCache sync.Map

// cachedPattern returns compilePattern(re), compiled once per process.
func cachedPattern(re *regexp.Regexp) *patternMatcher {
	m, ok := patternCache.Load(re.String())
	if !ok {
		m, _ = patternCache.LoadOrStore(re.String(), compilePattern(re))
	}
	return m.(*patternMatcher)
}

// compilePattern returns a matcher that agrees with re.MatchString on every string, or
// nil when re uses syntax outside the subset it handles. re must come from
// regexp.Compile (Perl syntax), as the schema library compiles patterns.
func compilePattern(re *regexp.Regexp) *patternMatcher {
	tree, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return nil
	}
	// The same steps as regexp.Compile, so the program is the one regexp runs.
	tree = tree.Simplify()
	if !inPatternSubset(tree) {
		return nil
	}
	prog, err := syntax.Compile(tree)
	if err != nil {
		return nil
	}
	return buildDFA(prog)
}

// inPatternSubset reports whether re uses only literals, classes, any-character,
// text anchors, grouping, alternation and greedy repetition, all case-sensitive. Line
// anchors and word boundaries are left out, and so are (?i) and non-greedy repetition
// (which would match the same strings, but no schema needs them).
func inPatternSubset(re *syntax.Regexp) bool {
	if re.Flags&(syntax.FoldCase|syntax.NonGreedy) != 0 {
		return false
	}
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpLiteral, syntax.OpCharClass, syntax.OpAnyCharNotNL, syntax.OpAnyChar,
		syntax.OpBeginText, syntax.OpEndText, syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest,
		syntax.OpConcat, syntax.OpAlternate:
		// Simplify has rewritten every OpRepeat into these.
	default:
		return false
	}
	for _, sub := range re.Sub {
		if !inPatternSubset(sub) {
			return false
		}
	}
	return true
}

// match reports whether s holds a match of the pattern, as re.MatchString(s) does:
// anywhere in s unless anchored, over runes decoded as regexp decodes them (an invalid
// UTF-8 byte is one U+FFFD).
func (m *patternMatcher) match(s string) bool {
	st := &m.states[0]
	for i := 0; ; {
		if st.matchHere {
			return true
		}
		if i == len(s) {
			return st.matchAtEnd
		}
		r, w := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, w = utf8.DecodeRuneInString(s[i:])
		}
		i += w
		next := st.next(r)
		if next < 0 {
			return false
		}
		st = &m.states[next]
	}
}

// next returns the state r leads to, or -1 when no match is possible any more.
func (st *dfaState) next(r rune) int32 {
	e := st.edges
	lo, hi := 0, len(e)
	for lo < hi { // the first edge not below r
		mid := int(uint(lo+hi) >> 1)
		if e[mid].hi < r {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(e) && e[lo].lo <= r {
		return e[lo].next
	}
	return -1
}

// dfaBuilder builds a DFA by the subset construction over a regexp program: a state is
// the set of rune instructions reachable at a point of the text. It refuses any
// instruction it cannot read exactly, whatever inPatternSubset let through.
type dfaBuilder struct {
	prog *syntax.Prog
	// ranges are the runes each rune instruction matches, by pc, as [lo, hi] pairs.
	ranges [][]rune
	m      *patternMatcher
	// runes are each state's rune instructions, whose edges are still to be made.
	runes [][]uint32
	index map[string]int32
	// afterIndex maps the instructions a rune leads to to the state they reach.
	afterIndex map[string]int32
	// work counts towards maxPatternWork.
	work int
	// Scratch: closure sees an instruction when its mark is the closure's.
	marks        []uint32
	mark         uint32
	stack, seeds []uint32
	cuts         []rune
	key          []byte
}

func buildDFA(prog *syntax.Prog) *patternMatcher {
	if len(prog.Inst) > maxPatternWork {
		return nil
	}
	b := &dfaBuilder{
		prog: prog, ranges: make([][]rune, len(prog.Inst)), m: &patternMatcher{},
		index: map[string]int32{}, afterIndex: map[string]int32{}, marks: make([]uint32, len(prog.Inst)),
	}
	for pc := range prog.Inst {
		b.ranges[pc] = runeRanges(&prog.Inst[pc])
	}
	if _, ok := b.state([]uint32{uint32(prog.Start)}, true); !ok {
		return nil
	}
	var edges []dfaEdge
	first := []int{0}
	for i := 0; i < len(b.m.states); i++ {
		var ok bool
		if edges, ok = b.edges(edges, b.runes[i]); !ok {
			return nil
		}
		first = append(first, len(edges))
	}
	for i := range b.m.states {
		b.m.states[i].edges = edges[first[i]:first[i+1]:first[i+1]]
	}
	return b.m
}

// after returns the state that seeds lead to after a rune, as state does, remembering
// it: states mostly share them.
func (b *dfaBuilder) after(seeds []uint32) (int32, bool) {
	b.key = b.key[:0]
	for _, pc := range seeds {
		b.key = binary.AppendUvarint(b.key, uint64(pc))
	}
	if next, ok := b.afterIndex[string(b.key)]; ok {
		return next, true
	}
	key := string(b.key)
	next, ok := b.state(seeds, false)
	if ok {
		b.afterIndex[key] = next
	}
	return next, ok
}

// state returns the index of the state that seeds (instructions about to run) reach,
// adding it if it is new; -1 for a state from which nothing matches. begin tells
// whether this is the text's beginning. ok is false when the DFA would cost more than
// maxPatternWork or the program holds an instruction the matcher does not read.
func (b *dfaBuilder) state(seeds []uint32, begin bool) (index int32, ok bool) {
	runes, here, ok := b.closure(seeds, begin, false)
	if !ok {
		return 0, false
	}
	_, atEnd, ok := b.closure(seeds, begin, true)
	if !ok {
		return 0, false
	}
	if here {
		runes = nil // the text matches whatever follows
	}
	// The beginning is kept even when nothing matches from it: match starts there.
	if len(runes) == 0 && !here && !atEnd && !begin {
		return -1, true
	}
	b.key = append(b.key[:0], boolByte(here), boolByte(atEnd))
	for _, pc := range runes {
		b.key = binary.AppendUvarint(b.key, uint64(pc))
	}
	// The beginning is a state of its own: ^ holds there only.
	if i, ok := b.index[string(b.key)]; ok && !begin {
		return i, true
	}
	index = int32(len(b.m.states))
	b.m.states = append(b.m.states, dfaState{matchHere: here, matchAtEnd: atEnd})
	b.runes = append(b.runes, runes)
	if !begin {
		b.index[string(b.key)] = index
	}
	return index, true
}

// closure follows the instructions that consume no rune from seeds, at the text's
// beginning or not and at its end or not. It returns the rune instructions reached,
// sorted, and whether the match instruction is; ok is false on an instruction it does
// not read.
func (b *dfaBuilder) closure(seeds []uint32, begin, end bool) (runes []uint32, match, ok bool) {
	b.mark++
	b.stack = append(b.stack[:0], seeds...)
	for len(b.stack) > 0 {
		pc := b.stack[len(b.stack)-1]
		b.stack = b.stack[:len(b.stack)-1]
		if b.marks[pc] == b.mark {
			continue
		}
		b.marks[pc] = b.mark
		if b.work++; b.work > maxPatternWork {
			return nil, false, false
		}
		in := &b.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt:
			b.stack = append(b.stack, in.Out, in.Arg)
		case syntax.InstNop, syntax.InstCapture:
			b.stack = append(b.stack, in.Out)
		case syntax.InstEmptyWidth:
			op := syntax.EmptyOp(in.Arg)
			if op&^(syntax.EmptyBeginText|syntax.EmptyEndText) != 0 {
				return nil, false, false
			}
			if (begin || op&syntax.EmptyBeginText == 0) && (end || op&syntax.EmptyEndText == 0) {
				b.stack = append(b.stack, in.Out)
			}
		case syntax.InstMatch:
			match = true
		default:
			if b.ranges[pc] == nil {
				return nil, false, false
			}
			runes = append(runes, pc)
		}
	}
	slices.Sort(runes)
	return runes, match, true
}

// edges appends the edges of the state whose rune instructions are runes. The rune
// space is cut at every bound of their ranges; within a piece every rune reaches the
// same instructions, so one rune stands for it. Every piece also starts the pattern
// anew, as regexp tries a match at every position of the text (an anchored pattern
// fails there at once).
func (b *dfaBuilder) edges(edges []dfaEdge, runes []uint32) ([]dfaEdge, bool) {
	cuts := append(b.cuts[:0], 0, unicode.MaxRune+1)
	for _, pc := range runes {
		r := b.ranges[pc]
		for j := 0; j+1 < len(r); j += 2 {
			cuts = append(cuts, r[j], r[j+1]+1)
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	b.cuts = cuts
	if b.work += len(cuts); b.work > maxPatternWork {
		return nil, false
	}
	start := len(edges)
	var prev []uint32
	var next int32
	for i := 0; i+1 < len(cuts); i++ {
		lo, hi := cuts[i], cuts[i+1]-1
		seeds := b.seeds[:0]
		for _, pc := range runes {
			b.work += len(b.ranges[pc]) / 2
			if inRanges(b.ranges[pc], lo) {
				seeds = append(seeds, b.prog.Inst[pc].Out)
			}
		}
		if b.work > maxPatternWork {
			return nil, false
		}
		seeds = append(seeds, uint32(b.prog.Start))
		// Pieces in a row mostly lead to the same instructions: all those of a class, or
		// none.
		if i == 0 || !slices.Equal(seeds, prev) {
			var ok bool
			if next, ok = b.after(seeds); !ok {
				return nil, false
			}
		}
		b.seeds, prev = prev, seeds
		if next < 0 {
			continue
		}
		if n := len(edges); n > start && edges[n-1].next == next && edges[n-1].hi == lo-1 {
			edges[n-1].hi = hi
			continue
		}
		edges = append(edges, dfaEdge{lo: lo, hi: hi, next: next})
	}
	return edges, true
}

// runeRanges returns the runes a rune instruction matches as [lo, hi] pairs, exactly as
// its MatchRune decides; nil for any other instruction, and for a case-folding one.
func runeRanges(in *syntax.Inst) []rune {
	switch in.Op {
	case syntax.InstRune1:
		return []rune{in.Rune[0], in.Rune[0]}
	case syntax.InstRuneAny:
		return []rune{0, unicode.MaxRune}
	case syntax.InstRuneAnyNotNL:
		return []rune{0, '\n' - 1, '\n' + 1, unicode.MaxRune}
	case syntax.InstRune:
		switch {
		case syntax.Flags(in.Arg)&syntax.FoldCase != 0:
			return nil
		case len(in.Rune) == 1:
			return []rune{in.Rune[0], in.Rune[0]}
		}
		return slices.Clip(in.Rune)
	}
	return nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func inRanges(r []rune, c rune) bool {
	for i := 0; i+1 < len(r); i += 2 {
		if r[i] <= c && c <= r[i+1] {
			return true
		}
	}
	return false
}
