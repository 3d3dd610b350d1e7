//go:build long

package e2e

import "testing"

// TestLongOutboundAgentsBehindNAT is the league behind NAT: 20 outbound players
// (ours and the Python and Node examples), 10 ordinary players and 2 outbound referees,
// every connection of the agents to the League Manager cut 10 times; run it with make
// test-long.
func TestLongOutboundAgentsBehindNAT(t *testing.T) {
	playBehindNAT(t, natLeague{ours: 14, python: 3, node: 3, ordinary: 10, cuts: 10})
}
