package tables_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/collectors/tables"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// ledger is a delivery from the outbox of database orders to the inbox of
// database billing, built as the binary builds it (both databases' sources
// and the delivery's), with both databases' clocks frozen: billing's runs
// skew ahead of orders'.
type ledger struct {
	t               *testing.T
	orders, billing *testDB
	skew            float64
	s               *collectortest.Sources
}

const ledgerDelivery = "orders-billing"

// ledgerConfig: two event types and two source systems belong to the
// delivery; pages of two events and two ids, so that every collection
// reads several keyset pages and lookups.
const ledgerConfig = `
databases:
  - {name: orders, dsn_env: WFX_LEDGER_ORDERS, min_interval: 1ms, tables: {outbox: {}}}
  - {name: billing, dsn_env: WFX_LEDGER_BILLING, min_interval: 1ms, tables: {inbox: {}}}
deliveries:
  - name: orders-billing
    from: {database: orders, event_types: [OrderPlaced, OrderPaid]}
    to: {database: billing, source_systems: [orders, orders-replay]}
    deadline: 5m
    window: 1h
    min_interval: 1ms
    page_size: 2
`

// newLedger builds the ledger; billingURL is an empty database of another
// server, or "" for one on the shared server (the producer's).
func newLedger(t *testing.T, billingURL string, skew time.Duration) *ledger {
	t.Helper()
	l := &ledger{t: t, orders: newTestDB(t, false), skew: skew.Seconds()}
	if billingURL == "" {
		l.billing = newTestDB(t, false)
	} else {
		l.billing = &testDB{collectortest.NewDBAt(t, billingURL, false)}
	}
	l.setClock(0)
	l.s = collectortest.NewSources(t, ledgerConfig, map[string]string{"WFX_LEDGER_ORDERS": l.orders.DSN, "WFX_LEDGER_BILLING": l.billing.DSN})
	return l
}

// setClock moves both clocks to t0 plus seconds, billing's skew ahead.
func (l *ledger) setClock(seconds float64) {
	l.t.Helper()
	l.orders.SetClock(time.Duration(seconds * float64(time.Second)))
	l.billing.SetClock(time.Duration((seconds + l.skew) * float64(time.Second)))
}

// event writes an outbox event created and (unless published is nil)
// published at those seconds of the producer's clock.
func (l *ledger) event(n int, typ string, created float64, published *float64) {
	l.t.Helper()
	status := "PENDING"
	if published != nil {
		status = "PUBLISHED"
	}
	l.orders.insertOutbox(outboxRow{uuid(n), "Order", typ, status, created, published})
}

// receive writes an inbox row of event n's message id, received at that
// second of the producer's clock (billing's clock writes it skew later).
func (l *ledger) receive(n int, source, status string, received float64) {
	l.t.Helper()
	l.billing.upsertInbox(inboxRow{source, uuid(n), "order", status, received + l.skew, nil})
}

// ledgerCounts are the expected gauges of one event type.
type ledgerCounts struct {
	typ                                   string
	published, lost, inFlight, duplicates float64
}

func ledgerGauges(cs ...ledgerCounts) string {
	var b strings.Builder
	for _, name := range []string{catalog.DeliveryDuplicateReceipts, catalog.DeliveryInFlightEvents, catalog.DeliveryLostEvents, catalog.DeliveryPublishedEvents} {
		b.WriteString(collectortest.HelpHeader(name))
		for _, c := range cs {
			v := map[string]float64{catalog.DeliveryDuplicateReceipts: c.duplicates, catalog.DeliveryInFlightEvents: c.inFlight,
				catalog.DeliveryLostEvents: c.lost, catalog.DeliveryPublishedEvents: c.published}[name]
			fmt.Fprintf(&b, "%s{delivery=%q,event_type=%q} %v\n", name, ledgerDelivery, c.typ, v)
		}
	}
	b.WriteString(collectortest.HelpHeader(catalog.DeliveryWindow))
	fmt.Fprintf(&b, "%s{delivery=%q} 3600\n", catalog.DeliveryWindow, ledgerDelivery)
	return b.String()
}

var ledgerGaugeNames = []string{catalog.DeliveryDuplicateReceipts, catalog.DeliveryInFlightEvents, catalog.DeliveryLostEvents,
	catalog.DeliveryPublishedEvents, catalog.DeliveryWindow}

// latency is one event type's latency histogram: count, sum and the
// cumulative count per classic upper bound.
type latency struct {
	count   uint64
	sum     float64
	buckets map[float64]uint64
}

func (l *ledger) latency(typ string) latency {
	l.t.Helper()
	m := collectortest.Series(l.t, l.s.Manager.Set(), catalog.DeliveryLatency, map[string]string{"delivery": ledgerDelivery, "event_type": typ})
	if m == nil || m.Histogram == nil {
		l.t.Fatalf("no latency histogram for %s", typ)
	}
	h := m.GetHistogram()
	out := latency{count: h.GetSampleCount(), sum: h.GetSampleSum(), buckets: map[float64]uint64{}}
	for _, b := range h.GetBucket() {
		out.buckets[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	return out
}

// offset is the clock difference the delivery measured and applied.
func (l *ledger) offset() float64 {
	l.t.Helper()
	return l.s.Value(catalog.DeliveryClockOffset, map[string]string{"delivery": ledgerDelivery})
}

// expectLatency checks a histogram: exact count and buckets (each
// observation's bucket given as its upper bound), and the sum of the
// observations (see corrected).
func (l *ledger) expectLatency(typ string, got latency, sum float64, in ...float64) {
	l.t.Helper()
	if got.count != uint64(len(in)) || math.Abs(got.sum-sum) > 1e-6 {
		l.t.Errorf("latency %s: count %d sum %v, want %d and %v", typ, got.count, got.sum, len(in), sum)
	}
	for ub, cum := range got.buckets {
		want := uint64(0)
		for _, b := range in {
			if b <= ub {
				want++
			}
		}
		if cum != want {
			l.t.Errorf("latency %s: bucket le=%v holds %d, want %d", typ, ub, cum, want)
		}
	}
}

// corrected is what n observations add to a latency sum beyond their true
// latencies (by the producer's clock): the consumer's receive times run
// skew ahead, and the delivery subtracts the clock offset it measured in
// their collection. Frozen clocks make that measurement a few
// milliseconds off the skew (the clocks do not move while the exporter's
// does), so the sums are checked against the offset the delivery reports.
func (l *ledger) corrected(n int, offset float64) float64 { return float64(n) * (l.skew - offset) }

func item(it collectors.Item) string {
	return fmt.Sprintf("%s %s %s->%s %s", it.EventID, it.EventType, it.Producer, it.Consumer, collectortest.Age(it))
}

// TestDeliveryExactCounts: lost, late, duplicate and foreign rows, and an
// event published before the window, counted exactly across collections,
// on one server and across two whose clocks differ by 7 s.
func TestDeliveryExactCounts(t *testing.T) {
	for _, tc := range []struct {
		name string
		two  bool
		skew time.Duration
	}{
		{"one server", false, 0},
		{"two servers, the consumer's clock 7s ahead", true, 7 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := ""
			if tc.two {
				url = pgtest.NewServer(t).NewDatabase(t)
			}
			l := newLedger(t, url, tc.skew)
			deliveryExactCounts(t, l)
		})
	}
}

func deliveryExactCounts(t *testing.T, l *ledger) {
	const placed, paid = "OrderPlaced", "OrderPaid"
	// Received once, 5 s after its publish.
	l.event(1, placed, -600, pub(-590))
	l.receive(1, "orders", "PROCESSED", -585)
	// Published 399 s ago, past the 5m deadline, not received: lost.
	l.event(2, placed, -400, pub(-399))
	// Published 90 s ago, not received: in flight.
	l.event(3, paid, -100, pub(-90))
	// Received twice (a replay from a second source system): one duplicate.
	l.event(4, paid, -700, pub(-650))
	l.receive(4, "orders", "PROCESSED", -640)
	l.receive(4, "orders-replay", "PROCESSED", -630)
	// Its one row kept as a duplicate by the inbox: one duplicate receipt.
	l.event(5, placed, -300, pub(-250))
	l.receive(5, "orders", vocab.StatusIgnoredDuplicate, -240)
	// Published before the window (1h): never lost, never counted.
	l.event(6, placed, -4000, pub(-3700))
	// A type that is not the delivery's: not counted.
	l.event(7, "OrderShipped", -500, pub(-500))
	// Received from a source system that is not the delivery's: lost.
	l.event(8, placed, -460, pub(-450))
	l.receive(8, "billing-ui", "PROCESSED", -440)
	// Pending, not published: not the delivery's business yet.
	l.event(9, paid, -20, nil)
	// Three published in one batch (one publish time), across the keyset
	// pages of two, all received.
	for n := 12; n <= 14; n++ {
		l.event(n, paid, -210, pub(-200))
		l.receive(n, "orders", "PROCESSED", -199)
	}
	// Foreign inbox rows: an id no event has, and rows of other types.
	l.receive(99, "orders", "PROCESSED", -100)
	l.billing.upsertInbox(inboxRow{"kafka", "m-1", "other", "RECEIVED", -50 + l.skew, nil})

	// First collection: the gauges are exact; the events already received
	// are remembered, not observed (they arrived before the exporter
	// watched).
	l.s.Collect()
	l.s.Expect(ledgerGauges(
		ledgerCounts{paid, 5, 0, 1, 1},
		ledgerCounts{placed, 4, 2, 0, 1},
	), ledgerGaugeNames...)
	l.expectLatency(placed, l.latency(placed), 0)
	l.expectLatency(paid, l.latency(paid), 0)
	if off := l.offset(); math.Abs(off-l.skew) > 0.5 {
		t.Errorf("clock offset %v, want %v ± 0.5", off, l.skew)
	}
	lists := l.s.Lists(vocab.SourceDelivery, ledgerDelivery)
	collectortest.WantList(t, lists, vocab.KindDeliveryLost, 2, item,
		uuid(8)+" OrderPlaced orders->billing -7m30s 450s", uuid(2)+" OrderPlaced orders->billing -6m39s 399s")
	if l := lists[vocab.KindDeliveryLost]; l.Delivery != ledgerDelivery || l.Database != "orders" || l.Table != "event_outbox" {
		t.Errorf("lost list names delivery %q, database %q, table %q", l.Delivery, l.Database, l.Table)
	}

	// A minute later: the in-flight event arrives (latency 110 s), the
	// lost one arrives late (420 s), a new event is published and
	// received within 2 s, another is published and not yet received.
	l.setClock(60)
	l.receive(3, "orders", "PROCESSED", 10)
	l.receive(2, "orders", "PROCESSED", 20)
	l.event(10, placed, 30, pub(31))
	l.receive(10, "orders", "PROCESSED", 32)
	l.event(11, placed, 40, pub(45))
	l.s.Collect()
	second := ledgerGauges(
		ledgerCounts{paid, 5, 0, 0, 1},
		ledgerCounts{placed, 6, 1, 1, 1},
	)
	l.s.Expect(second, ledgerGaugeNames...)
	off := l.offset()
	placedLatency, paidLatency := l.latency(placed), l.latency(paid)
	l.expectLatency(placed, placedLatency, 420+2+l.corrected(2, off), 600, 2.5)
	l.expectLatency(paid, paidLatency, 110+l.corrected(1, off), 120)
	if math.Abs(placedLatency.sum-422) > 0.5 || math.Abs(paidLatency.sum-110) > 0.5 {
		t.Errorf("latencies %v and %v, want 422 and 110 within 0.5 s: the clock difference was not corrected", placedLatency.sum, paidLatency.sum)
	}

	// Nothing changes: every event is read again and none observed twice.
	l.setClock(120)
	l.s.Collect()
	l.s.Expect(second, ledgerGaugeNames...)
	if got := l.latency(placed); got.count != placedLatency.count || got.sum != placedLatency.sum {
		t.Errorf("an unchanged window observed again: %+v, was %+v", got, placedLatency)
	}
	if got := l.latency(paid); got.count != paidLatency.count || got.sum != paidLatency.sum {
		t.Errorf("an unchanged window observed again: %+v, was %+v", got, paidLatency)
	}

	// 55 minutes on, event 8 (published at -450) leaves the window: it is
	// no longer lost, nor counted at all; so do events 1 and 4 (and its
	// duplicate). In the window stay 2, 3, 5, the batch, 10 and 11 (now
	// lost).
	l.setClock(3200)
	l.s.Collect()
	l.s.Expect(ledgerGauges(
		ledgerCounts{paid, 4, 0, 0, 0},
		ledgerCounts{placed, 4, 1, 0, 1},
	), ledgerGaugeNames...)
	collectortest.WantList(t, l.s.Lists(vocab.SourceDelivery, ledgerDelivery), vocab.KindDeliveryLost, 1, item,
		uuid(11)+" OrderPlaced orders->billing 45s 3155s")
	// Event 11 arrives now: observed once, by its creation at 40.
	l.receive(11, "orders", "PROCESSED", 3200)
	l.s.Collect()
	off2 := l.offset()
	l.expectLatency(placed, l.latency(placed), 420+2+l.corrected(2, off)+3160+l.corrected(1, off2), 600, 2.5, 3600)
}

// TestDeliveryDropsItsSeriesWhileADatabaseIsDown: a database of the
// delivery that cannot be reached, the producer or the consumer, takes the
// delivery's series away (never zeros), its own source reports the outage,
// the delivery's stays up; once it is back, the receipt that arrived
// meanwhile is observed once.
func TestDeliveryDropsItsSeriesWhileADatabaseIsDown(t *testing.T) {
	for _, down := range []string{"orders", "billing"} {
		t.Run(down, func(t *testing.T) {
			l := newLedger(t, "", 0)
			l.event(1, "OrderPlaced", -100, pub(-90))
			l.s.Collect()
			l.s.Expect(ledgerGauges(ledgerCounts{"OrderPlaced", 1, 0, 1, 0}), ledgerGaugeNames...)

			db := map[string]*testDB{"orders": l.orders, "billing": l.billing}[down]
			maint := pgtest.Connect(t, pgtest.SharedServer(t).AdminURL)
			name := pgx.Identifier{db.Admin.Config().Database}.Sanitize()
			pgtest.Exec(t, maint, `ALTER DATABASE `+name+` WITH ALLOW_CONNECTIONS false`)
			db.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
			t.Cleanup(func() { pgtest.Exec(t, maint, `ALTER DATABASE `+name+` WITH ALLOW_CONNECTIONS true`) })
			l.receive(1, "orders", "PROCESSED", -80)

			l.s.Collect()
			if v := l.s.Value(catalog.ExporterSourceUp, map[string]string{"source": "database", "name": down}); v != 0 {
				t.Fatalf("%s source_up = %v, want 0", down, v)
			}
			if v := l.s.Value(catalog.ExporterSourceUp, map[string]string{"source": "delivery", "name": ledgerDelivery}); v != 1 {
				t.Errorf("delivery source_up = %v, want 1: the outage is %s's, reported once", v, down)
			}
			for _, name := range append(ledgerGaugeNames, catalog.DeliveryLatency, catalog.DeliveryClockOffset) {
				if err := l.s.Compare("", name); err != nil {
					t.Errorf("%s must be absent while %s is down: %v", name, down, err)
				}
			}
			if lists := l.s.Lists(vocab.SourceDelivery, ledgerDelivery); len(lists) != 0 {
				t.Errorf("the delivery lists %v while %s is down", lists, down)
			}

			pgtest.Exec(t, maint, `ALTER DATABASE `+name+` WITH ALLOW_CONNECTIONS true`)
			// The delivery's pooled connection was cut with the others; the
			// pool pings a connection idle for more than a second before it
			// hands it out (pgxpool's default), as every collection after
			// an outage of min_interval's length finds it.
			time.Sleep(1100 * time.Millisecond)
			l.setClock(30)
			l.s.Collect()
			l.s.Expect(ledgerGauges(ledgerCounts{"OrderPlaced", 1, 0, 0, 0}), ledgerGaugeNames...)
			off := l.offset()
			l.expectLatency("OrderPlaced", l.latency("OrderPlaced"), 20+l.corrected(1, off), 30)
			l.s.Collect()
			l.expectLatency("OrderPlaced", l.latency("OrderPlaced"), 20+l.corrected(1, off), 30)
		})
	}
}

// TestDeliveryFailureIsItsOwnAndLeavesNoTrace: a table of the delivery
// that cannot be read (a column renamed) while its database is up is the
// delivery's own failure: its source reports down naming the config key,
// its series go, and nothing of the failed collections stays (the receipt
// seen meanwhile is observed once, after the repair).
func TestDeliveryFailureIsItsOwnAndLeavesNoTrace(t *testing.T) {
	l := newLedger(t, "", 0)
	l.event(1, "OrderPaid", -100, pub(-90))
	l.s.Collect()
	l.billing.Exec(`ALTER TABLE message_inbox RENAME COLUMN received_at TO received`)
	l.receive2(1, -80)
	l.s.Collect()
	if v := l.s.Value(catalog.ExporterSourceUp, map[string]string{"source": "delivery", "name": ledgerDelivery}); v != 0 {
		t.Fatalf("delivery source_up = %v, want 0", v)
	}
	if err := l.s.Compare("", catalog.DeliveryPublishedEvents); err != nil {
		t.Errorf("series must be absent while the delivery fails: %v", err)
	}
	if logs := l.s.Logs.String(); !strings.Contains(logs, "table message_inbox has no column received_at (config key databases[1].tables.inbox.columns.received_at)") {
		t.Errorf("the log does not name the missing column's key:\n%s", logs)
	}
	l.billing.Exec(`ALTER TABLE message_inbox RENAME COLUMN received TO received_at`)
	l.s.Collect()
	l.s.Expect(ledgerGauges(ledgerCounts{"OrderPaid", 1, 0, 0, 0}), ledgerGaugeNames...)
	l.expectLatency("OrderPaid", l.latency("OrderPaid"), 20+l.corrected(1, l.offset()), 30)
}

// receive2 writes a receipt while received_at is renamed to received.
func (l *ledger) receive2(n int, received float64) {
	l.t.Helper()
	l.billing.Exec(`INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received)
		VALUES ('orders', $1, 'order', 'c', 'PROCESSED', $2)`, uuid(n), collectortest.At(received+l.skew))
}

// TestDeliveryWindowCutAtMaxEvents: a window holding more events than
// max_events compares the newest of them and says how far back it reached.
func TestDeliveryWindowCutAtMaxEvents(t *testing.T) {
	l := &ledger{t: t, orders: newTestDB(t, false), billing: newTestDB(t, false)}
	l.setClock(0)
	for n := 1; n <= 5; n++ {
		l.event(n, "OrderPlaced", float64(-1000+100*n), pub(float64(-1000+100*n)))
	}
	l.s = collectortest.NewSources(t, strings.Replace(ledgerConfig, "page_size: 2", "page_size: 2\n    max_events: 3", 1),
		map[string]string{"WFX_LEDGER_ORDERS": l.orders.DSN, "WFX_LEDGER_BILLING": l.billing.DSN})
	l.s.Collect()
	// The newest three: published at -700, -600 and -500, all lost.
	if v := l.s.Value(catalog.DeliveryPublishedEvents, map[string]string{"event_type": "OrderPlaced"}); v != 3 {
		t.Errorf("published = %v, want the newest 3", v)
	}
	if v := l.s.Value(catalog.DeliveryWindow, nil); v != 700 {
		t.Errorf("window = %v s, want 700 (back to the oldest event compared)", v)
	}
	if !strings.Contains(l.s.Logs.String(), "holds more events than max_events") {
		t.Errorf("the cut is not logged:\n%s", l.s.Logs.String())
	}
}

// deliveryRequirements are what a delivery from the reference outbox to
// the reference inbox declares (TestQueriesReadOnlyOpenOrRecentRows runs
// its queries under EXPLAIN ANALYZE).
func deliveryRequirements(t *testing.T) []pgschema.Requirements {
	t.Helper()
	cfg, err := config.Parse([]byte("databases: [{name: orders, dsn: 'postgres://x/orders'}]\ndeliveries: [{name: d, from: {database: orders}, to: {database: orders}}]"))
	if err != nil {
		t.Fatal(err)
	}
	tb := cfg.Databases[0].Tables
	return tables.NewDelivery(tables.DeliveryOptions{Delivery: cfg.Deliveries[0], Key: "deliveries[0]", Outbox: *tb.Outbox, Inbox: *tb.Inbox,
		OutboxKey: "databases[0].tables.outbox", InboxKey: "databases[0].tables.inbox"}).Requirements()
}

// TestDeliveryCostIsTheWindowsEvents: with 50,000 events published before
// the window and 50,000 inbox rows of other messages (from 10,000 source
// systems), the window's page and the inbox lookup of its 20 events read a
// few pages of each table, through the indexes of
// deploy/sql/003_exporter_indexes.sql; without the lookup's index the
// lookup reads the table, or (PostgreSQL 18's skip scan) the inbox's
// primary key, which leads with source_system, across every source system.
func TestDeliveryCostIsTheWindowsEvents(t *testing.T) {
	d := newTestDB(t, false)
	const history, window = 50000, 20
	d.Exec(`INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at, published_at)
		SELECT gen_random_uuid(), 'Order', 'a', 'OrderPlaced', 'k', '{}', 'PUBLISHED', $1::timestamptz - make_interval(secs => g), $1::timestamptz - make_interval(secs => g)
		FROM generate_series(1, $2) g`, collectortest.At(-7200), history)
	d.Exec(`INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at)
		SELECT 'system-' || (g % 10000), 'h' || g, 'order', 'c', 'PROCESSED', $1::timestamptz - make_interval(secs => g) FROM generate_series(1, $2) g`, collectortest.At(-7200), history)
	var ids []string
	for n := 1; n <= window; n++ {
		d.insertOutbox(outboxRow{uuid(n), "Order", "OrderPlaced", "PUBLISHED", float64(-60 * n), pub(float64(-60*n + 1))})
		d.upsertInbox(inboxRow{"orders", uuid(n), "order", "PROCESSED", float64(-60*n + 2), nil})
		ids = append(ids, uuid(n))
	}
	d.Exec(`ANALYZE`)
	reqs := deliveryRequirements(t)
	conn := pgtest.Connect(t, d.DSN)
	// explain runs a query under EXPLAIN (ANALYZE, BUFFERS) and returns the
	// rows its scan nodes touched (an index scan and its heap scan each
	// count) and the buffers it read or hit; a sequential scan is an error
	// unless allowed.
	explain := func(seqAllowed bool, sql string, args ...any) (touched, buffers float64) {
		t.Helper()
		var raw []byte
		if err := conn.QueryRow(context.Background(), "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+sql, args...).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		var plans []struct{ Plan map[string]any }
		if err := json.Unmarshal(raw, &plans); err != nil {
			t.Fatal(err)
		}
		touched, seq := rowsTouched(plans[0].Plan)
		if seq && !seqAllowed {
			t.Errorf("a sequential scan:\n%s", raw)
		}
		num := func(k string) float64 { v, _ := plans[0].Plan[k].(float64); return v }
		return touched, num("Shared Hit Blocks") + num("Shared Read Blocks")
	}
	page, lookup := reqs[0].Queries[0].SQL, reqs[1].Queries[0].SQL
	touched, buffers := explain(false, page, collectortest.At(-3600), 1000)
	t.Logf("window page: %v rows touched, %v buffers", touched, buffers)
	if touched != window || buffers > 50 {
		t.Errorf("the window's page touched %v rows and %v buffers; want its %d events and a few pages", touched, buffers, window)
	}
	touched, buffers = explain(false, lookup, ids)
	t.Logf("inbox lookup: %v rows touched, %v buffers", touched, buffers)
	if touched > 2*window || buffers > 120 {
		t.Errorf("the lookup touched %v rows and %v buffers; want its %d messages and a few pages each", touched, buffers, window)
	}
	d.Exec(`DROP INDEX message_inbox_message_id_idx`)
	_, without := explain(true, lookup, ids)
	t.Logf("inbox lookup without its index: %v buffers", without)
	if without < 4*buffers {
		t.Errorf("without message_inbox_message_id_idx the lookup read %v buffers, with it %v: the test does not see the index's work", without, buffers)
	}
}

// TestDeliveryMessageIDs: the inbox's message id is the event id (the
// default; here in a uuid column), another outbox column, or an
// expression over the outbox's columns; a receipt under any other id does
// not count, and the lost list names the id looked up.
func TestDeliveryMessageIDs(t *testing.T) {
	for _, tc := range []struct {
		name, from string
		// id is the message id the consumer stores for event n; setup
		// prepares the tables.
		id    func(n int) string
		setup func(l *ledger)
	}{
		{"the event id, in a uuid column", "from: {database: orders}", uuid, func(l *ledger) {
			l.billing.Exec(`ALTER TABLE message_inbox ALTER COLUMN message_id TYPE uuid USING message_id::uuid`)
		}},
		{"another outbox column", "from: {database: orders, message_id: idempotency_key}", func(n int) string { return fmt.Sprintf("key-%d", n) }, func(l *ledger) {
			l.orders.Exec(`UPDATE event_outbox SET idempotency_key = 'key-' || (right(event_id::text, 12)::int)`)
		}},
		{"an expression", `from: {database: orders, message_id_expression: "'orders:' || event_id::text"}`, func(n int) string { return "orders:" + uuid(n) }, func(*ledger) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &ledger{t: t, orders: newTestDB(t, false), billing: newTestDB(t, false)}
			l.setClock(0)
			l.event(1, "OrderPlaced", -100, pub(-90))  // received under its id
			l.event(2, "OrderPlaced", -400, pub(-390)) // not received under its id (at most under the bare event id): lost
			l.event(3, "OrderPlaced", -400, pub(-380)) // received under its id
			tc.setup(l)
			for _, n := range []int{1, 3} {
				l.billing.Exec(`INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at)
					VALUES ('orders', $1, 'order', 'c', 'PROCESSED', $2)`, tc.id(n), collectortest.At(-50))
			}
			if tc.id(2) != uuid(2) {
				l.billing.Exec(`INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at)
					VALUES ('orders', $1, 'order', 'c', 'PROCESSED', $2)`, uuid(2), collectortest.At(-50))
			}
			cfg := strings.Replace(ledgerConfig, "from: {database: orders, event_types: [OrderPlaced, OrderPaid]}", tc.from, 1)
			l.s = collectortest.NewSources(t, cfg, map[string]string{"WFX_LEDGER_ORDERS": l.orders.DSN, "WFX_LEDGER_BILLING": l.billing.DSN})
			l.s.Collect()
			l.s.Expect(ledgerGauges(ledgerCounts{"OrderPlaced", 3, 1, 0, 0}), ledgerGaugeNames...)
			// The item names the message id looked up where it is not the
			// event id.
			want := uuid(2) + " "
			if tc.id(2) != uuid(2) {
				want += tc.id(2)
			}
			collectortest.WantList(t, l.s.Lists(vocab.SourceDelivery, ledgerDelivery), vocab.KindDeliveryLost, 1,
				func(it collectors.Item) string { return it.EventID + " " + it.MessageID }, want)
		})
	}
}
