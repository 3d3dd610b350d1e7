package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/protocol"
)

// Profile is an agent profile (seed 000's Agent) and where its model is served: a YAML
// file such as config/agents/aggressive.yaml.
type Profile struct {
	// Name is the agent's display name, at most 50 characters.
	Name string `yaml:"name"`
	// Personality describes the playing style, e.g. "aggressive".
	Personality string `yaml:"personality"`
	// ModelName is the model the server is asked for, e.g. "gpt-4o-mini" or "llama3.2:3b".
	ModelName string `yaml:"model_name"`
	// SystemPrompt is the agent's instructions, sent before the game's rules.
	SystemPrompt string `yaml:"system_prompt"`
	// Temperature is the sampling temperature, 0..2.
	Temperature float64 `yaml:"temperature"`
	// MaxTokens bounds each answer of the model.
	MaxTokens int `yaml:"max_tokens"`
	// TimeoutSeconds bounds the time of one move; the referee's deadline may be shorter.
	TimeoutSeconds float64 `yaml:"timeout_seconds"`
	// Rethinks is how many times an illegal or unreadable answer is sent back to the model
	// with the reason before the move is given up.
	Rethinks int `yaml:"rethinks"`
	// BaseURL is the OpenAI-compatible API, e.g. https://api.openai.com/v1 or
	// http://127.0.0.1:11434/v1 (Ollama).
	BaseURL string `yaml:"base_url"`
	// APIKeyEnv names the environment variable that holds the API key; empty for a server
	// that needs none. The key itself never appears in a profile.
	APIKeyEnv string `yaml:"api_key_env"`

	// Version and Author, optional, go into the agent card (Card).
	Version string `yaml:"version"`
	Author  string `yaml:"author"`
	// PriceInPerMTok and PriceOutPerMTok, optional, are the model's prices in US dollars
	// per million tokens in and out: each move's note then says what it cost (Cost).
	PriceInPerMTok  float64 `yaml:"price_in_per_mtok"`
	PriceOutPerMTok float64 `yaml:"price_out_per_mtok"`

	// File is the file the profile was read from; problems are prefixed with it.
	File string `yaml:"-"`
}

// Cost is what tokensIn and tokensOut cost at the profile's prices, in US dollars; 0
// without prices.
func (p *Profile) Cost(tokensIn, tokensOut int64) float64 {
	return (float64(tokensIn)*p.PriceInPerMTok + float64(tokensOut)*p.PriceOutPerMTok) / 1e6
}

// Card is the agent card the player registers with: the model, the host of the API as
// the provider, and a hash of everything that shapes its answers (the prompt, the
// personality and the sampling settings), so that a rating names the exact setup.
func (p *Profile) Card() *protocol.AgentCard {
	setup, _ := json.Marshal(map[string]any{ // plain values always encode
		"system_prompt": p.SystemPrompt, "personality": p.Personality, "temperature": p.Temperature,
		"max_tokens": p.MaxTokens, "rethinks": p.Rethinks,
	})
	sum := sha256.Sum256(setup)
	provider := p.BaseURL
	if u, err := url.Parse(p.BaseURL); err == nil && u.Host != "" {
		provider = u.Host
	}
	return &protocol.AgentCard{Model: p.ModelName, Provider: provider, PromptHash: "sha256:" + hex.EncodeToString(sum[:]), Version: p.Version, Author: p.Author}
}

// Defaults of the optional fields, and the bounds of every field.
const (
	DefaultTemperature    = 0.7
	DefaultMaxTokens      = 1024
	DefaultTimeoutSeconds = 30
	DefaultRethinks       = 2

	maxNameRunes         = 50
	maxPersonalityRunes  = 200
	maxModelNameRunes    = 100
	maxSystemPromptRunes = 8000
	maxCardRunes         = 200
	maxPricePerMTok      = 10000
	maxTemperature       = 2
	maxMaxTokens         = 32768
	maxTimeoutSeconds    = 600
	maxRethinks          = 5
	maxBaseURLBytes      = 500
	// maxProfileBytes bounds the file read: a profile is a few hundred bytes.
	maxProfileBytes = 64 << 10
)

// envNamePattern is the shape of an environment variable name.
var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// LoadProfile reads and validates the profile at path. Every problem is reported, one per
// line, as "<path>: <field>: <problem>" in a *config.Error; unknown fields are refused.
func LoadProfile(path string) (*Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read agent profile: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxProfileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read agent profile: %w", err)
	}
	if len(data) > maxProfileBytes {
		return nil, fmt.Errorf("agent profile %s is larger than %d bytes", path, maxProfileBytes)
	}
	return ParseProfile(path, data)
}

// ParseProfile decodes and validates a profile read from file.
func ParseProfile(file string, data []byte) (*Profile, error) {
	p := &Profile{
		Temperature: DefaultTemperature, MaxTokens: DefaultMaxTokens,
		TimeoutSeconds: DefaultTimeoutSeconds, Rethinks: DefaultRethinks,
	}
	problems, err := config.DecodeYAML(file, data, p)
	if err != nil {
		return nil, err
	}
	p.File = file
	// Range checks only on a profile that decoded, so a mistyped field is reported once.
	if len(problems) == 0 {
		problems = p.check()
	}
	if len(problems) > 0 {
		return nil, &config.Error{Problems: problems}
	}
	return p, nil
}

// check reports every value out of its bounds.
func (p *Profile) check() []config.Problem {
	var out []config.Problem
	add := func(path, format string, args ...any) {
		out = append(out, config.Problem{File: p.File, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	text := func(path, v string, limit int, oneLine bool) {
		n := utf8.RuneCountInString(v)
		switch {
		case strings.TrimSpace(v) == "":
			add(path, "is required")
		case n > limit:
			add(path, "must be at most %d characters, got %d", limit, n)
		case !utf8.ValidString(v):
			add(path, "must be UTF-8")
		case strings.ContainsFunc(v, func(r rune) bool { return unicode.IsControl(r) && (oneLine || (r != '\n' && r != '\t')) }):
			add(path, "must not hold control characters")
		}
	}
	text("name", p.Name, maxNameRunes, true)
	text("personality", p.Personality, maxPersonalityRunes, true)
	text("model_name", p.ModelName, maxModelNameRunes, true)
	text("system_prompt", p.SystemPrompt, maxSystemPromptRunes, false)
	for _, f := range []struct{ path, v string }{{"version", p.Version}, {"author", p.Author}} {
		if f.v != "" { // optional; the agent card's bound
			text(f.path, f.v, maxCardRunes, true)
		}
	}
	if p.Temperature < 0 || p.Temperature > maxTemperature {
		add("temperature", "must be 0..%d, got %v", maxTemperature, p.Temperature)
	}
	if p.MaxTokens < 1 || p.MaxTokens > maxMaxTokens {
		add("max_tokens", "must be 1..%d, got %d", maxMaxTokens, p.MaxTokens)
	}
	if !(p.TimeoutSeconds > 0 && p.TimeoutSeconds <= maxTimeoutSeconds) {
		add("timeout_seconds", "must be > 0 and <= %d, got %v", maxTimeoutSeconds, p.TimeoutSeconds)
	}
	for _, f := range []struct {
		path  string
		price float64
	}{{"price_in_per_mtok", p.PriceInPerMTok}, {"price_out_per_mtok", p.PriceOutPerMTok}} {
		if !(f.price >= 0 && f.price <= maxPricePerMTok) {
			add(f.path, "must be 0..%d US dollars per million tokens, got %v", maxPricePerMTok, f.price)
		}
	}
	if p.Rethinks < 0 || p.Rethinks > maxRethinks {
		add("rethinks", "must be 0..%d, got %d", maxRethinks, p.Rethinks)
	}
	if msg := checkBaseURL(p.BaseURL); msg != "" {
		add("base_url", "%s", msg)
	}
	if p.APIKeyEnv != "" && !envNamePattern.MatchString(p.APIKeyEnv) {
		add("api_key_env", "must name an environment variable (%s), got %q", envNamePattern, excerpt(p.APIKeyEnv, 40))
	}
	return out
}

// checkBaseURL says what is wrong with a base URL, or "" when nothing is.
func checkBaseURL(s string) string {
	if s == "" {
		return "is required, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1"
	}
	if len(s) > maxBaseURLBytes {
		return fmt.Sprintf("must be at most %d bytes, got %d", maxBaseURLBytes, len(s))
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Sprintf("must be an http(s) URL, got %q", excerpt(s, 80))
	case u.User != nil:
		// A URL is logged; credentials in it would be too.
		return "must not hold credentials: name the key's variable in api_key_env"
	case u.RawQuery != "" || u.Fragment != "":
		return "must not have a query or a fragment"
	}
	return ""
}

// Timeout is the most time one move may take by the profile.
func (p *Profile) Timeout() time.Duration {
	return time.Duration(p.TimeoutSeconds * float64(time.Second))
}

// APIKey reads the key from the variable api_key_env names, through lookup (os.LookupEnv
// outside tests): "" when the profile names none. The error names the variable, never a
// value.
func (p *Profile) APIKey(lookup func(string) (string, bool)) (string, error) {
	if p.APIKeyEnv == "" {
		return "", nil
	}
	key, ok := lookup(p.APIKeyEnv)
	if !ok || strings.TrimSpace(key) == "" {
		return "", &config.Error{Problems: []config.Problem{{File: p.File, Path: "api_key_env",
			Message: fmt.Sprintf("environment variable %s is not set (it must hold the API key)", p.APIKeyEnv)}}}
	}
	return strings.TrimSpace(key), nil
}
