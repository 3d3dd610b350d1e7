package player

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/player/strategy"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// contextExplainer records the log line it writes with the request's logger.
type contextExplainer struct {
	mu   sync.Mutex
	line bytes.Buffer
}

func (c *contextExplainer) Move(strategy.Request) (json.RawMessage, error) {
	panic("the player must prefer MoveContext")
}

func (c *contextExplainer) MoveWithMetadata(strategy.Request) (json.RawMessage, json.RawMessage, error) {
	panic("the player must prefer MoveContext")
}

func (c *contextExplainer) MoveContext(ctx context.Context, req strategy.Request) (json.RawMessage, json.RawMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := zerolog.Ctx(ctx).Output(&c.line)
	l.Info().Msg("probe")
	return json.RawMessage(`{"row":1,"col":1}`), json.RawMessage(`{"note":"centre"}`), nil
}

// A strategy that takes the request's context gets it with the request's logger (its
// conversation_id, match and step), and its metadata goes beside the move.
func TestRequestMoveGivesTheContextToContextExplainers(t *testing.T) {
	ce := &contextExplainer{}
	lg := startLeague(t, &fakeLeague{})
	r := startPlayer(t, lg, Config{ID: "p01"}, func(p *Player) {
		p.newStrategy = func(string, game.Game, int64, string) (strategy.Strategy, error) { return ce, nil }
	})
	r.waitState(t, StateActive)
	s := newSender(t)
	board := json.RawMessage(`{"board":[["","",""],["","",""],["","",""]],"your_mark":"X","move_number":1}`)
	ans, err := s.send(r.url, protocol.RequestMove, envelope{matchID: "M1", gameType: game.TypeTicTacToe}, map[string]any{"step_number": 1, "step_context": board})
	if err != nil {
		t.Fatalf("REQUEST_MOVE: %v", err)
	}
	mv := decode[protocol.MoveAnswer](t, ans)
	if string(mv.MovePayload) != `{"row":1,"col":1}` || string(mv.Metadata) != `{"note":"centre"}` {
		t.Errorf("answer %s with metadata %s, want the strategy's", mv.MovePayload, mv.Metadata)
	}
	ce.mu.Lock()
	defer ce.mu.Unlock()
	for _, want := range []string{`"conversation_id":"` + ans.Envelope.ConversationID + `"`, `"match_id":"M1"`, `"step_number":1`} {
		if !strings.Contains(ce.line.String(), want) {
			t.Errorf("strategy's log line %s lacks %s", ce.line.String(), want)
		}
	}
}
