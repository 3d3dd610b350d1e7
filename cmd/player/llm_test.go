package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

// cmdTestKey is a distinctive fake API key: neither stderr nor the log may show it.
const cmdTestKey = "sk-cmd-test-4b1d-do-not-print"

func writeProfile(t *testing.T, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.yaml")
	body := "name: Test Agent\npersonality: calm\nmodel_name: m\nsystem_prompt: Play well.\nbase_url: http://127.0.0.1:1/v1\n" + extra
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLLMProfileAtStart(t *testing.T) {
	refusing := startLeague(t, protocol.ReasonRegistrationClosed)
	withKey := writeProfile(t, "api_key_env: AL_CMD_TEST_KEY\n")
	tests := []struct {
		name       string
		args       []string
		env        string // the key, or "" to leave the variable unset
		wantCode   int
		wantStderr []string
	}{
		{"no profile", []string{"--strategy", "llm"}, "", 2, []string{"strategy llm needs --profile"}},
		{"missing file", []string{"--strategy", "llm", "--profile", "no/such.yaml"}, "", 2, []string{"no/such.yaml"}},
		{"bad profile", []string{"--strategy", "llm", "--profile", writeProfile(t, "temperature: 3\nmax_tokens: 0\n")}, "", 2,
			[]string{"agent.yaml: temperature: must be 0..2, got 3\n", "agent.yaml: max_tokens: must be 1..32768, got 0\n"}},
		{"key variable unset", []string{"--strategy", "llm", "--profile", withKey}, "", 2,
			[]string{"api_key_env: environment variable AL_CMD_TEST_KEY is not set"}},
		{"key set, registration refused", []string{"--strategy", "llm", "--profile", withKey, "--league", refusing.url}, cmdTestKey, 1,
			[]string{string(protocol.ReasonRegistrationClosed)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env != "" {
				t.Setenv("AL_CMD_TEST_KEY", tt.env)
			}
			logDir := t.TempDir()
			var stderr bytes.Buffer
			// A hang guard: each case ends before registering, or at the first refusal.
			args := append([]string{"--id", "p01", "--log-dir", logDir, "--register-for", "1m"}, tt.args...)
			code := run(context.Background(), args, io.Discard, &stderr)
			if code != tt.wantCode {
				t.Errorf("code %d, want %d; stderr:\n%s", code, tt.wantCode, stderr.String())
			}
			for _, want := range tt.wantStderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
			logFile, _ := os.ReadFile(filepath.Join(logDir, "player_p01.log"))
			if strings.Contains(stderr.String()+string(logFile), cmdTestKey) {
				t.Errorf("the key is in stderr or the log")
			}
			loaded := strings.Contains(string(logFile), `"message":"llm agent profile loaded"`) && strings.Contains(string(logFile), `"api_key_env":"AL_CMD_TEST_KEY"`)
			if tt.wantCode == 1 && !loaded {
				t.Errorf("the log does not say which profile was loaded:\n%s", logFile)
			}
		})
	}
}
