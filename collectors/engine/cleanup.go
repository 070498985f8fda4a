package engine

import (
	"context"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
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
	level historyLevel
}

// cleanupRequest is what the history reading needs.
type cleanupRequest struct {
	probeRead
	// budget bounds the report's entries read over REST (max_listed_tasks).
	budget int
	// statementTimeout bounds the engine-database count.
	statementTimeout time.Duration
}

// cleanupRead is what one reading learned.
type cleanupRead struct {
	// perKey are the report's counts per process definition key (all
	// versions).
	perKey map[string]finishedCounts
	// enabled is the engine's cleanup switch; nil when it does not say.
	enabled *bool
	// jobs and failing count the cleanup's jobs and those failing.
	jobs, failing int
	// tableBytes are the largest engine tables' sizes (engine-database
	// mode; nil over REST).
	tableBytes map[string]int64
}

// finishedCounts are one key's finished instances: all, cleanable now, and
// those of versions without a time to live.
type finishedCounts struct {
	finished, cleanable, withoutTTL int64
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
	if !c.last.IsZero() && time.Since(c.last) < time.Duration(c.e.cfg.HistoryCleanup.Interval) && at.level == c.level {
		return c.out, nil
	}
	defer func() { settle(err, c.limit) }()
	rd, err := c.e.reader.readCleanup(ctx, cleanupRequest{probeRead: at, budget: c.e.cfg.MaxListedTasks,
		statementTimeout: time.Duration(c.e.cfg.HistoryCleanup.StatementTimeout)})
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(rd.perKey))
	for k := range rd.perKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	c.limit.OfferValues(keys)
	counts := map[string]finishedCounts{}
	for _, k := range keys {
		l := c.limit.Admit(k)[0]
		n, add := counts[l], rd.perKey[k]
		n.finished += add.finished
		n.cleanable += add.cleanable
		n.withoutTTL += add.withoutTTL
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
		if !at.level.readsProcessHistory() {
			break
		}
		n := counts[k]
		gauge(catalog.CamundaHistoryCleanable, float64(n.cleanable), engine, k)
		gauge(catalog.CamundaHistoryFinished, float64(n.finished), engine, k)
		gauge(catalog.CamundaHistoryWithoutTTL, float64(n.withoutTTL), engine, k)
	}
	if rd.enabled != nil {
		gauge(catalog.CamundaHistoryCleanupEnabled, boolValue(*rd.enabled), engine)
	}
	gauge(catalog.CamundaHistoryCleanupJobs, float64(rd.jobs), engine)
	gauge(catalog.CamundaHistoryCleanupJobsFailing, float64(rd.failing), engine)
	for _, t := range sortedKeys(rd.tableBytes) {
		gauge(catalog.CamundaEngineTableBytes, float64(rd.tableBytes[t]), engine, t)
	}
	c.seen, c.out, c.last, c.level = seen, out, time.Now(), at.level
	return out, nil
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
