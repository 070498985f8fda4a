package collectors

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

// The joins of this file see what neither side sees alone (seed: "the side
// effect happened, the worker died before completing the Camunda task").
// Each collection takes the engine's latest view of in-flight tasks (locked,
// in retry backoff, or with a lapsed lock; bounded by the Camunda
// collector's max_listed_tasks) and looks exactly those tasks up in the
// table with `= ANY($1)` on an indexed column. It never scans either side.
// While the engine's view is missing (engine down), the join's series are
// absent: "unknown", never "all clear". That is not this collector's
// failure: the engine's own camunda_up and WorkflowExporterSourceDown say
// it, so the join reports no series and no error (one alert per outage,
// not one per database that joins with the engine).

// IdempotencyJoin serves workflow_idempotency_completed_task_open and
// workflow_idempotency_in_doubt.
type IdempotencyJoin struct {
	tableBase
	cfg   config.IdempotencyTable
	views *correlate.Registry
	now   func() time.Time

	known  tuples // scope, engine, topic
	warned bool
}

// IdempotencyJoinOptions configures an IdempotencyJoin; it joins with
// Table.Camunda.Engine (Engines is not used).
type IdempotencyJoinOptions = JoinOptions[config.IdempotencyTable]

// NewIdempotencyJoin returns the join collector of an idempotency table.
func NewIdempotencyJoin(o IdempotencyJoinOptions) *IdempotencyJoin {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &IdempotencyJoin{
		tableBase: newTableBase(o.TableOptions, catalog.IdempotencyInDoubt, catalog.IdempotencyCompletedTaskOpen),
		cfg:       o.Table, views: o.Views, now: o.Now, known: tuples{},
	}
}

// Name implements poll.Collector.
func (c *IdempotencyJoin) Name() string { return "idempotency_camunda" }

func (c *IdempotencyJoin) byProcessInstance() bool {
	return c.cfg.Camunda.Reference == config.ReferenceProcessInstanceActivity
}

// sql selects the open-work and completed records of the given tasks. $1
// (and $2) are the task references, $3 the minimum age of a COMPLETED record.
func (c *IdempotencyJoin) sql() string {
	col := c.cfg.Columns
	statuses := pgschema.QuoteLiterals(c.cfg.Statuses.Values(append([]string{config.StatusCompleted}, config.IdempotencyInProgressStatuses()...)...))
	completed := pgschema.QuoteLiterals(c.cfg.Statuses.Values(config.StatusCompleted))
	if c.byProcessInstance() {
		return fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), %[2]s::text, %[3]s::text || '/' || %[4]s::text
FROM %[5]s WHERE (%[3]s, %[4]s) IN (SELECT * FROM unnest($1::text[], $2::text[]))
	AND %[2]s IN (%[6]s) AND (%[2]s NOT IN (%[7]s) OR %[8]s < now() - make_interval(secs => $3))`,
			pgschema.QuoteIdent(col.Scope), pgschema.QuoteIdent(col.Status), pgschema.QuoteIdent(col.ProcessInstanceID), pgschema.QuoteIdent(col.ActivityID),
			pgschema.QuoteTable(c.cfg.Table), statuses, completed, pgschema.QuoteIdent(col.UpdatedAt))
	}
	return fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), %[2]s::text, %[3]s::text
FROM %[4]s WHERE %[3]s = ANY($1::text[])
	AND %[2]s IN (%[5]s) AND (%[2]s NOT IN (%[6]s) OR %[7]s < now() - make_interval(secs => $2))`,
		pgschema.QuoteIdent(col.Scope), pgschema.QuoteIdent(col.Status), pgschema.QuoteIdent(col.JobReference), pgschema.QuoteTable(c.cfg.Table),
		statuses, completed, pgschema.QuoteIdent(col.UpdatedAt))
}

func (c *IdempotencyJoin) args(refs, pis, acts []string, minAge float64) []any {
	if c.byProcessInstance() {
		return []any{pis, acts, minAge}
	}
	return []any{refs, minAge}
}

// Requirements implements TableCollector.
func (c *IdempotencyJoin) Requirements() pgschema.Requirements {
	col := c.cfg.Columns
	k := c.key + ".columns."
	base := pgschema.BaseName(c.cfg.Table)
	req := pgschema.Requirements{Kind: "idempotency", Table: c.cfg.Table}
	req.Columns = []pgschema.Column{{Key: k + "scope", Name: col.Scope}, {Key: k + "status", Name: col.Status}, {Key: k + "updated_at", Name: col.UpdatedAt}}
	if c.byProcessInstance() {
		req.Columns = append(req.Columns, pgschema.Column{Key: k + "process_instance_id", Name: col.ProcessInstanceID}, pgschema.Column{Key: k + "activity_id", Name: col.ActivityID})
		req.Indexes = []pgschema.Index{{Name: base + "_process_activity_idx", Columns: []string{col.ProcessInstanceID, col.ActivityID},
			Why: "the Camunda join looks up the records of in-flight tasks by process instance and activity", Query: "camunda_join"}}
		req.Queries = []pgschema.Query{{Name: "camunda_join", SQL: c.sql(), Args: c.args(nil, []string{"pi"}, []string{"act"}, 10)}}
	} else {
		req.Columns = append(req.Columns, pgschema.Column{Key: k + "job_reference", Name: col.JobReference})
		req.Indexes = []pgschema.Index{{Name: base + "_job_reference_idx", Columns: []string{col.JobReference},
			Where: pgschema.QuoteIdent(col.JobReference) + " IS NOT NULL",
			Why:   "the Camunda join looks up the records of in-flight tasks by external task id (= ANY)", Query: "camunda_join"}}
		req.Queries = []pgschema.Query{{Name: "camunda_join", SQL: c.sql(), Args: c.args([]string{"task-id"}, nil, nil, 10)}}
	}
	return req
}

// Collect implements poll.Collector.
func (c *IdempotencyJoin) Collect(ctx context.Context) ([]prometheus.Metric, error) {
	engine := c.cfg.Camunda.Engine
	view, ok := c.views.Get(engine)
	if !ok {
		c.logger.Debug("no current view of the Camunda engine (down or not collected yet); the join's series are absent", "engine", engine, "database", c.database)
		return nil, nil
	}
	if view.Truncated && !c.warned {
		c.warned = true
		c.logger.Warn("the engine holds more in-flight tasks than max_listed_tasks; the Camunda join undercounts", "engine", engine, "database", c.database)
	}
	tasks := map[string]correlate.Task{}
	var refs, pis, acts []string
	for _, t := range view.Tasks {
		ref := t.ID
		if c.byProcessInstance() {
			ref = t.ProcessInstanceID + "/" + t.ActivityID
			pis, acts = append(pis, t.ProcessInstanceID), append(acts, t.ActivityID)
		}
		refs = append(refs, t.ID)
		tasks[ref] = t
	}
	// A COMPLETED record counts only if it was written before the view was
	// taken (less a grace): otherwise the worker may be completing the task
	// right now. Only the view's age is used, so clocks need not agree.
	minAge := (c.now().Sub(view.Taken) + time.Duration(c.cfg.Camunda.Grace)).Seconds()
	completedOpen := map[string]float64{}
	inDoubt := map[string]float64{}
	seen := tuples{}
	inProgress := map[string]bool{}
	for _, st := range config.IdempotencyInProgressStatuses() {
		inProgress[st] = true
	}
	if len(tasks) > 0 {
		err := c.read(ctx, c.Requirements(), func(ctx context.Context, tx pgx.Tx, _ map[string]bool) error {
			rows, err := tx.Query(ctx, c.sql(), c.args(refs, pis, acts, minAge)...)
			if err != nil {
				return fmt.Errorf("idempotency camunda join: %w", err)
			}
			var scope, status, ref string
			_, err = pgx.ForEachRow(rows, []any{&scope, &status, &ref}, func() error {
				t, ok := tasks[ref]
				if !ok {
					return nil
				}
				vals := c.limiter.Admit(scope, t.Topic)
				k := tupleKey(vals[0], engine, vals[1])
				seen.add(vals[0], engine, vals[1])
				switch canon := c.cfg.Statuses.Canonical(status); {
				case canon == config.StatusCompleted:
					completedOpen[k]++
				case inProgress[canon]:
					if t.State == correlate.LockExpired || t.Redelivered {
						inDoubt[k]++
					}
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("idempotency camunda join: %w", err)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	c.known.merge(seen)
	var out []prometheus.Metric
	for _, v := range c.known.sorted() {
		k := tupleKey(v...)
		lv := []string{c.database, v[0], v[1], v[2]}
		out = append(out,
			c.gauge(catalog.IdempotencyCompletedTaskOpen, completedOpen[k], lv...),
			c.gauge(catalog.IdempotencyInDoubt, inDoubt[k], lv...))
	}
	return out, nil
}

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
		tableBase: newTableBase(o.TableOptions, catalog.ProcessedJobTaskOpen),
		cfg:       o.Table, views: o.Views, engines: engines, now: o.Now, known: tuples{},
	}
}

// Name implements poll.Collector.
func (c *ProcessedJobJoin) Name() string { return "processed_jobs_camunda" }

func (c *ProcessedJobJoin) byProcessInstance() bool {
	return c.cfg.Camunda.Reference == config.ReferenceProcessInstanceActivity
}

func (c *ProcessedJobJoin) sql() string {
	col := c.cfg.Columns
	if c.byProcessInstance() {
		return fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), %[2]s::text || '/' || %[1]s::text
FROM %[3]s WHERE %[4]s = $1 AND (%[2]s, %[1]s) IN (SELECT * FROM unnest($2::text[], $3::text[]))
	AND %[5]s < now() - make_interval(secs => $4)`,
			pgschema.QuoteIdent(col.ActivityID), pgschema.QuoteIdent(col.ProcessInstance), pgschema.QuoteTable(c.cfg.Table), pgschema.QuoteIdent(col.Engine), pgschema.QuoteIdent(col.CompletedAt))
	}
	return fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), %[2]s::text
FROM %[3]s WHERE %[4]s = $1 AND %[2]s = ANY($2::text[]) AND %[5]s < now() - make_interval(secs => $3)`,
		pgschema.QuoteIdent(col.ActivityID), pgschema.QuoteIdent(col.JobReference), pgschema.QuoteTable(c.cfg.Table), pgschema.QuoteIdent(col.Engine), pgschema.QuoteIdent(col.CompletedAt))
}

func (c *ProcessedJobJoin) args(engine string, refs, pis, acts []string, minAge float64) []any {
	if c.byProcessInstance() {
		return []any{engine, pis, acts, minAge}
	}
	return []any{engine, refs, minAge}
}

// Requirements implements TableCollector.
func (c *ProcessedJobJoin) Requirements() pgschema.Requirements {
	col := c.cfg.Columns
	k := c.key + ".columns."
	base := pgschema.BaseName(c.cfg.Table)
	req := pgschema.Requirements{Kind: "processed_jobs", Table: c.cfg.Table}
	req.Columns = []pgschema.Column{{Key: k + "engine", Name: col.Engine}, {Key: k + "activity_id", Name: col.ActivityID}, {Key: k + "completed_at", Name: col.CompletedAt}}
	if c.byProcessInstance() {
		req.Columns = append(req.Columns, pgschema.Column{Key: k + "process_instance", Name: col.ProcessInstance})
		req.Indexes = []pgschema.Index{{Name: base + "_process_activity_idx", Columns: []string{col.Engine, col.ProcessInstance, col.ActivityID},
			Why: "the Camunda join looks up rows of in-flight tasks by process instance and activity", Query: "camunda_join"}}
		req.Queries = []pgschema.Query{{Name: "camunda_join", SQL: c.sql(), Args: c.args("main", nil, []string{"pi"}, []string{"act"}, 10)}}
	} else {
		req.Columns = append(req.Columns, pgschema.Column{Key: k + "job_reference", Name: col.JobReference})
		// The seed's primary key (engine, job_reference) serves this join.
		req.Indexes = []pgschema.Index{{Name: base + "_engine_job_reference_idx", Columns: []string{col.Engine, col.JobReference},
			Why: "the Camunda join looks up rows of in-flight tasks by engine and external task id", Query: "camunda_join", ReferencePrimaryKey: true}}
		req.Queries = []pgschema.Query{{Name: "camunda_join", SQL: c.sql(), Args: c.args("main", []string{"task-id"}, nil, nil, 10)}}
	}
	return req
}

// Collect implements poll.Collector.
func (c *ProcessedJobJoin) Collect(ctx context.Context) ([]prometheus.Metric, error) {
	type lookup struct {
		engine          string
		tasks           map[string]correlate.Task
		refs, pis, acts []string
		minAge          float64
	}
	var lookups []lookup
	var missing []string
	for _, e := range c.engines {
		view, ok := c.views.Get(e)
		if !ok {
			missing = append(missing, e)
			continue
		}
		l := lookup{engine: e, tasks: map[string]correlate.Task{}}
		for _, t := range view.Tasks {
			ref := t.ID
			if c.byProcessInstance() {
				ref = t.ProcessInstanceID + "/" + t.ActivityID
				l.pis, l.acts = append(l.pis, t.ProcessInstanceID), append(l.acts, t.ActivityID)
			}
			l.refs = append(l.refs, t.ID)
			l.tasks[ref] = t
		}
		l.minAge = (c.now().Sub(view.Taken) + time.Duration(c.cfg.Camunda.Grace)).Seconds()
		lookups = append(lookups, l)
	}
	if len(missing) > 0 {
		// Partial answers would read as "no lost completions" for the
		// missing engine: report none rather than a misleading subset.
		return nil, nil
	}
	open := map[string]float64{}
	seen := tuples{}
	err := c.read(ctx, c.Requirements(), func(ctx context.Context, tx pgx.Tx, _ map[string]bool) error {
		for _, l := range lookups {
			if len(l.tasks) == 0 {
				continue
			}
			rows, err := tx.Query(ctx, c.sql(), c.args(l.engine, l.refs, l.pis, l.acts, l.minAge)...)
			if err != nil {
				return fmt.Errorf("processed-job camunda join: %w", err)
			}
			var activity, ref string
			_, err = pgx.ForEachRow(rows, []any{&activity, &ref}, func() error {
				if _, ok := l.tasks[ref]; !ok {
					return nil
				}
				vals := c.limiter.Admit(activity)
				seen.add(l.engine, vals[0])
				open[tupleKey(l.engine, vals[0])]++
				return nil
			})
			if err != nil {
				return fmt.Errorf("processed-job camunda join: %w", err)
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
