package main

import (
	"context"
	"errors"
	"os"
	"testing"
)

func TestRunRefusesBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"unknown flag", []string{"--id", "ref1", "--colour", "red"}},
		{"missing id", nil},
		{"zero report timeout", []string{"--id", "ref1", "--report-timeout-ms", "0"}},
		{"negative drain timeout", []string{"--id", "ref1", "--drain-timeout-ms", "-5"}},
		{"zero move timeout", []string{"--id", "ref1", "--move-timeout-ms", "0"}},
		{"report timeout not a number", []string{"--id", "ref1", "--report-timeout-ms", "5s"}},
		{"zero max matches", []string{"--id", "ref1", "--max-matches", "0"}},
		{"too many max matches", []string{"--id", "ref1", "--max-matches", "65"}},
		{"zero max queued", []string{"--id", "ref1", "--max-queued", "0"}},
		{"too long a queue", []string{"--id", "ref1", "--max-queued", "193"}},
		{"advertise that is not a url", []string{"--id", "ref1", "--advertise", "/mcp"}},
		{"advertise plain http off loopback", []string{"--id", "ref1", "--advertise", "http://10.0.0.2:8001/mcp"}},
		{"plain league url off loopback", []string{"--id", "ref1", "--league", "http://10.0.0.1:8000/mcp"}},
		{"plain server off loopback", []string{"--id", "ref1", "--addr", "10.0.0.2:8001"}},
		{"every interface without advertise", []string{"--id", "ref1", "--addr", ":8001", "--tls-cert", "c.pem", "--tls-key", "k.pem"}},
		{"key without certificate", []string{"--id", "ref1", "--tls-key", "k.pem"}},
		{"unknown log level", []string{"--id", "ref1", "--log-level", "chatty"}},
		{"zero registration deadline", []string{"--id", "ref1", "--register-for", "0s"}},
		{"negative registration deadline", []string{"--id", "ref1", "--register-for", "-1m"}},
		{"registration deadline without a unit", []string{"--id", "ref1", "--register-for", "120"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if code := run(context.Background(), append([]string{"--log-dir", dir}, tt.args...)); code != 2 {
				t.Errorf("run: code %d, want 2", code)
			}
			// Refused before the log file is created.
			entries, err := os.ReadDir(dir)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			if len(entries) != 0 {
				t.Errorf("log folder holds %d entries after bad flags, want none", len(entries))
			}
		})
	}
}
