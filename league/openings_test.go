package league

import (
	"encoding/json"
	"testing"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/protocol"
)

// withOpenings is refereeFeatures with feature openings.
var withOpenings = map[string]any{"features": append(append([]string{}, refereeFeatures["features"].([]string)...), protocol.FeatureOpenings)}

// Openings in game pairs: a double round robin of four players draws one random opening
// per pairing, both games of a pairing play it (cycle 1 and cycle 2, first move swapped),
// and the six pairings play six openings, numbered in schedule order. The assignment
// carries the match's opening; a restart gives every match the same one; a referee
// that does not announce feature openings is refused.
func TestOpeningsInGamePairs(t *testing.T) {
	h := newHarness(t, harnessOptions{cfg: func(c *config.Config) {
		c.Scheduling.Cycles = 2
		c.Openings = &config.Openings{Plies: 2, Order: config.OrderRandom, GamePairs: true}
	}})
	h.refused(refereeRegistration(t, "old", "http://127.0.0.1:9/old/mcp", refereeFeatures), protocol.ReasonUnsupportedGame)
	l := h.register([]string{"ref1", "ref2"}, withOpenings, playerIDs(4))
	l.start()
	h.settle()
	openings := func() map[string]string {
		h.m.e.mu.Lock()
		defer h.m.e.mu.Unlock()
		byPairing, names := map[[2]string][]string{}, map[string]bool{}
		for _, mt := range h.m.e.fx.matches {
			if mt.opening == nil {
				t.Fatalf("match %s has no opening", mt.id)
			}
			key := mt.players
			if key[0] > key[1] {
				key[0], key[1] = key[1], key[0]
			}
			b, _ := json.Marshal(mt.opening)
			byPairing[key] = append(byPairing[key], string(b))
			names[mt.opening.Name] = true
		}
		out := map[string]string{}
		for key, os := range byPairing {
			if len(os) != 2 || os[0] != os[1] {
				t.Errorf("pairing %v plays %v, want one opening twice", key, os)
			}
			out[key[0]+"-"+key[1]] = os[0]
		}
		if len(names) != 6 {
			t.Errorf("openings %v, want six: random#1 to random#6", names)
		}
		return out
	}
	before := openings()
	_, ms := h.round()
	var a protocol.Assignment
	if err := l.refs[ms[0].Referee].assignment(t, ms[0].ID).Decode(&a); err != nil || a.Opening == nil || len(a.Opening.Moves) != 2 {
		t.Fatalf("assignment %+v (%v): want the match's opening of 2 moves", a, err)
	}
	// A result played from another opening than the one assigned is refused, changing
	// nothing; with the assigned one it is taken.
	mt := ms[0]
	report := func(opening any) *protocol.Message {
		p := resultPayload(mt, decided(mt, 0))
		md := map[string]any{"termination": "normal"}
		if opening != nil {
			md["opening"] = opening
		}
		p["game_metadata"] = md
		return withPayload(t, l.report(mt.Referee, l.refTokens[mt.Referee], mt, decided(mt, 0)), p)
	}
	h.unchanged("a result from another opening", func() {
		h.refused(report(map[string]any{"name": "random#99", "moves": []any{}}), protocol.ReasonInvalidResult)
	})
	h.unchanged("a result from the game's start", func() { h.refused(report(nil), protocol.ReasonInvalidResult) })
	h.ok(report(a.Opening))

	h.restart()
	if after := openings(); len(after) != len(before) {
		t.Fatalf("after a restart %d pairings, before %d", len(after), len(before))
	} else {
		for k, v := range before {
			if after[k] != v {
				t.Errorf("pairing %s: opening %s before a restart, %s after", k, v, after[k])
			}
		}
	}
}
