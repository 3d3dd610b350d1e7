package main

import (
	"errors"
	"os"

	"github.com/agentleague/agentleague/player"
	"github.com/agentleague/agentleague/player/llm"
	"github.com/rs/zerolog"
)

// withLLM gives cfg, a player of strategy llm, the model client c: its display name
// defaults to the profile's name, and its agent card is the profile's.
func withLLM(cfg *player.Config, c *llm.Client) {
	cfg.LLM = c
	if cfg.DisplayName == "" {
		cfg.DisplayName = c.Profile().Name
	}
	cfg.AgentCard = c.Profile().Card()
}

// logLLM logs which profile and model a player of strategy llm plays with.
func logLLM(log zerolog.Logger, c *llm.Client) {
	p := c.Profile()
	log.Info().Str("profile", p.File).Str("agent", p.Name).Str("model", p.ModelName).Str("base_url", p.BaseURL).
		Str("api_key_env", p.APIKeyEnv).Msg("llm agent profile loaded")
}

// loadLLM builds the model client of strategy llm from the agent profile at path and the
// API key in the variable its api_key_env names.
func loadLLM(path string) (*llm.Client, error) {
	if path == "" {
		return nil, errors.New("strategy llm needs --profile, an agent profile such as config/agents/aggressive.yaml")
	}
	p, err := llm.LoadProfile(path)
	if err != nil {
		return nil, err
	}
	key, err := p.APIKey(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	return llm.NewClient(p, key, nil), nil
}
