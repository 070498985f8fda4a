package tables

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/internal/config"
	"github.com/workflow-exporter/workflow-exporter/internal/pgschema"
	"github.com/workflow-exporter/workflow-exporter/internal/watermark"
)

// Idempotency watches the idempotency record table (seed section 8): work
// in progress and how long it has been there, unknown outcomes, conflicts,
// and the statuses records reach.
//
// Gauges read only non-terminal rows (a partial index excludes COMPLETED,
// FAILED_FINAL and RECONCILED); counters read the recent updated_at window.
type Idempotency struct {
	tableBase
	cfg config.IdempotencyTable

	window   *watermark.Window
	scopes   tuples
	unmapped tuples // (scope) tuples that have shown an unmapped status
	warn     *unmappedStatuses

	transitions map[string]float64 // scope, status
	conflicts   map[string]float64 // scope
	duplicates  map[string]float64 // scope
	// dupSeen is the last duplicate_count seen per record that ever had
	// one; absent means 0. Loaded in full on the first poll (a partial index
	// on duplicate_count > 0 keeps that cheap).
	dupSeen   map[string]int64
	dupLoaded bool
	hasDup    bool

	sqlGauges string
	dupColumn string
}

// IdempotencyOptions configures an Idempotency collector.
type IdempotencyOptions = Options[config.IdempotencyTable]

// NewIdempotency returns an idempotency collector.
func NewIdempotency(o IdempotencyOptions) *Idempotency {
	c := &Idempotency{
		tableBase: newTableBase(o, catalog.IdempotencyRecords, catalog.IdempotencyOldestRecordAge, catalog.IdempotencyStaleRecords,
			catalog.IdempotencyTransitions, catalog.IdempotencyConflicts, catalog.IdempotencyDuplicatesPrevented),
		cfg:         o.Table,
		window:      watermark.New(o.LateCommitWindow),
		scopes:      tuples{},
		unmapped:    tuples{},
		warn:        newUnmappedStatuses("idempotency", o.Table.Table, o.Table.Columns.Status),
		transitions: map[string]float64{},
		conflicts:   map[string]float64{},
		duplicates:  map[string]float64{},
		dupSeen:     map[string]int64{},
		dupColumn:   config.DefaultDuplicateCountColumn,
	}
	if o.Table.Columns.DuplicateCount != nil {
		c.dupColumn = *o.Table.Columns.DuplicateCount
	}
	col := o.Table.Columns
	c.sqlGauges = fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), COALESCE(%[2]s::text, ''), count(*)::float8,
	COALESCE(extract(epoch FROM now() - min(%[3]s))::float8, 0),
	(count(*) FILTER (WHERE %[3]s < now() - make_interval(secs => $1)))::float8
FROM %[4]s WHERE %[5]s
GROUP BY 1, 2`, pgschema.QuoteIdent(col.Scope), pgschema.QuoteIdent(col.Status), pgschema.QuoteIdent(col.UpdatedAt), pgschema.QuoteTable(o.Table.Table), openStatusPredicate(col.Status, o.Table.TerminalValues()))
	return c
}

// Name implements poll.Collector.
func (c *Idempotency) Name() string { return "idempotency" }

func (c *Idempotency) sqlActivity(withDup bool) string {
	col := c.cfg.Columns
	dup := "0::bigint"
	if withDup {
		dup = fmt.Sprintf("COALESCE(%s, 0)::bigint", pgschema.QuoteIdent(c.dupColumn))
	}
	return fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), %[2]s::text, COALESCE(%[3]s::text, ''), %[4]s::timestamptz, COALESCE(%[5]s::text, ''), %[6]s
FROM %[7]s WHERE %[4]s > $1::timestamptz`, pgschema.QuoteIdent(col.Scope), pgschema.QuoteIdent(col.Key), pgschema.QuoteIdent(col.Status), pgschema.QuoteIdent(col.UpdatedAt),
		pgschema.QuoteIdent(col.ErrorCode), dup, pgschema.QuoteTable(c.cfg.Table))
}

func (c *Idempotency) sqlDupLoad() string {
	col := c.cfg.Columns
	return fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), %[2]s::text, %[3]s::bigint FROM %[4]s WHERE %[3]s > 0`,
		pgschema.QuoteIdent(col.Scope), pgschema.QuoteIdent(col.Key), pgschema.QuoteIdent(c.dupColumn), pgschema.QuoteTable(c.cfg.Table))
}

// Requirements says what the collector needs from its table.
func (c *Idempotency) Requirements() pgschema.Requirements {
	col := c.cfg.Columns
	k := c.key + ".columns."
	base := pgschema.BaseName(c.cfg.Table)
	return pgschema.Requirements{
		Kind:  "idempotency",
		Table: c.cfg.Table,
		Columns: []pgschema.Column{
			{Key: k + "scope", Name: col.Scope}, {Key: k + "key", Name: col.Key}, {Key: k + "status", Name: col.Status},
			{Key: k + "updated_at", Name: col.UpdatedAt}, {Key: k + "error_code", Name: col.ErrorCode},
			{Key: k + "job_reference", Name: col.JobReference},
			{Key: k + "duplicate_count", Name: c.dupColumn, Optional: col.DuplicateCount == nil},
		},
		Indexes: []pgschema.Index{
			{Name: base + "_open_idx", Columns: []string{col.Scope, col.Status, col.UpdatedAt},
				Where: openStatusPredicate(col.Status, c.cfg.TerminalValues()),
				Why:   "records, oldest age and stale gauges read only non-terminal records; terminal history stays out of the index", Query: "open"},
			{Name: base + "_updated_at_idx", Columns: []string{col.UpdatedAt},
				Why: "transitions, conflicts and duplicates counters read the last late_commit_window of updates", Query: "activity"},
			{Name: base + "_duplicates_idx", Columns: []string{col.UpdatedAt},
				Where: pgschema.QuoteIdent(c.dupColumn) + " > 0",
				Why:   "one read of records that absorbed duplicates when the exporter starts (only with the duplicate_count extension)", Query: "duplicates", Requires: c.dupColumn},
		},
		Queries: []pgschema.Query{
			{Name: "open", SQL: c.sqlGauges, Args: []any{900.0}},
			{Name: "activity", SQL: c.sqlActivity(false), Args: []any{time.Now().Add(-time.Hour)}},
			{Name: "duplicates", SQL: c.sqlDupLoad(), Requires: c.dupColumn},
		},
	}
}

// Collect implements poll.Collector.
func (c *Idempotency) Collect(ctx context.Context) ([]prometheus.Metric, error) {
	gauges := map[string]*agg{} // scope, status
	transitions, conflicts, duplicates := map[string]float64{}, map[string]float64{}, map[string]float64{}
	dupUpdates := map[string]int64{}
	seenScopes, unmapped := tuples{}, tuples{}
	var dupLoad map[string]int64
	conflict := map[string]bool{}
	for _, code := range c.cfg.ConflictCodes {
		conflict[code] = true
	}
	canonical := func(stored, scope string) string {
		canon := c.cfg.Statuses.Canonical(stored)
		if canon == config.Unmapped {
			unmapped.add(scope)
			c.warn.note(stored)
		}
		return canon
	}
	hasDup := false
	err := c.poll(ctx, c.Requirements(), []*watermark.Window{c.window}, func(ctx context.Context, tx pgx.Tx, dbNow time.Time, present map[string]bool) error {
		hasDup = present[c.dupColumn]
		var scope, status, key, errorCode string
		var count, oldest, stale float64
		var updated time.Time
		var dupCount int64
		err := each(ctx, tx, "idempotency open-records query", c.sqlGauges, []any{time.Duration(c.cfg.StaleAfter).Seconds()},
			[]any{&scope, &status, &count, &oldest, &stale}, func() error {
				vals := c.limiter.Admit(scope)
				seenScopes.add(vals...)
				k := tupleKey(vals[0], canonical(status, vals[0]))
				if gauges[k] == nil {
					gauges[k] = &agg{}
				}
				gauges[k].merge(count, oldest, stale)
				return nil
			})
		if err != nil {
			return err
		}
		if hasDup && !c.dupLoaded {
			dupLoad = map[string]int64{}
			err := each(ctx, tx, "idempotency duplicate_count load query", c.sqlDupLoad(), nil, []any{&scope, &key, &dupCount}, func() error {
				dupLoad[tupleKey(scope, key)] = dupCount
				return nil
			})
			if err != nil {
				return err
			}
		}
		return each(ctx, tx, "idempotency activity query", c.sqlActivity(hasDup), []any{c.window.Lower(dbNow)},
			[]any{&scope, &key, &status, &updated, &errorCode, &dupCount}, func() error {
				vals := c.limiter.Admit(scope)
				seenScopes.add(vals...)
				canon := canonical(status, vals[0])
				if c.window.Observe(updated, "t", scope, key, canon) {
					transitions[tupleKey(vals[0], canon)]++
				}
				if conflict[errorCode] && c.window.Observe(updated, "c", scope, key) {
					conflicts[vals[0]]++
				}
				if hasDup {
					rk := tupleKey(scope, key)
					prev, ok := dupUpdates[rk]
					if !ok {
						prev = c.dupSeen[rk]
						if dupLoad != nil {
							prev = dupLoad[rk]
						}
					}
					if dupCount > prev {
						// The first poll and the first poll that sees the
						// column are baselines: earlier duplicates are not ours.
						if c.window.Primed() && dupLoad == nil {
							duplicates[vals[0]] += float64(dupCount - prev)
						}
						dupUpdates[rk] = dupCount
					}
				}
				return nil
			})
	})
	c.warn.flush(&c.tableBase, err == nil)
	if err != nil {
		return nil, err
	}
	c.hasDup = hasDup
	if dupLoad != nil {
		c.dupSeen = dupLoad
		c.dupLoaded = true
	}
	for rk, n := range dupUpdates {
		c.dupSeen[rk] = n
	}
	c.scopes.merge(seenScopes)
	c.unmapped.merge(unmapped)
	addCounts(c.transitions, transitions)
	addCounts(c.conflicts, conflicts)
	addCounts(c.duplicates, duplicates)
	return c.metrics(gauges), nil
}

func (c *Idempotency) metrics(gauges map[string]*agg) []prometheus.Metric {
	allStatuses, openStatuses := c.cfg.Statuses.CanonicalNames(), config.IdempotencyOpenStatuses()
	var out []prometheus.Metric
	for _, vals := range c.scopes.sorted() {
		scope := vals[0]
		open := openStatuses
		all := allStatuses
		if _, ok := c.unmapped[tupleKey(scope)]; ok {
			open = append(append([]string(nil), open...), config.Unmapped)
			all = append(append([]string(nil), all...), config.Unmapped)
		}
		for _, st := range open {
			a := gauges[tupleKey(scope, st)]
			if a == nil {
				a = &agg{}
			}
			out = append(out,
				c.gauge(catalog.IdempotencyRecords, a.count, c.database, scope, st),
				c.gauge(catalog.IdempotencyOldestRecordAge, a.oldest, c.database, scope, st),
				c.gauge(catalog.IdempotencyStaleRecords, a.stale, c.database, scope, st),
			)
		}
		for _, st := range all {
			out = append(out, c.counter(catalog.IdempotencyTransitions, c.transitions[tupleKey(scope, st)], c.database, scope, st))
		}
		out = append(out, c.counter(catalog.IdempotencyConflicts, c.conflicts[scope], c.database, scope))
		if c.hasDup {
			out = append(out, c.counter(catalog.IdempotencyDuplicatesPrevented, c.duplicates[scope], c.database, scope))
		}
	}
	return out
}
