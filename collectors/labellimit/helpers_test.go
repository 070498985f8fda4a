package labellimit

import "github.com/prometheus/client_golang/prometheus"

type metricsCollector struct{ s *Stats }

func (metricsCollector) Describe(chan<- *prometheus.Desc) {}
func (m metricsCollector) Collect(ch chan<- prometheus.Metric) {
	for _, x := range m.s.Metrics() {
		ch <- x
	}
}
