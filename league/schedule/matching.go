package schedule

import "slices"

// matcher keeps a maximum matching of a general graph (Edmonds' blossom algorithm) while
// vertices are removed two at a time. Swiss pairing uses it as an exact oracle: "can the
// players still unpaired be paired with as many allowed pairs as before if these two are
// paired together?"
//
// It relies on Edmonds' observation that a vertex from which no augmenting path exists
// keeps having none after the matching is augmented elsewhere: one search from every
// exposed vertex, in any order, makes any matching maximum.
type matcher struct {
	n     int
	edge  func(i, j int) bool // symmetric
	row   func(v int) []bool  // edge(v, j) for every j
	alive []bool
	live  int   // alive vertices
	mate  []int // -1 when exposed
	size  int   // edges in the matching

	// Scratch space for findPath.
	parent, base, queue []int
	used, blossom, seen []bool

	// Rows asked for by findPath, kept up to rowCacheLimit cells, and the buffer for any
	// beyond.
	rows    [][]bool
	cached  int
	overRow []bool
}

// rowCacheLimit bounds the rows a matcher keeps, in cells.
const rowCacheLimit = 1 << 24

// newMatcher finds a maximum matching of the graph on n vertices whose edges the
// symmetric edge reports. It asks edge on demand and keeps only the rows the blossom
// search scans, up to rowCacheLimit cells, so that large dense graphs fit.
func newMatcher(n int, edge func(i, j int) bool) *matcher {
	m := &matcher{n: n}
	m.reset(edge)
	// A greedy start, then one search from every exposed vertex, gives a maximum matching.
	for i := range n {
		for j := i + 1; j < n && m.mate[i] < 0; j++ {
			if m.mate[j] < 0 && m.edge(i, j) {
				m.mate[i], m.mate[j] = j, i
				m.size++
			}
		}
	}
	var exposed []int
	for i := range n {
		if m.mate[i] < 0 {
			exposed = append(exposed, i)
		}
	}
	// Short paths first: in a dense graph they join nearly all the exposed vertices, far
	// more cheaply than the blossom search. One try each keeps a sparse graph cheap.
	for k, u := range exposed {
		if m.mate[u] >= 0 {
			continue
		}
		for _, w := range exposed[k+1:] {
			if m.mate[w] < 0 {
				m.join(u, w)
				break
			}
		}
	}
	for _, u := range exposed {
		if m.mate[u] < 0 {
			m.augmentFrom(u)
		}
	}
	return m
}

// init sets up an empty matching of the graph on m.n vertices whose edges edge(i, j)
// reports for i < j, tabulated once.
func (m *matcher) init(edge func(i, j int) bool) {
	n := m.n
	adj := make([]bool, n*n)
	for i := range n {
		for j := i + 1; j < n; j++ {
			if edge(i, j) {
				adj[i*n+j] = true
				adj[j*n+i] = true
			}
		}
	}
	m.reset(func(i, j int) bool { return adj[i*n+j] })
	m.row = func(v int) []bool { return adj[v*n : (v+1)*n] }
}

// reset sets up an empty matching of the graph on m.n vertices with the symmetric edge.
func (m *matcher) reset(edge func(i, j int) bool) {
	n := m.n
	*m = matcher{
		n:       n,
		edge:    edge,
		alive:   make([]bool, n),
		live:    n,
		mate:    make([]int, n),
		parent:  make([]int, n),
		base:    make([]int, n),
		queue:   make([]int, 0, n),
		used:    make([]bool, n),
		blossom: make([]bool, n),
		seen:    make([]bool, n),
	}
	for i := range n {
		m.alive[i] = true
		m.mate[i] = -1
	}
	m.row = m.askRow
}

// askRow asks edge for the row of v once, and keeps it while the cache has room: the
// blossom search scans whole rows, often the same ones again.
func (m *matcher) askRow(v int) []bool {
	if m.rows == nil {
		m.rows = make([][]bool, m.n)
	}
	if r := m.rows[v]; r != nil {
		return r
	}
	r := m.overRow
	if m.cached+m.n <= rowCacheLimit {
		r = make([]bool, m.n)
		m.rows[v] = r
		m.cached += m.n
	} else if r == nil {
		r = make([]bool, m.n)
		m.overRow = r
	}
	for j := range r {
		r[j] = j != v && m.edge(v, j)
	}
	return r
}

// restrict returns a matcher of the alive vertices keep, which must be all of them,
// numbered by their place in keep, with edge between those numbers. The matching is
// carried over and stays maximum; the smaller matcher makes every later search cheaper.
func (m *matcher) restrict(keep []int, edge func(i, j int) bool) *matcher {
	s := &matcher{n: len(keep)}
	s.reset(edge)
	place := make([]int, m.n)
	for i, v := range keep {
		place[v] = i
	}
	for i, v := range keep {
		if w := m.mate[v]; w >= 0 {
			s.mate[i] = place[w]
		}
	}
	s.size = m.size
	return s
}

// augmentFrom augments along an augmenting path from the exposed, alive vertex root if
// there is one, and reports whether it did.
func (m *matcher) augmentFrom(root int) bool {
	if m.live-2*m.size < 2 {
		return false // a path needs another exposed end
	}
	v := m.findPath(root)
	if v < 0 {
		return false
	}
	for v >= 0 {
		pv := m.parent[v]
		ppv := m.mate[pv]
		m.mate[v], m.mate[pv] = pv, v
		v = ppv
	}
	m.size++
	return true
}

// join augments along a path of one or three edges between the exposed, alive vertices u
// and w if there is one, and reports whether it did.
func (m *matcher) join(u, w int) bool {
	if m.edge(u, w) {
		m.mate[u], m.mate[w] = w, u
		m.size++
		return true
	}
	// Low numbers are removed first in Swiss pairing, so the matched vertices are sought
	// from the top.
	for x := m.n - 1; x >= 0; x-- {
		y := m.mate[x] // removed vertices are exposed
		if y >= 0 && m.edge(u, x) && m.edge(y, w) {
			m.mate[u], m.mate[x] = x, u
			m.mate[y], m.mate[w] = w, y
			m.size++
			return true
		}
	}
	return false
}

// remove deletes the alive vertices a and b (a may equal b) and augments the matching
// until it is maximum for what is left or has limit edges, whichever comes first (pass a
// known upper bound on the new maximum as limit to stop early, or m.n for no bound).
func (m *matcher) remove(a, b, limit int) {
	var freed [2]int
	k := 0
	for _, v := range [2]int{a, b} {
		if !m.alive[v] {
			continue
		}
		m.alive[v] = false
		m.live--
		if w := m.mate[v]; w >= 0 {
			m.mate[v], m.mate[w] = -1, -1
			m.size--
			freed[k] = w
			k++
		}
	}
	if m.size >= limit {
		return
	}
	// Two exposed vertices, typically the freed partners of a perfect matching, are
	// nearly always joined by a short path in a dense graph.
	if m.live-2*m.size == 2 {
		ends := make([]int, 0, 2)
		for _, w := range freed[:k] {
			if m.alive[w] && m.mate[w] < 0 {
				ends = append(ends, w)
			}
		}
		for w := 0; len(ends) < 2; w++ {
			if m.alive[w] && m.mate[w] < 0 && !slices.Contains(ends, w) {
				ends = append(ends, w)
			}
		}
		m.join(ends[0], ends[1])
	}
	// One search from every exposed vertex, in any order, gives a maximum matching: a
	// vertex with no augmenting path keeps having none as the matching grows. Only the
	// freed partners can start one when the matching was maximum, but a path found from
	// one of them can open new ones between vertices exposed all along, so those are
	// searched too.
	for _, w := range freed[:k] {
		if m.size >= limit {
			return
		}
		if m.alive[w] && m.mate[w] < 0 {
			m.augmentFrom(w)
		}
	}
	for w := range m.n {
		if m.size >= limit {
			return
		}
		if m.alive[w] && m.mate[w] < 0 && !slices.Contains(freed[:k], w) {
			m.augmentFrom(w)
		}
	}
}

// snapshot and restore undo a trial remove.
type matcherState struct {
	mate       []int
	size, live int
}

func (m *matcher) snapshot(buf []int) matcherState {
	return matcherState{mate: append(buf[:0], m.mate...), size: m.size, live: m.live}
}

func (m *matcher) restore(s matcherState, a, b int) {
	copy(m.mate, s.mate)
	m.size, m.live = s.size, s.live
	m.alive[a], m.alive[b] = true, true
}

// findPath grows an alternating tree from root (Edmonds, with blossoms shrunk through
// base) and returns the exposed vertex an augmenting path ends at, or -1.
func (m *matcher) findPath(root int) int {
	for i := range m.n {
		m.used[i] = false
		m.parent[i] = -1
		m.base[i] = i
	}
	m.used[root] = true
	q := append(m.queue[:0], root)
	for h := 0; h < len(q); h++ {
		v := q[h]
		for to, ok := range m.row(v) {
			if !ok || !m.alive[to] || m.base[v] == m.base[to] || m.mate[v] == to {
				continue
			}
			if to == root || m.mate[to] >= 0 && m.parent[m.mate[to]] >= 0 {
				cur := m.lca(v, to)
				for i := range m.blossom {
					m.blossom[i] = false
				}
				m.markPath(v, cur, to)
				m.markPath(to, cur, v)
				for i := range m.n {
					if m.alive[i] && m.blossom[m.base[i]] {
						m.base[i] = cur
						if !m.used[i] {
							m.used[i] = true
							q = append(q, i)
						}
					}
				}
			} else if m.parent[to] < 0 {
				m.parent[to] = v
				if m.mate[to] < 0 {
					m.queue = q
					return to
				}
				m.used[m.mate[to]] = true
				q = append(q, m.mate[to])
			}
		}
	}
	m.queue = q
	return -1
}

func (m *matcher) lca(a, b int) int {
	for i := range m.seen {
		m.seen[i] = false
	}
	for {
		a = m.base[a]
		m.seen[a] = true
		if m.mate[a] < 0 {
			break
		}
		a = m.parent[m.mate[a]]
	}
	for {
		b = m.base[b]
		if m.seen[b] {
			return b
		}
		b = m.parent[m.mate[b]]
	}
}

func (m *matcher) markPath(v, b, child int) {
	for m.base[v] != b {
		m.blossom[m.base[v]] = true
		m.blossom[m.base[m.mate[v]]] = true
		m.parent[v] = child
		child = m.mate[v]
		v = m.parent[m.mate[v]]
	}
}
