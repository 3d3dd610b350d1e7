package league

import (
	"net/http"

	"github.com/agentleague/agentleague/league/store"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the League Manager's Prometheus metrics, on a registry of its own (never
// the process-wide default), served at GET /metrics. Counters and the histogram move
// where things happen; the gauges are read from the league's state at each scrape.
// Every league metric carries a league_id label, so that the metrics of many leagues
// served by one process (league serve --leagues) can be gathered together; the Go and
// process metrics, one set per process, are on a registry apart.
type metrics struct {
	reg      *prometheus.Registry
	proc     *prometheus.Registry
	leagueID string
	// registrations by kind (referee, player) and result (accepted, refused).
	registrations *prometheus.CounterVec
	// resultSeconds is the time from a MATCH_RESULT_REPORT's arrival to its answer, for
	// the results stored.
	resultSeconds prometheus.Histogram
	// timeouts by kind: lease (a referee's lease ran out), result_report (a result late
	// after play ended: a reminder), match_deadline (a match failed for want of progress
	// or of its result), assignment (an assignment could not be delivered).
	timeouts *prometheus.CounterVec
	// violations by kind: the players' kinds of game_metadata.violations, and
	// referee_undelivered for a referee that could not be reached with an assignment.
	violations *prometheus.CounterVec
	standings  prometheus.Counter
	// moveEvents by result (accepted, refused).
	moveEvents *prometheus.CounterVec
}

func newMetrics(m *Manager) *metrics {
	x := &metrics{
		reg:  prometheus.NewRegistry(),
		proc: prometheus.NewRegistry(),
		registrations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "league_registrations_total", Help: "Registration requests by agent kind and result (accepted or refused).",
		}, []string{"kind", "result"}),
		resultSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "league_result_processing_seconds", Help: "Time to check, store and acknowledge a match result.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}),
		timeouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "league_timeouts_total", Help: "League-level timeouts by kind (lease, result_report, match_deadline, assignment).",
		}, []string{"kind"}),
		violations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "league_violations_total", Help: "Violations counted against agents, by kind.",
		}, []string{"kind"}),
		standings: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "league_standings_queries_total", Help: "QUERY_STANDINGS requests received.",
		}),
		moveEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "league_move_events_total", Help: "MOVE_EVENT messages by result (accepted or refused).",
		}, []string{"result"}),
	}
	x.leagueID = m.leagueID
	x.labelled().MustRegister(
		x.registrations, x.resultSeconds, x.timeouts, x.violations, x.standings, x.moveEvents, stateCollector{m})
	x.proc.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return x
}

// labelled registers a league's metrics, each with its league_id label.
func (x *metrics) labelled() prometheus.Registerer {
	return prometheus.WrapRegistererWith(prometheus.Labels{"league_id": x.leagueID}, x.reg)
}

// handler serves the league's and the process's metrics in the Prometheus text format.
func (x *metrics) handler() http.Handler {
	return promhttp.HandlerFor(prometheus.Gatherers{x.reg, x.proc}, promhttp.HandlerOpts{})
}

// Metrics gathers the league's own metrics, each labelled with its league_id, without
// the Go and process metrics that GET /metrics adds.
func (m *Manager) Metrics() prometheus.Gatherer { return m.metrics.reg }

// stateCollector reads the gauges from the Manager's state at scrape time, under its
// lock, so they can never drift from it.
type stateCollector struct{ m *Manager }

var (
	descMatches = prometheus.NewDesc("league_matches", "Matches by status.", []string{"status"}, nil)
	descRound   = prometheus.NewDesc("league_current_round", "Number of the active round (the last one once the league is completed; 0 before).", nil, nil)
	descActive  = prometheus.NewDesc("league_agents_active", "Registered agents that may play or referee (not suspended, shut down or, for referees, lost), by kind.", []string{"kind"}, nil)
	descSusp    = prometheus.NewDesc("league_agents_suspended", "Suspended agents by kind.", []string{"kind"}, nil)
	descWrites  = prometheus.NewDesc("league_storage_write_failures_total", "Writes that failed (a full disk, a failed write or fsync), by store: database transactions rolled back, audit log appends cut back.", []string{"store"}, nil)
	descDegr    = prometheus.NewDesc("league_storage_degraded", "1 while the database or the audit log fails to take writes, else 0.", nil, nil)
)

// Describe implements prometheus.Collector.
func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descMatches, descRound, descActive, descSusp, descWrites, descDegr} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.m
	m.e.mu.Lock()
	defer m.e.mu.Unlock()
	e := m.e
	for status, n := range e.fx.counts() {
		ch <- prometheus.MustNewConstMetric(descMatches, prometheus.GaugeValue, float64(n), status)
	}
	ch <- prometheus.MustNewConstMetric(descRound, prometheus.GaugeValue, float64(e.fx.activeNumber()))
	ch <- prometheus.MustNewConstMetric(descWrites, prometheus.CounterValue, float64(e.store.Failures()), "database")
	if lg, ok := e.opt.Audit.(auditHealth); ok {
		ch <- prometheus.MustNewConstMetric(descWrites, prometheus.CounterValue, float64(lg.Failures()), "audit_log")
	}
	degraded := 0.0
	if !e.outage.since.IsZero() {
		degraded = 1
	}
	ch <- prometheus.MustNewConstMetric(descDegr, prometheus.GaugeValue, degraded)
	for kind, group := range map[string]map[string]*agent{store.KindReferee: e.agents.referees, store.KindPlayer: e.agents.players} {
		active, suspended := 0, 0
		for _, a := range group {
			switch {
			case a.status == AgentSuspended:
				suspended++
			case a.status != AgentShutdown && !a.lost:
				active++
			}
		}
		ch <- prometheus.MustNewConstMetric(descActive, prometheus.GaugeValue, float64(active), kind)
		ch <- prometheus.MustNewConstMetric(descSusp, prometheus.GaugeValue, float64(suspended), kind)
	}
}
