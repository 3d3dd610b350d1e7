// Package promtext reads the Prometheus text exposition format as GET /metrics serves it,
// for tests that check which metrics moved.
package promtext

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
)

// Parse maps every sample line's series (its name and labels as written, e.g.
// `league_matches{status="COMPLETED"}`) to its value. Comments and blank lines are
// skipped; a line without a value is an error.
func Parse(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return nil, fmt.Errorf("metrics line %q has no value", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics line %q: %w", line, err)
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// Scrape serves GET /metrics from h and parses the answer.
func Scrape(h http.Handler) (map[string]float64, error) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		return nil, fmt.Errorf("GET /metrics: content type %q, want the text format", ct)
	}
	return Parse(rec.Body)
}

// WithLabel is series (as Parse keys it) with the label name="value" added in its
// place: client_golang writes the labels of a series sorted by name.
func WithLabel(series, name, value string) string {
	metric, labels, _ := strings.Cut(strings.TrimSuffix(series, "}"), "{")
	var pairs []string
	for rest := labels; rest != ""; {
		// A pair ends at the quote that closes its value: values here hold no quotes.
		k, v, _ := strings.Cut(rest, `="`)
		val, after, _ := strings.Cut(v, `"`)
		pairs = append(pairs, k+`="`+val+`"`)
		rest = strings.TrimPrefix(after, ",")
	}
	pairs = append(pairs, name+`="`+value+`"`)
	slices.Sort(pairs)
	return metric + "{" + strings.Join(pairs, ",") + "}"
}
