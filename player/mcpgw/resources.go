package mcpgw

import (
	"context"
	"fmt"

	"github.com/agentleague/agentleague/player/llm"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// rulesURI is the resource of a game's rules.
func rulesURI(gameType string) string { return "rules://" + gameType }

// addResources adds the rules of every game the gateway can show, with default
// parameters.
func (g *Gateway) addResources() error {
	for _, gameType := range g.games.Types() {
		gm, err := g.games.New(gameType, nil)
		if err != nil {
			return fmt.Errorf("game %s: %w", gameType, err)
		}
		text, err := llm.Rules(gm)
		if err != nil {
			continue // a game the gateway cannot show has no seat either
		}
		uri := rulesURI(gameType)
		g.server.AddResource(&sdk.Resource{URI: uri, Name: "rules_" + gameType, Title: "Rules of " + gameType, MIMEType: "text/plain",
			Description: "How " + gameType + " is played in this league, with its default parameters."},
			func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text}}}, nil
			})
	}
	return nil
}
