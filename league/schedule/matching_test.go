package schedule

import (
	"math/rand/v2"
	"testing"
)

// bruteMatching is the size of a maximum matching of the alive vertices, by exhaustion.
func bruteMatching(n int, edge func(i, j int) bool, alive []bool) int {
	var best func(used uint64) int
	memo := map[uint64]int{}
	best = func(used uint64) int {
		if v, ok := memo[used]; ok {
			return v
		}
		i := 0
		for i < n && (used&(1<<i) != 0 || !alive[i]) {
			i++
		}
		if i == n {
			return 0
		}
		// i stays unmatched, or is matched to a later j.
		b := best(used | 1<<i)
		for j := i + 1; j < n; j++ {
			if used&(1<<j) == 0 && alive[j] && edge(i, j) {
				b = max(b, 1+best(used|1<<i|1<<j))
			}
		}
		memo[used] = b
		return b
	}
	return best(0)
}

// TestMatcherMaximum checks the blossom matcher against exhaustion on random graphs, before
// and after vertices are removed, and that its matching is a matching of allowed edges.
func TestMatcherMaximum(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	for iter := range 3000 {
		n := 1 + rng.IntN(14)
		density := rng.Float64()
		adj := make([]bool, n*n)
		for i := range n {
			for j := i + 1; j < n; j++ {
				if rng.Float64() < density {
					adj[i*n+j], adj[j*n+i] = true, true
				}
			}
		}
		edge := func(i, j int) bool { return adj[i*n+j] }
		m := newMatcher(n, edge)
		alive := make([]bool, n)
		for i := range alive {
			alive[i] = true
		}
		for {
			if got, want := m.size, bruteMatching(n, edge, alive); got != want {
				t.Fatalf("iteration %d (n %d, %d alive): matching size %d, maximum is %d", iter, n, countAlive(alive), got, want)
			}
			count := 0
			for v := range n {
				w := m.mate[v]
				if w < 0 {
					continue
				}
				count++
				if !alive[v] || !alive[w] || m.mate[w] != v || !edge(v, w) {
					t.Fatalf("iteration %d: bad matched pair %d-%d", iter, v, w)
				}
			}
			if count != 2*m.size {
				t.Fatalf("iteration %d: %d matched vertices for size %d", iter, count, m.size)
			}
			var live []int
			for v := range n {
				if alive[v] {
					live = append(live, v)
				}
			}
			if len(live) == 0 {
				break
			}
			a, b := live[rng.IntN(len(live))], live[rng.IntN(len(live))]
			if rng.IntN(3) == 0 {
				// A trial removal that is undone must leave the matching as it was.
				before := m.snapshot(nil)
				m.remove(a, b, n)
				m.restore(before, a, b)
				if m.size != before.size {
					t.Fatalf("iteration %d: restore changed the size", iter)
				}
				continue
			}
			m.remove(a, b, n)
			alive[a], alive[b] = false, false
		}
	}
}

func countAlive(alive []bool) int {
	c := 0
	for _, a := range alive {
		if a {
			c++
		}
	}
	return c
}
