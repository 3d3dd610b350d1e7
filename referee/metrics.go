package referee

import (
	"net/http"

	"github.com/agentleague/agentleague/protocol"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are a referee's Prometheus metrics, on a registry of its own (never the
// process-wide default), served at GET /metrics.
type metrics struct {
	reg       *prometheus.Registry
	assigned  prometheus.Counter
	completed prometheus.Counter
	// duration is the time from a match's start to its outcome, for completed matches.
	duration prometheus.Histogram
	// moveLatency is the time a player took for each applied move (MoveRecord.ElapsedMS).
	moveLatency prometheus.Histogram
	// timeouts and invalid count the players' violations by kind when a match ends.
	timeouts *prometheus.CounterVec
	invalid  *prometheus.CounterVec
	// moveEvents counts moves by result: sent (acknowledged), failed (given up or
	// abandoned), dropped (beyond maxPendingMoves).
	moveEvents *prometheus.CounterVec
}

func newMetrics() *metrics {
	x := &metrics{
		reg: prometheus.NewRegistry(),
		assigned: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "referee_matches_assigned_total", Help: "Matches accepted from the League Manager.",
		}),
		completed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "referee_matches_completed_total", Help: "Matches played to an outcome.",
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "referee_match_duration_seconds", Help: "Time from a match's start to its outcome.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 14),
		}),
		moveLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "referee_move_latency_seconds", Help: "Time a player took for each applied move.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}),
		timeouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "referee_player_timeouts_total", Help: "Players' missed or unusable answers by kind (timeout, unreachable, refused, malformed_answer, stale_answer, no_join).",
		}, []string{"kind"}),
		invalid: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "referee_invalid_moves_total", Help: "Players' illegal moves by kind (invalid_move, malformed_move).",
		}, []string{"kind"}),
		moveEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "referee_move_events_total", Help: "Moves sent in MOVE_EVENTs by result: sent (acknowledged), failed (not delivered), dropped (beyond the safety bound on pending moves), with_result (pending when play ended, left to the result for a League Manager that announced result_moves).",
		}, []string{"result"}),
	}
	x.reg.MustRegister(x.assigned, x.completed, x.duration, x.moveLatency, x.timeouts, x.invalid, x.moveEvents,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return x
}

// handler serves the registry in the Prometheus text format.
func (x *metrics) handler() http.Handler {
	return promhttp.HandlerFor(x.reg, promhttp.HandlerOpts{})
}

// countViolations counts the violations of a finished match by kind.
func (x *metrics) countViolations(vs []protocol.MatchViolation) {
	for _, v := range vs {
		if v.Kind.IllegalMove() {
			x.invalid.WithLabelValues(string(v.Kind)).Inc()
		} else {
			x.timeouts.WithLabelValues(string(v.Kind)).Inc()
		}
	}
}
