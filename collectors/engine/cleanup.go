package engine

import (
	"context"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// historyCollector is the "camunda_history" collector of an engine: history
// growth, the most common operational failure of Camunda 7 (cleanup off,
// outside its window, failing, or falling behind).
//
//   - camunda_history_cleanable_process_instances: finished instances past
//     their time to live, still in the history (the engine's cleanable
//     process instance report); what cleanup has yet to remove;
//   - camunda_history_finished_process_instances and
//     camunda_history_process_instances_without_ttl: the history, and the
//     part of it cleanup never removes;
//   - camunda_history_cleanup_enabled, camunda_history_cleanup_jobs,
//     camunda_history_cleanup_jobs_failing: the cleanup itself;
//   - camunda_engine_table_bytes (engine-database mode): what it weighs.
//
// The report's cost grows with the history (it counts every finished
// instance), so the collector reads at most once per
// history_cleanup.interval and serves its last reading in between; in
// engine-database mode the count runs under its own statement timeout. It
// fails alone.
type historyCollector struct {
	e        *Engine
	descs    catalog.Descs
	tenanted tenantLabels
	limit    *labellimit.Limiter // process_definition_key
	// seen are the keys reported so far: each keeps reporting (0 once its
	// instances are gone).
	seen map[string]bool
	// last is when the last reading succeeded (the exporter's clock), out
	// what it emitted.
	last time.Time
	out  []prometheus.Metric
	// level is the history level the last reading was made at: a reading
	// at another level is not reused (levels.go).
	level capability.Level
}

// historyFamilies are the families the history collector emits.
var historyFamilies = []string{catalog.CamundaHistoryCleanable, catalog.CamundaHistoryFinished, catalog.CamundaHistoryWithoutTTL,
	catalog.CamundaHistoryCleanupEnabled, catalog.CamundaHistoryCleanupJobs, catalog.CamundaHistoryCleanupJobsFailing,
	catalog.CamundaEngineTableBytes}

func newHistoryCollector(e *Engine, o Options) *historyCollector {
	return &historyCollector{e: e,
		limit:    labellimit.NewLimiter(o.Folds, catalog.CamundaHistoryCleanable, e.cfg.LabelValueLimit),
		descs:    newDescs(e.cfg.TenantLabel, historyFamilies...),
		tenanted: newTenantLabels(e.cfg.TenantLabel, historyFamilies...),
		seen:     map[string]bool{},
	}
}

// Name implements collectors.Collector.
func (c *historyCollector) Name() string { return nameHistory }

// Collect implements collectors.Collector.
func (c *historyCollector) Collect(ctx context.Context, _ *collectors.Sink) (_ []prometheus.Metric, err error) {
	at, err := c.e.probed()
	if err != nil {
		return nil, err
	}
	if !c.last.IsZero() && time.Since(c.last) < time.Duration(c.e.cfg.HistoryCleanup.Interval) && at.Level == c.level {
		return c.out, nil
	}
	defer func() { settle(err, c.limit) }()
	rd, err := c.e.reader.ReadCleanup(ctx, reading.CleanupRequest{Probe: at, Budget: c.e.cfg.MaxListedTasks,
		StatementTimeout: time.Duration(c.e.cfg.HistoryCleanup.StatementTimeout)})
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(rd.PerKey))
	for k := range rd.PerKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	c.limit.OfferValues(keys)
	counts := map[string]reading.FinishedCounts{}
	for _, k := range keys {
		l := c.limit.Admit(k)[0]
		n, add := counts[l], rd.PerKey[k]
		n.Finished += add.Finished
		n.Cleanable += add.Cleanable
		n.WithoutTTL += add.WithoutTTL
		counts[l] = n
	}
	seen := cloneMap(c.seen)
	for k := range counts {
		seen[k] = true
	}
	engine := c.e.name
	var out []prometheus.Metric
	gauge := func(name string, v float64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetric(c.descs.Get(name), prometheus.GaugeValue, v, c.tenanted.of(name, labels)...))
	}
	// Finished process instances are history the engine writes from
	// level activity on: at none (and unknown) there are none to count,
	// and the series are absent, never 0 (levels.go).
	for _, k := range sortedKeys(seen) {
		if !at.Level.ReadsProcessHistory() {
			break
		}
		n := counts[k]
		gauge(catalog.CamundaHistoryCleanable, float64(n.Cleanable), engine, k)
		gauge(catalog.CamundaHistoryFinished, float64(n.Finished), engine, k)
		gauge(catalog.CamundaHistoryWithoutTTL, float64(n.WithoutTTL), engine, k)
	}
	if rd.Enabled != nil {
		gauge(catalog.CamundaHistoryCleanupEnabled, boolValue(*rd.Enabled), engine)
	}
	gauge(catalog.CamundaHistoryCleanupJobs, float64(rd.Jobs), engine)
	gauge(catalog.CamundaHistoryCleanupJobsFailing, float64(rd.Failing), engine)
	for _, t := range sortedKeys(rd.TableBytes) {
		gauge(catalog.CamundaEngineTableBytes, float64(rd.TableBytes[t]), engine, t)
	}
	c.seen, c.out, c.last, c.level = seen, out, time.Now(), at.Level
	return out, nil
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
