package conform

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentleague/agentleague/protocol"
)

// stop shuts the tool's servers down once the run is over; idle keep-alive
// connections hold goroutines, so they end with the run too.
func (s *session) stop(ctx context.Context, stops ...func(context.Context) error) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	s.http.CloseIdleConnections()
	for _, stop := range stops {
		if err := stop(sctx); err != nil {
			s.log.Warn().Err(err).Msg("stop a server of the tool")
		}
	}
}

// probeUnknown sends m, of a message type no role knows, and records check id.
func (s *session) probeUnknown(ctx context.Context, v *verdicts, id, url string, m *protocol.Message) {
	body, rid, err := request(m)
	if err != nil {
		v.failf(id, "conform tool: %v", err)
		return
	}
	switch a := s.post(ctx, url, body, rid); {
	case a.refused():
		reason := "answered " + unknownType + " with a JSON-RPC error: " + a.rpcErr.Error()
		if a.status != 200 {
			reason += fmt.Sprintf(" (under HTTP %d; JSON-RPC answers use 200)", a.status)
		}
		v.pass(id, reason)
	case a.problem() == "":
		v.failf(id, "answered %s with a %s result instead of a JSON-RPC error", unknownType, a.result.Envelope.MessageType)
	case a.gone():
		v.failf(id, "%s: the connection closed without an answer (%s); did it crash?", unknownType, shortErr(a.err))
	default:
		v.failf(id, "%s: %s", unknownType, a.problem())
	}
}

// padding is schema-valid filler that makes a message larger than oversizedBytes.
func padding() []string {
	item := strings.Repeat("x", 1000)
	return slices.Repeat([]string{item}, oversizedBytes/(len(item)+3)+1)
}

// probeOversized sends m, padded beyond 1 MiB, and records check id.
func (s *session) probeOversized(ctx context.Context, v *verdicts, id, url string, m *protocol.Message) {
	body, rid, err := request(m)
	if err != nil {
		v.failf(id, "conform tool: %v", err)
		return
	}
	a := s.post(ctx, url, body, rid)
	mib := fmt.Sprintf("%.1f MiB", float64(len(body))/(1<<20))
	switch {
	case a.err == nil && a.status >= 400 && a.status < 500:
		v.pass(id, fmt.Sprintf("refused a %s body with HTTP %d", mib, a.status))
	case a.refused():
		v.pass(id, fmt.Sprintf("refused a %s body with a JSON-RPC error: %s", mib, a.rpcErr.Error()))
	case a.problem() == "":
		v.failf(id, "took a %s body and answered it with %s", mib, a.result.Envelope.MessageType)
	default:
		v.failf(id, "a %s body: %s", mib, a.problem())
	}
}
