package league

import (
	"strings"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

// A player's agent card is stored with it, shown by GET /status with its hash, and kept
// across a restart. The same id registering with another card is refused, the message
// naming both hashes: a changed agent is a new entry. A card the schema refuses (an
// unknown field) changes nothing.
func TestAgentCard(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.register([]string{"ref1"}, nil, nil)
	card := map[string]any{"model": "gpt-x", "provider": "scripted", "prompt_hash": "sha256:abc", "version": "2", "author": "lab"}
	reg := func(id string, card map[string]any) *protocol.Message {
		return newMsg(t, protocol.RegisterPlayerRequest, protocol.PlayerSender(id), map[string]any{
			"player_id": id, "endpoint_url": playerEndpoint(id), "features": playerFeatures, "agent_card": card})
	}
	h.ok(reg("p1", card))
	want := protocol.AgentCard{Model: "gpt-x", Provider: "scripted", PromptHash: "sha256:abc", Version: "2", Author: "lab"}
	check := func(when string) {
		t.Helper()
		st, _ := h.getStatus()
		for _, a := range st.Agents {
			if a.ID == "p1" {
				if a.AgentCard == nil || *a.AgentCard != want || a.CardHash != want.Hash() || len(a.CardHash) != 12 {
					t.Errorf("%s: p1's card %+v, hash %q; want %+v, %s", when, a.AgentCard, a.CardHash, want, want.Hash())
				}
				return
			}
		}
		t.Errorf("%s: p1 is not in /status", when)
	}
	check("after registration")
	h.restart()
	check("after a restart")

	changed := map[string]any{"model": "gpt-x", "provider": "scripted", "prompt_hash": "sha256:def", "version": "2", "author": "lab"}
	h.unchanged("a changed card", func() {
		err := h.refused(reg("p1", changed), protocol.ReasonDuplicateRegistration)
		if msg := err.Message; !strings.Contains(msg, "registered with agent card "+want.Hash()) || !strings.Contains(msg, "a changed agent is a new entry") {
			t.Errorf("refusal %q: want both hashes and the rule", msg)
		}
	})
	h.unchanged("an unknown card field", func() {
		h.refused(reg("p2", map[string]any{"model": "m", "temperature": 0.2}), protocol.ReasonSchemaViolation)
	})
}
