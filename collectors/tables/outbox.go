package tables

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/histogram"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/blocks/watermark"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// Outbox watches the event outbox (docs/design.md, "The outbox"): the backlog the
// publisher has not drained, failed events, and the flow in and out.
//
// Gauges come from unpublished rows only (a partial index on
// published_at IS NULL); counters come from the recent window of created_at
// and published_at (see package watermark). Nothing reads published history.
type Outbox struct {
	tableBase
	cfg config.OutboxTable

	created   *watermark.Window
	published *watermark.Window
	known     tuples

	createdTotal   map[string]float64
	publishedTotal map[string]float64
	delay          histogram.Dual

	sqlGauges, sqlCreated, sqlPublished string
}

// OutboxOptions configures an Outbox collector.
type OutboxOptions = Options[config.OutboxTable]

// NewOutbox returns an outbox collector.
func NewOutbox(o OutboxOptions) *Outbox {
	c := &Outbox{
		tableBase: newTableBase(o, catalog.OutboxEventsPending, catalog.OutboxOldestPendingAge, catalog.OutboxEventsFailed,
			catalog.OutboxEventsCreated, catalog.OutboxEventsPublished, catalog.OutboxPublishDelay),
		cfg:            o.Table,
		created:        watermark.New(o.LateCommitWindow),
		published:      watermark.New(o.LateCommitWindow),
		known:          tuples{},
		createdTotal:   map[string]float64{},
		publishedTotal: map[string]float64{},
	}
	t := pgschema.QuoteTable(o.Table.Table)
	col := o.Table.Columns
	id, agg, typ, status := pgschema.QuoteIdent(col.EventID), pgschema.QuoteIdent(col.AggregateType), pgschema.QuoteIdent(col.EventType), pgschema.QuoteIdent(col.Status)
	createdAt, publishedAt := pgschema.QuoteIdent(col.CreatedAt), pgschema.QuoteIdent(col.PublishedAt)
	c.sqlGauges = fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), COALESCE(%[2]s::text, ''),
	COALESCE(%[3]s, false) AS failed,
	count(*)::float8, COALESCE(extract(epoch FROM now() - min(%[4]s))::float8, 0)
FROM %[5]s WHERE %[6]s IS NULL
GROUP BY 1, 2, 3`, agg, typ, statusIn(status+"::text", o.Table.FailedStatuses), createdAt, t, publishedAt)
	c.sqlCreated = fmt.Sprintf(`SELECT %[1]s::text, COALESCE(%[2]s::text, ''), COALESCE(%[3]s::text, ''), %[4]s::timestamptz
FROM %[5]s WHERE %[4]s > $1::timestamptz`, id, agg, typ, createdAt, t)
	c.sqlPublished = fmt.Sprintf(`SELECT %[1]s::text, COALESCE(%[2]s::text, ''), COALESCE(%[3]s::text, ''), %[4]s::timestamptz,
	GREATEST(extract(epoch FROM %[4]s - %[5]s)::float8, 0)
FROM %[6]s WHERE %[4]s > $1::timestamptz`, id, agg, typ, publishedAt, createdAt, t)
	return c
}

// Name implements collectors.Collector.
func (c *Outbox) Name() string { return "outbox" }

// Requirements says what the collector needs from its table.
func (c *Outbox) Requirements() pgschema.Requirements {
	col := c.cfg.Columns
	base := pgschema.BaseName(c.cfg.Table)
	return pgschema.Requirements{
		Kind:  "outbox",
		Table: c.cfg.Table,
		Columns: c.columns(
			"event_id", col.EventID, "aggregate_type", col.AggregateType, "event_type", col.EventType,
			"status", col.Status, "created_at", col.CreatedAt, "published_at", col.PublishedAt,
		),
		Indexes: []pgschema.Index{
			{Name: base + "_unpublished_idx", Columns: []string{col.AggregateType, col.EventType, col.CreatedAt},
				Where: pgschema.QuoteIdent(col.PublishedAt) + " IS NULL",
				Why:   "pending and failed gauges read only unpublished events; the index holds nothing else, so the query never touches published history", Query: "pending"},
			{Name: base + "_created_at_idx", Columns: []string{col.CreatedAt},
				Why: "events_created_total reads the last late_commit_window of inserts", Query: "created"},
			{Name: base + "_published_at_idx", Columns: []string{col.PublishedAt},
				Where: pgschema.QuoteIdent(col.PublishedAt) + " IS NOT NULL",
				Why:   "events_published_total and the publish-delay histogram read the last late_commit_window of publishes", Query: "published"},
		},
		Queries: []pgschema.Query{
			{Name: "pending", SQL: c.sqlGauges},
			recentQuery("created", c.sqlCreated),
			recentQuery("published", c.sqlPublished),
			c.outboxList().requirement(),
		},
	}
}

type outboxGroup struct {
	pending, failed agg
}

// Collect implements collectors.Collector.
func (c *Outbox) Collect(ctx context.Context, sink *collectors.Sink) ([]prometheus.Metric, error) {
	groups := map[string]*outboxGroup{}
	newCreate, newPub := map[string]float64{}, map[string]float64{}
	var delays []float64
	seen := tuples{}
	group := func(vals []string) *outboxGroup {
		k := tupleKey(vals...)
		if groups[k] == nil {
			groups[k] = &outboxGroup{}
		}
		return groups[k]
	}
	report := statusReport{sink: sink}
	err := c.poll(ctx, c.Requirements(), []*watermark.Window{c.created, c.published}, func(ctx context.Context, tx pgx.Tx, dbNow time.Time, _ map[string]bool) error {
		var aggType, evType, id string
		var failed bool
		var count, oldest, delay float64
		var ts time.Time
		err := c.eachOffered(ctx, tx, "outbox pending query", c.sqlGauges, nil, []any{&aggType, &evType, &failed, &count, &oldest}, func() []string { return []string{aggType, evType} }, func() error {
			vals := c.limiter.Admit(aggType, evType)
			seen.add(vals...)
			if g := group(vals); failed {
				g.failed.merge(count, oldest, 0)
			} else {
				g.pending.merge(count, oldest, 0)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := c.readOutboxStatus(ctx, tx, groups, &report); err != nil {
			return err
		}
		err = each(ctx, tx, "outbox created query", c.sqlCreated, []any{c.created.Lower(dbNow)}, []any{&id, &aggType, &evType, &ts}, func() error {
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
		return each(ctx, tx, "outbox published query", c.sqlPublished, []any{c.published.Lower(dbNow)}, []any{&id, &aggType, &evType, &ts, &delay}, func() error {
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
	c.known.merge(seen)
	report.send()
	addCounts(c.createdTotal, newCreate)
	addCounts(c.publishedTotal, newPub)
	for _, d := range delays {
		c.delay.Observe(c.cfg.PublishDelayBuckets, d)
	}
	return c.metrics(groups), nil
}

func (c *Outbox) metrics(groups map[string]*outboxGroup) []prometheus.Metric {
	var out []prometheus.Metric
	for _, vals := range c.known.sorted() {
		k := tupleKey(vals...)
		g := groups[k]
		if g == nil {
			g = &outboxGroup{}
		}
		lv := append([]string{c.database}, vals...)
		out = append(out,
			c.gauge(catalog.OutboxEventsPending, g.pending.count, lv...),
			c.gauge(catalog.OutboxOldestPendingAge, g.pending.oldest, lv...),
			c.gauge(catalog.OutboxEventsFailed, g.failed.count, lv...),
			c.counter(catalog.OutboxEventsCreated, c.createdTotal[k], lv...),
			c.counter(catalog.OutboxEventsPublished, c.publishedTotal[k], lv...),
		)
	}
	out = append(out, c.delay.MustMetric(c.descs.Get(catalog.OutboxPublishDelay), c.cfg.PublishDelayBuckets, c.database))
	return out
}
