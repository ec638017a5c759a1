package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/ratelimit"
)

// WithMetrics registers the server's Prometheus metrics in reg and serves
// reg at GET /metrics (text exposition format). Labels are route templates
// ("POST /api/v1/patients/{patient_id}"), statuses, rate-limit classes and
// gate names: never a path's values, so no patient id reaches a label.
// Without it there is no /metrics and nothing is counted.
func WithMetrics(reg *prometheus.Registry) Option {
	return func(o *options) error { o.metrics = reg; return nil }
}

// metrics are the server's own instruments; nil when WithMetrics is not
// set (every method is then a no-op).
type metrics struct {
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	rateLimited *prometheus.CounterVec
	shed        *prometheus.CounterVec
	queueWait   *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry, gates map[gateClass]*admission) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "healthagents_http_requests_total", Help: "HTTP requests answered, by route template and status.",
		}, []string{"route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "healthagents_http_request_duration_seconds", Help: "Time to answer, by route template and status.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "status"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "healthagents_rate_limited_total", Help: "Requests refused with 429, by rate-limit class.",
		}, []string{"class"}),
		shed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "healthagents_admission_shed_total", Help: "Requests refused with 503 by an admission gate, by gate.",
		}, []string{"gate"}),
		queueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "healthagents_admission_wait_seconds", Help: "Time a heavy request waited in an admission queue (admitted or shed), by gate.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"gate"}),
	}
	cs := []prometheus.Collector{m.requests, m.duration, m.rateLimited, m.shed, m.queueWait}
	for class, g := range gates {
		cs = append(cs,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "healthagents_admission_queue_depth", Help: "Requests waiting for a slot of an admission gate.",
				ConstLabels: prometheus.Labels{"gate": string(class)},
			}, func() float64 { return float64(g.waiting.Load()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "healthagents_admission_in_flight", Help: "Requests holding a slot of an admission gate.",
				ConstLabels: prometheus.Labels{"gate": string(class)},
			}, func() float64 { return float64(len(g.slots)) }))
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// instrument counts and times every answer of rt.
func (m *metrics) instrument(rt route, next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	label := rt.Method + " " + rt.Path
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &responseRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		code := strconv.Itoa(status)
		m.duration.WithLabelValues(label, code).Observe(time.Since(start).Seconds())
		m.requests.WithLabelValues(label, code).Inc()
	})
}

func (m *metrics) limited(class ratelimit.Class) {
	if m != nil {
		m.rateLimited.WithLabelValues(string(class)).Inc()
	}
}

func (m *metrics) shedBy(gate gateClass) {
	if m != nil {
		m.shed.WithLabelValues(string(gate)).Inc()
	}
}

func (m *metrics) waited(gate gateClass, d time.Duration) {
	if m != nil {
		m.queueWait.WithLabelValues(string(gate)).Observe(d.Seconds())
	}
}

// metricsRoutes serves GET /metrics when WithMetrics is set.
func (s *srv) metricsRoutes() []route {
	if s.opts.metrics == nil {
		return nil
	}
	return []route{{Method: "GET", Path: "/metrics", Class: ratelimit.ClassHealth, Hidden: true, // operational, not part of the API document
		Handler: promhttp.HandlerFor(s.opts.metrics, promhttp.HandlerOpts{}), Doc: openapi.Operation{
			OperationID: "getMetrics", Tags: []string{"service"}, Summary: "Prometheus metrics",
			Description: "The service's metrics in the Prometheus text format: requests and latency by route template and status, rate-limit refusals by class, admission gate depth and refusals, database pool, Go runtime. Labels never hold request values.",
			Responses:   map[int]openapi.Response{http.StatusOK: {Description: "Metrics (text/plain; version=0.0.4)."}}, Auth: openapi.AuthNone,
		}}}
}
