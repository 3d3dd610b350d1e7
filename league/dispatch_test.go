package league

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/protocol"
)

// silentAgents is a network on which no agent ever answers: each call waits until its
// caller gives up, and how long it waited is kept by message type.
type silentAgents struct {
	mu     sync.Mutex
	waited map[string][]time.Duration
}

func (s *silentAgents) RoundTrip(req *http.Request) (*http.Response, error) {
	var body struct {
		Params protocol.Message `json:"params"`
	}
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, err
	}
	start := time.Now()
	<-req.Context().Done()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waited[body.Params.Envelope.MessageType] = append(s.waited[body.Params.Envelope.MessageType], time.Since(start))
	return nil, req.Context().Err()
}

func (s *silentAgents) calls(messageType string) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waited[messageType]
}

// Each attempt of a MATCH_ASSIGNMENT waits timeout_policy's
// match_assignment_response_ms, not registration_response_ms: on fake time, a referee
// that never answers is given up exactly when the assignment's own deadline passes.
func TestAssignmentWaitsItsOwnDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := &silentAgents{waited: map[string][]time.Duration{}}
		h := newHarness(t, harnessOptions{transport: net, redispatch: time.Hour, cfg: func(c *config.Config) {
			c.LeagueTimeouts.RegistrationResponseMS, c.Timeouts.LeagueLevel.Registration = 1000, 1000
			c.Timeouts.LeagueLevel.MatchAssignmentResponseMS = 3000
			c.Retries.MaxAttempts = 1
		}})
		h.ok(refereeRegistration(t, "ref1", "http://127.0.0.1:9/referees/ref1/mcp", nil))
		for _, id := range []string{"p1", "p2"} {
			h.ok(playerRegistration(t, id))
		}
		h.ok(adminStart(t, testAdminToken))
		synctest.Wait()
		if got := net.calls(protocol.MatchAssignment); len(got) != 0 {
			t.Fatalf("the assignment was given up after %v, before any time passed", got)
		}
		time.Sleep(h.cfg.MatchAssignmentTimeout())
		synctest.Wait()
		if got := net.calls(protocol.MatchAssignment); len(got) != 1 || got[0] != 3*time.Second {
			t.Errorf("MATCH_ASSIGNMENT calls given up after %v, want one after match_assignment_response_ms (3s)", got)
		}
	})
}

// A match whose referee refused it is offered again once Options.RedispatchDelay has
// passed on the League Manager's clock, and not before: the engine's alarm ends the
// pause, so no real time has to pass.
func TestRefusedAssignmentOfferedAgainAfterRedispatchDelay(t *testing.T) {
	clock := newFakeClock()
	h := newHarness(t, harnessOptions{clock: clock, redispatch: time.Hour})
	l := h.register([]string{"ref1"}, nil, []string{"p1", "p2"})
	ref := l.refs["ref1"]
	ref.setReject(true)
	l.start()
	_, ms := h.round()
	id := ms[0].ID
	waitFor(t, "the refused match to return to the pool", func() bool { return h.match(id).Status == protocol.MatchStatePending })
	ref.setReject(false)

	clock.Advance(time.Hour - time.Millisecond)
	if got := h.match(id).Status; got != protocol.MatchStatePending {
		t.Fatalf("match %s before the redispatch delay passed, want it still %s", got, protocol.MatchStatePending)
	}
	clock.Advance(time.Millisecond)
	if got := h.match(id).Status; got != protocol.MatchStateAssigned {
		t.Fatalf("match %s once the redispatch delay passed, want it %s again", got, protocol.MatchStateAssigned)
	}
	h.settle()
	if got := h.match(id); got.Status != protocol.MatchStateInProgress || got.Referee != "ref1" {
		t.Errorf("match %s at %q, want %s at ref1", got.Status, got.Referee, protocol.MatchStateInProgress)
	}
	if n := len(ref.assignments()); n != 2 {
		t.Errorf("ref1 got %d MATCH_ASSIGNMENTs, want 2", n)
	}
}

// gatedNetwork holds every call until its gate is closed, then sends it on the network.
type gatedNetwork chan struct{}

func (g gatedNetwork) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case <-g:
		return http.DefaultTransport.RoundTrip(req)
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
}

// A refusal that cannot be stored leaves the match with its referee until the database
// takes writes again; the alarm then puts it back in the pool, and the redispatch delay
// runs from there.
func TestRefusalStoredOnceTheDatabaseIsBack(t *testing.T) {
	clock, gate := newFakeClock(), make(gatedNetwork)
	h := newHarness(t, harnessOptions{clock: clock, redispatch: time.Hour, transport: gate})
	l := h.register([]string{"ref1"}, nil, []string{"p1", "p2"})
	ref := l.refs["ref1"]
	ref.setReject(true)
	l.start()
	_, ms := h.round()
	id := ms[0].ID
	setQueryOnly(t, h, true)
	close(gate)
	waitFor(t, "the refusal to meet the outage", func() bool {
		h.m.e.mu.Lock()
		defer h.m.e.mu.Unlock()
		return h.m.e.fx.matches[id].notTaken != nil
	})
	if got := h.match(id).Status; got != protocol.MatchStateAssigned {
		t.Fatalf("match %s while its refusal could not be stored, want %s", got, protocol.MatchStateAssigned)
	}
	setQueryOnly(t, h, false)
	ref.setReject(false)

	clock.Advance(storageRetry)
	if got := h.match(id).Status; got != protocol.MatchStatePending {
		t.Fatalf("match %s once the database took writes again, want %s", got, protocol.MatchStatePending)
	}
	clock.Advance(time.Hour - time.Millisecond)
	if got := h.match(id).Status; got != protocol.MatchStatePending {
		t.Fatalf("match %s before the redispatch delay passed, want it still %s", got, protocol.MatchStatePending)
	}
	clock.Advance(time.Millisecond)
	h.settle()
	if got := h.match(id); got.Status != protocol.MatchStateInProgress || got.Referee != "ref1" {
		t.Errorf("match %s at %q, want %s at ref1", got.Status, got.Referee, protocol.MatchStateInProgress)
	}
}
