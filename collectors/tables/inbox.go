package tables

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/blocks/presets"
	"github.com/workflow-exporter/workflow-exporter/blocks/watermark"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// Inbox watches the message inbox (docs/design.md, "The inbox"): messages received but
// not finished, how old the oldest is, how many are retried again and
// again, how many finish, and, where the library keeps them, the dead
// letters. The table is a mapped one or a library's (a preset:
// inbox_shape.go); the series its shape cannot support are not served.
type Inbox struct {
	tableBase
	cfg config.InboxTable

	window    *watermark.Window
	known     tuples // source_system, message_type
	unmapped  tuples
	warn      *unmappedStatuses
	processed map[string]float64 // source_system, message_type, status
	logged    map[string]bool
}

// InboxOptions configures an Inbox collector.
type InboxOptions = Options[config.InboxTable]

// NewInbox returns an inbox collector.
func NewInbox(o InboxOptions) *Inbox {
	c := &Inbox{
		tableBase: newTableBase(o, catalog.InboxMessages, catalog.InboxOldestMessageAge, catalog.InboxMessagesProcessed,
			catalog.InboxMessagesRetrying, catalog.InboxMessagesFailed, catalog.InboxOldestFailedAge),
		cfg:       o.Table,
		window:    watermark.New(o.LateCommitWindow),
		known:     tuples{},
		unmapped:  tuples{},
		warn:      newUnmappedStatuses("inbox", o.Table.Table, o.Table.Columns.Status),
		processed: map[string]float64{},
		logged:    map[string]bool{},
	}
	c.keep(c.Name(), tableParts{windows: []*watermark.Window{c.window}, kept: []keptTuples{{set: c.known}, {set: c.unmapped}}, counters: []map[string]float64{c.processed}})
	return c
}

// StateKey implements collectors.Stateful.
func (c *Inbox) StateKey() string {
	col := c.cfg.Columns
	return c.stateKey("inbox", c.cfg.Table+" preset="+c.cfg.Preset, col.SourceSystem, col.MessageID, col.Status, col.ProcessedAt)
}

// Name implements collectors.Collector.
func (c *Inbox) Name() string { return "inbox" }

// inboxPlan is the collector's queries for one shape of its table.
type inboxPlan struct {
	shape     inboxShape
	series    map[string]bool
	req       pgschema.Requirements
	gaugeArgs []any
	// sqlDead and sqlDeadErrors read the dead-letter table.
	sqlGauges, sqlProcessed, sqlErrors, sqlDead, sqlDeadErrors string
	lists                                                      []listQuery
}

func (p *inboxPlan) requirements() pgschema.Requirements { return p.req }
func (p *inboxPlan) notices() (notes, warnings []string) {
	return p.shape.statuses.notes, p.shape.statuses.warnings
}

// plan returns the queries for the table as cols says it is (nil: the
// default shape).
// versioned says whether its rows carry versions (pollAt.versioned).
func (c *Inbox) plan(cols map[string]pgschema.ColumnType, versioned bool) (*inboxPlan, error) {
	s, err := inboxShapeOf(c.cfg, c.key, cols)
	if err != nil {
		return nil, err
	}
	p := &inboxPlan{shape: s, series: s.series()}
	t := pgschema.QuoteTable(s.table)
	if !s.noOpen {
		var retrying string
		retrying, p.gaugeArgs = retryingGauge(s.attempts, c.cfg.RetryingAfterAttempts)
		p.sqlGauges = fmt.Sprintf(`SELECT %[1]s, %[2]s, %[3]s, count(*)::float8,
	%[4]s, %[5]s
FROM %[6]s%[7]s
GROUP BY 1, 2, 3`, s.source, s.typ, s.status, s.received.age(), retrying, t, where(s.open))
		p.lists = c.inboxLists(s)
		if s.errorText != "" {
			p.sqlErrors = errorRowsSQL(t, s.id, s.errorText, s.received, s.open)
		}
	}
	if s.processed.present() {
		p.sqlProcessed = fmt.Sprintf(`SELECT %[1]s, %[2]s, %[3]s, %[4]s, %[5]s
FROM %[6]s WHERE %[7]s AND %[8]s`, s.source, s.id, s.typ, s.status, s.processed.value(), t, s.processed.after("$1"), newVersions("$2", versioned))
	}
	if d := s.dead; d != nil {
		dt := pgschema.QuoteTable(d.table)
		p.sqlDead = fmt.Sprintf(`SELECT %[1]s, %[2]s, count(*)::float8, %[3]s
FROM %[4]s%[5]s
GROUP BY 1, 2`, d.source, d.typ, d.since.age(), dt, where(d.where))
		if d.errorText != "" {
			p.sqlDeadErrors = errorRowsSQL(dt, d.id, d.errorText, d.since, d.where)
		}
	}
	p.req = c.requirements(p)
	return p, nil
}

// requirements is what the collector needs from its table (and its
// dead-letter table) with the plan.
func (c *Inbox) requirements(p *inboxPlan) pgschema.Requirements {
	s := p.shape
	req := pgschema.Requirements{Kind: "inbox", Table: s.table, Preset: s.preset, Columns: s.columns}
	if p.sqlGauges != "" {
		req.Indexes = append(req.Indexes, s.index("open", s.libraryIndexes["open"],
			"message and oldest-age gauges read only unfinished messages; finished ones stay out of the index"))
		req.Queries = append(req.Queries, pgschema.Query{Name: "open", SQL: p.sqlGauges, Args: p.gaugeArgs})
	}
	if p.sqlProcessed != "" {
		req.Indexes = append(req.Indexes, pgschema.Index{Name: s.processedIndex, Columns: []string{s.processed.column},
			Where:        pgschema.QuoteIdent(s.processed.column) + " IS NOT NULL",
			LibraryIndex: s.libraryIndexes["processed"],
			Why:          "messages_processed_total reads the last late_commit_window of finished messages", Query: "processed"})
		req.Queries = append(req.Queries, recentQuery("processed", p.sqlProcessed))
	}
	for _, l := range p.lists {
		req.Queries = append(req.Queries, l.requirement())
	}
	if p.sqlErrors != "" {
		req.Queries = append(req.Queries, errorsQuery("errors", p.sqlErrors))
	}
	if d := s.dead; d != nil {
		dr := pgschema.Requirements{Kind: "inbox", Table: d.table, Preset: s.preset, Columns: d.columns,
			Indexes: []pgschema.Index{{Query: "dead_letters", NoneNeeded: d.rows}},
			Queries: []pgschema.Query{{Name: "dead_letters", SQL: p.sqlDead}}}
		if p.sqlDeadErrors != "" {
			dr.Queries = append(dr.Queries, errorsQuery("dead_letter_errors", p.sqlDeadErrors))
		}
		req.Related = []pgschema.Requirements{dr}
	}
	return req
}

// Requirements says what the collector needs from its table, in the
// default shape; Resolve gives them for the table as it is.
func (c *Inbox) Requirements() pgschema.Requirements {
	return shapedRequirements(c.cfg.Table, c.key, c.plan)
}

// inboxGroup is one (source_system, message_type)'s retrying and dead
// letters.
type inboxGroup struct {
	retrying float64
	failed   agg
}

// Collect implements collectors.Collector.
func (c *Inbox) Collect(ctx context.Context, sink *collectors.Sink) ([]prometheus.Metric, error) {
	gauges := byTuple[agg]{}        // source_system, message_type, status
	groups := byTuple[inboxGroup]{} // source_system, message_type
	newProcessed := map[string]float64{}
	seen, unmapped := tuples{}, tuples{}
	terminal := map[string]bool{}
	for _, s := range vocab.InboxTerminalStatuses() {
		terminal[s] = true
	}
	report := statusReport{sink: sink}
	var plan *inboxPlan
	err := c.poll(ctx, c.cfg.Table, []*watermark.Window{c.window}, func(ctx context.Context, tx pgx.Tx, at pollAt) error {
		var err error
		if plan, err = resolvePlan(ctx, tx, c.cfg.Table, c.key, at.versioned, c.plan); err != nil {
			return err
		}
		st := plan.shape.statuses
		var source, msgType, status, id string
		var count, oldest, retrying float64
		var ts time.Time
		if plan.sqlGauges != "" {
			err = c.eachOffered(ctx, tx, "inbox open-messages query", plan.sqlGauges, plan.gaugeArgs, []any{&source, &msgType, &status, &count, &oldest, &retrying},
				func() []string { return []string{source, msgType} }, func() error {
					vals := c.limiter.Admit(source, msgType)
					seen.add(vals...)
					canon := st.canonical(status)
					if canon == vocab.Unmapped {
						unmapped.add(vals...)
						c.warn.note(status)
					}
					gauges.at(vals[0], vals[1], canon).merge(count, oldest, 0)
					groups.at(vals...).retrying += retrying
					return nil
				})
			if err != nil {
				return err
			}
		}
		if plan.sqlDead != "" {
			err = c.eachOffered(ctx, tx, "inbox dead-letter query", plan.sqlDead, nil, []any{&source, &msgType, &count, &oldest}, func() []string { return []string{source, msgType} }, func() error {
				vals := c.limiter.Admit(source, msgType)
				seen.add(vals...)
				groups.at(vals...).failed.merge(count, oldest, 0)
				return nil
			})
			if err != nil {
				return err
			}
		}
		if err := c.readInboxStatus(ctx, tx, plan, gauges, groups, &report); err != nil {
			return err
		}
		if plan.sqlProcessed == "" {
			return nil
		}
		return each(ctx, tx, "inbox processed query", plan.sqlProcessed, []any{c.window.Lower(at.now), at.since(c.window)}, []any{&source, &id, &msgType, &status, &ts}, func() error {
			vals := c.limiter.Admit(source, msgType)
			seen.add(vals...)
			canon := st.canonical(status)
			if terminal[canon] && c.window.Observe(ts, source, id, canon) {
				newProcessed[tupleKey(vals[0], vals[1], canon)]++
			}
			return nil
		})
	})
	c.warn.flush(&c.tableBase, err == nil)
	if err != nil {
		return nil, err
	}
	c.logOnce(c.logged, plan.shape.statuses.notes, plan.shape.statuses.warnings)
	c.known.merge(seen)
	c.unmapped.merge(unmapped)
	addCounts(c.processed, newProcessed)
	report.send()
	return append(c.metrics(plan.series, gauges, groups), c.skippedMetric()), nil
}

func (c *Inbox) metrics(series map[string]bool, gauges byTuple[agg], groups byTuple[inboxGroup]) []prometheus.Metric {
	openStatuses, terminalStatuses := vocab.InboxOpenStatuses(), vocab.InboxTerminalStatuses()
	var out []prometheus.Metric
	for _, vals := range c.known.sorted() {
		lv := []string{c.database, vals[0], vals[1]}
		if series[presets.InboxMessages] {
			open := openStatuses
			if _, ok := c.unmapped[tupleKey(vals...)]; ok {
				open = append(append([]string(nil), open...), vocab.Unmapped)
			}
			for _, st := range open {
				a := gauges.of(vals[0], vals[1], st)
				out = append(out, c.gauge(catalog.InboxMessages, a.count, append(lv, st)...))
				if series[presets.InboxOldestAge] {
					out = append(out, c.gauge(catalog.InboxOldestMessageAge, a.oldest, append(lv, st)...))
				}
			}
		}
		if series[presets.InboxProcessed] {
			for _, st := range terminalStatuses {
				out = append(out, c.counter(catalog.InboxMessagesProcessed, c.processed[tupleKey(vals[0], vals[1], st)], append(lv, st)...))
			}
		}
		g := groups.of(vals...)
		if series[presets.InboxRetrying] {
			out = append(out, c.gauge(catalog.InboxMessagesRetrying, g.retrying, lv...))
		}
		if series[presets.InboxFailed] {
			out = append(out, c.gauge(catalog.InboxMessagesFailed, g.failed.count, lv...))
		}
		if series[presets.InboxOldestFailed] {
			out = append(out, c.gauge(catalog.InboxOldestFailedAge, g.failed.oldest, lv...))
		}
	}
	return out
}
