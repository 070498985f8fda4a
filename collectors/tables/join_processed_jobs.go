package tables

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/internal/config"
	"github.com/workflow-exporter/workflow-exporter/internal/correlate"
	"github.com/workflow-exporter/workflow-exporter/internal/pgschema"
)

// ProcessedJobJoin serves workflow_processed_job_task_open: rows a worker
// wrote as processed whose external task the engine still holds open.
type ProcessedJobJoin struct {
	tableBase
	cfg     config.ProcessedJobTable
	views   *correlate.Registry
	engines []string
	now     func() time.Time

	known tuples // engine, activity
}

// ProcessedJobJoinOptions configures a ProcessedJobJoin; it joins with
// every engine of Engines, or only Table.Camunda.Engine when that is set.
type ProcessedJobJoinOptions = JoinOptions[config.ProcessedJobTable]

// NewProcessedJobJoin returns the join collector of a processed-job table.
func NewProcessedJobJoin(o ProcessedJobJoinOptions) *ProcessedJobJoin {
	if o.Now == nil {
		o.Now = time.Now
	}
	engines := o.Engines
	if o.Table.Camunda.Engine != "" {
		engines = []string{o.Table.Camunda.Engine}
	}
	return &ProcessedJobJoin{
		tableBase: newTableBase(o.Options, catalog.ProcessedJobTaskOpen),
		cfg:       o.Table, views: o.Views, engines: engines, now: o.Now, known: tuples{},
	}
}

// Name implements poll.Collector.
func (c *ProcessedJobJoin) Name() string { return "processed_jobs_camunda" }

func (c *ProcessedJobJoin) sql() string {
	col := c.cfg.Columns
	if c.cfg.Camunda.ByProcessInstance() {
		return fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), %[2]s::text || '/' || %[1]s::text
FROM %[3]s WHERE %[4]s = $1 AND (%[2]s, %[1]s) IN (SELECT * FROM unnest($2::text[], $3::text[]))
	AND %[5]s < now() - make_interval(secs => $4)`,
			pgschema.QuoteIdent(col.ActivityID), pgschema.QuoteIdent(col.ProcessInstance), pgschema.QuoteTable(c.cfg.Table), pgschema.QuoteIdent(col.Engine), pgschema.QuoteIdent(col.CompletedAt))
	}
	return fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), %[2]s::text
FROM %[3]s WHERE %[4]s = $1 AND %[2]s = ANY($2::text[]) AND %[5]s < now() - make_interval(secs => $3)`,
		pgschema.QuoteIdent(col.ActivityID), pgschema.QuoteIdent(col.JobReference), pgschema.QuoteTable(c.cfg.Table), pgschema.QuoteIdent(col.Engine), pgschema.QuoteIdent(col.CompletedAt))
}

func (c *ProcessedJobJoin) args(l taskLookup) []any {
	if c.cfg.Camunda.ByProcessInstance() {
		return []any{l.engine, l.pis, l.acts, l.minAge}
	}
	return []any{l.engine, l.refs, l.minAge}
}

// Requirements says what the collector needs from its table.
func (c *ProcessedJobJoin) Requirements() pgschema.Requirements {
	col := c.cfg.Columns
	k := c.key + ".columns."
	base := pgschema.BaseName(c.cfg.Table)
	req := pgschema.Requirements{Kind: "processed_jobs", Table: c.cfg.Table}
	req.Columns = []pgschema.Column{{Key: k + "engine", Name: col.Engine}, {Key: k + "activity_id", Name: col.ActivityID}, {Key: k + "completed_at", Name: col.CompletedAt}}
	if c.cfg.Camunda.ByProcessInstance() {
		req.Columns = append(req.Columns, pgschema.Column{Key: k + "process_instance", Name: col.ProcessInstance})
		req.Indexes = []pgschema.Index{{Name: base + "_process_activity_idx", Columns: []string{col.Engine, col.ProcessInstance, col.ActivityID},
			Why: "the Camunda join looks up rows of in-flight tasks by process instance and activity", Query: "camunda_join"}}
		req.Queries = []pgschema.Query{{Name: "camunda_join", SQL: c.sql(), Args: c.args(exampleLookup)}}
	} else {
		req.Columns = append(req.Columns, pgschema.Column{Key: k + "job_reference", Name: col.JobReference})
		// The reference schema's primary key (engine, job_reference) serves this join.
		req.Indexes = []pgschema.Index{{Name: base + "_engine_job_reference_idx", Columns: []string{col.Engine, col.JobReference},
			Why: "the Camunda join looks up rows of in-flight tasks by engine and external task id", Query: "camunda_join", ReferencePrimaryKey: true}}
		req.Queries = []pgschema.Query{{Name: "camunda_join", SQL: c.sql(), Args: c.args(exampleLookup)}}
	}
	return req
}

// Collect implements poll.Collector: it looks the tasks of every engine's
// view up in the table and counts the rows whose task is still open.
func (c *ProcessedJobJoin) Collect(ctx context.Context) ([]prometheus.Metric, error) {
	lookups := make([]taskLookup, 0, len(c.engines))
	for _, e := range c.engines {
		view, ok := c.views.Get(e)
		if !ok {
			// Partial answers would read as "no lost completions" for the
			// missing engine: report none rather than a misleading subset.
			return nil, nil
		}
		lookups = append(lookups, newTaskLookup(e, view, c.cfg.Camunda, c.now()))
	}
	open := map[string]float64{}
	seen := tuples{}
	err := c.read(ctx, c.Requirements(), func(ctx context.Context, tx pgx.Tx, _ map[string]bool) error {
		for _, l := range lookups {
			if len(l.tasks) == 0 {
				continue
			}
			var activity, ref string
			err := each(ctx, tx, "processed-job camunda join", c.sql(), c.args(l), []any{&activity, &ref}, func() error {
				if _, ok := l.tasks[ref]; !ok {
					return nil
				}
				vals := c.limiter.Admit(activity)
				seen.add(l.engine, vals[0])
				open[tupleKey(l.engine, vals[0])]++
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.known.merge(seen)
	var out []prometheus.Metric
	for _, v := range c.known.sorted() {
		out = append(out, c.gauge(catalog.ProcessedJobTaskOpen, open[tupleKey(v...)], c.database, v[0], v[1]))
	}
	return out, nil
}
