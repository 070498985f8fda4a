package tables

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/histogram"
	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgsource"
	"github.com/workflow-exporter/workflow-exporter/blocks/watermark"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// The delivery ledger (docs/delivery-ledger.md): one producer database's
// outbox compared with one consumer database's inbox. The two databases
// may be on different servers, so the join happens here, in the exporter,
// as the Camunda joins do it (join.go): the ids of the events published
// within the window are read from the outbox in keyset pages, newest first,
// and exactly those are looked up in the inbox with `= ANY($1)` on an
// indexed column. Neither table is scanned: the cost is the window's
// events, whatever either table holds. Each database is read in its own
// short read-only transaction with its own statement_timeout and
// lock_timeout (blocks/pgsource), the producer's first, then the
// consumer's.
//
// What is lost and what is in flight is decided by the producer's clock
// alone (the publish time against the producer's now()); the consumer's
// clock enters only the latency, corrected by the measured difference of
// the two clocks (clockOffset).

// DeliveryOptions configures a Delivery collector.
type DeliveryOptions struct {
	// Delivery is the delivery's config section; Key its config key
	// (deliveries[0]).
	Delivery config.Delivery
	Key      string
	// From and To are the producer's and the consumer's database (the same
	// handle when one database is both ends), with their outbox and inbox
	// as configured and the config keys of those tables
	// (databases[0].tables.outbox), so errors name the key to fix.
	From, To            *pgsource.DB
	Outbox              config.OutboxTable
	Inbox               config.InboxTable
	OutboxKey, InboxKey string
	Folds               *labellimit.Stats
	Logger              *slog.Logger
	// DatabaseDown reports whether a database's own source is down. While
	// one of the delivery's databases is, the delivery reports no series
	// and no error: the database's WorkflowExporterSourceDown says it once
	// (as the Camunda joins do for an engine). nil: never.
	DatabaseDown func(database string) bool
	// Now is the exporter's clock, read around each database's clock
	// reading to measure the difference of the two clocks; time.Now by
	// default.
	Now func() time.Time
}

// Delivery serves the workflow_delivery_* series of one delivery.
type Delivery struct {
	cfg                 config.Delivery
	key                 string
	from, to            *pgsource.DB
	outbox              config.OutboxTable
	inbox               config.InboxTable
	outboxKey, inboxKey string
	logger              *slog.Logger
	limiter             *labellimit.Limiter
	descs               catalog.Descs
	databaseDown        func(string) bool
	now                 func() time.Time

	// received remembers the events whose first receipt was observed in
	// the latency histogram, by event id with their publish time, until
	// they leave the window (blocks/watermark with the window as its
	// lookback): each event is observed once, in the collection that first
	// finds it received, and the first collection only remembers.
	received *watermark.Window
	known    tuples // event types
	latency  map[string]histogram.Dual
	warnCut  bool

	sqlFirst, sqlNext, sqlLookup string
}

// NewDelivery returns the collector of one delivery. It connects to
// nothing.
func NewDelivery(o DeliveryOptions) *Delivery {
	folds := o.Folds
	if folds == nil {
		folds = labellimit.NewStats()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.DatabaseDown == nil {
		o.DatabaseDown = func(string) bool { return false }
	}
	c := &Delivery{
		cfg: o.Delivery, key: o.Key, from: o.From, to: o.To, outbox: o.Outbox, inbox: o.Inbox,
		outboxKey: o.OutboxKey, inboxKey: o.InboxKey, logger: orDiscard(o.Logger),
		limiter: labellimit.NewLimiter(folds, catalog.DeliveryPublishedEvents, o.Delivery.LabelValueLimit),
		descs: catalog.NewDescs(catalog.DeliveryPublishedEvents, catalog.DeliveryLostEvents, catalog.DeliveryInFlightEvents,
			catalog.DeliveryDuplicateReceipts, catalog.DeliveryLatency, catalog.DeliveryClockOffset, catalog.DeliveryWindow),
		databaseDown: o.DatabaseDown, now: o.Now,
		received: watermark.New(time.Duration(o.Delivery.Window)),
		known:    tuples{}, latency: map[string]histogram.Dual{},
	}
	oc := o.Outbox.Columns
	id, typ, created, pub := pgschema.QuoteIdent(oc.EventID), pgschema.QuoteIdent(oc.EventType), pgschema.QuoteIdent(oc.CreatedAt), pgschema.QuoteIdent(oc.PublishedAt)
	types := ""
	if len(o.Delivery.From.EventTypes) > 0 {
		types = "\n\tAND " + textIn(typ, o.Delivery.From.EventTypes)
	}
	// A page of the window, newest first: $1 the window's start, $2 the
	// page size; the next pages go on below the last row's publish time
	// and event id ($3, $4, given back as the database wrote them, so the
	// cursor round-trips exactly whatever the columns' types).
	page := func(cursor string) string {
		// The output columns are named apart from the table's, so that
		// ORDER BY sorts by the columns themselves (their own types).
		return fmt.Sprintf(`SELECT %[1]s::text AS ledger_id, COALESCE(%[2]s::text, '') AS ledger_key, COALESCE(%[3]s::text, '') AS ledger_type,
	COALESCE(%[4]s, %[5]s)::timestamptz AS ledger_created, %[5]s::timestamptz AS ledger_published, %[5]s::text AS ledger_cursor
FROM %[6]s WHERE %[5]s > $1::timestamptz%[7]s%[8]s
ORDER BY %[5]s DESC, %[1]s DESC LIMIT $2`, id, o.Delivery.From.MessageIDSQL(pgschema.QuoteIdent), typ, created, pub,
			pgschema.QuoteTable(o.Outbox.Table), cursor, types)
	}
	c.sqlFirst = page("")
	c.sqlNext = page(fmt.Sprintf("\n\tAND (%s, %s) < ($3, $4)", pub, id))
	ic := o.Inbox.Columns
	sources := ""
	if len(o.Delivery.To.SourceSystems) > 0 {
		sources = "\n\tAND " + textIn(pgschema.QuoteIdent(ic.SourceSystem), o.Delivery.To.SourceSystems)
	}
	// The status is compared as its text output: the lookup reads only the
	// rows of the window's ids through the message id index, so no
	// partial index has to match the predicate, and a status column of any
	// type (an enum lacking the label, an integer, a boolean) compares
	// without an error.
	dupStatus := textIn(pgschema.QuoteIdent(ic.Status)+"::text", o.Inbox.Statuses.Values(vocab.StatusIgnoredDuplicate))
	// $1 takes the message id column's own type (text, varchar, uuid, an
	// integer: the ids are sent as text and parsed by the server), so the
	// column's index serves the lookup.
	c.sqlLookup = fmt.Sprintf(`SELECT %[1]s::text, count(*)::float8, min(%[2]s)::timestamptz, (count(*) FILTER (WHERE %[3]s))::float8
FROM %[4]s WHERE %[1]s = ANY($1)%[5]s
GROUP BY %[1]s`, pgschema.QuoteIdent(ic.MessageID), pgschema.QuoteIdent(ic.ReceivedAt), dupStatus, pgschema.QuoteTable(o.Inbox.Table), sources)
	return c
}

// Name implements collectors.Collector.
func (c *Delivery) Name() string { return vocab.CollectorDelivery }

// Example cursor values for EXPLAIN: a publish time and an event id that
// parse as timestamptz or timestamp, and as uuid or text.
const (
	exampleCursorTime = "2026-01-01 00:00:00+00"
	exampleCursorID   = "00000000-0000-0000-0000-000000000000"
)

// Requirements says what the delivery needs from the producer's outbox
// (first) and the consumer's inbox: `check` reports them under each
// database, the index SQL is generated from them, and the EXPLAIN test
// runs their queries.
func (c *Delivery) Requirements() []pgschema.Requirements {
	oc, ic := c.outbox.Columns, c.inbox.Columns
	col := func(prefix string, keyName ...string) []pgschema.Column {
		out := make([]pgschema.Column, 0, len(keyName)/2)
		for i := 0; i+1 < len(keyName); i += 2 {
			out = append(out, pgschema.Column{Key: prefix + ".columns." + keyName[i], Name: keyName[i+1]})
		}
		return out
	}
	outCols := col(c.outboxKey, "event_id", oc.EventID, "event_type", oc.EventType, "created_at", oc.CreatedAt, "published_at", oc.PublishedAt)
	if m := c.cfg.From.MessageID; c.cfg.From.MessageIDExpression == "" && m != oc.EventID {
		outCols = append(outCols, pgschema.Column{Key: c.key + ".from.message_id", Name: m})
	}
	outBase, inBase := pgschema.BaseName(c.outbox.Table), pgschema.BaseName(c.inbox.Table)
	window := time.Now().Add(-time.Duration(c.cfg.Window))
	return []pgschema.Requirements{{
		Kind: vocab.TableOutbox, Table: c.outbox.Table, Columns: outCols,
		// The outbox collector's own index of publish times, which holds
		// the event id after the time for this: the keyset pages need the
		// order within one publish time (a relay that publishes a batch in
		// one statement gives it one published_at), and a second index
		// would only slow the outbox's writes.
		Indexes: []pgschema.Index{{Name: outBase + "_published_at_idx", Columns: []string{oc.PublishedAt, oc.EventID},
			Where: pgschema.QuoteIdent(oc.PublishedAt) + " IS NOT NULL",
			Why:   "a delivery (deliveries[]) reads the window's published events in keyset pages, newest first, by publish time and event id", Query: "delivery_window"}},
		Queries: []pgschema.Query{
			{Name: "delivery_window", SQL: c.sqlFirst, Args: []any{window, c.cfg.PageSize}},
			{Name: "delivery_window_next", SQL: c.sqlNext, Args: []any{window, c.cfg.PageSize, exampleCursorTime, exampleCursorID}},
		},
	}, {
		Kind: vocab.TableInbox, Table: c.inbox.Table,
		Columns: col(c.inboxKey, "message_id", ic.MessageID, "received_at", ic.ReceivedAt, "status", ic.Status, "source_system", ic.SourceSystem),
		Indexes: []pgschema.Index{{Name: inBase + "_message_id_idx", Columns: []string{ic.MessageID},
			Why: "a delivery (deliveries[]) looks the window's events up in the consumer's inbox by message id (= ANY)", Query: "delivery_lookup"}},
		// No example id: one id parses as only some of the column types
		// the lookup takes; the planner picks the same index for none.
		Queries: []pgschema.Query{{Name: "delivery_lookup", SQL: c.sqlLookup, Args: []any{[]string{}}}},
	}}
}

// published is one event of the window, as the producer's outbox holds it.
type published struct {
	id, key, typ       string
	created, published time.Time
}

// receipt is what the consumer's inbox holds of one message id: its rows,
// those in IGNORED_DUPLICATE, and the first receive time (nil when no row
// has one).
type receipt struct {
	rows, duplicates float64
	first            *time.Time
}

// clockReading is a database's clock as one statement reads it (clock),
// with the exporter's clock just before the statement was sent and just
// after its answer came back: the reading was taken in between. now is
// the database's now() of the transaction, which ages and the window use.
type clockReading struct {
	now, clock    time.Time
	before, after time.Time
}

// readClock reads the database's clock. The statement's time is now()
// plus the time since the transaction began: in production that is
// clock_timestamp(); a test that stands a frozen now() in (test/harness/
// collectortest) gets a clock that runs from it.
func (c *Delivery) readClock(ctx context.Context, tx pgx.Tx) (clockReading, error) {
	r := clockReading{before: c.now()}
	err := tx.QueryRow(ctx, "SELECT now(), now() + (clock_timestamp() - transaction_timestamp())").Scan(&r.now, &r.clock)
	r.after = c.now()
	return r, err
}

// deliveryCounts are one event type's gauges of one collection.
type deliveryCounts struct {
	published, lost, inFlight, duplicates float64
}

// Collect implements collectors.Collector.
func (c *Delivery) Collect(ctx context.Context, sink *collectors.Sink) ([]prometheus.Metric, error) {
	if db, down := c.down(); down {
		c.logger.Debug("a database of the delivery is down; its series are absent until it answers (the database's own source reports the outage)",
			"delivery", c.cfg.Name, "database", db)
		return nil, nil
	}
	events, prod, cut, err := c.readWindow(ctx)
	var receipts map[string]receipt
	var cons clockReading
	if err == nil {
		receipts, cons, err = c.lookup(ctx, events)
	}
	if err != nil {
		c.limiter.Discard()
		c.received.Abort()
		if db, down := c.down(); down {
			// The database went down during this collection (its own
			// source found out first, in this scrape's earlier phase).
			c.logger.Debug("a database of the delivery went down; its series are absent", "delivery", c.cfg.Name, "database", db, "err", err)
			return nil, nil
		}
		return nil, fmt.Errorf("delivery %s: %w", c.cfg.Name, err)
	}
	offset := c.clockOffset(prod, cons)
	counts := map[string]*deliveryCounts{}
	seen := tuples{}
	var lost []collectors.Item
	var observe []struct {
		typ string
		v   float64
	}
	deadline := time.Duration(c.cfg.Deadline)
	for _, e := range events {
		typ := c.limiter.Admit(e.typ)[0]
		seen.add(typ)
		n := counts[typ]
		if n == nil {
			n = &deliveryCounts{}
			counts[typ] = n
		}
		n.published++
		age := prod.now.Sub(e.published)
		r, ok := receipts[e.key]
		switch {
		case ok && r.rows > 0:
			n.duplicates += max(r.rows-1, r.duplicates)
			if c.received.Observe(e.published, e.id) && r.first != nil {
				observe = append(observe, struct {
					typ string
					v   float64
				}{typ, math.Max(r.first.Sub(e.created).Seconds()-offset.Seconds(), 0)})
			}
		case age > deadline:
			n.lost++
			if sink == nil {
				continue
			}
			it := collectors.Item{EventID: e.id, EventType: e.typ, Producer: c.from.Name(), Consumer: c.to.Name(),
				Since: since(e.published), AgeSeconds: age.Seconds()}
			if e.key != e.id {
				it.MessageID = e.key
			}
			lost = append(lost, it)
		default:
			n.inFlight++
		}
	}
	// Every read succeeded: only now does the collection change the
	// collector's state.
	c.limiter.Flush()
	c.received.Commit(prod.now)
	c.known.merge(seen)
	for _, o := range observe {
		h := c.latency[o.typ]
		h.Observe(c.cfg.LatencyBuckets, o.v)
		c.latency[o.typ] = h
	}
	window := time.Duration(c.cfg.Window)
	if !cut.IsZero() {
		window = prod.now.Sub(cut)
		if !c.warnCut {
			c.warnCut = true
			c.logger.Warn("the delivery's window holds more events than max_events; the comparison keeps the newest of them (workflow_delivery_window_seconds says how far back it reaches): raise max_events or shorten the window",
				"delivery", c.cfg.Name, "max_events", c.cfg.MaxEvents, "covered", window.Round(time.Second).String())
		}
	}
	if sink != nil {
		sort.SliceStable(lost, func(i, j int) bool { return lost[i].Since.Before(*lost[j].Since) })
		sink.Add(collectors.List{Kind: vocab.KindDeliveryLost, Delivery: c.cfg.Name, Database: c.from.Name(), Table: c.outbox.Table,
			Total: len(lost), IdentifiersHidden: !c.cfg.Status.ShowIdentifiers(), Items: lost})
	}
	return c.metrics(counts, offset, window), nil
}

// down names a database of the delivery whose own source is down.
func (c *Delivery) down() (string, bool) {
	for _, db := range []string{c.from.Name(), c.to.Name()} {
		if c.databaseDown(db) {
			return db, true
		}
	}
	return "", false
}

// readWindow reads the events published within the window from the
// producer's outbox, newest first, in keyset pages, at most max_events of
// them; cut is the publish time of the oldest event read when the window
// held more (zero otherwise).
func (c *Delivery) readWindow(ctx context.Context) (events []published, clock clockReading, cut time.Time, err error) {
	req := c.Requirements()[0]
	err = c.from.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		events, cut = nil, time.Time{}
		if _, err := pgschema.Check(ctx, tx, req, c.outboxKey+".table"); err != nil {
			return err
		}
		var err error
		if clock, err = c.readClock(ctx, tx); err != nil {
			return err
		}
		lower := clock.now.Add(-time.Duration(c.cfg.Window))
		var curTime, curID string
		for {
			// One event more than max_events tells a window that holds
			// more from one that holds exactly as many.
			limit := min(c.cfg.PageSize, c.cfg.MaxEvents+1-len(events))
			sql, args := c.sqlFirst, []any{lower, limit}
			if curTime != "" {
				sql, args = c.sqlNext, append(args, curTime, curID)
			}
			var e published
			n := 0
			if err := each(ctx, tx, "delivery window page", sql, args, []any{&e.id, &e.key, &e.typ, &e.created, &e.published, &curTime}, func() error {
				events = append(events, e)
				curID = e.id
				n++
				return nil
			}); err != nil {
				return err
			}
			if len(events) > c.cfg.MaxEvents {
				events = events[:c.cfg.MaxEvents]
				cut = events[len(events)-1].published
				return nil
			}
			if n < limit {
				return nil
			}
		}
	})
	return events, clock, cut, err
}

// lookup looks the events' message ids up in the consumer's inbox, a page
// of ids at a time.
func (c *Delivery) lookup(ctx context.Context, events []published) (map[string]receipt, clockReading, error) {
	req := c.Requirements()[1]
	var clock clockReading
	out := map[string]receipt{}
	err := c.to.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		clear(out)
		if _, err := pgschema.Check(ctx, tx, req, c.inboxKey+".table"); err != nil {
			return err
		}
		var err error
		if clock, err = c.readClock(ctx, tx); err != nil {
			return err
		}
		keys := make([]string, 0, len(events))
		for _, e := range events {
			keys = append(keys, e.key)
		}
		for start := 0; start < len(keys); start += c.cfg.PageSize {
			page := keys[start:min(start+c.cfg.PageSize, len(keys))]
			var id string
			var r receipt
			if err := each(ctx, tx, "delivery inbox lookup", c.sqlLookup, []any{page}, []any{&id, &r.rows, &r.first, &r.duplicates}, func() error {
				out[id] = r
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	return out, clock, err
}

// clockOffset is the consumer's clock minus the producer's, as measured by
// the two readings: each database's clock was read between the exporter's
// before and after, so the difference of the two clocks lies within half
// the sum of the two round trips of the estimate below. An estimate within
// that uncertainty is no measurable difference: 0. One database at both
// ends has one clock.
func (c *Delivery) clockOffset(prod, cons clockReading) time.Duration {
	if c.from == c.to {
		return 0
	}
	mid := func(r clockReading) time.Time { return r.before.Add(r.after.Sub(r.before) / 2) }
	est := cons.clock.Sub(prod.clock) - mid(cons).Sub(mid(prod))
	uncertainty := (prod.after.Sub(prod.before) + cons.after.Sub(cons.before)) / 2
	if est.Abs() <= uncertainty {
		return 0
	}
	return est
}

func (c *Delivery) metrics(counts map[string]*deliveryCounts, offset, window time.Duration) []prometheus.Metric {
	name := c.cfg.Name
	gauge := func(metric string, v float64, labels ...string) prometheus.Metric {
		return prometheus.MustNewConstMetric(c.descs.Get(metric), prometheus.GaugeValue, v, labels...)
	}
	var out []prometheus.Metric
	for _, vals := range c.known.sorted() {
		typ := vals[0]
		n := counts[typ]
		if n == nil {
			n = &deliveryCounts{}
		}
		out = append(out,
			gauge(catalog.DeliveryPublishedEvents, n.published, name, typ),
			gauge(catalog.DeliveryLostEvents, n.lost, name, typ),
			gauge(catalog.DeliveryInFlightEvents, n.inFlight, name, typ),
			gauge(catalog.DeliveryDuplicateReceipts, n.duplicates, name, typ),
			c.latency[typ].MustMetric(c.descs.Get(catalog.DeliveryLatency), c.cfg.LatencyBuckets, name, typ))
	}
	return append(out, gauge(catalog.DeliveryClockOffset, offset.Seconds(), name), gauge(catalog.DeliveryWindow, window.Seconds(), name))
}

// textIn renders column IN (values) for a column read as text (an event
// type, a source system, a status as its text output), false for no
// values.
func textIn(column string, values []string) string {
	if len(values) == 0 {
		return "false"
	}
	return column + " IN (" + pgschema.QuoteLiterals(values) + ")"
}
