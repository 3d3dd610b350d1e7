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
// once and looks its transition up in a table (an ASCII rune's piece directly, another's
// by binary search over the pieces), so it costs a pass over the text at most, whatever
// the text, never backtracks and allocates nothing: a 64 KiB string from a hostile peer
// costs one pass.
type patternMatcher struct {
	// always: the pattern matches at the text's beginning, whatever follows.
	always bool
	// cuts split the rune space into pieces, piece i running from cuts[i] to
	// cuts[i+1]-1, within which every rune takes every state to the same place.
	cuts  []rune
	ascii [utf8.RuneSelf]uint8 // the piece of each ASCII rune
	width int                  // len(cuts)-1 pieces
	// next is the transition table, a row per state: next[row+piece] is the row of the
	// next state (the row at 0 is the text's beginning's), noMatch or matched; a row's
	// last entry, next[row+width], tells whether a match ends there if the text does
	// (a $ holds), matched or noMatch. Rows are kept as offsets, which spares a
	// multiplication per rune.
	next []int32
}

// The transitions that leave the table.
const (
	noMatch int32 = -1 // no match is possible any more
	matched int32 = -2 // a match ends here, whatever follows
)

// maxPatternWork bounds the work of building a DFA, and so its size: instructions
// followed, pieces of the rune space and rune ranges examined. A pattern that needs more
// keeps its regexp: an unanchored counted repetition, say, needs a state per count. The
// schema patterns need 28,000 at most (the sender's: 160 states of 32 pieces).
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
	if m.always {
		return true
	}
	row := int32(0)
	for i := 0; i < len(s); {
		var piece int
		if c := s[i]; c < utf8.RuneSelf {
			piece = int(m.ascii[c])
			i++
		} else {
			r, w := utf8.DecodeRuneInString(s[i:])
			piece = m.piece(r)
			i += w
		}
		if row = m.next[int(row)+piece]; row < 0 {
			return row == matched
		}
	}
	return m.next[int(row)+m.width] == matched
}

// piece returns the index of the piece that holds r.
func (m *patternMatcher) piece(r rune) int {
	lo, hi := 0, len(m.cuts)-1 // cuts[lo] <= r < cuts[hi]
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if m.cuts[mid] <= r {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// dfaBuilder builds a DFA by the subset construction over a regexp program: a state is
// the set of rune instructions reachable at a point of the text. It refuses any
// instruction it cannot read exactly, whatever inPatternSubset let through.
type dfaBuilder struct {
	prog *syntax.Prog
	// ranges are the runes each rune instruction matches, by pc, as [lo, hi] pairs.
	ranges [][]rune
	m      *patternMatcher
	// runes are each state's rune instructions, from which its row of the table is made,
	// and atEnd tells whether a match ends there at the text's end.
	runes [][]uint32
	atEnd []bool
	index map[string]int32
	// afterIndex maps the instructions a rune leads to to where they lead.
	afterIndex map[string]int32
	// work counts towards maxPatternWork.
	work int
	// Scratch: closure sees an instruction when its mark is the closure's.
	marks        []uint32
	mark         uint32
	stack, seeds []uint32
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
	// Cut the rune space at every bound of every range: within a piece, every rune
	// reaches the same instructions, so one rune stands for it.
	cuts := []rune{0, unicode.MaxRune + 1}
	for pc := range prog.Inst {
		r := runeRanges(&prog.Inst[pc])
		b.ranges[pc] = r
		for j := 0; j+1 < len(r); j += 2 {
			cuts = append(cuts, r[j], r[j+1]+1)
		}
	}
	slices.Sort(cuts)
	b.m.cuts = slices.Clip(slices.Compact(cuts))
	b.m.width = len(b.m.cuts) - 1
	for c := range utf8.RuneSelf {
		b.m.ascii[c] = uint8(b.m.piece(rune(c))) // the ASCII pieces come first: at most 128
	}
	start, ok := b.state([]uint32{uint32(prog.Start)}, true)
	if !ok {
		return nil
	}
	if start == matched {
		return &patternMatcher{always: true}
	}
	for i := 0; i < len(b.runes); i++ {
		if !b.row(b.runes[i], b.atEnd[i]) {
			return nil
		}
	}
	for i, next := range b.m.next {
		if next >= 0 {
			b.m.next[i] = next * int32(b.m.width+1)
		}
	}
	return b.m
}

// row appends the row of the state whose rune instructions are runes and where a match
// ends at the text's end if atEnd. Every piece also starts the pattern anew, as regexp
// tries a match at every position of the text (an anchored pattern fails there at once).
func (b *dfaBuilder) row(runes []uint32, atEnd bool) bool {
	var prev []uint32
	var next int32
	b.work += b.m.width + 1
	for piece, r := range b.m.cuts[:b.m.width] {
		seeds := b.seeds[:0]
		for _, pc := range runes {
			b.work += len(b.ranges[pc]) / 2
			if inRanges(b.ranges[pc], r) {
				seeds = append(seeds, b.prog.Inst[pc].Out)
			}
		}
		if b.work > maxPatternWork {
			return false
		}
		seeds = append(seeds, uint32(b.prog.Start))
		// Pieces in a row mostly lead to the same instructions: all those of a class, or
		// none.
		if piece == 0 || !slices.Equal(seeds, prev) {
			var ok bool
			if next, ok = b.after(seeds); !ok {
				return false
			}
		}
		b.seeds, prev = prev, seeds
		b.m.next = append(b.m.next, next)
	}
	end := noMatch
	if atEnd {
		end = matched
	}
	b.m.next = append(b.m.next, end)
	return true
}

// after returns where seeds lead after a rune, as state does, remembering it: states
// mostly share them.
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
// adding it if it is new, or matched or noMatch. begin tells whether this is the text's
// beginning. ok is false when the DFA would cost more than maxPatternWork or the
// program holds an instruction the matcher does not read.
func (b *dfaBuilder) state(seeds []uint32, begin bool) (index int32, ok bool) {
	runes, here, ok := b.closure(seeds, begin, false)
	if !ok {
		return 0, false
	}
	if here {
		return matched, true
	}
	_, atEnd, ok := b.closure(seeds, begin, true)
	if !ok {
		return 0, false
	}
	// The beginning is a state even when nothing matches from it: match starts there.
	if len(runes) == 0 && !atEnd && !begin {
		return noMatch, true
	}
	b.key = append(b.key[:0], boolByte(atEnd))
	for _, pc := range runes {
		b.key = binary.AppendUvarint(b.key, uint64(pc))
	}
	// The beginning is a state of its own: ^ holds there only.
	if i, ok := b.index[string(b.key)]; ok && !begin {
		return i, true
	}
	index = int32(len(b.runes))
	b.runes = append(b.runes, runes)
	b.atEnd = append(b.atEnd, atEnd)
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
