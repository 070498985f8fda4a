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
		tableBase: newTableBase(o.Options, catalog.IdempotencyInDoubt, catalog.IdempotencyCompletedTaskOpen),
		cfg:       o.Table, views: o.Views, now: o.Now, known: tuples{},
	}
}

// Name implements poll.Collector.
func (c *IdempotencyJoin) Name() string { return "idempotency_camunda" }

// sql selects the open-work and completed records of the given tasks. $1
// (and $2) are the task references, $3 the minimum age of a COMPLETED record.
func (c *IdempotencyJoin) sql() string {
	col := c.cfg.Columns
	statuses := pgschema.QuoteLiterals(c.cfg.Statuses.Values(append([]string{config.StatusCompleted}, config.IdempotencyInProgressStatuses()...)...))
	completed := pgschema.QuoteLiterals(c.cfg.Statuses.Values(config.StatusCompleted))
	if c.cfg.Camunda.ByProcessInstance() {
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

func (c *IdempotencyJoin) args(l taskLookup) []any {
	if c.cfg.Camunda.ByProcessInstance() {
		return []any{l.pis, l.acts, l.minAge}
	}
	return []any{l.refs, l.minAge}
}

// Requirements says what the collector needs from its table.
func (c *IdempotencyJoin) Requirements() pgschema.Requirements {
	col := c.cfg.Columns
	k := c.key + ".columns."
	base := pgschema.BaseName(c.cfg.Table)
	req := pgschema.Requirements{Kind: "idempotency", Table: c.cfg.Table}
	req.Columns = []pgschema.Column{{Key: k + "scope", Name: col.Scope}, {Key: k + "status", Name: col.Status}, {Key: k + "updated_at", Name: col.UpdatedAt}}
	if c.cfg.Camunda.ByProcessInstance() {
		req.Columns = append(req.Columns, pgschema.Column{Key: k + "process_instance_id", Name: col.ProcessInstanceID}, pgschema.Column{Key: k + "activity_id", Name: col.ActivityID})
		req.Indexes = []pgschema.Index{{Name: base + "_process_activity_idx", Columns: []string{col.ProcessInstanceID, col.ActivityID},
			Why: "the Camunda join looks up the records of in-flight tasks by process instance and activity", Query: "camunda_join"}}
		req.Queries = []pgschema.Query{{Name: "camunda_join", SQL: c.sql(), Args: c.args(exampleLookup)}}
	} else {
		req.Columns = append(req.Columns, pgschema.Column{Key: k + "job_reference", Name: col.JobReference})
		req.Indexes = []pgschema.Index{{Name: base + "_job_reference_idx", Columns: []string{col.JobReference},
			Where: pgschema.QuoteIdent(col.JobReference) + " IS NOT NULL",
			Why:   "the Camunda join looks up the records of in-flight tasks by external task id (= ANY)", Query: "camunda_join"}}
		req.Queries = []pgschema.Query{{Name: "camunda_join", SQL: c.sql(), Args: c.args(exampleLookup)}}
	}
	return req
}

// Collect implements poll.Collector: it looks the tasks of the engine's
// view up in the table and counts the COMPLETED records whose task is open
// and the in-progress ones whose task's lock lapsed.
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
	l := newTaskLookup(engine, view, c.cfg.Camunda, c.now())
	completedOpen, inDoubt := map[string]float64{}, map[string]float64{}
	seen := tuples{}
	if len(l.tasks) > 0 {
		inProgress := map[string]bool{}
		for _, st := range config.IdempotencyInProgressStatuses() {
			inProgress[st] = true
		}
		err := c.read(ctx, c.Requirements(), func(ctx context.Context, tx pgx.Tx, _ map[string]bool) error {
			var scope, status, ref string
			return each(ctx, tx, "idempotency camunda join", c.sql(), c.args(l), []any{&scope, &status, &ref}, func() error {
				t, ok := l.tasks[ref]
				if !ok {
					return nil
				}
				vals := c.limiter.Admit(scope, t.Topic)
				k := tupleKey(vals[0], engine, vals[1])
				seen.add(vals[0], engine, vals[1])
				switch canon := c.cfg.Statuses.Canonical(status); {
				case canon == config.StatusCompleted:
					completedOpen[k]++
				case inProgress[canon] && (t.State == correlate.LockExpired || t.Redelivered):
					inDoubt[k]++
				}
				return nil
			})
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
