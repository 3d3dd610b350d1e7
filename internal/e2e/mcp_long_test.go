//go:build long

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// conformance is the MCP conformance suite, run in server mode. It needs Node 22, which
// npx brings (package node) when the machine's Node is older.
const conformance = "@modelcontextprotocol/conformance@0.1.16"

// Scenarios of the suite, by whether they apply to the gateway. The others need the
// suite's fixtures, tools, resources and prompts that a server under test must ship for
// it, or features the gateway does not offer; their results are logged, not judged.
var (
	applicableScenarios = []string{
		"server-initialize", "ping", "tools-list", "resources-list", // lifecycle and listing
		"server-sse-multiple-streams", "dns-rebinding-protection", // the Streamable HTTP transport
	}
	inapplicableScenarios = map[string]string{
		"logging-set-level":             "the gateway offers no logging capability",
		"completion-complete":           "the gateway offers no completions (method not found)",
		"tools-call-simple-text":        "calls the suite's fixture tool test_simple_text",
		"tools-call-image":              "calls the suite's fixture tool test_image_content",
		"tools-call-audio":              "calls the suite's fixture tool test_audio_content",
		"tools-call-embedded-resource":  "calls the suite's fixture tool test_embedded_resource",
		"tools-call-mixed-content":      "calls the suite's fixture tool test_multiple_content_types",
		"tools-call-with-logging":       "calls the suite's fixture tool test_tool_with_logging",
		"tools-call-error":              "calls the suite's fixture tool test_error_handling",
		"tools-call-with-progress":      "calls the suite's fixture tool test_tool_with_progress",
		"tools-call-sampling":           "calls the suite's fixture tool test_sampling",
		"tools-call-elicitation":        "calls the suite's fixture tool test_elicitation",
		"elicitation-sep1034-defaults":  "calls the suite's fixture tool test_elicitation_sep1034_defaults",
		"elicitation-sep1330-enums":     "calls the suite's fixture tool test_elicitation_sep1330_enums",
		"resources-read-text":           "reads the suite's fixture resource test://static-text",
		"resources-read-binary":         "reads the suite's fixture resource test://static-binary",
		"resources-templates-read":      "reads the suite's fixture resource template",
		"resources-subscribe":           "the gateway's resources do not change: no subscriptions",
		"resources-unsubscribe":         "the gateway's resources do not change: no subscriptions",
		"prompts-list":                  "the gateway offers no prompts",
		"prompts-get-simple":            "gets the suite's fixture prompt test_simple_prompt",
		"prompts-get-with-args":         "gets the suite's fixture prompt test_prompt_with_arguments",
		"prompts-get-embedded-resource": "gets the suite's fixture prompt test_prompt_with_embedded_resource",
		"prompts-get-with-image":        "gets the suite's fixture prompt test_prompt_with_image",
	}
)

// TestLongMCPConformance runs the MCP conformance suite against a live gateway of a
// League Manager that waits for players: every scenario that applies to a server without
// the suite's fixtures must pass.
func TestLongMCPConformance(t *testing.T) {
	npx := interpreter(t, "npx")
	run := startLeague(t, leagueOpts{hold: true})
	gw := startProc(t, "gateway", nil, filepath.Join(binDir, "player"), "mcp", "--addr", "127.0.0.1:0", "--league", run.lm.url, "--log-dir", t.TempDir())
	results := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npx, "-y", "-p", "node@22", "-p", conformance, "--", "conformance", "server", "--url", gw.url, "-o", results)
	out, err := cmd.CombinedOutput()
	// The suite exits non-zero for the scenarios that do not apply; each is judged below.
	t.Logf("conformance suite (%v):\n%s", err, summary(out))
	ran := map[string][]suiteCheck{}
	dirs, _ := filepath.Glob(filepath.Join(results, "server-*", "checks.json"))
	for _, path := range dirs {
		name := strings.TrimPrefix(filepath.Base(filepath.Dir(path)), "server-")
		name = name[:len(name)-len("-2026-01-02T03-04-05-678Z")] // the run's timestamp
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var checks []suiteCheck
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		ran[name] = checks
	}
	for _, name := range applicableScenarios {
		checks, ok := ran[name]
		if !ok || len(checks) == 0 {
			t.Errorf("scenario %s did not run", name)
			continue
		}
		for _, c := range checks {
			if c.Status == "FAILURE" {
				t.Errorf("scenario %s: check %s failed: %s", name, c.ID, c.ErrorMessage)
			}
		}
		t.Logf("scenario %s: passed (%d checks)", name, len(checks))
	}
	for name, checks := range ran {
		if why, ok := inapplicableScenarios[name]; ok {
			t.Logf("scenario %s: does not apply (%s); %d checks, %d failed", name, why, len(checks), failures(checks))
		} else if !slices.Contains(applicableScenarios, name) {
			t.Errorf("scenario %s is new to the suite: decide whether it applies", name)
		}
	}
}

// suiteCheck is one result of checks.json.
type suiteCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

func failures(checks []suiteCheck) int {
	n := 0
	for _, c := range checks {
		if c.Status == "FAILURE" {
			n++
		}
	}
	return n
}

// summary is the suite's summary, the part of its output after "=== SUMMARY ===".
func summary(out []byte) string {
	if _, after, ok := strings.Cut(string(out), "=== SUMMARY ==="); ok {
		return after
	}
	return string(out)
}
