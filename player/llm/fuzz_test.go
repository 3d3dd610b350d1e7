package llm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/config"
)

// FuzzParseProfile reads arbitrary agent profiles (YAML decoded by config.DecodeYAML):
// ParseProfile must never panic, and returns either a profile within every bound (check
// finds nothing, its timeout positive) or an error and no profile, whose problems are
// each in the profile's file with a message.
func FuzzParseProfile(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "config", "agents", "*.yaml"))
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("name: x\nbase_url: http://u:p@h/v1\ntemperature: .nan\nmax_tokens: 1e9\n"))
	f.Add([]byte("name: &a x\npersonality: *a\nsystem_prompt: \"\\u0000\"\n"))
	const file = "agent.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile(file, data)
		if err != nil {
			if p != nil {
				t.Fatalf("a profile with the error %v", err)
			}
			var ce *config.Error
			if errors.As(err, &ce) {
				for _, pr := range ce.Problems {
					if pr.File != file || pr.Message == "" {
						t.Fatalf("problem %+v is not in %s or says nothing", pr, file)
					}
				}
			} else if !strings.HasPrefix(err.Error(), file+": ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if problems := p.check(); len(problems) > 0 {
			t.Fatalf("a profile out of its bounds: %v", problems)
		}
		if p.Timeout() <= 0 || p.File != file {
			t.Fatalf("timeout %v, file %q", p.Timeout(), p.File)
		}
	})
}
