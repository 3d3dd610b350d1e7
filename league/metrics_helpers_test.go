package league

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Test helpers that read GET /metrics.

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

// scrapeMetrics serves GET /metrics from h and reads the answer with metricValues.
func scrapeMetrics(h http.Handler) (map[string]float64, error) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		return nil, fmt.Errorf("GET /metrics: content type %q, want the text format", ct)
	}
	return metricValues(rec.Body)
}

// withLabel is series (as metricValues keys it) with the label name="value" added in its
// place: labels are sorted by name.
func withLabel(series, name, value string) string {
	metric, labels, _ := strings.Cut(strings.TrimSuffix(series, "}"), "{")
	var pairs []string
	if labels != "" {
		pairs = strings.Split(labels, ",") // values here hold no commas
	}
	pairs = append(pairs, fmt.Sprintf("%s=%q", name, value))
	slices.Sort(pairs)
	return metric + "{" + strings.Join(pairs, ",") + "}"
}
