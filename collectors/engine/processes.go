package engine

import (
	"context"
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// processesCollector is the "camunda_processes" collector of an engine:
// running process instances per process definition key, from one request
// (GET /process-definition/statistics) or one GROUP BY per collection.
type processesCollector struct {
	e        *Engine
	descs    catalog.Descs
	tenanted tenantLabels
	limit    *labellimit.Limiter // process_definition_key
	// seen are the keys reported so far: each keeps reporting (0 once its
	// definitions are gone).
	seen map[string]bool
}

func newProcessesCollector(e *Engine, o Options) *processesCollector {
	return &processesCollector{e: e,
		limit:    labellimit.NewLimiter(o.Folds, catalog.CamundaProcessInstances, e.cfg.LabelValueLimit),
		descs:    newDescs(e.cfg.TenantLabel, catalog.CamundaProcessInstances),
		tenanted: newTenantLabels(e.cfg.TenantLabel, catalog.CamundaProcessInstances),
		seen:     map[string]bool{},
	}
}

// Name implements collectors.Collector.
func (c *processesCollector) Name() string { return nameProcesses }

// Collect implements collectors.Collector. Every deployed process definition key
// has a series (0 without instances); keys are admitted to the label in
// name order, so both modes fold the same keys beyond label_value_limit.
func (c *processesCollector) Collect(ctx context.Context, _ *collectors.Sink) (_ []prometheus.Metric, err error) {
	defer func() { settle(err, c.limit) }()
	at, err := c.e.probed()
	if err != nil {
		return nil, err
	}
	perKey, err := c.e.reader.ReadProcesses(ctx, reading.ProcessesRequest{Probe: at})
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(perKey))
	for k := range perKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	c.limit.OfferValues(keys)
	counts := map[string]int64{}
	for _, k := range keys {
		counts[c.limit.Admit(k)[0]] += perKey[k]
	}
	seen := cloneMap(c.seen)
	for k := range counts {
		seen[k] = true
	}
	var out []prometheus.Metric
	for _, k := range sortedKeys(seen) {
		out = append(out, prometheus.MustNewConstMetric(c.descs.Get(catalog.CamundaProcessInstances), prometheus.GaugeValue, float64(counts[k]),
			c.tenanted.of(catalog.CamundaProcessInstances, []string{c.e.name, k})...))
	}
	c.seen = seen
	return out, nil
}
