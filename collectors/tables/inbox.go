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

// Inbox watches the message inbox (docs/design.md, "The inbox"): messages received but
// not finished, how old the oldest is, and how many finish.
type Inbox struct {
	tableBase
	cfg config.InboxTable

	window    *watermark.Window
	known     tuples // source_system, message_type
	unmapped  tuples
	warn      *unmappedStatuses
	processed map[string]float64 // source_system, message_type, status

	sqlGauges, sqlProcessed string
}

// InboxOptions configures an Inbox collector.
type InboxOptions = Options[config.InboxTable]

// NewInbox returns an inbox collector.
func NewInbox(o InboxOptions) *Inbox {
	c := &Inbox{
		tableBase: newTableBase(o, catalog.InboxMessages, catalog.InboxOldestMessageAge, catalog.InboxMessagesProcessed),
		cfg:       o.Table,
		window:    watermark.New(o.LateCommitWindow),
		known:     tuples{},
		unmapped:  tuples{},
		warn:      newUnmappedStatuses("inbox", o.Table.Table, o.Table.Columns.Status),
		processed: map[string]float64{},
	}
	col := o.Table.Columns
	t := pgschema.QuoteTable(o.Table.Table)
	c.sqlGauges = fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), COALESCE(%[2]s::text, ''), COALESCE(%[3]s::text, ''), count(*)::float8,
	COALESCE(extract(epoch FROM now() - min(%[4]s))::float8, 0)
FROM %[5]s WHERE %[6]s
GROUP BY 1, 2, 3`, pgschema.QuoteIdent(col.SourceSystem), pgschema.QuoteIdent(col.MessageType), pgschema.QuoteIdent(col.Status), pgschema.QuoteIdent(col.ReceivedAt), t, openStatusPredicate(col.Status, o.Table.TerminalValues()))
	c.sqlProcessed = fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), %[2]s::text, COALESCE(%[3]s::text, ''), COALESCE(%[4]s::text, ''), %[5]s::timestamptz
FROM %[6]s WHERE %[5]s > $1::timestamptz`, pgschema.QuoteIdent(col.SourceSystem), pgschema.QuoteIdent(col.MessageID), pgschema.QuoteIdent(col.MessageType), pgschema.QuoteIdent(col.Status), pgschema.QuoteIdent(col.ProcessedAt), t)
	return c
}

// Name implements collectors.Collector.
func (c *Inbox) Name() string { return "inbox" }

// Requirements says what the collector needs from its table.
func (c *Inbox) Requirements() pgschema.Requirements {
	col := c.cfg.Columns
	base := pgschema.BaseName(c.cfg.Table)
	return pgschema.Requirements{
		Kind:  "inbox",
		Table: c.cfg.Table,
		Columns: c.columns(
			"source_system", col.SourceSystem, "message_id", col.MessageID, "message_type", col.MessageType,
			"status", col.Status, "received_at", col.ReceivedAt, "processed_at", col.ProcessedAt,
		),
		Indexes: []pgschema.Index{
			{Name: base + "_open_idx", Columns: []string{col.SourceSystem, col.MessageType, col.Status, col.ReceivedAt},
				Where: openStatusPredicate(col.Status, c.cfg.TerminalValues()),
				Why:   "message and oldest-age gauges read only unfinished messages; finished ones stay out of the index", Query: "open"},
			{Name: base + "_processed_at_idx", Columns: []string{col.ProcessedAt},
				Where: pgschema.QuoteIdent(col.ProcessedAt) + " IS NOT NULL",
				Why:   "messages_processed_total reads the last late_commit_window of finished messages", Query: "processed"},
		},
		Queries: []pgschema.Query{
			{Name: "open", SQL: c.sqlGauges},
			recentQuery("processed", c.sqlProcessed),
			c.inboxLists()[0].requirement(),
			c.inboxLists()[1].requirement(),
		},
	}
}

// Collect implements collectors.Collector.
func (c *Inbox) Collect(ctx context.Context, sink *collectors.Sink) ([]prometheus.Metric, error) {
	gauges := map[string]*agg{}
	newProcessed := map[string]float64{}
	seen, unmapped := tuples{}, tuples{}
	terminal := map[string]bool{}
	for _, s := range vocab.InboxTerminalStatuses() {
		terminal[s] = true
	}
	report := statusReport{sink: sink}
	err := c.poll(ctx, c.Requirements(), []*watermark.Window{c.window}, func(ctx context.Context, tx pgx.Tx, dbNow time.Time, _ map[string]bool) error {
		var source, msgType, status, id string
		var count, oldest float64
		var ts time.Time
		err := c.eachOffered(ctx, tx, "inbox open-messages query", c.sqlGauges, nil, []any{&source, &msgType, &status, &count, &oldest}, func() []string { return []string{source, msgType} }, func() error {
			vals := c.limiter.Admit(source, msgType)
			seen.add(vals...)
			canon := c.cfg.Statuses.Canonical(status)
			if canon == vocab.Unmapped {
				unmapped.add(vals...)
				c.warn.note(status)
			}
			k := tupleKey(vals[0], vals[1], canon)
			if gauges[k] == nil {
				gauges[k] = &agg{}
			}
			gauges[k].merge(count, oldest, 0)
			return nil
		})
		if err != nil {
			return err
		}
		if err := c.readInboxStatus(ctx, tx, gauges, &report); err != nil {
			return err
		}
		return each(ctx, tx, "inbox processed query", c.sqlProcessed, []any{c.window.Lower(dbNow)}, []any{&source, &id, &msgType, &status, &ts}, func() error {
			vals := c.limiter.Admit(source, msgType)
			seen.add(vals...)
			canon := c.cfg.Statuses.Canonical(status)
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
	c.known.merge(seen)
	c.unmapped.merge(unmapped)
	addCounts(c.processed, newProcessed)
	report.send()
	return c.metrics(gauges), nil
}

func (c *Inbox) metrics(gauges map[string]*agg) []prometheus.Metric {
	openStatuses, terminalStatuses := vocab.InboxOpenStatuses(), vocab.InboxTerminalStatuses()
	var out []prometheus.Metric
	for _, vals := range c.known.sorted() {
		open := openStatuses
		if _, ok := c.unmapped[tupleKey(vals...)]; ok {
			open = append(append([]string(nil), open...), vocab.Unmapped)
		}
		for _, st := range open {
			a := gauges[tupleKey(vals[0], vals[1], st)]
			if a == nil {
				a = &agg{}
			}
			out = append(out,
				c.gauge(catalog.InboxMessages, a.count, c.database, vals[0], vals[1], st),
				c.gauge(catalog.InboxOldestMessageAge, a.oldest, c.database, vals[0], vals[1], st),
			)
		}
		for _, st := range terminalStatuses {
			out = append(out, c.counter(catalog.InboxMessagesProcessed, c.processed[tupleKey(vals[0], vals[1], st)], c.database, vals[0], vals[1], st))
		}
	}
	return out
}
