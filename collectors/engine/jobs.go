package engine

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/internal/labellimit"
)

// jobsCollector is the "camunda_jobs" collector of an engine: the async
// jobs (continuations, timers: the JavaDelegate path, not external tasks).
// It fails alone, so an engine whose job endpoints the exporter cannot read
// keeps its external-task metrics.
type jobsCollector struct {
	e      *Engine
	reader jobsReader
	descs  catalog.Descs

	exhaustedLimit *labellimit.Limiter // process_definition_key of camunda_jobs_retries_exhausted

	st jobsState
}

// jobsState is what a collection commits on success.
type jobsState struct {
	// exhausted remembers the keys seen, to report 0 after they clear.
	exhausted map[string]bool
}

func (s jobsState) clone() jobsState {
	return jobsState{exhausted: cloneMap(s.exhausted)}
}

// jobsReader reads the jobs aspect of an engine (rest.go, enginedb.go).
type jobsReader interface {
	readJobs(ctx context.Context, rq jobsRequest) (*jobsRead, error)
}

// jobsRequest is what a jobs reader needs to know.
type jobsRequest struct {
	// budget bounds the jobs listed per list (max_listed_tasks).
	budget int
}

// jobsRead is what one collection learned of the jobs.
type jobsRead struct {
	// exhausted are the jobs with no retries left.
	exhausted []jobGroup
}

// jobGroup is one process definition key's jobs, in the order their labels
// are to be admitted; folded: the reader already put them under "other"
// (a REST list cut by max_listed_tasks), so they bypass the label limiter.
type jobGroup struct {
	key    string
	n      int64
	folded bool
}

func newJobsCollector(e *Engine, o Options) *jobsCollector {
	c := &jobsCollector{e: e,
		exhaustedLimit: labellimit.NewLimiter(o.Folds, catalog.CamundaJobsRetriesExhausted, e.cfg.LabelValueLimit),
		descs:          catalog.NewDescs(catalog.CamundaJobsRetriesExhausted),
		st:             jobsState{exhausted: map[string]bool{}},
	}
	if e.db != nil {
		c.reader = e.db
	} else {
		c.reader = e.rest
	}
	return c
}

// Name implements poll.Collector.
func (c *jobsCollector) Name() string { return nameJobs }

// Collect implements poll.Collector.
func (c *jobsCollector) Collect(ctx context.Context) ([]prometheus.Metric, error) {
	st := c.st.clone()
	out, err := c.collect(ctx, &st)
	settle(err, c.exhaustedLimit)
	if err != nil {
		return nil, err
	}
	c.st = st
	return out, nil
}

func (c *jobsCollector) collect(ctx context.Context, st *jobsState) ([]prometheus.Metric, error) {
	if _, err := c.e.probed(); err != nil {
		return nil, err
	}
	rd, err := c.reader.readJobs(ctx, jobsRequest{budget: c.e.cfg.MaxListedTasks})
	if err != nil {
		return nil, err
	}
	var out []prometheus.Metric
	gauge := func(name string, v float64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetric(c.descs.Get(name), prometheus.GaugeValue, v, labels...))
	}
	// camunda_jobs_retries_exhausted: keys beyond label_value_limit fold
	// into "other"; keys seen once keep reporting 0.
	counts := admitGroups(c.exhaustedLimit, rd.exhausted)
	for key := range counts {
		st.exhausted[key] = true
	}
	for _, key := range sortedKeys(st.exhausted) {
		gauge(catalog.CamundaJobsRetriesExhausted, float64(counts[key]), c.e.name, key)
	}
	return out, nil
}

// admitGroups sums the groups by their key as the limiter admits them, in
// the reader's order (groups a reader already folded bypass it).
func admitGroups(l *labellimit.Limiter, groups []jobGroup) map[string]int64 {
	counts := map[string]int64{}
	for _, g := range groups {
		key := g.key
		if !g.folded {
			key = l.Admit(key)[0]
		}
		counts[key] += g.n
	}
	return counts
}
