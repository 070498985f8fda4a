package tables

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/histogram"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/blocks/presets"
	"github.com/workflow-exporter/workflow-exporter/blocks/watermark"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// Outbox watches the event outbox (docs/design.md, "The outbox"): the backlog the
// publisher has not drained, failed events, events retried again and
// again, and the flow in and out.
//
// Gauges come from unpublished rows only (a partial index on the shape's
// open predicate, published_at IS NULL for a mapped table); counters come
// from the recent window of the creation and publication times (see package
// watermark). Nothing reads published history. The table is a mapped one
// or a library's (a preset: outbox_shape.go); the series its shape cannot
// support are not served.
type Outbox struct {
	tableBase
	cfg config.OutboxTable

	created   *watermark.Window
	published *watermark.Window
	known     tuples

	createdTotal   map[string]float64
	publishedTotal map[string]float64
	delay          histogram.Dual
	logged         map[string]bool
}

// OutboxOptions configures an Outbox collector.
type OutboxOptions = Options[config.OutboxTable]

// NewOutbox returns an outbox collector.
func NewOutbox(o OutboxOptions) *Outbox {
	c := &Outbox{
		tableBase: newTableBase(o, catalog.OutboxEventsPending, catalog.OutboxOldestPendingAge, catalog.OutboxEventsFailed,
			catalog.OutboxOldestFailedAge, catalog.OutboxEventsRetrying,
			catalog.OutboxEventsCreated, catalog.OutboxEventsPublished, catalog.OutboxPublishDelay, catalog.OutboxConsumerInfo),
		cfg:            o.Table,
		created:        watermark.New(o.LateCommitWindow),
		published:      watermark.New(o.LateCommitWindow),
		known:          tuples{},
		createdTotal:   map[string]float64{},
		publishedTotal: map[string]float64{},
		logged:         map[string]bool{},
	}
	c.keep(c.Name(), tableParts{windows: []*watermark.Window{c.created, c.published}, kept: []keptTuples{{set: c.known}},
		counters: []map[string]float64{c.createdTotal, c.publishedTotal}})
	return c
}

// StateKey implements collectors.Stateful.
func (c *Outbox) StateKey() string {
	col := c.cfg.Columns
	return c.stateKey("outbox", c.cfg.Table+" preset="+c.cfg.Preset, col.EventID, col.CreatedAt, col.PublishedAt)
}

// Name implements collectors.Collector.
func (c *Outbox) Name() string { return "outbox" }

// outboxPlan is the collector's queries for one shape of its table.
type outboxPlan struct {
	shape  outboxShape
	series map[string]bool
	req    pgschema.Requirements
	// gaugeArgs are the gauge query's arguments (retrying_after_attempts,
	// when the shape counts attempts).
	gaugeArgs                                      []any
	sqlGauges, sqlCreated, sqlPublished, sqlErrors string
	list                                           listQuery
}

func (p *outboxPlan) requirements() pgschema.Requirements { return p.req }
func (p *outboxPlan) notices() (notes, warnings []string) { return p.shape.notes, p.shape.warnings }

// plan returns the queries for the table as cols says it is (nil: the
// default shape); versioned says whether its rows carry versions
// (pollAt.versioned).
func (c *Outbox) plan(cols map[string]pgschema.ColumnType, versioned bool) (*outboxPlan, error) {
	s, err := outboxShapeOf(c.cfg, c.key, cols)
	if err != nil {
		return nil, err
	}
	p := &outboxPlan{shape: s, series: s.series()}
	t := pgschema.QuoteTable(s.table)
	var retrying string
	retrying, p.gaugeArgs = retryingGauge(s.attempts, c.cfg.RetryingAfterAttempts)
	p.sqlGauges = fmt.Sprintf(`SELECT %[1]s, %[2]s, %[3]s AS failed, count(*)::float8, %[4]s, %[5]s
FROM %[6]s%[7]s
GROUP BY 1, 2, 3`, s.agg, s.typ, s.failedFlag(), s.created.age(), retrying, t, where(s.open))
	if p.series[presets.OutboxCreated] {
		p.sqlCreated = fmt.Sprintf(`SELECT %[1]s, %[2]s, %[3]s, %[4]s
FROM %[5]s WHERE %[6]s AND %[7]s`, s.id, s.agg, s.typ, s.created.value(), t, s.created.after("$1"), newVersions("$2", versioned))
	}
	if p.series[presets.OutboxPublished] {
		delay := "0::float8"
		if s.created.present() {
			delay = fmt.Sprintf("GREATEST(extract(epoch FROM %s - %s)::float8, 0)", s.published.value(), s.created.value())
		}
		p.sqlPublished = fmt.Sprintf(`SELECT %[1]s, %[2]s, %[3]s, %[4]s, %[5]s
FROM %[6]s WHERE %[7]s AND %[8]s`, s.id, s.agg, s.typ, s.published.value(), delay, t, s.published.after("$1"), newVersions("$2", versioned))
	}
	if s.errorText != "" {
		p.sqlErrors = errorRowsSQL(t, s.id, s.errorText, s.created, s.open)
	}
	p.list = c.outboxList(s)
	p.req = c.requirements(p)
	return p, nil
}

// requirements is what the collector needs from its table with the plan.
func (c *Outbox) requirements(p *outboxPlan) pgschema.Requirements {
	s := p.shape
	preset := s.preset
	if s.variant != "" {
		preset += " " + s.variant
	}
	req := pgschema.Requirements{Kind: "outbox", Table: s.table, Preset: preset, Columns: s.columns}
	req.Indexes = append(req.Indexes, s.index("pending", s.libraryIndexes["pending"],
		"pending and failed gauges read only unpublished events; the index holds nothing else, so the query never touches published history"))
	req.Queries = append(req.Queries, pgschema.Query{Name: "pending", SQL: p.sqlGauges, Args: p.gaugeArgs})
	if p.sqlCreated != "" {
		req.Indexes = append(req.Indexes, pgschema.Index{Name: s.createdIndex, Columns: []string{s.created.column},
			LibraryIndex: s.libraryIndexes["created"],
			Why:          "events_created_total reads the last late_commit_window of inserts", Query: "created"})
		req.Queries = append(req.Queries, recentQuery("created", p.sqlCreated))
	}
	if p.sqlPublished != "" {
		cols := s.publishedIndexColumns
		if len(cols) == 0 {
			cols = []string{s.published.column}
		}
		req.Indexes = append(req.Indexes, pgschema.Index{Name: s.publishedIndex, Columns: cols,
			Where:        pgschema.QuoteIdent(s.published.column) + " IS NOT NULL",
			LibraryIndex: s.libraryIndexes["published"],
			Why:          "events_published_total and the publish-delay histogram read the last late_commit_window of publishes", Query: "published"})
		req.Queries = append(req.Queries, recentQuery("published", p.sqlPublished))
	}
	req.Queries = append(req.Queries, p.list.requirement())
	if p.sqlErrors != "" {
		req.Queries = append(req.Queries, errorsQuery("errors", p.sqlErrors))
	}
	return req
}

// Requirements says what the collector needs from its table, in the
// default shape; Resolve gives them for the table as it is.
func (c *Outbox) Requirements() pgschema.Requirements {
	return shapedRequirements(c.cfg.Table, c.key, c.plan)
}

type outboxGroup struct {
	pending, failed agg
	retrying        float64
}

// Collect implements collectors.Collector.
func (c *Outbox) Collect(ctx context.Context, sink *collectors.Sink) ([]prometheus.Metric, error) {
	groups := byTuple[outboxGroup]{} // aggregate_type, event_type
	newCreate, newPub := map[string]float64{}, map[string]float64{}
	var delays []float64
	seen := tuples{}
	report := statusReport{sink: sink}
	var plan *outboxPlan
	err := c.poll(ctx, c.cfg.Table, []*watermark.Window{c.created, c.published}, func(ctx context.Context, tx pgx.Tx, at pollAt) error {
		var err error
		if plan, err = resolvePlan(ctx, tx, c.cfg.Table, c.key, at.versioned, c.plan); err != nil {
			return err
		}
		var aggType, evType, id string
		var failed bool
		var count, oldest, retrying, delay float64
		var ts time.Time
		err = c.eachOffered(ctx, tx, "outbox pending query", plan.sqlGauges, plan.gaugeArgs, []any{&aggType, &evType, &failed, &count, &oldest, &retrying},
			func() []string { return []string{aggType, evType} }, func() error {
				vals := c.limiter.Admit(aggType, evType)
				seen.add(vals...)
				if g := groups.at(vals...); failed {
					g.failed.merge(count, oldest, 0)
				} else {
					g.pending.merge(count, oldest, 0)
					g.retrying += retrying
				}
				return nil
			})
		if err != nil {
			return err
		}
		if err := c.readOutboxStatus(ctx, tx, plan, groups, &report); err != nil {
			return err
		}
		if plan.sqlCreated != "" {
			err = each(ctx, tx, "outbox created query", plan.sqlCreated, []any{c.created.Lower(at.now), at.since(c.created)}, []any{&id, &aggType, &evType, &ts}, func() error {
				vals := c.limiter.Admit(aggType, evType)
				seen.add(vals...)
				if c.created.Observe(ts, id) {
					newCreate[tupleKey(vals...)]++
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		if plan.sqlPublished == "" {
			return nil
		}
		return each(ctx, tx, "outbox published query", plan.sqlPublished, []any{c.published.Lower(at.now), at.since(c.published)}, []any{&id, &aggType, &evType, &ts, &delay}, func() error {
			vals := c.limiter.Admit(aggType, evType)
			seen.add(vals...)
			if c.published.Observe(ts, id) {
				newPub[tupleKey(vals...)]++
				delays = append(delays, delay)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	// The poll succeeded: only now does it change the collector's state.
	c.logOnce(c.logged, plan.shape.notes, plan.shape.warnings)
	c.known.merge(seen)
	report.send()
	addCounts(c.createdTotal, newCreate)
	addCounts(c.publishedTotal, newPub)
	for _, d := range delays {
		c.delay.Observe(c.cfg.PublishDelayBuckets, d)
	}
	return append(c.metrics(plan.series, groups), c.skippedMetric()), nil
}

// metrics are the series the shape supports, for every label tuple seen.
func (c *Outbox) metrics(series map[string]bool, groups byTuple[outboxGroup]) []prometheus.Metric {
	var out []prometheus.Metric
	for _, vals := range c.known.sorted() {
		k := tupleKey(vals...)
		g := groups.of(vals...)
		lv := append([]string{c.database}, vals...)
		for _, m := range []struct {
			name string
			v    float64
		}{
			{catalog.OutboxEventsPending, g.pending.count},
			{catalog.OutboxOldestPendingAge, g.pending.oldest},
			{catalog.OutboxEventsFailed, g.failed.count},
			{catalog.OutboxOldestFailedAge, g.failed.oldest},
			{catalog.OutboxEventsRetrying, g.retrying},
		} {
			if series[m.name] {
				out = append(out, c.gauge(m.name, m.v, lv...))
			}
		}
		if series[catalog.OutboxEventsCreated] {
			out = append(out, c.counter(catalog.OutboxEventsCreated, c.createdTotal[k], lv...))
		}
		if series[catalog.OutboxEventsPublished] {
			out = append(out, c.counter(catalog.OutboxEventsPublished, c.publishedTotal[k], lv...))
		}
	}
	if series[catalog.OutboxPublishDelay] {
		out = append(out, c.delay.MustMetric(c.descs.Get(catalog.OutboxPublishDelay), c.cfg.PublishDelayBuckets, c.database))
	}
	// Who deduplicates the events (the deliveries from this outbox), for
	// the alert that compares the oldest pending event with the consumer
	// inbox's retention horizon.
	for _, cons := range c.cfg.Consumers {
		out = append(out, c.gauge(catalog.OutboxConsumerInfo, 1, c.database, cons.Database, cons.SourceSystem))
	}
	return out
}

// VariantRequirements are the requirements of every variant of the
// table's preset (one for a mapped table): what deploy/sql/presets is
// generated from, so the indexes serve each schema version.
func (c *Outbox) VariantRequirements() []pgschema.Requirements {
	if c.cfg.Preset == "" {
		return []pgschema.Requirements{c.Requirements()}
	}
	var out []pgschema.Requirements
	for _, v := range presets.OutboxVariants(c.cfg.Preset) {
		cols := map[string]pgschema.ColumnType{}
		for _, name := range v.Columns {
			cols[name] = pgschema.Text
		}
		p, err := c.plan(cols, true)
		if err != nil {
			panic(err) // a preset's own columns always resolve
		}
		out = append(out, p.req)
	}
	return out
}
