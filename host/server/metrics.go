package server

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the server's Prometheus collectors. Label values are bounded: harness is a loaded
// plugin's harness or "unknown"/"none", outcome and kind are the fixed sets of this package,
// reason is a stable diagnostic code.
type metrics struct {
	requests *prometheus.CounterVec   // loadout_render_requests_total{harness,outcome}
	duration *prometheus.HistogramVec // loadout_render_duration_seconds{harness}
	denials  *prometheus.CounterVec   // loadout_policy_denials_total{reason}
	plugin   *prometheus.CounterVec   // loadout_plugin_failures_total{kind}
	reloads  *prometheus.CounterVec   // loadout_reloads_total{result}
	inflight prometheus.Gauge         // loadout_inflight_requests
	minted   prometheus.Counter       // loadout_tokens_minted_total
	resolves *prometheus.CounterVec   // loadout_token_resolves_total{result}
	revokes  *prometheus.CounterVec   // loadout_token_revokes_total{result}
	revoked  prometheus.Counter       // loadout_tokens_revoked_total
	revision *prometheus.GaugeVec     // loadout_policy_revision_info{revision}
}

// setRevision makes revision the one loadout_policy_revision_info reports.
func (m *metrics) setRevision(revision string) {
	m.revision.Reset()
	m.revision.WithLabelValues(revision).Set(1)
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loadout_render_requests_total",
			Help: "Render requests answered, by harness and outcome.",
		}, []string{"harness", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "loadout_render_duration_seconds",
			Help:    "Time spent in the render pipeline per request, by harness.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"harness"}),
		denials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loadout_policy_denials_total",
			Help: "Entries the parser or the policy dropped or changed, by diagnostic code.",
		}, []string{"reason"}),
		plugin: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loadout_plugin_failures_total",
			Help: "Renders that failed in the plugin or its plan check, by kind.",
		}, []string{"kind"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loadout_reloads_total",
			Help: "Renderer loads (the first one and every reload), by result.",
		}, []string{"result"}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "loadout_inflight_requests",
			Help: "Render requests being handled, queued ones included.",
		}),
		minted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "loadout_tokens_minted_total",
			Help: "Run tokens stored for a successful render.",
		}),
		resolves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loadout_token_resolves_total",
			Help: "Token resolve requests, by result (ok, not_found, error).",
		}, []string{"result"}),
		revokes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loadout_token_revokes_total",
			Help: "Run revoke requests, by result (ok, error).",
		}, []string{"result"}),
		revoked: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "loadout_tokens_revoked_total",
			Help: "Live tokens deleted by run revokes.",
		}),
		revision: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "loadout_policy_revision_info",
			Help: "1 for the revision of the active policy bundle (\"\" for a policy directory).",
		}, []string{"revision"}),
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.denials, m.plugin, m.reloads, m.inflight, m.minted, m.resolves, m.revokes, m.revoked, m.revision} {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// Make the result label values visible before the first reload.
	m.reloads.WithLabelValues("ok")
	m.reloads.WithLabelValues("error")
	for _, r := range []string{"ok", "not_found", "error"} {
		m.resolves.WithLabelValues(r)
	}
	m.revokes.WithLabelValues("ok")
	m.revokes.WithLabelValues("error")
	return m, nil
}
