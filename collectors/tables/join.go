package tables

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// The Camunda joins of this file see what neither side sees alone: the side
// effect happened, and the worker died before completing the Camunda task
// (docs/design.md, "The Camunda join").
// Each collection takes the engine's latest view of in-flight tasks (locked,
// in retry backoff, or with a lapsed lock; bounded by the Camunda
// collector's max_listed_tasks) and looks exactly those tasks up in the
// table with `= ANY($1)` on an indexed column. It never scans either side.
// While the engine's view is missing (engine down), the join's series are
// absent: "unknown", never "all clear". That is not this collector's
// failure: the engine's own camunda_up and WorkflowExporterSourceDown say
// it, so the join reports no series and no error (one alert per outage,
// not one per database that joins with the engine).

// JoinOptions configures the Camunda join of a table: the table's options
// and the engines' side.
type JoinOptions[T any] struct {
	Options[T]
	// Views carries the in-flight tasks each engine's collector publishes.
	Views *correlate.Registry
	// Engines are the configured Camunda engine names the join may use.
	Engines []string
	// Now is the exporter clock, used only for the age of a view.
	Now func() time.Time
}

// taskLookup is one engine's view of its in-flight tasks as a join looks
// them up in its table: by external task id, or by process instance and
// activity (camunda.reference).
type taskLookup struct {
	engine string
	// tasks are the tasks by the reference the join query returns.
	tasks map[string]correlate.Task
	// refs (task ids), or pis and acts (process instances and activities
	// in pairs), are the query's arguments.
	refs, pis, acts []string
	// minAge is how long, in seconds, a COMPLETED record or a processed
	// row must have been written to count: before the view was taken (less
	// the grace), so a worker that is completing the task right now is not
	// reported. In-progress records need no age: their task's lapse or
	// redelivery is the evidence. Only the view's age is used, so the
	// clocks need not agree.
	minAge float64
}

func newTaskLookup(engine string, view *correlate.View, corr config.Correlation, now time.Time) taskLookup {
	l := taskLookup{engine: engine, tasks: map[string]correlate.Task{}}
	for _, t := range view.Tasks {
		ref := t.ID
		if corr.ByProcessInstance() {
			ref = t.ProcessInstanceID + "/" + t.ActivityID
			l.pis, l.acts = append(l.pis, t.ProcessInstanceID), append(l.acts, t.ActivityID)
		}
		l.refs = append(l.refs, t.ID)
		l.tasks[ref] = t
	}
	l.minAge = (now.Sub(view.Taken) + time.Duration(corr.Grace)).Seconds()
	return l
}

// exampleLookup gives the join queries arguments for EXPLAIN (see
// pgschema.Query).
var exampleLookup = taskLookup{engine: "main", refs: []string{"task-id"}, pis: []string{"pi"}, acts: []string{"act"}, minAge: 10}

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
	c := &IdempotencyJoin{
		tableBase: newTableBase(o.Options, catalog.IdempotencyInDoubt, catalog.IdempotencyCompletedTaskOpen),
		cfg:       o.Table, views: o.Views, now: o.Now, known: tuples{},
	}
	// known is (scope, engine, topic), the limiter's tuple (scope, topic).
	c.keep(c.Name(), tableParts{kept: []keptTuples{{set: c.known, labels: func(t []string) []string { return []string{t[0], t[2]} }}}})
	return c
}

// StateKey implements collectors.Stateful.
func (c *IdempotencyJoin) StateKey() string {
	return c.stateKey("idempotency_camunda", c.cfg.Table, c.cfg.Camunda.Engine)
}

// Name implements collectors.Collector.
func (c *IdempotencyJoin) Name() string { return "idempotency_camunda" }

// sql selects the open-work and completed records of the given tasks. $1
// (and $2) are the task references, $3 the minimum age of a COMPLETED
// record; the statuses are compared in the column's own type (status).
func (c *IdempotencyJoin) sql(status idemStatus) string {
	col := c.cfg.Columns
	statuses := status.col.in(status.values(append([]string{vocab.StatusCompleted}, vocab.IdempotencyInProgressStatuses()...)...))
	notCompleted := status.col.notIn(status.values(vocab.StatusCompleted))
	// The key, the time and its age are for the status page's items.
	tail := fmt.Sprintf("%s::text, %s", pgschema.QuoteIdent(col.Key), ageColumns(col.UpdatedAt))
	if c.cfg.Camunda.ByProcessInstance() {
		return fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), COALESCE(%[2]s, ''), %[3]s::text || '/' || %[4]s::text, %[9]s
FROM %[5]s WHERE (%[3]s, %[4]s) IN (SELECT * FROM unnest($1::text[], $2::text[]))
	AND %[6]s AND (%[7]s OR %[8]s < now() - make_interval(secs => $3))`,
			pgschema.QuoteIdent(col.Scope), status.col.text(), pgschema.QuoteIdent(col.ProcessInstanceID), pgschema.QuoteIdent(col.ActivityID),
			pgschema.QuoteTable(c.cfg.Table), statuses, notCompleted, pgschema.QuoteIdent(col.UpdatedAt), tail)
	}
	return fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), COALESCE(%[2]s, ''), %[3]s::text, %[8]s
FROM %[4]s WHERE %[3]s = ANY($1::text[])
	AND %[5]s AND (%[6]s OR %[7]s < now() - make_interval(secs => $2))`,
		pgschema.QuoteIdent(col.Scope), status.col.text(), pgschema.QuoteIdent(col.JobReference), pgschema.QuoteTable(c.cfg.Table),
		statuses, notCompleted, pgschema.QuoteIdent(col.UpdatedAt), tail)
}

func (c *IdempotencyJoin) args(l taskLookup) []any {
	if c.cfg.Camunda.ByProcessInstance() {
		return []any{l.pis, l.acts, l.minAge}
	}
	return []any{l.refs, l.minAge}
}

// Requirements says what the collector needs from its table, with a text
// status column; Resolve gives them for the column's type (the notes are
// the idempotency collector's to give).
func (c *IdempotencyJoin) Requirements() pgschema.Requirements {
	return idemRequirements(c.cfg, c.key, c.requirements, false)
}

// requirements is what the join needs with the status column st.
func (c *IdempotencyJoin) requirements(st idemStatus) pgschema.Requirements {
	col := c.cfg.Columns
	base := pgschema.BaseName(c.cfg.Table)
	req := pgschema.Requirements{Kind: "idempotency", Table: c.cfg.Table}
	req.Columns = c.columns("scope", col.Scope, "key", col.Key, "status", col.Status, "updated_at", col.UpdatedAt)
	if c.cfg.Camunda.ByProcessInstance() {
		req.Columns = append(req.Columns, c.columns("process_instance_id", col.ProcessInstanceID, "activity_id", col.ActivityID)...)
		req.Indexes = []pgschema.Index{{Name: base + "_process_activity_idx", Columns: []string{col.ProcessInstanceID, col.ActivityID},
			Why: "the Camunda join looks up the records of in-flight tasks by process instance and activity", Query: "camunda_join"}}
		req.Queries = []pgschema.Query{{Name: "camunda_join", SQL: c.sql(st), Args: c.args(exampleLookup)}}
	} else {
		req.Columns = append(req.Columns, c.columns("job_reference", col.JobReference)...)
		req.Indexes = []pgschema.Index{{Name: base + "_job_reference_idx", Columns: []string{col.JobReference},
			Where: pgschema.QuoteIdent(col.JobReference) + " IS NOT NULL",
			Why:   "the Camunda join looks up the records of in-flight tasks by external task id (= ANY)", Query: "camunda_join"}}
		req.Queries = []pgschema.Query{{Name: "camunda_join", SQL: c.sql(st), Args: c.args(exampleLookup)}}
	}
	return req
}

// Collect implements collectors.Collector: it looks the tasks of the engine's
// view up in the table and counts the COMPLETED records whose task is open
// and the in-progress ones whose task's lock lapsed.
func (c *IdempotencyJoin) Collect(ctx context.Context, sink *collectors.Sink) ([]prometheus.Metric, error) {
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
	l := newTaskLookup(engine, view, c.cfg.Camunda, c.now())
	completedOpen, inDoubt := map[string]float64{}, map[string]float64{}
	seen := tuples{}
	// The records behind the two gauges, for the status page.
	items := map[string][]collectors.Item{}
	if len(l.tasks) > 0 {
		inProgress := map[string]bool{}
		for _, st := range vocab.IdempotencyInProgressStatuses() {
			inProgress[st] = true
		}
		err := c.read(ctx, func(ctx context.Context, tx pgx.Tx) error {
			status, _, _, err := resolveIdem(ctx, tx, c.cfg, c.key, c.requirements)
			if err != nil {
				return err
			}
			var scope, stored, ref, key string
			var updated time.Time
			var age float64
			labels := func() []string {
				if t, ok := l.tasks[ref]; ok {
					return []string{scope, t.Topic}
				}
				return nil
			}
			return c.eachOffered(ctx, tx, "idempotency camunda join", c.sql(status), c.args(l), []any{&scope, &stored, &ref, &key, &updated, &age}, labels, func() error {
				t, ok := l.tasks[ref]
				if !ok {
					return nil
				}
				vals := c.limiter.Admit(scope, t.Topic)
				k := tupleKey(vals[0], engine, vals[1])
				seen.add(vals[0], engine, vals[1])
				kind := ""
				switch canon := status.canonical(stored); {
				case canon == vocab.StatusCompleted:
					completedOpen[k]++
					kind = vocab.KindCompletedTaskOpen
				case inProgress[canon] && (t.State == correlate.LockExpired || t.Redelivered):
					inDoubt[k]++
					kind = vocab.KindInDoubt
				}
				if kind != "" {
					row := collectors.Item{Scope: scope, IdempotencyKey: key, Status: stored, JobReference: ref, Since: since(updated), AgeSeconds: age}
					items[kind] = append(items[kind], joinItem(engine, t, row))
				}
				return nil
			})
		})
		if err != nil {
			return nil, err
		}
	}
	if sink != nil {
		for _, kind := range []string{vocab.KindCompletedTaskOpen, vocab.KindInDoubt} {
			sink.Add(collectors.List{Kind: kind, Database: c.database, Table: c.cfg.Table, Engine: engine, Total: len(items[kind]),
				Partial: view.Truncated, IdentifiersHidden: joinHidden(c.cfg.Status, view), Items: items[kind]})
		}
	}
	c.known.merge(seen)
	c.forget(c.now())
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
// wrote as processed whose external task the engine still holds open, by
// the task's topic (from the engine's view, so the alert names the lane
// and can be inhibited by the idempotency join's alert of the same topic)
// and the row's activity.
type ProcessedJobJoin struct {
	tableBase
	cfg     config.ProcessedJobTable
	views   *correlate.Registry
	engines []string
	now     func() time.Time

	known tuples // engine, topic, activity
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
	c := &ProcessedJobJoin{
		tableBase: newTableBase(o.Options, catalog.ProcessedJobTaskOpen),
		cfg:       o.Table, views: o.Views, engines: engines, now: o.Now, known: tuples{},
	}
	// known is (engine, topic, activity), the limiter's tuple (topic, activity).
	c.keep(c.Name(), tableParts{kept: []keptTuples{{set: c.known, labels: func(t []string) []string { return []string{t[1], t[2]} }}}})
	return c
}

// StateKey implements collectors.Stateful.
func (c *ProcessedJobJoin) StateKey() string {
	return c.stateKey("processed_jobs_camunda", c.cfg.Table, c.engines...)
}

// Name implements collectors.Collector.
func (c *ProcessedJobJoin) Name() string { return "processed_jobs_camunda" }

func (c *ProcessedJobJoin) sql() string {
	col := c.cfg.Columns
	// The row's reference, status, time and age are for the status page.
	tail := fmt.Sprintf("%s::text, COALESCE(%s::text, ''), %s", pgschema.QuoteIdent(col.JobReference), pgschema.QuoteIdent(col.Status), ageColumns(col.CompletedAt))
	if c.cfg.Camunda.ByProcessInstance() {
		return fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), %[2]s::text || '/' || %[1]s::text, %[6]s
FROM %[3]s WHERE %[4]s = $1 AND (%[2]s, %[1]s) IN (SELECT * FROM unnest($2::text[], $3::text[]))
	AND %[5]s < now() - make_interval(secs => $4)`,
			pgschema.QuoteIdent(col.ActivityID), pgschema.QuoteIdent(col.ProcessInstance), pgschema.QuoteTable(c.cfg.Table), pgschema.QuoteIdent(col.Engine), pgschema.QuoteIdent(col.CompletedAt), tail)
	}
	return fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), %[2]s::text, %[6]s
FROM %[3]s WHERE %[4]s = $1 AND %[2]s = ANY($2::text[]) AND %[5]s < now() - make_interval(secs => $3)`,
		pgschema.QuoteIdent(col.ActivityID), pgschema.QuoteIdent(col.JobReference), pgschema.QuoteTable(c.cfg.Table), pgschema.QuoteIdent(col.Engine), pgschema.QuoteIdent(col.CompletedAt), tail)
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
	base := pgschema.BaseName(c.cfg.Table)
	req := pgschema.Requirements{Kind: "processed_jobs", Table: c.cfg.Table}
	req.Columns = c.columns("engine", col.Engine, "activity_id", col.ActivityID, "completed_at", col.CompletedAt,
		"job_reference", col.JobReference, "status", col.Status)
	if c.cfg.Camunda.ByProcessInstance() {
		req.Columns = append(req.Columns, c.columns("process_instance", col.ProcessInstance)...)
		req.Indexes = []pgschema.Index{{Name: base + "_process_activity_idx", Columns: []string{col.Engine, col.ProcessInstance, col.ActivityID},
			Why: "the Camunda join looks up rows of in-flight tasks by process instance and activity", Query: "camunda_join"}}
		req.Queries = []pgschema.Query{{Name: "camunda_join", SQL: c.sql(), Args: c.args(exampleLookup)}}
	} else {
		// The reference schema's primary key (engine, job_reference) serves this join.
		req.Indexes = []pgschema.Index{{Name: base + "_engine_job_reference_idx", Columns: []string{col.Engine, col.JobReference},
			Why: "the Camunda join looks up rows of in-flight tasks by engine and external task id", Query: "camunda_join", ReferencePrimaryKey: true}}
		req.Queries = []pgschema.Query{{Name: "camunda_join", SQL: c.sql(), Args: c.args(exampleLookup)}}
	}
	return req
}

// Collect implements collectors.Collector: it looks the tasks of every engine's
// view up in the table and counts the rows whose task is still open.
func (c *ProcessedJobJoin) Collect(ctx context.Context, sink *collectors.Sink) ([]prometheus.Metric, error) {
	lookups := make([]taskLookup, 0, len(c.engines))
	views := make([]*correlate.View, 0, len(c.engines))
	for _, e := range c.engines {
		view, ok := c.views.Get(e)
		if !ok {
			// Partial answers would read as "no lost completions" for the
			// missing engine: report none rather than a misleading subset.
			return nil, nil
		}
		lookups = append(lookups, newTaskLookup(e, view, c.cfg.Camunda, c.now()))
		views = append(views, view)
	}
	open := map[string]float64{}
	seen := tuples{}
	// The rows behind the gauge, per engine, for the status page.
	items := make([][]collectors.Item, len(lookups))
	err := c.read(ctx, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := c.check(ctx, tx, c.Requirements()); err != nil {
			return err
		}
		for i, l := range lookups {
			if len(l.tasks) == 0 {
				continue
			}
			var activity, ref, jobRef, stored string
			var completed time.Time
			var age float64
			labels := func() []string {
				if t, ok := l.tasks[ref]; ok {
					return []string{t.Topic, activity}
				}
				return nil
			}
			err := c.eachOffered(ctx, tx, "processed-job camunda join", c.sql(), c.args(l), []any{&activity, &ref, &jobRef, &stored, &completed, &age}, labels, func() error {
				t, ok := l.tasks[ref]
				if !ok {
					return nil
				}
				vals := c.limiter.Admit(t.Topic, activity)
				seen.add(l.engine, vals[0], vals[1])
				open[tupleKey(l.engine, vals[0], vals[1])]++
				row := collectors.Item{JobReference: jobRef, Status: stored, Since: since(completed), AgeSeconds: age}
				items[i] = append(items[i], joinItem(l.engine, t, row))
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
	if sink != nil {
		for i, l := range lookups {
			sink.Add(collectors.List{Kind: vocab.KindProcessedJobTaskOpen, Database: c.database, Table: c.cfg.Table, Engine: l.engine,
				Total: len(items[i]), Partial: views[i].Truncated, IdentifiersHidden: joinHidden(c.cfg.Status, views[i]), Items: items[i]})
		}
	}
	c.known.merge(seen)
	c.forget(c.now())
	var out []prometheus.Metric
	for _, v := range c.known.sorted() {
		out = append(out, c.gauge(catalog.ProcessedJobTaskOpen, open[tupleKey(v...)], c.database, v[0], v[1], v[2]))
	}
	return out, nil
}
