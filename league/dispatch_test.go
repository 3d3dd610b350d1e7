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
