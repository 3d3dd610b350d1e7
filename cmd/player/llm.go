package main

import (
	"errors"
	"os"

	"github.com/agentleague/agentleague/player/llm"
)

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
