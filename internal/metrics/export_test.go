package metrics

import "github.com/prometheus/client_golang/prometheus"

// Registry is the run's registry.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }
