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
	adj   []bool // n*n, symmetric
	alive []bool
	mate  []int // -1 when exposed
	size  int   // edges in the matching

	// Scratch space for findPath.
	parent, base, queue []int
	used, blossom, seen []bool
}

func newMatcher(n int, edge func(i, j int) bool) *matcher {
	m := &matcher{n: n}
	m.init(edge)
	// A greedy start, then one search from every exposed vertex, gives a maximum matching.
	for i := range n {
		for j := i + 1; j < n && m.mate[i] < 0; j++ {
			if m.mate[j] < 0 && m.adj[i*n+j] {
				m.mate[i], m.mate[j] = j, i
				m.size++
			}
		}
	}
	for i := range n {
		if m.mate[i] < 0 {
			m.augmentFrom(i)
		}
	}
	return m
}

// init sets up an empty matching of the graph with the given edges.
func (m *matcher) init(edge func(i, j int) bool) {
	n := m.n
	*m = matcher{
		n:       n,
		adj:     make([]bool, n*n),
		alive:   make([]bool, n),
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
		for j := i + 1; j < n; j++ {
			if edge(i, j) {
				m.adj[i*n+j] = true
				m.adj[j*n+i] = true
			}
		}
	}
}

func (m *matcher) edge(i, j int) bool { return m.adj[i*m.n+j] }

// augmentFrom augments along an augmenting path from the exposed, alive vertex root if
// there is one, and reports whether it did.
func (m *matcher) augmentFrom(root int) bool {
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
		if w := m.mate[v]; w >= 0 {
			m.mate[v], m.mate[w] = -1, -1
			m.size--
			freed[k] = w
			k++
		}
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
	mate []int
	size int
}

func (m *matcher) snapshot(buf []int) matcherState {
	return matcherState{mate: append(buf[:0], m.mate...), size: m.size}
}

func (m *matcher) restore(s matcherState, a, b int) {
	copy(m.mate, s.mate)
	m.size = s.size
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
		row := m.adj[v*m.n : (v+1)*m.n]
		for to, ok := range row {
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
