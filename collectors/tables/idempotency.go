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
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// Idempotency watches the idempotency record table (docs/design.md, "The
// idempotency record"): work
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
	// dup is the duplicate_count last seen per record that has one
	// (dupmemory.go); absent means 0. hasDup: the table has the column.
	dup    *dupMemory
	hasDup bool

	dupColumn string
	logged    map[string]bool
}

// idemStatus is the idempotency table's status column with its mapping,
// resolved for the column's type (statuscol.go).
type idemStatus struct {
	col statusColumn
	resolvedStatuses
}

// open selects the non-terminal records, a NULL status included.
func (s idemStatus) open() string {
	return s.col.notIn(s.values(vocab.IdempotencyTerminalStatuses()...))
}

// resolveIdemStatus resolves the status column of an idempotency table
// (cols nil: a text column, the default shape).
func resolveIdemStatus(cfg config.IdempotencyTable, key string, cols map[string]pgschema.ColumnType) (idemStatus, error) {
	col, err := statusColumnIn(cfg.Table, key, cfg.Columns.Status, cols)
	if err != nil {
		return idemStatus{}, err
	}
	return idemStatus{col, resolveStatuses(key+".statuses", cfg.Statuses, col)}, nil
}

// idemRequirements says what a collector of the idempotency table needs
// (requirements, for a status column), with a text status column; its
// Resolve gives them for the column's type, with the status notes when
// notes says the collector is the one to give them.
func idemRequirements(cfg config.IdempotencyTable, key string, requirements func(idemStatus) pgschema.Requirements, notes bool) pgschema.Requirements {
	st, err := resolveIdemStatus(cfg, key, nil)
	if err != nil {
		panic(err) // a text column always resolves
	}
	req := requirements(st)
	req.Resolve = func(ctx context.Context, tx pgx.Tx) (pgschema.Resolved, error) {
		cols, err := columnTypes(ctx, tx, cfg.Table, key+".table")
		if err != nil {
			return pgschema.Resolved{}, err
		}
		st, err := resolveIdemStatus(cfg, key, cols)
		if err != nil {
			return pgschema.Resolved{}, err
		}
		r := pgschema.Resolved{Requirements: requirements(st)}
		if notes {
			r.Notes, r.Warnings = st.notes, st.warnings
		}
		return r, nil
	}
	return req
}

// resolveIdem reads the idempotency table's columns, resolves its status
// column and returns the requirements for them, after checking that the
// columns exist (present: which optional ones do).
func resolveIdem(ctx context.Context, tx pgx.Tx, cfg config.IdempotencyTable, key string, requirements func(idemStatus) pgschema.Requirements) (st idemStatus, present map[string]bool, req pgschema.Requirements, err error) {
	cols, err := columnTypes(ctx, tx, cfg.Table, key+".table")
	if err != nil {
		return idemStatus{}, nil, pgschema.Requirements{}, err
	}
	if st, err = resolveIdemStatus(cfg, key, cols); err != nil {
		return idemStatus{}, nil, pgschema.Requirements{}, err
	}
	req = requirements(st)
	present, err = pgschema.CheckColumns(req, cols)
	return st, present, req, err
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
		dup:         newDupMemory(o.Table.MaxRememberedDuplicates),
		dupColumn:   config.DefaultDuplicateCountColumn,
		logged:      map[string]bool{},
	}
	if o.Table.Columns.DuplicateCount != nil {
		c.dupColumn = *o.Table.Columns.DuplicateCount
	}
	c.keep(c.Name(), tableParts{windows: []*watermark.Window{c.window}, kept: []keptTuples{{set: c.scopes}, {set: c.unmapped}},
		counters: []map[string]float64{c.transitions, c.conflicts, c.duplicates}})
	return c
}

// StateKey implements collectors.Stateful.
func (c *Idempotency) StateKey() string {
	col := c.cfg.Columns
	return c.stateKey("idempotency", c.cfg.Table, col.Scope, col.Key, col.Status, col.UpdatedAt, c.dupColumn)
}

// SaveState implements collectors.Stateful.
func (c *Idempotency) SaveState() ([]byte, error) { return c.saveState(c.dup) }

// LoadState implements collectors.Stateful: see state.go; the duplicate
// memory is restored with the windows (resume) and is then current if it
// was; otherwise a baseline scan runs at the first collections.
func (c *Idempotency) LoadState(data []byte, resume bool) error {
	return c.loadState(data, resume, c.dup)
}

// Remembered implements collectors.Remembering.
func (c *Idempotency) Remembered(note func(kind string, n int)) {
	c.remembered(note)
	note(vocab.RememberedDuplicateCounts, len(c.dup.m))
}

// sqlGauges reads the open records by scope and status.
func (c *Idempotency) sqlGauges(st idemStatus) string {
	col := c.cfg.Columns
	return fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), COALESCE(%[2]s, ''), count(*)::float8,
	COALESCE(extract(epoch FROM now() - min(%[3]s))::float8, 0),
	(count(*) FILTER (WHERE %[3]s < now() - make_interval(secs => $1)))::float8
FROM %[4]s WHERE %[5]s
GROUP BY 1, 2`, pgschema.QuoteIdent(col.Scope), st.col.text(), pgschema.QuoteIdent(col.UpdatedAt), pgschema.QuoteTable(c.cfg.Table), st.open())
}

// Name implements collectors.Collector.
func (c *Idempotency) Name() string { return "idempotency" }

// sqlActivity reads the records updated in the window ($1) that no earlier
// poll read (newVersions, $2).
func (c *Idempotency) sqlActivity(withDup, versioned bool) string {
	col := c.cfg.Columns
	dup := "0::bigint"
	if withDup {
		dup = fmt.Sprintf("COALESCE(%s, 0)::bigint", pgschema.QuoteIdent(c.dupColumn))
	}
	return fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), %[2]s::text, COALESCE(%[3]s::text, ''), %[4]s::timestamptz, COALESCE(%[5]s::text, ''), %[6]s
FROM %[7]s WHERE %[4]s > $1::timestamptz AND %[8]s`, pgschema.QuoteIdent(col.Scope), pgschema.QuoteIdent(col.Key), pgschema.QuoteIdent(col.Status), pgschema.QuoteIdent(col.UpdatedAt),
		pgschema.QuoteIdent(col.ErrorCode), dup, pgschema.QuoteTable(c.cfg.Table), newVersions("$2", versioned))
}

// Requirements says what the collector needs from its table, with a text
// status column; Resolve gives them for the column's type.
func (c *Idempotency) Requirements() pgschema.Requirements {
	return idemRequirements(c.cfg, c.key, c.requirements, true)
}

// requirements is what the collector needs from its table with the status
// column st.
func (c *Idempotency) requirements(st idemStatus) pgschema.Requirements {
	col := c.cfg.Columns
	base := pgschema.BaseName(c.cfg.Table)
	return pgschema.Requirements{
		Kind:  "idempotency",
		Table: c.cfg.Table,
		Columns: append(c.columns(
			"scope", col.Scope, "key", col.Key, "status", col.Status,
			"updated_at", col.UpdatedAt, "error_code", col.ErrorCode, "job_reference", col.JobReference),
			pgschema.Column{Key: c.key + ".columns.duplicate_count", Name: c.dupColumn, Optional: col.DuplicateCount == nil}),
		Indexes: []pgschema.Index{
			{Name: base + "_open_idx", Columns: []string{col.Scope, col.Status, col.UpdatedAt},
				Where: st.open(),
				Why:   "records, oldest age and stale gauges read only non-terminal records; terminal history stays out of the index", Query: "open"},
			{Name: base + "_updated_at_idx", Columns: []string{col.UpdatedAt},
				Why: "transitions, conflicts and duplicates counters read the last late_commit_window of updates", Query: "activity"},
			{Name: base + "_duplicates_idx", Columns: []string{col.UpdatedAt},
				Where: pgschema.QuoteIdent(c.dupColumn) + " > 0",
				Why:   "the scan of the records that absorbed duplicates, in keyset pages by updated_at, at start and hourly (only with the duplicate_count extension)", Query: "duplicates", Requires: c.dupColumn},
		},
		Queries: []pgschema.Query{
			{Name: "open", SQL: c.sqlGauges(st), Args: []any{900.0}},
			recentQuery("activity", c.sqlActivity(false, true)),
			{Name: "duplicates", SQL: c.sqlDupScan(), Args: []any{true, time.Time{}, "", ""}, Requires: c.dupColumn},
			c.idempotencyLists(st)[0].requirement(),
			c.idempotencyLists(st)[1].requirement(),
		},
	}
}

// Collect implements collectors.Collector: the open records (gauges) and
// the recent activity (counters), in one transaction; then, when one is
// due, pages of the duplicate memory's scan (dupmemory.go), each its own
// transaction.
func (c *Idempotency) Collect(ctx context.Context, sink *collectors.Sink) ([]prometheus.Metric, error) {
	p := c.newIdempotencyPoll()
	p.status.sink = sink
	p.counting = c.dup.current
	p.skippedBefore = c.window.Skipped()
	err := c.poll(ctx, c.cfg.Table, []*watermark.Window{c.window}, func(ctx context.Context, tx pgx.Tx, at pollAt) error {
		var present map[string]bool
		var err error
		if p.st, present, _, err = resolveIdem(ctx, tx, c.cfg, c.key, c.requirements); err != nil {
			return err
		}
		p.hasDup = present[c.dupColumn]
		if err := p.readOpen(ctx, tx); err != nil {
			return err
		}
		if err := p.readStatus(ctx, tx); err != nil {
			return err
		}
		p.dbNow = at.now
		return p.readActivity(ctx, tx, at)
	})
	c.warn.flush(&c.tableBase, err == nil)
	if err != nil {
		return nil, err
	}
	c.logOnce(c.logged, p.st.notes, p.st.warnings)
	p.commit()
	p.status.send()
	if c.hasDup && (c.dup.scan != nil || c.dup.needsScanNow) {
		// After the poll, which committed: a failed page is logged, not
		// the collection's failure, and the scan goes on next time.
		err := c.scanDuplicates(ctx)
		if err != nil && !c.dup.scanFailing {
			c.logger.Warn("idempotency: the scan of the records' duplicate_count failed; it goes on at the next collection, and the duplicates counter waits for it", "database", c.database, "table", c.cfg.Table, "err", err)
		}
		c.dup.scanFailing = err != nil
	}
	return append(c.metrics(p.gauges), c.skippedMetric()), nil
}

// idempotencyPoll is what one collection of the idempotency table read. It
// changes the collector only in commit, once the whole read succeeded.
type idempotencyPoll struct {
	c        *Idempotency
	conflict map[string]bool // the configured conflict codes
	// st is the status column as this poll resolved it.
	st idemStatus

	gauges                             byTuple[agg] // scope, status
	transitions, conflicts, duplicates map[string]float64
	// dupUpdates is the duplicate_count last seen per record in this
	// poll, with the update's time; counting says the duplicate memory is
	// current, so their growth counts (else this poll is a baseline).
	dupUpdates map[uint64]dupUpdate
	hasDup     bool
	counting   bool
	dbNow      time.Time
	// skippedBefore is the window's skipped total before this poll.
	skippedBefore    time.Duration
	scopes, unmapped tuples
	// status holds the status page's lists until the poll succeeded.
	status statusReport
}

func (c *Idempotency) newIdempotencyPoll() *idempotencyPoll {
	p := &idempotencyPoll{c: c, conflict: map[string]bool{},
		gauges: byTuple[agg]{}, transitions: map[string]float64{}, conflicts: map[string]float64{}, duplicates: map[string]float64{},
		dupUpdates: map[uint64]dupUpdate{}, scopes: tuples{}, unmapped: tuples{}}
	for _, code := range c.cfg.ConflictCodes {
		p.conflict[code] = true
	}
	return p
}

// canonical maps a stored status, remembering an unmapped one for the
// scope's unmapped series and the log.
func (p *idempotencyPoll) canonical(stored, scope string) string {
	canon := p.st.canonical(stored)
	if canon == vocab.Unmapped {
		p.unmapped.add(scope)
		p.c.warn.note(stored)
	}
	return canon
}

// readOpen reads the gauges: records per scope and open status.
func (p *idempotencyPoll) readOpen(ctx context.Context, tx pgx.Tx) error {
	c := p.c
	var scope, status string
	var count, oldest, stale float64
	return c.eachOffered(ctx, tx, "idempotency open-records query", c.sqlGauges(p.st), []any{time.Duration(c.cfg.StaleAfter).Seconds()},
		[]any{&scope, &status, &count, &oldest, &stale}, func() []string { return []string{scope} }, func() error {
			vals := c.limiter.Admit(scope)
			p.scopes.add(vals...)
			p.gauges.at(vals[0], p.canonical(status, vals[0])).merge(count, oldest, stale)
			return nil
		})
}

// dupUpdate is a record's duplicate_count as one poll saw it.
type dupUpdate struct {
	n  int64
	ts time.Time
}

// readActivity reads the records updated in the window and counts the
// statuses they reach, their conflicts and the duplicates they absorbed.
func (p *idempotencyPoll) readActivity(ctx context.Context, tx pgx.Tx, at pollAt) error {
	c := p.c
	var scope, key, status, errorCode string
	var updated time.Time
	var dupCount int64
	return each(ctx, tx, "idempotency activity query", c.sqlActivity(p.hasDup, at.versioned), []any{c.window.Lower(at.now), at.since(c.window)},
		[]any{&scope, &key, &status, &updated, &errorCode, &dupCount}, func() error {
			vals := c.limiter.Admit(scope)
			p.scopes.add(vals...)
			canon := p.canonical(status, vals[0])
			if c.window.Observe(updated, "t", scope, key, canon) {
				p.transitions[tupleKey(vals[0], canon)]++
			}
			if p.conflict[errorCode] && c.window.Observe(updated, "c", scope, key) {
				p.conflicts[vals[0]]++
			}
			if p.hasDup {
				p.countDuplicates(vals[0], c.dup.hash(scope, key), dupCount, updated)
			}
			return nil
		})
}

// countDuplicates counts the growth of one record's duplicate_count.
func (p *idempotencyPoll) countDuplicates(scopeLabel string, record uint64, n int64, ts time.Time) {
	prev := p.c.dup.count(record)
	if u, ok := p.dupUpdates[record]; ok {
		prev = u.n
	}
	if n <= prev {
		return
	}
	// The first poll, and every poll while the memory is not current (a
	// scan is due or under way, a span was skipped), are baselines:
	// earlier duplicates are not ours.
	if p.counting && p.c.window.Primed() && p.c.window.Skipping() == 0 {
		p.duplicates[scopeLabel] += float64(n - prev)
	}
	p.dupUpdates[record] = dupUpdate{n, ts}
}

// commit folds a successful poll into the collector's state.
func (p *idempotencyPoll) commit() {
	c := p.c
	if p.hasDup && !c.hasDup {
		c.dup.stale() // the column appeared: a baseline scan
	}
	c.hasDup = p.hasDup
	for h, u := range p.dupUpdates {
		if u.n > c.dup.count(h) {
			c.dup.set(h, u.n, u.ts)
		}
	}
	if c.hasDup {
		if c.window.Skipped() > p.skippedBefore {
			// Updates in the skipped span were not read: the counts
			// may be behind.
			c.dup.stale()
		}
		c.dup.needsScanNow = c.dup.scan == nil && c.dup.needsScan(p.dbNow)
		c.dup.bound(c)
	}
	c.scopes.merge(p.scopes)
	c.unmapped.merge(p.unmapped)
	addCounts(c.transitions, p.transitions)
	addCounts(c.conflicts, p.conflicts)
	addCounts(c.duplicates, p.duplicates)
}

func (c *Idempotency) metrics(gauges byTuple[agg]) []prometheus.Metric {
	allStatuses, openStatuses := c.cfg.Statuses.CanonicalNames(), vocab.IdempotencyOpenStatuses()
	var out []prometheus.Metric
	for _, vals := range c.scopes.sorted() {
		scope := vals[0]
		open := openStatuses
		all := allStatuses
		if _, ok := c.unmapped[tupleKey(scope)]; ok {
			open = append(append([]string(nil), open...), vocab.Unmapped)
			all = append(append([]string(nil), all...), vocab.Unmapped)
		}
		for _, st := range open {
			a := gauges.of(scope, st)
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
