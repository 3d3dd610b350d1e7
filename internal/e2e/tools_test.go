package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Test helpers: Debian's chess tools, and GET /metrics read.

// debianTool is the executable name to run: the one on PATH, else where Debian's package
// installs it (/usr/games, a directory root's PATH lacks). make deps installs them.
func debianTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := filepath.Join("/usr/games", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s is not installed (make deps installs it: apt-get install -y %s): %w", name, name, err)
	}
	return p, nil
}

// pgnSummary is the last line of pgn-extract's report.
var pgnSummary = regexp.MustCompile(`^(\d+) games? matched out of (\d+)\.$`)

// checkPGN runs Debian's pgn-extract -r (report errors, write no games) over file and
// returns how many games it read: a file it reads without a diagnostic is one chess tools
// accept. Any diagnostic is an error quoting the whole report. A clean report is a
// "Processing" line, one line per game and the summary, so every other line, and a game
// that was read but not matched, is a diagnostic.
func checkPGN(file string) (int, error) {
	bin, err := debianTool("pgn-extract")
	if err != nil {
		return 0, err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "-r", file)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("pgn-extract: %w: %s", err, stderr.String())
	}
	report := strings.TrimRight(stderr.String(), "\n")
	lines := strings.Split(report, "\n")
	if stdout.Len() > 0 || len(lines) < 2 || lines[0] != "Processing "+file {
		return 0, fmt.Errorf("pgn-extract reports:\n%s%s", stdout.String(), report)
	}
	m := pgnSummary.FindStringSubmatch(lines[len(lines)-1])
	if m == nil || m[1] != m[2] || m[2] != strconv.Itoa(len(lines)-2) {
		return 0, errors.New("pgn-extract reports:\n" + report)
	}
	return len(lines) - 2, nil
}

// metricValues reads the Prometheus text format, as GET /metrics serves it, with expfmt
// into the value of every series, keyed as client_golang writes it: the name, then the
// labels sorted by name, e.g. league_matches{league_id="l1",status="COMPLETED"}; a
// histogram as its _bucket, _sum and _count series.
func metricValues(r io.Reader) (map[string]float64, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, f := range families {
		samples, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{}, f)
		if err != nil {
			return nil, err
		}
		for _, s := range samples {
			var labels []string
			for name, value := range s.Metric {
				if name != model.MetricNameLabel {
					labels = append(labels, fmt.Sprintf("%s=%q", name, value))
				}
			}
			slices.Sort(labels)
			series := string(s.Metric[model.MetricNameLabel])
			if len(labels) > 0 {
				series += "{" + strings.Join(labels, ",") + "}"
			}
			out[series] = float64(s.Value)
		}
	}
	return out, nil
}
