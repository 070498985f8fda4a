package labellimit

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/catalog"
)

type metricsCollector struct{ s *Stats }

func (metricsCollector) Describe(chan<- *prometheus.Desc) {}
func (m metricsCollector) Collect(ch chan<- prometheus.Metric) {
	for _, x := range m.s.Metrics(catalog.Desc(catalog.ExporterLabelValuesFolded)) {
		ch <- x
	}
}
