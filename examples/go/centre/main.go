// Command centre is a tic-tac-toe player in Go built on the player runtime: the strategy
// is a dozen lines, the runtime does the protocol. It plays outbound (through the League
// Manager's relay), so it needs no port:
//
//	go run ./examples/go/centre --id go1 --league http://127.0.0.1:8000/mcp
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/player"
	"github.com/agentleague/agentleague/player/strategy"
	"github.com/rs/zerolog"
)

// centre takes the centre when it is free, else the first legal move.
type centre struct{ g game.Game }

// Move implements strategy.Strategy.
func (s centre) Move(req strategy.Request) (json.RawMessage, error) {
	legal, err := s.g.LegalMoves(req.Context)
	if err != nil || len(legal) == 0 {
		return nil, strategy.ErrNoMove
	}
	for _, m := range legal {
		var cell struct{ Row, Col int }
		if json.Unmarshal(m, &cell) == nil && cell.Row == 1 && cell.Col == 1 {
			return m, nil
		}
	}
	return legal[0], nil
}

func main() {
	id := flag.String("id", "go1", "player id")
	league := flag.String("league", "http://127.0.0.1:8000/mcp", "the League Manager's endpoint")
	flag.Parse()
	log := zerolog.New(os.Stderr).With().Timestamp().Str("component", "player").Str("player_id", *id).Logger()
	p, err := player.New(player.Config{
		ID: *id, LeagueURL: *league, Outbound: true, Strategy: "centre",
		Remote: func(g game.Game, _ string) (strategy.Strategy, error) { return centre{g}, nil },
	}, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := p.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
