package tables

import (
	"context"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// The retention horizon of a deduplicating table (docs/alerts.md, "The
// deduplication window"): retention jobs delete the idempotency records and
// inbox messages that have finished, and a redelivery older than the oldest
// one left finds nothing to be recognised by. The horizon is the age of
// that oldest finished row, per scope or source system: the key space the
// table deduplicates in.
//
// It is measured on the later of a row's times (the idempotency record's
// updated_at, the message's processed_at), never on its creation: a job
// that deletes by completion time keeps a row that long after its last
// update, one that deletes by creation time deletes it earlier, so the
// later time can only make the horizon shorter than the truth, never
// longer. Open rows do not count: retention keeps them (they are work in
// progress), and one stuck for months would otherwise stretch the horizon
// far past what the finished rows still cover.
//
// Each group's oldest row is one descent of a partial index on (group,
// time) over the finished rows: a loose index scan (a recursive query that
// jumps from one group to the next), so a collection reads one index entry
// per group, whatever the table's history. Each table kind's horizon is a
// collector of its own, so a failing horizon never takes the paging gauges
// of its table with it.

// Horizon is the retention horizon collector of one table.
type Horizon struct {
	tableBase
	name   string
	metric string
	table  string
	// plan renders the requirements and the query for the table's
	// columns as the database reports them (nil: the default shape, a
	// text status column): the status column is compared in its own type
	// (statuscol.go), as in the table's own collector.
	plan  func(cols map[string]pgschema.ColumnType) (horizonPlan, error)
	known tuples // group
}

// horizonPlan is a horizon's requirements and query for one shape of its
// table, with the notes on status values the column cannot hold (the
// table's own collector logs them).
type horizonPlan struct {
	req             pgschema.Requirements
	notes, warnings []string
}

// horizonSpec is what tells two tables' horizons apart.
type horizonSpec struct {
	name, kind, table, metric string
	// group and at are the key-space column and the time column, each
	// with its config key under columns:; status is the status column's.
	group, groupKey, at, atKey, status, statusKey string
	// finished renders the predicate of the finished rows for the status
	// column's type; the index's predicate is the same text, so the
	// planner can prove the index serves the query.
	finished func(cols map[string]pgschema.ColumnType) (where string, notes, warnings []string, err error)
	why      string
}

func newHorizon[T any](o Options[T], s horizonSpec) *Horizon {
	c := &Horizon{tableBase: newTableBase(o, s.metric), name: s.name, metric: s.metric, table: s.table, known: tuples{}}
	columns := c.columns(s.groupKey, s.group, s.statusKey, s.status, s.atKey, s.at)
	c.plan = func(cols map[string]pgschema.ColumnType) (horizonPlan, error) {
		where, notes, warnings, err := s.finished(cols)
		if err != nil {
			return horizonPlan{}, err
		}
		sql := horizonSQL(s.table, s.group, s.at, where)
		return horizonPlan{req: pgschema.Requirements{
			Kind:    s.kind,
			Table:   s.table,
			Columns: columns,
			Indexes: []pgschema.Index{{Name: pgschema.BaseName(s.table) + "_horizon_idx", Columns: []string{s.group, s.at},
				Where: where, Why: s.why, Query: "horizon"}},
			Queries: []pgschema.Query{{Name: "horizon", SQL: sql, Ordered: true}},
		}, notes: notes, warnings: warnings}, nil
	}
	return c
}

// horizonSQL is the loose index scan: the first finished row in (group,
// at) order, then from each group the first row of the next group, each
// one descent of the index. It returns each group as text and the age of
// its oldest row in seconds. Rows whose group is NULL are not read: the
// steps (>) never reach them, and a branch of their own gets a sort in its
// plan wherever the column is NOT NULL (the planner expects no row and
// takes any index), which would make `check` call the index missing. The
// key columns of a deduplicating table are NOT NULL in practice: they are
// its key.
func horizonSQL(table, group, at, where string) string {
	return fmt.Sprintf(`WITH RECURSIVE h(g, oldest) AS (
	(SELECT %[2]s, %[3]s FROM %[1]s WHERE %[4]s AND %[2]s IS NOT NULL ORDER BY %[2]s, %[3]s LIMIT 1)
	UNION ALL
	SELECT n.* FROM h CROSS JOIN LATERAL (
		SELECT %[2]s, %[3]s FROM %[1]s WHERE %[4]s AND %[2]s > h.g ORDER BY %[2]s, %[3]s LIMIT 1) n
)
SELECT g::text, extract(epoch FROM now() - oldest)::float8 FROM h`,
		pgschema.QuoteTable(table), pgschema.QuoteIdent(group), pgschema.QuoteIdent(at), where)
}

// NewIdempotencyHorizon returns the collector of
// workflow_idempotency_retention_horizon_seconds: per scope, the age of
// the least recently updated record in a terminal status.
func NewIdempotencyHorizon(o IdempotencyOptions) *Horizon {
	col := o.Table.Columns
	return newHorizon(o, horizonSpec{
		name: "idempotency_horizon", kind: "idempotency (retention horizon)", table: o.Table.Table, metric: catalog.IdempotencyRetentionHorizon,
		group: col.Scope, groupKey: "scope", at: col.UpdatedAt, atKey: "updated_at", status: col.Status, statusKey: "status",
		finished: func(cols map[string]pgschema.ColumnType) (string, []string, []string, error) {
			st, err := resolveIdemStatus(o.Table, o.ConfigKey, cols)
			if err != nil {
				return "", nil, nil, err
			}
			return st.col.in(st.values(vocab.IdempotencyTerminalStatuses()...)), st.notes, st.warnings, nil
		},
		why: "the retention horizon reads the least recently updated finished record of each scope, one index entry per scope",
	})
}

// NewInboxHorizon returns the collector of
// workflow_inbox_retention_horizon_seconds: per source system, the age of
// the oldest processed_at of a finished message. A library's table read
// through a preset has none (nil): its processed time and key space are
// the library's own (docs/outbox-shapes.md).
func NewInboxHorizon(o InboxOptions) *Horizon {
	if o.Table.Preset != "" {
		return nil
	}
	col := o.Table.Columns
	return newHorizon(o, horizonSpec{
		name: "inbox_horizon", kind: "inbox (retention horizon)", table: o.Table.Table, metric: catalog.InboxRetentionHorizon,
		group: col.SourceSystem, groupKey: "source_system", at: col.ProcessedAt, atKey: "processed_at", status: col.Status, statusKey: "status",
		finished: func(cols map[string]pgschema.ColumnType) (string, []string, []string, error) {
			s, err := configInboxShape(o.Table, o.ConfigKey, cols)
			if err != nil {
				return "", nil, nil, err
			}
			return pgschema.QuoteIdent(col.ProcessedAt) + " IS NOT NULL AND " + s.statusCol.in(s.statuses.values(vocab.InboxTerminalStatuses()...)),
				s.statuses.notes, s.statuses.warnings, nil
		},
		why: "the retention horizon reads the oldest processed_at of each source system's finished messages, one index entry per source system",
	})
}

// Name implements collectors.Collector.
func (c *Horizon) Name() string { return c.name }

// Requirements says what the collector needs from its table, with a text
// status column; Resolve gives them for the column's type.
func (c *Horizon) Requirements() pgschema.Requirements {
	p, err := c.plan(nil)
	if err != nil {
		panic(err) // a text column always resolves
	}
	req := p.req
	req.Resolve = func(ctx context.Context, tx pgx.Tx) (pgschema.Resolved, error) {
		cols, err := columnTypes(ctx, tx, c.table, c.key+".table")
		if err != nil {
			return pgschema.Resolved{}, err
		}
		p, err := c.plan(cols)
		if err != nil {
			return pgschema.Resolved{}, err
		}
		return pgschema.Resolved{Requirements: p.req, Notes: p.notes, Warnings: p.warnings}, nil
	}
	return req
}

// Collect implements collectors.Collector. A group the table no longer
// holds a finished row of reports 0: nothing of it is left to recognise a
// redelivery by. Groups past the label value limit fold into "other".
func (c *Horizon) Collect(ctx context.Context, _ *collectors.Sink) ([]prometheus.Metric, error) {
	ages := map[string]float64{}
	err := c.read(ctx, func(ctx context.Context, tx pgx.Tx) error {
		cols, err := columnTypes(ctx, tx, c.table, c.key+".table")
		if err != nil {
			return err
		}
		p, err := c.plan(cols)
		if err != nil {
			return err
		}
		if _, err := pgschema.CheckColumns(p.req, cols); err != nil {
			return err
		}
		var group string
		var age *float64
		return each(ctx, tx, c.name+" query", p.req.Queries[0].SQL, nil, []any{&group, &age}, func() error {
			label := c.limiter.Admit(group)[0]
			// A group whose finished rows have no time has no horizon;
			// a clock behind the rows' times reads as 0, not negative.
			v := 0.0
			if age != nil {
				v = math.Max(*age, 0)
			}
			// The groups folded into "other" report the shortest
			// horizon among them.
			if prev, ok := ages[label]; !ok || v < prev {
				ages[label] = v
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	for g := range ages {
		c.known.add(g)
	}
	out := make([]prometheus.Metric, 0, len(c.known))
	for _, v := range c.known.sorted() {
		out = append(out, c.gauge(c.metric, ages[v[0]], c.database, v[0]))
	}
	return out, nil
}
