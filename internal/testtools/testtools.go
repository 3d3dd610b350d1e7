// Package testtools holds what the tests of several packages share: running Debian's
// chess tools (pgn-extract, stockfish), reading GET /metrics with expfmt and reading
// the table league bench prints. Only tests import it; no binary links it.
package testtools

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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

// pgnSummary is the last line of pgn-extract's report.
var pgnSummary = regexp.MustCompile(`^(\d+) games? matched out of (\d+)\.$`)

// DebianTool is the executable name to run: the one on PATH, else where Debian's package
// installs it (/usr/games, a directory root's PATH lacks). make deps installs them.
func DebianTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := filepath.Join("/usr/games", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s is not installed (make deps installs it: apt-get install -y %s): %w", name, name, err)
	}
	return p, nil
}

// CheckPGN runs Debian's pgn-extract -r (report errors, write no games) over file and
// returns how many games it read: a file it reads without a diagnostic is one chess tools
// accept. Any diagnostic is an error quoting the whole report. A clean report is a
// "Processing" line, one line per game and the summary, so every other line, and a game
// that was read but not matched, is a diagnostic.
func CheckPGN(file string) (int, error) {
	bin, err := DebianTool("pgn-extract")
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

// MetricValues reads the Prometheus text format, as GET /metrics serves it, with expfmt
// into the value of every series, keyed as client_golang writes it: the name, then the
// labels sorted by name, e.g. league_matches{league_id="l1",status="COMPLETED"}; a
// histogram as its _bucket, _sum and _count series.
func MetricValues(r io.Reader) (map[string]float64, error) {
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

// ScrapeMetrics serves GET /metrics from h and reads the answer with MetricValues.
func ScrapeMetrics(h http.Handler) (map[string]float64, error) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		return nil, fmt.Errorf("GET /metrics: content type %q, want the text format", ct)
	}
	return MetricValues(rec.Body)
}

// WithLabel is series (as MetricValues keys it) with the label name="value" added in its
// place: labels are sorted by name.
func WithLabel(series, name, value string) string {
	metric, labels, _ := strings.Cut(strings.TrimSuffix(series, "}"), "{")
	var pairs []string
	if labels != "" {
		pairs = strings.Split(labels, ",") // values here hold no commas
	}
	pairs = append(pairs, fmt.Sprintf("%s=%q", name, value))
	slices.Sort(pairs)
	return metric + "{" + strings.Join(pairs, ",") + "}"
}

// BenchRows maps each row of a league bench table to its figures: the label is what
// comes before the first two spaces.
func BenchRows(table string) map[string]string {
	rows := map[string]string{}
	for _, line := range strings.Split(table, "\n") {
		if label, figures, ok := strings.Cut(line, "  "); ok && label != "" {
			rows[label] = strings.TrimSpace(figures)
		}
	}
	return rows
}
