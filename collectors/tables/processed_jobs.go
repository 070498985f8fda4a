package tables

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/blocks/watermark"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// ProcessedJobs watches the processed-job table (docs/design.md, "The
// processed-job table"): one row
// per Camunda job or external task a worker finished. It counts rows as
// they are written, each once, from the recent completed_at window.
type ProcessedJobs struct {
	tableBase
	cfg config.ProcessedJobTable

	window *watermark.Window
	known  tuples // engine, activity_id, status
	total  map[string]float64
}

// ProcessedJobsOptions configures a ProcessedJobs collector.
type ProcessedJobsOptions = Options[config.ProcessedJobTable]

// NewProcessedJobs returns a processed-jobs collector.
func NewProcessedJobs(o ProcessedJobsOptions) *ProcessedJobs {
	c := &ProcessedJobs{
		tableBase: newTableBase(o, catalog.ProcessedJobs),
		cfg:       o.Table,
		window:    watermark.New(o.LateCommitWindow),
		known:     tuples{},
		total:     map[string]float64{},
	}
	c.keep(c.Name(), tableParts{windows: []*watermark.Window{c.window}, kept: []keptTuples{{set: c.known}}, counters: []map[string]float64{c.total}})
	return c
}

// sqlRows reads the rows completed in the window ($1) that no earlier poll
// read (newVersions, $2).
func (c *ProcessedJobs) sqlRows(versioned bool) string {
	col := c.cfg.Columns
	return fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), %[2]s::text, COALESCE(%[3]s::text, ''), COALESCE(%[4]s::text, ''), %[5]s::timestamptz
FROM %[6]s WHERE %[5]s > $1::timestamptz AND %[7]s`, pgschema.QuoteIdent(col.Engine), pgschema.QuoteIdent(col.JobReference), pgschema.QuoteIdent(col.ActivityID),
		pgschema.QuoteIdent(col.Status), pgschema.QuoteIdent(col.CompletedAt), pgschema.QuoteTable(c.cfg.Table), newVersions("$2", versioned))
}

// Name implements collectors.Collector.
func (c *ProcessedJobs) Name() string { return "processed_jobs" }

// StateKey implements collectors.Stateful.
func (c *ProcessedJobs) StateKey() string {
	col := c.cfg.Columns
	return c.stateKey("processed_jobs", c.cfg.Table, col.Engine, col.JobReference, col.CompletedAt)
}

// Requirements says what the collector needs from its table.
func (c *ProcessedJobs) Requirements() pgschema.Requirements {
	col := c.cfg.Columns
	return pgschema.Requirements{
		Kind:  "processed_jobs",
		Table: c.cfg.Table,
		Columns: c.columns(
			"engine", col.Engine, "job_reference", col.JobReference, "activity_id", col.ActivityID,
			"status", col.Status, "completed_at", col.CompletedAt,
		),
		Indexes: []pgschema.Index{
			{Name: pgschema.BaseName(c.cfg.Table) + "_completed_at_idx", Columns: []string{col.CompletedAt},
				Why: "processed_jobs_total reads the last late_commit_window of completions", Query: "written"},
		},
		Queries: []pgschema.Query{recentQuery("written", c.sqlRows(true))},
	}
}

// Collect implements collectors.Collector.
func (c *ProcessedJobs) Collect(ctx context.Context, _ *collectors.Sink) ([]prometheus.Metric, error) {
	newRows := map[string]float64{}
	seen := tuples{}
	err := c.poll(ctx, c.cfg.Table, []*watermark.Window{c.window}, func(ctx context.Context, tx pgx.Tx, at pollAt) error {
		if _, err := c.check(ctx, tx, c.Requirements()); err != nil {
			return err
		}
		var engine, ref, activity, status string
		var ts time.Time
		return each(ctx, tx, "processed-job query", c.sqlRows(at.versioned), []any{c.window.Lower(at.now), at.since(c.window)}, []any{&engine, &ref, &activity, &status, &ts}, func() error {
			vals := c.limiter.Admit(engine, activity, status)
			seen.add(vals...)
			if c.window.Observe(ts, engine, ref) {
				newRows[tupleKey(vals...)]++
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	c.known.merge(seen)
	addCounts(c.total, newRows)
	var out []prometheus.Metric
	for _, vals := range c.known.sorted() {
		out = append(out, c.counter(catalog.ProcessedJobs, c.total[tupleKey(vals...)], c.database, vals[0], vals[1], vals[2]))
	}
	return append(out, c.skippedMetric()), nil
}
