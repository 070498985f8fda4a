package engine

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// jobsCollector is the "camunda_jobs" collector of an engine: the async
// jobs (continuations, timers: the JavaDelegate path, not external tasks).
// It fails alone, so an engine whose job endpoints the exporter cannot read
// keeps its external-task metrics.
//
//   - camunda_jobs_retries_exhausted: jobs with no retries left;
//   - camunda_jobs_executable and camunda_job_oldest_executable_age_seconds:
//     the jobs the job executor could run now (the engine's executable
//     filter, active), and since when the oldest of them is due: a job
//     executor that stopped shows here first;
//   - camunda_job_failures_total, camunda_job_successes_total: the job
//     history log read as a stream, like the external-task log
//     (history.go): only the entries new since the previous reading, each
//     counted once by id.
type jobsCollector struct {
	e        *Engine
	descs    catalog.Descs
	tenanted tenantLabels

	exhaustedLimit  *labellimit.Limiter // process_definition_key of camunda_jobs_retries_exhausted
	executableLimit *labellimit.Limiter // ... of camunda_jobs_executable
	failureLimit    *labellimit.Limiter // ... of camunda_job_failures_total
	successLimit    *labellimit.Limiter // ... of camunda_job_successes_total

	st jobsState

	// logCut remembers that the last reading of the job log was cut by
	// max_history_entries, so the warning is logged when that starts.
	logCut bool
}

// jobsState is what a collection commits on success.
type jobsState struct {
	// exhausted and executable remember the keys seen, to report 0 after
	// they clear.
	exhausted, executable map[string]bool
	// failures and successes are the job log counters per key label.
	failures, successes map[string]float64
	cursor              historyCursor
	// failureGroups are the failures by key label and signature
	// (failures.go); by is nil when failure_signatures is off.
	failureGroups failureGroups
	// logCuts counts the collections whose job log reading was cut.
	logCuts float64
	// at is the engine time of the last successful collection.
	at time.Time
}

func (s jobsState) clone() jobsState {
	return jobsState{exhausted: cloneMap(s.exhausted), executable: cloneMap(s.executable),
		failures: cloneMap(s.failures), successes: cloneMap(s.successes),
		cursor: s.cursor, failureGroups: s.failureGroups.clone(), logCuts: s.logCuts, at: s.at}
}

// jobFamilies are the families the jobs collector emits.
var jobFamilies = []string{catalog.CamundaJobsRetriesExhausted, catalog.CamundaJobsExecutable, catalog.CamundaJobOldestExecutableAge,
	catalog.CamundaJobFailures, catalog.CamundaJobSuccesses, catalog.ExporterJobHistoryReadsCut, catalog.CamundaJobFailuresByError}

func newJobsCollector(e *Engine, o Options) *jobsCollector {
	limit := func(metric string) *labellimit.Limiter {
		return labellimit.NewLimiter(o.Folds, metric, e.cfg.LabelValueLimit)
	}
	return &jobsCollector{e: e,
		exhaustedLimit:  limit(catalog.CamundaJobsRetriesExhausted),
		executableLimit: limit(catalog.CamundaJobsExecutable),
		failureLimit:    limit(catalog.CamundaJobFailures),
		successLimit:    limit(catalog.CamundaJobSuccesses),
		descs:           newDescs(e.cfg.TenantLabel, jobFamilies...),
		tenanted:        newTenantLabels(e.cfg.TenantLabel, jobFamilies...),
		st: jobsState{exhausted: map[string]bool{}, executable: map[string]bool{},
			failures: map[string]float64{}, successes: map[string]float64{},
			failureGroups: newFailureGroups(e.cfg.FailureSignatures, e.cfg.FailureSignatureLimit)},
	}
}

// Name implements collectors.Collector.
func (c *jobsCollector) Name() string { return nameJobs }

// Collect implements collectors.Collector.
func (c *jobsCollector) Collect(ctx context.Context, sink *collectors.Sink) ([]prometheus.Metric, error) {
	st := c.st.clone()
	out, cut, err := c.collect(ctx, &st, sink)
	settle(err, c.exhaustedLimit, c.executableLimit, c.failureLimit, c.successLimit)
	if err != nil {
		return nil, err
	}
	if cut && !c.logCut {
		c.e.logger.Warn("camunda: more new job history log entries than max_history_entries in one collection; job failures and successes of this interval are undercounted (raise max_history_entries or collect more often)",
			"engine", c.e.name, "max_history_entries", c.e.cfg.MaxHistoryEntries)
	}
	c.st, c.logCut = st, cut
	return out, nil
}

func (c *jobsCollector) collect(ctx context.Context, st *jobsState, sink *collectors.Sink) (out []prometheus.Metric, cut bool, err error) {
	at, err := c.e.probed()
	if err != nil {
		return nil, false, err
	}
	now := at.Now
	window := time.Duration(c.e.cfg.LateCommitWindow)
	// The engine writes the job log at history level full only: below it
	// the counters are absent, and the log is not read.
	if at.Level.ReadsTaskLog() {
		st.cursor = st.cursor.resume(st.at)
	} else {
		st.cursor = historyCursor{}
	}
	rd, err := c.e.reader.ReadJobs(ctx, reading.JobsRequest{Probe: at, Budget: c.e.cfg.MaxListedTasks,
		Log: st.cursor.request(now, window, c.e.cfg.MaxHistoryEntries)})
	if err != nil {
		return nil, false, err
	}
	engine := c.e.name
	emit := func(name string, t prometheus.ValueType, v float64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetric(c.descs.Get(name), t, v, c.tenanted.of(name, labels)...))
	}
	// The gauges per key: keys beyond label_value_limit fold into "other";
	// keys seen once keep reporting 0.
	for _, g := range []struct {
		name   string
		limit  *labellimit.Limiter
		groups []reading.JobGroup
		seen   map[string]bool
	}{
		{catalog.CamundaJobsRetriesExhausted, c.exhaustedLimit, rd.Exhausted, st.exhausted},
		{catalog.CamundaJobsExecutable, c.executableLimit, rd.Executable, st.executable},
	} {
		counts := admitGroups(g.limit, g.groups)
		for key := range counts {
			g.seen[key] = true
		}
		for _, key := range sortedKeys(g.seen) {
			emit(g.name, prometheus.GaugeValue, float64(counts[key]), engine, key)
		}
	}
	if !rd.NoCreateTime {
		age := 0.0
		if !rd.OldestDue.IsZero() {
			age = max(0, rd.Now.Sub(rd.OldestDue).Seconds())
		}
		emit(catalog.CamundaJobOldestExecutableAge, prometheus.GaugeValue, age, engine)
	}

	st.at = now
	if !at.Level.ReadsTaskLog() {
		emit(catalog.ExporterJobHistoryReadsCut, prometheus.CounterValue, st.logCuts, engine)
		return out, false, nil
	}
	var fresh []reading.JobLogEntry
	var lost bool
	st.cursor, fresh, lost = advanceCursor(st.cursor, rd.Log, rd.LogCut, now, window)
	if lost {
		st.logCuts++
	}
	emit(catalog.ExporterJobHistoryReadsCut, prometheus.CounterValue, st.logCuts, engine)
	// Every key the log names gets both counters, at 0 until something is
	// counted, so the first failure of a key shows in increase().
	for _, e := range rd.Log {
		if _, ok := st.failures[c.failureLimit.Admit(e.Key)[0]]; !ok {
			st.failures[c.failureLimit.Admit(e.Key)[0]] = 0
		}
		if _, ok := st.successes[c.successLimit.Admit(e.Key)[0]]; !ok {
			st.successes[c.successLimit.Admit(e.Key)[0]] = 0
		}
	}
	for _, e := range fresh {
		switch e.Kind {
		case reading.LogFailure:
			key := c.failureLimit.Admit(e.Key)[0]
			st.failures[key]++
			if st.failureGroups.by != nil {
				st.failureGroups.observe(failure{label: key, message: e.Message, worker: e.Host, id: e.JobID, process: e.PI, ts: e.TS})
			}
		case reading.LogSuccess:
			st.successes[c.successLimit.Admit(e.Key)[0]]++
		}
	}
	for _, key := range sortedKeys(st.failures) {
		emit(catalog.CamundaJobFailures, prometheus.CounterValue, st.failures[key], engine, key)
	}
	for _, key := range sortedKeys(st.successes) {
		emit(catalog.CamundaJobSuccesses, prometheus.CounterValue, st.successes[key], engine, key)
	}
	out = append(out, st.failureGroups.metrics(c.descs.Get(catalog.CamundaJobFailuresByError), func(key string) []string {
		return c.tenanted.of(catalog.CamundaJobFailuresByError, []string{engine, key})
	})...)
	if sink != nil && st.failureGroups.by != nil {
		sink.Add(st.failureGroups.list(vocab.KindJobFailureGroups, engine, false, !c.e.cfg.Status.ShowIdentifiers(), rd.Now))
	}
	return out, lost, nil
}

// admitGroups sums the groups by their key as the limiter admits them, new
// keys offered in the limiter's order (groups a reader already folded bypass
// it).
func admitGroups(l *labellimit.Limiter, groups []reading.JobGroup) map[string]int64 {
	var keys []string
	for _, g := range groups {
		if !g.Folded {
			keys = append(keys, g.Key)
		}
	}
	l.OfferValues(keys)
	counts := map[string]int64{}
	for _, g := range groups {
		key := g.Key
		if !g.Folded {
			key = l.Admit(key)[0]
		}
		counts[key] += g.N
	}
	return counts
}
