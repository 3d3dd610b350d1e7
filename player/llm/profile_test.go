package llm

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/config"
)

// The profiles shipped under config/agents load as they are.
func TestLLMShippedProfiles(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	paths, err := filepath.Glob(filepath.Join(filepath.Dir(file), "..", "..", "config", "agents", "*.yaml"))
	if err != nil || len(paths) < 2 {
		t.Fatalf("shipped profiles %v (%v), want at least two", paths, err)
	}
	for _, path := range paths {
		p, err := LoadProfile(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if p.File != path || p.Rethinks != DefaultRethinks {
			t.Errorf("%s: file %q, rethinks %d", path, p.File, p.Rethinks)
		}
	}
}

const validProfile = `
name: "Aggressive Alpha"
personality: aggressive
model_name: gpt-4o-mini
system_prompt: |
  Attack.
base_url: https://api.openai.com/v1
`

func TestLLMProfileDefaults(t *testing.T) {
	p, err := ParseProfile("x.yaml", []byte(validProfile))
	if err != nil {
		t.Fatal(err)
	}
	want := Profile{Name: "Aggressive Alpha", Personality: "aggressive", ModelName: "gpt-4o-mini", SystemPrompt: "Attack.\n",
		Temperature: DefaultTemperature, MaxTokens: DefaultMaxTokens, TimeoutSeconds: DefaultTimeoutSeconds, Rethinks: DefaultRethinks,
		BaseURL: "https://api.openai.com/v1", File: "x.yaml"}
	if *p != want {
		t.Errorf("got %+v, want %+v", *p, want)
	}
	if p.Timeout() != 30*time.Second {
		t.Errorf("timeout %v, want 30s", p.Timeout())
	}
}

// Every problem is reported, each with the file, the field and the bound.
func TestLLMProfileProblems(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"temperature", validProfile + "temperature: 3\n", []string{"config/agents/x.yaml: temperature: must be 0..2, got 3"}},
		{"everything out of bounds", validProfile + `
temperature: -0.5
max_tokens: 0
timeout_seconds: 0
rethinks: 9
api_key_env: "OPENAI KEY"
`, []string{
			"config/agents/x.yaml: temperature: must be 0..2, got -0.5",
			"config/agents/x.yaml: max_tokens: must be 1..32768, got 0",
			"config/agents/x.yaml: timeout_seconds: must be > 0 and <= 600, got 0",
			"config/agents/x.yaml: rethinks: must be 0..5, got 9",
			`config/agents/x.yaml: api_key_env: must name an environment variable (^[A-Za-z_][A-Za-z0-9_]{0,127}$), got "OPENAI KEY"`,
		}},
		{"missing fields", "temperature: 1\n", []string{
			"config/agents/x.yaml: name: is required",
			"config/agents/x.yaml: personality: is required",
			"config/agents/x.yaml: model_name: is required",
			"config/agents/x.yaml: system_prompt: is required",
			"config/agents/x.yaml: base_url: is required, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1",
		}},
		{"long and broken text", strings.NewReplacer(`name: "Aggressive Alpha"`, `name: "`+strings.Repeat("n", 51)+`"`,
			"personality: aggressive", `personality: "a\nb"`, "model_name: gpt-4o-mini", `model_name: "m\u0007"`).Replace(validProfile), []string{
			"config/agents/x.yaml: name: must be at most 50 characters, got 51",
			"config/agents/x.yaml: personality: must not hold control characters",
			"config/agents/x.yaml: model_name: must not hold control characters",
		}},
		{"unknown and mistyped fields", validProfile + "api_key: sk-123\nmax_tokens: many\n", []string{
			"config/agents/x.yaml: api_key: unknown field (line 8)",
			`config/agents/x.yaml: max_tokens: must be an integer, got "many" (line 9)`,
		}},
		{"base url with credentials", strings.Replace(validProfile, "https://api.openai.com/v1", "https://user:pw@api.openai.com/v1", 1),
			[]string{"config/agents/x.yaml: base_url: must not hold credentials: name the key's variable in api_key_env"}},
		{"base url not http", strings.Replace(validProfile, "https://api.openai.com/v1", "ftp://host/v1", 1),
			[]string{`config/agents/x.yaml: base_url: must be an http(s) URL, got "ftp://host/v1"`}},
		{"base url with a query", strings.Replace(validProfile, "https://api.openai.com/v1", "http://127.0.0.1:8080/v1?key=1", 1),
			[]string{"config/agents/x.yaml: base_url: must not have a query or a fragment"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseProfile("config/agents/x.yaml", []byte(tt.yaml))
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v, want a *config.Error", err)
			}
			if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s", err, strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestLLMLoadProfileErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadProfile(filepath.Join(dir, "none.yaml")); err == nil || !strings.Contains(err.Error(), "none.yaml") {
		t.Errorf("missing file: %v, want an error naming it", err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("# "+strings.Repeat("x", maxProfileBytes)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProfile(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("large file: %v, want it refused", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: [unclosed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProfile(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": ") {
		t.Errorf("syntax error: %v, want it prefixed with the file", err)
	}
}

// A missing key variable is named, and no value is ever shown.
func TestLLMAPIKey(t *testing.T) {
	p, err := ParseProfile("config/agents/x.yaml", []byte(validProfile+"api_key_env: MY_LLM_KEY\n"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	_, err = p.APIKey(lookup)
	if want := "config/agents/x.yaml: api_key_env: environment variable MY_LLM_KEY is not set (it must hold the API key)"; err == nil || err.Error() != want {
		t.Errorf("unset: %v, want %q", err, want)
	}
	env["MY_LLM_KEY"] = "  "
	if _, err := p.APIKey(lookup); err == nil {
		t.Error("blank key accepted")
	}
	env["MY_LLM_KEY"] = "sk-profile-test\n"
	if key, err := p.APIKey(lookup); err != nil || key != "sk-profile-test" {
		t.Errorf("key %q, error %v; want the variable's value trimmed", key, err)
	}
	p.APIKeyEnv = ""
	if key, err := p.APIKey(lookup); err != nil || key != "" {
		t.Errorf("no api_key_env: key %q, error %v; want none", key, err)
	}
}

// The agent card names the model, the API's host and a hash of what shapes the answers:
// the same profile gives the same card, a changed prompt or temperature another hash.
func TestLLMProfileCard(t *testing.T) {
	p, err := ParseProfile("x.yaml", []byte(validProfile+"version: \"3\"\nauthor: lab\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := p.Card()
	if c.Model != "gpt-4o-mini" || c.Provider != "api.openai.com" || !strings.HasPrefix(c.PromptHash, "sha256:") || len(c.PromptHash) != 71 || c.Version != "3" || c.Author != "lab" {
		t.Errorf("card %+v", c)
	}
	if again := p.Card(); *again != *c {
		t.Errorf("the same profile gives %+v, then %+v", c, again)
	}
	q := *p
	q.SystemPrompt = "Defend.\n"
	r := *p
	r.Temperature = 0.1
	if q.Card().PromptHash == c.PromptHash || r.Card().PromptHash == c.PromptHash {
		t.Error("a changed prompt or temperature keeps the prompt hash")
	}
	if _, err := ParseProfile("x.yaml", []byte(validProfile+"author: \""+strings.Repeat("a", 201)+"\"\n")); err == nil || !strings.Contains(err.Error(), "author: must be at most 200 characters") {
		t.Errorf("a long author: %v", err)
	}
}

// A move's cost is its tokens at the profile's prices per million; prices out of bounds
// are refused.
func TestLLMProfileCost(t *testing.T) {
	p, err := ParseProfile("x.yaml", []byte(validProfile+"price_in_per_mtok: 2.5\nprice_out_per_mtok: 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Cost(1000, 200); math.Abs(got-0.0045) > 1e-12 {
		t.Errorf("cost of 1000 in and 200 out = %v, want 0.0045", got)
	}
	if _, err := ParseProfile("x.yaml", []byte(validProfile+"price_in_per_mtok: -1\n")); err == nil || !strings.Contains(err.Error(), "price_in_per_mtok: must be 0..10000") {
		t.Errorf("a negative price: %v", err)
	}
}
