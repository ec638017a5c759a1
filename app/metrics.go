package app

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/healthagents/healthagents/store"
)

// newMetricsRegistry is the binary's registry: one per App (no global
// registry), holding the database pool's statistics and the Go runtime and
// process collectors; the server adds its own.
func newMetricsRegistry(db *store.DB) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewDBStatsCollector(db.SQL(), string(db.Dialect())),
	} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return reg, nil
}
