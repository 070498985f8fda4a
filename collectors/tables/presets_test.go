package tables_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

// The library presets (blocks/presets) against each library's own
// PostgreSQL DDL, with rows in every state the library's code writes:
// testdata/presets/<fixture>.sql is the DDL (its header names the
// repository, the file and the version it was taken from) and
// <fixture>.states.sql the rows, each with the code path that writes it,
// at times relative to the frozen clock T0. Every family of the kind is
// compared exactly: a series the preset cannot support must be absent,
// never 0 (docs/outbox-shapes.md). Then the library's next step (a
// completion, a dispatch, a new event) moves the counters.

// presetFamilies are every family of the two kinds with presets.
var (
	outboxFamilies = []string{catalog.OutboxEventsPending, catalog.OutboxOldestPendingAge, catalog.OutboxEventsFailed,
		catalog.OutboxOldestFailedAge, catalog.OutboxEventsRetrying, catalog.OutboxEventsCreated, catalog.OutboxEventsPublished,
		catalog.OutboxPublishDelay}
	inboxFamilies = []string{catalog.InboxMessages, catalog.InboxOldestMessageAge, catalog.InboxMessagesProcessed,
		catalog.InboxMessagesRetrying, catalog.InboxMessagesFailed, catalog.InboxOldestFailedAge}
)

// newPresetDB is a test database holding a library's DDL and its states
// (fixture: the base name under testdata/presets), its session time zone
// UTC as the fixtures of timestamp-without-time-zone columns assume.
func newPresetDB(t *testing.T, fixture string) *testDB {
	d := newTestDB(t, false)
	d.Exec(`DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET timezone = %L', current_database(), 'UTC'); END $$`)
	pgtest.ExecRepoFiles(t, d.Admin, nil, "collectors/tables/testdata/presets/"+fixture+".sql", "collectors/tables/testdata/presets/"+fixture+".states.sql")
	return d
}

// presetConfig configures the test database with the given tables.
func presetConfig(tables ...string) string {
	return collectortest.BaseConfig + "    tables:\n" + "      " + strings.Join(tables, "\n      ") + "\n"
}

// expo renders the exposition text of families: each family's header and
// its lines (sorted), families by name.
type expo map[string][]string

func (x expo) add(name, labels string, v float64) {
	x[name] = append(x[name], fmt.Sprintf("%s{%s} %v", name, labels, v))
}

func (x expo) String() string {
	var b strings.Builder
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range x {
			if !yield(k) {
				return
			}
		}
	}) {
		b.WriteString(collectortest.HelpHeader(name))
		lines := slices.Clone(x[name])
		if name != catalog.OutboxPublishDelay { // a histogram's buckets stay in order
			slices.Sort(lines)
		}
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// outboxRowOf is one (aggregate_type, event_type)'s value of each outbox
// gauge the preset serves; nil fields are absent.
type outboxGauges struct {
	agg, typ                                        string
	pending, oldest, failed, oldestFailed, retrying *float64
	created, published                              *float64
}

func f(v float64) *float64 { return &v }

func (x expo) outbox(rows ...outboxGauges) expo {
	for _, r := range rows {
		labels := fmt.Sprintf("aggregate_type=%q,database=\"orders\",event_type=%q", r.agg, r.typ)
		for _, s := range []struct {
			name string
			v    *float64
		}{
			{catalog.OutboxEventsPending, r.pending}, {catalog.OutboxOldestPendingAge, r.oldest}, {catalog.OutboxEventsFailed, r.failed},
			{catalog.OutboxOldestFailedAge, r.oldestFailed}, {catalog.OutboxEventsRetrying, r.retrying},
			{catalog.OutboxEventsCreated, r.created}, {catalog.OutboxEventsPublished, r.published},
		} {
			if s.v != nil {
				x.add(s.name, labels, *s.v)
			}
		}
	}
	return x
}

// delay adds the publish-delay histogram with its default buckets: count
// observations summing to sum, cum the cumulative bucket counts.
func (x expo) delay(count int, sum float64, cum []int) expo {
	bounds := []string{"0.1", "0.5", "1", "2.5", "5", "10", "30", "60", "120", "300", "600", "1800", "3600"}
	n := catalog.OutboxPublishDelay
	for i, ub := range bounds {
		x[n] = append(x[n], fmt.Sprintf("%s_bucket{database=\"orders\",le=%q} %d", n, ub, cum[i]))
	}
	x[n] = append(x[n], fmt.Sprintf("%s_bucket{database=\"orders\",le=\"+Inf\"} %d", n, count),
		fmt.Sprintf("%s_sum{database=\"orders\"} %v", n, sum), fmt.Sprintf("%s_count{database=\"orders\"} %d", n, count))
	return x
}

var noDelay = make([]int, 13)

// inboxGauges is one (source_system, message_type)'s inbox series.
type inboxGauges struct {
	source, typ string
	// open is the count and oldest age per open status (nil: the family
	// is absent); ages false: the oldest-age family is absent.
	open                           map[string]gauge
	ages                           bool
	processed                      map[string]float64
	processedSeries                bool
	retrying, failed, oldestFailed *float64
}

func (x expo) inbox(rows ...inboxGauges) expo {
	for _, r := range rows {
		base := fmt.Sprintf("database=\"orders\",message_type=%q,source_system=%q", r.typ, r.source)
		if r.open != nil {
			for _, st := range []string{"RECEIVED", "PROCESSING", "FAILED_RETRYABLE", "UNKNOWN_OUTCOME"} {
				x.add(catalog.InboxMessages, base+fmt.Sprintf(",status=%q", st), r.open[st].count)
				if r.ages {
					x.add(catalog.InboxOldestMessageAge, base+fmt.Sprintf(",status=%q", st), r.open[st].oldest)
				}
			}
		}
		if r.processedSeries {
			for _, st := range []string{"PROCESSED", "FAILED_FINAL", "IGNORED_DUPLICATE"} {
				x.add(catalog.InboxMessagesProcessed, base+fmt.Sprintf(",status=%q", st), r.processed[st])
			}
		}
		for _, s := range []struct {
			name string
			v    *float64
		}{{catalog.InboxMessagesRetrying, r.retrying}, {catalog.InboxMessagesFailed, r.failed}, {catalog.InboxOldestFailedAge, r.oldestFailed}} {
			if s.v != nil {
				x.add(s.name, base, *s.v)
			}
		}
	}
	return x
}

// The listener ids of the Spring Modulith fixtures.
const (
	modInventory = "com.example.inventory.InventoryListener.on(com.example.order.OrderPlaced)"
	modBilling   = "com.example.billing.BillingListener.on(com.example.order.OrderPlaced)"
	modMail      = "com.example.mail.MailListener.on(com.example.order.OrderPlaced)"
	modEvent     = "com.example.order.OrderPlaced"
)

// Spring Modulith 2.0.x, schema v2 (spring-modulith-events-jdbc
// schemas/v2/schema-postgresql.sql at 2.0.7, identical at 2.0.3): every
// status the registry writes, legacy rows of a migrated 1.x table, an
// archived publication. Pending: PUBLISHED, PROCESSING, RESUBMITTED without
// a completion date; failed: FAILED and incomplete rows without a status,
// as the library's findFailedPublications reads them; retried: completion
// attempts beyond the first.
func TestPresetSpringModulith2(t *testing.T) {
	d := newPresetDB(t, "spring-modulith-2")
	e := d.newExporter(presetConfig("outbox: {preset: spring-modulith, retrying_after_attempts: 1}"))
	e.Collect()
	e.Expect(expo{}.outbox(
		// Row 1 PUBLISHED 5 s; row 7 FAILED 6 h (the staleness monitor).
		outboxGauges{modInventory, modEvent, f(1), f(5), f(1), f(6 * 3600), f(0), f(0), f(0)},
		// Row 2 PROCESSING 40 s; FAILED rows 4 (2 h) and 6 (1 d, attempts
		// 3), the legacy incomplete row 8 without a status (30 d).
		outboxGauges{modBilling, modEvent, f(1), f(40), f(3), f(30 * 86400), f(0), f(0), f(0)},
		// Row 5 RESUBMITTED 3 h, completion_attempts 2: one retry.
		outboxGauges{modMail, modEvent, f(1), f(3 * 3600), f(0), f(0), f(1), f(0), f(0)},
	).delay(0, 0, noDelay).String(), outboxFamilies...)

	// The registry completes row 1 at T0+20s and publishes a new event at
	// T0+10s, as JdbcEventPublicationRepositoryV2 writes them.
	d.Exec(`UPDATE event_publication SET STATUS = 'COMPLETED', COMPLETION_DATE = $1 WHERE ID = '22222222-0000-0000-0000-000000000001'`, collectortest.At(20))
	d.Exec(`INSERT INTO event_publication (id, event_type, listener_id, publication_date, serialized_event, status, completion_attempts, last_resubmission_date)
		VALUES ('22222222-0000-0000-0000-0000000000b1', $1, $2, $3, '{"orderId":"o-11"}', 'PUBLISHED', 1, $3)`, modEvent, modInventory, collectortest.At(10))
	d.SetClock(30 * time.Second)
	e.Collect()
	e.Expect(expo{}.outbox(
		outboxGauges{modInventory, modEvent, f(1), f(20), f(1), f(6*3600 + 30), f(0), f(1), f(1)},
		outboxGauges{modBilling, modEvent, f(1), f(70), f(3), f(30*86400 + 30), f(0), f(0), f(0)},
		outboxGauges{modMail, modEvent, f(1), f(3*3600 + 30), f(0), f(0), f(1), f(0), f(0)},
	).delay(1, 25, []int{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1}).String(), outboxFamilies...)

	// The status page: the oldest pending publications, failed ones left
	// out; no error groups (the table keeps no error text).
	lists := e.Lists()
	event := func(it collectors.Item) string {
		return strings.Join([]string{it.EventID, it.AggregateType, it.Status, collectortest.Age(it)}, " ")
	}
	collectortest.WantList(t, lists, "outbox_pending/event_publication", 3, event,
		"22222222-0000-0000-0000-000000000005 "+modMail+" RESUBMITTED -3h0m0s 10830s",
		"22222222-0000-0000-0000-000000000002 "+modBilling+" PROCESSING -40s 70s",
		"22222222-0000-0000-0000-0000000000b1 "+modInventory+" PUBLISHED 10s 20s")
	if _, ok := lists["outbox_error_groups/event_publication"]; ok {
		t.Error("an error-group list for a table without an error column")
	}
}

// Spring Modulith 1.4.x (spring-modulith-events-jdbc schema-postgresql.sql
// at 1.4.12): the same preset, told apart by the table's columns. A
// failing listener writes nothing, so there is no failed series and no
// retry count: both absent.
func TestPresetSpringModulith1(t *testing.T) {
	d := newPresetDB(t, "spring-modulith-1")
	e := d.newExporter(presetConfig("outbox: {preset: spring-modulith}"))
	e.Collect()
	e.Expect(expo{}.outbox(
		outboxGauges{agg: modInventory, typ: modEvent, pending: f(1), oldest: f(30), created: f(0), published: f(0)},
		outboxGauges{agg: modBilling, typ: modEvent, pending: f(1), oldest: f(7200), created: f(0), published: f(0)},
	).delay(0, 0, noDelay).String(), outboxFamilies...)
	// The same table altered to v2 by hand: the next collection reads it
	// as 2.x, its rows without a status and completion date as failed.
	d.Exec(`ALTER TABLE event_publication ADD COLUMN status TEXT, ADD COLUMN completion_attempts INT, ADD COLUMN last_resubmission_date TIMESTAMP WITH TIME ZONE`)
	e.Collect()
	e.Expect(expo{}.outbox(
		outboxGauges{modInventory, modEvent, f(0), f(0), f(1), f(30), f(0), f(0), f(0)},
		outboxGauges{modBilling, modEvent, f(0), f(0), f(1), f(7200), f(0), f(0), f(0)},
	).delay(0, 0, noDelay).String(), outboxFamilies...)
}

// namastack-outbox (namastack-outbox-jdbc outbox-tables.sql at v1.8.1):
// NEW records pending (one backing off after two failures, one blocked
// behind a FAILED record of its key), FAILED records after exhausted and
// non-retryable failures, COMPLETED ones with and without failures. Every
// series is supported; the failure reasons group by signature.
func TestPresetNamastack(t *testing.T) {
	d := newPresetDB(t, "namastack")
	e := d.newExporter(presetConfig("outbox: {preset: namastack, retrying_after_attempts: 2}"))
	const order, mail = "com.example.OrderHandler#handle", "com.example.MailHandler#handle"
	e.Collect()
	e.Expect(expo{}.outbox(
		// NEW rows 1 (20 s) and 2 (10 s, 2 failures: retrying); row 7
		// FAILED at once (30 min).
		outboxGauges{order, "com.example.OrderPlaced", f(2), f(20), f(1), f(1800), f(1), f(0), f(0)},
		outboxGauges{mail, "com.example.CustomerRegistered", f(0), f(0), f(1), f(3 * 3600), f(0), f(0), f(0)},
		outboxGauges{mail, "com.example.CustomerUpdated", f(1), f(7200), f(0), f(0), f(0), f(0), f(0)},
	).delay(0, 0, noDelay).String(), outboxFamilies...)
	group := func(it collectors.Item) string {
		return fmt.Sprintf("%s x%d %v %s", it.ErrorSignature, it.Count, it.ExampleIDs, collectortest.Age(it))
	}
	// The open rows' failure reasons, oldest group first; the completed
	// rows' reasons are not read.
	collectortest.WantList(t, e.Lists(), "outbox_error_groups/outbox_record", 3, group,
		"400 Bad Request: invalid e-mail x1 [a0000000-0000-0000-0000-000000000005] -3h0m0s 10800s",
		"java.lang.IllegalArgumentException: unknown currency x1 [a0000000-0000-0000-0000-000000000007] -30m0s 1800s",
		"Connection refused x1 [a0000000-0000-0000-0000-000000000002] -10s 10s")

	// Record 1 completes at T0+25s (OutboxRecord.markCompleted), a new one
	// is scheduled at T0+5s.
	d.Exec(`UPDATE outbox_record SET status = 'COMPLETED', completed_at = $1 WHERE id = 'a0000000-0000-0000-0000-000000000001'`, collectortest.At(25))
	d.Exec(`INSERT INTO outbox_record (id, status, record_key, record_type, payload, partition_no, created_at, failure_count, next_retry_at, handler_id)
		VALUES ('a0000000-0000-0000-0000-000000000011', 'NEW', 'order-11', 'com.example.OrderPlaced', '{}', 17, $1, 0, $1, $2)`, collectortest.At(5), order)
	d.SetClock(30 * time.Second)
	e.Collect()
	e.Expect(expo{}.outbox(
		outboxGauges{order, "com.example.OrderPlaced", f(2), f(40), f(1), f(1830), f(1), f(1), f(1)},
		outboxGauges{mail, "com.example.CustomerRegistered", f(0), f(0), f(1), f(3*3600 + 30), f(0), f(0), f(0)},
		outboxGauges{mail, "com.example.CustomerUpdated", f(1), f(7230), f(0), f(0), f(0), f(0), f(0)},
	).delay(1, 45, []int{0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}).String(), outboxFamilies...)
}

// gruelbox transaction-outbox (the DefaultDialect/Dialect POSTGRESQL_9
// migrations at 7.0.715): pending entries (due, delayed, claimed,
// retrying, unblocked, ordered), a blocked one (failed), a processed one
// kept for deduplication. No creation time: both ages, the counters and
// the delay are absent.
func TestPresetGruelbox(t *testing.T) {
	d := newPresetDB(t, "gruelbox")
	e := d.newExporter(presetConfig("outbox: {preset: gruelbox}"))
	e.Collect()
	x := func(order float64) string {
		return expo{}.outbox(
			outboxGauges{agg: "*", typ: "com.example.OrderService.publishOrderPlaced", pending: f(order), failed: f(0), retrying: f(0)},
			outboxGauges{agg: "*", typ: "com.example.ReminderService.sendReminder", pending: f(1), failed: f(0), retrying: f(0)},
			// Entries 4 (2 attempts) and 6 (unblocked) pending, 5 blocked.
			outboxGauges{agg: "*", typ: "com.example.PaymentService.capture", pending: f(2), failed: f(1), retrying: f(0)},
			// The ordered entry retried 12 times holds back the next one.
			outboxGauges{agg: "orders", typ: "com.example.LedgerService.post", pending: f(2), failed: f(0), retrying: f(1)},
		).String()
	}
	e.Expect(x(2), outboxFamilies...)
	// Entry 1 succeeds: the library deletes it.
	d.Exec(`DELETE FROM TXNO_OUTBOX WHERE id = 'b0000000-0000-0000-0000-000000000001'`)
	e.Collect()
	e.Expect(x(1), outboxFamilies...)
	// The pending list has no time to order by: by id.
	collectortest.WantList(t, e.Lists(), "outbox_pending/txno_outbox", 6, func(it collectors.Item) string { return it.EventID + " " + collectortest.Age(it) },
		"b0000000-0000-0000-0000-000000000002 no time", "b0000000-0000-0000-0000-000000000003 no time",
		"b0000000-0000-0000-0000-000000000004 no time", "b0000000-0000-0000-0000-000000000006 no time",
		"b0000000-0000-0000-0000-000000000008 no time", "b0000000-0000-0000-0000-000000000009 no time")
}

// Eventuate Tram (eventuate-common postgres/2.initialize-database.sql at
// master 6de8d54d): messages pending and published by the polling CDC,
// creation_time in epoch milliseconds; received_messages, the consumers'
// deduplication records, as the inbox.
func TestPresetEventuateTram(t *testing.T) {
	d := newPresetDB(t, "eventuate-tram")
	e := d.newExporter(presetConfig("outbox: {preset: eventuate-tram}", "inbox: {preset: eventuate-tram}"))
	e.Collect()
	outbox := func(created, createdAge, orderAge, customerAge float64) string {
		return expo{}.outbox(
			outboxGauges{agg: "com.example.Order", typ: "com.example.OrderCreated", pending: f(1), oldest: f(createdAge), created: f(created)},
			outboxGauges{agg: "com.example.Order", typ: "", pending: f(1), oldest: f(orderAge), created: f(0)},
			outboxGauges{agg: "com.example.Customer", typ: "", pending: f(1), oldest: f(customerAge), created: f(0)},
		).String()
	}
	e.Expect(outbox(0, 10, 3600, 5), outboxFamilies...)
	// The inbox's two records are older than the lookback: no series yet,
	// and never a message gauge (no unfinished message is ever visible).
	e.Expect("", inboxFamilies...)

	// The polling CDC publishes message 1; the producer sends a new one and
	// a consumer handles it, all at T0+10s (creation_time is PostgreSQL's
	// clock in ms).
	ms := collectortest.At(10).UnixMilli()
	d.Exec(`UPDATE eventuate.message SET published = 1 WHERE id in ('0000019ad7e7b5a8-0242ac1200040000')`)
	d.Exec(`insert into eventuate.message(id, destination, headers, payload, creation_time, published, message_partition)
		values('0000019ad7e80000-0242ac1200040000', 'com.example.Order', '{"event-type":"com.example.OrderCreated"}', '{}', $1, 0, NULL)`, ms)
	d.Exec(`insert into eventuate.received_messages(consumer_id, message_id, creation_time) values('com.example.InventoryServiceConsumer', 'm-new', $1)`, ms)
	d.SetClock(30 * time.Second)
	e.Collect()
	e.Expect(outbox(1, 20, 3630, 35), outboxFamilies...)
	e.Expect(expo{}.inbox(inboxGauges{source: "com.example.InventoryServiceConsumer", processedSeries: true,
		processed: map[string]float64{"PROCESSED": 1}}).String(), inboxFamilies...)
}

// NServiceBus SQL persistence (Create_PostgreSql.sql at 9.0.3, for
// endpoint Sales): rows of handled messages, dispatched or not. Only the
// pending count and the published counter are supported.
func TestPresetNServiceBus(t *testing.T) {
	d := newPresetDB(t, "nservicebus")
	e := d.newExporter(presetConfig("outbox: {preset: nservicebus, table: Sales_OutboxData}"))
	e.Collect()
	e.Expect(expo{}.outbox(outboxGauges{pending: f(2), published: f(0)}).String(), outboxFamilies...)
	// SetAsDispatched for row 1 at T0+20s (DateTime.UtcNow, stored as a
	// UTC wall clock).
	d.Exec(`update "public"."Sales_OutboxData" set "Dispatched" = true, "DispatchedAt" = $1::timestamptz AT TIME ZONE 'UTC', "Operations" = '[]'
		where "MessageId" = '7f1c0a4e-5b2d-4c1e-9a51-b2f0c0000001'`, collectortest.At(20))
	d.SetClock(30 * time.Second)
	e.Collect()
	e.Expect(expo{}.outbox(outboxGauges{pending: f(1), published: f(1)}).String(), outboxFamilies...)
}

// MassTransit's EF Core outbox (the model of v8.5.8 as Npgsql's provider
// creates it): the bus and consumer outbox's messages pending until sent
// (and deleted), the consumers' InboxState through its three states.
func TestPresetMassTransit(t *testing.T) {
	d := newPresetDB(t, "masstransit")
	e := d.newExporter(presetConfig("outbox: {preset: masstransit}", "inbox: {preset: masstransit}"))
	// outbox is the exposition of the outbox's four message types with
	// their pending events and the oldest one's age, in this order.
	outbox := func(pendingOldest [4][2]float64) string {
		var rows []outboxGauges
		for i, typ := range []string{"urn:message:Sales.Contracts:OrderAccepted", "urn:message:Sales.Contracts:OrderSubmitted",
			"urn:message:Sales.Contracts:OrderReminder", "urn:message:Billing.Contracts:InvoiceRequested"} {
			rows = append(rows, outboxGauges{typ: typ, pending: f(pendingOldest[i][0]), oldest: f(pendingOldest[i][1])})
		}
		return expo{}.outbox(rows...).String()
	}
	e.Collect()
	e.Expect(outbox([4][2]float64{{1, 11}, {2, 3600}, {1, 15}, {1, 2400}}), outboxFamilies...)
	const consumer = "c0000000-0000-0000-0000-000000000001"
	e.Expect(expo{}.inbox(inboxGauges{source: consumer, ages: true, processedSeries: true,
		open: map[string]gauge{"RECEIVED": {2, 7200, 0}, "PROCESSING": {1, 12, 0}}}).String(), inboxFamilies...)

	// Message 3's outgoing message is delivered at T0+20s: SetDelivered,
	// then RemoveOutboxMessages.
	d.Exec(`UPDATE "InboxState" SET "Delivered" = $1, "ReceiveCount" = 3 WHERE "MessageId" = '10000000-0000-0000-0000-000000000003'`, collectortest.At(20))
	d.Exec(`DELETE FROM "OutboxMessage" WHERE "SequenceNumber" = 101`)
	d.SetClock(30 * time.Second)
	e.Collect()
	e.Expect(expo{}.inbox(inboxGauges{source: consumer, ages: true, processedSeries: true,
		open:      map[string]gauge{"RECEIVED": {2, 7230, 0}},
		processed: map[string]float64{"PROCESSED": 1}}).String(), inboxFamilies...)
	e.Expect(outbox([4][2]float64{{0, 0}, {2, 3630}, {1, 45}, {1, 2430}}), outboxFamilies...)
}

// Wolverine's PostgreSQL message store (Incoming/Outgoing/DeadLetters
// tables of V6.29.2 as Weasel 9.25.1 creates them): incoming envelopes
// received, retried, scheduled and handled, dead letters (one marked for
// replay), outgoing envelopes. No time column by default: no ages but the
// dead letters', no counters.
func TestPresetWolverine(t *testing.T) {
	d := newPresetDB(t, "wolverine")
	e := d.newExporter(presetConfig("outbox: {preset: wolverine}", "inbox: {preset: wolverine, retrying_after_attempts: 2}"))
	e.Collect()
	e.Expect(expo{}.outbox(
		outboxGauges{agg: "rabbitmq://exchange/orders", typ: "Sales.OrderPlaced", pending: f(1)},
		outboxGauges{agg: "rabbitmq://exchange/quotes", typ: "Sales.PriceQuote", pending: f(1)},
		outboxGauges{agg: "rabbitmq://exchange/billing", typ: "Billing.InvoiceRequested", pending: f(1)},
	).String(), outboxFamilies...)
	received := func(n float64) map[string]gauge { return map[string]gauge{"RECEIVED": {n, 0, 0}} }
	e.Expect(expo{}.inbox(
		// Envelopes 1 and 2 (2 attempts: retrying).
		inboxGauges{source: "rabbitmq://queue/orders", typ: "Sales.OrderPlaced", open: received(2), retrying: f(1), failed: f(0), oldestFailed: f(0)},
		inboxGauges{source: "local://durable/billing", typ: "Billing.InvoiceRequested", open: received(1), retrying: f(0), failed: f(0), oldestFailed: f(0)},
		// Scheduled for retry after 3 attempts.
		inboxGauges{source: "rabbitmq://queue/shipping", typ: "Shipping.ShipOrder", open: map[string]gauge{"FAILED_RETRYABLE": {1, 0, 0}},
			retrying: f(1), failed: f(0), oldestFailed: f(0)},
		inboxGauges{source: "local://durable/sales", typ: "Sales.CancelUnpaidOrder", open: received(1), retrying: f(0), failed: f(0), oldestFailed: f(0)},
		// The dead letter sent 45 minutes ago; the one marked for replay
		// is not counted.
		inboxGauges{source: "rabbitmq://queue/billing", typ: "Billing.ChargeCard", open: received(0), retrying: f(0), failed: f(1), oldestFailed: f(2700)},
	).String(), inboxFamilies...)
	group := func(it collectors.Item) string {
		return fmt.Sprintf("%s x%d %v %s", it.ErrorSignature, it.Count, it.ExampleIDs, collectortest.Age(it))
	}
	collectortest.WantList(t, e.Lists(), "inbox_error_groups/wolverine.wolverine_incoming_envelopes", 1, group,
		"System.Net.Http.HttpRequestException: Response status code does not indicate success: 502 (Bad Gateway). x1 [50000000-0000-0000-0000-000000000008] -45m0s 2700s")
}

// A preset's table can be renamed (table: overrides the default), and a
// missing preset column is reported like any missing column, naming the
// preset's key.
func TestPresetTableOverrideAndMissingColumn(t *testing.T) {
	d := newPresetDB(t, "namastack")
	d.Exec(`CREATE SCHEMA app; ALTER TABLE outbox_record SET SCHEMA app; ALTER TABLE app.outbox_record RENAME TO my_outbox`)
	e := d.newExporter(presetConfig("outbox: {preset: namastack, table: app.my_outbox}"))
	e.Collect()
	if v := e.Value(catalog.OutboxEventsFailed, map[string]string{"event_type": "com.example.CustomerRegistered"}); v != 1 {
		t.Errorf("failed CustomerRegistered events in app.my_outbox: %v, want 1", v)
	}
	d.Exec(`ALTER TABLE app.my_outbox RENAME COLUMN failure_reason TO reason`)
	e.Collect()
	if v := e.Value(catalog.ExporterCollectorUp, map[string]string{"collector": "outbox"}); v != 0 {
		t.Errorf("collector_up with a column missing: %v, want 0", v)
	}
	if want := "table app.my_outbox has no column failure_reason (config key databases[0].tables.outbox.preset)"; !strings.Contains(e.Logs.String(), want) {
		t.Errorf("the log lacks %q:\n%s", want, e.Logs.String())
	}
}

// TestPresetQueriesReadOnlyOpenOrRecentRows is the robustness test of the
// presets (docs/design.md, Data flow 7): each library's table with a large
// finished history (published, completed, dispatched, handled rows) and the
// indexes of its own DDL plus deploy/sql/presets/<preset>.sql; every query
// of the resolved shape, under EXPLAIN ANALYZE, touches only the few open
// or recent rows. Tables whose every row is open work (a library that
// deletes a row once sent) need no index and hold no history.
func TestPresetQueriesReadOnlyOpenOrRecentRows(t *testing.T) {
	const history = 50000
	cases := []struct {
		fixture, preset, tables, history string
	}{
		{"spring-modulith-2", "spring-modulith", "outbox: {preset: spring-modulith}",
			`INSERT INTO event_publication (id, listener_id, event_type, serialized_event, publication_date, completion_date, status, completion_attempts, last_resubmission_date)
			SELECT gen_random_uuid(), 'L' || (g % 5), 'E', '{}', $1::timestamptz - make_interval(secs => g), $1::timestamptz - make_interval(secs => g - 1), 'COMPLETED', 1, $1::timestamptz
			FROM generate_series(1, $2) g`},
		{"namastack", "namastack", "outbox: {preset: namastack}",
			`INSERT INTO outbox_record (id, status, record_key, record_type, payload, created_at, completed_at, failure_count, next_retry_at, partition_no, handler_id)
			SELECT 'h' || g, 'COMPLETED', 'k' || g, 'T', '{}', $1::timestamptz - make_interval(secs => g), $1::timestamptz - make_interval(secs => g - 1), 0, $1::timestamptz, 1, 'H'
			FROM generate_series(1, $2) g`},
		{"gruelbox", "gruelbox", "outbox: {preset: gruelbox}",
			`INSERT INTO txno_outbox (id, invocation, nextattempttime, attempts, blocked, version, uniquerequestid, processed, lastattempttime, topic)
			SELECT 'h' || g, '{}', $1::timestamptz::timestamp + interval '7 days', 0, false, 1, 'u' || g, true, $1::timestamptz::timestamp, '*'
			FROM generate_series(1, $2) g`},
		{"eventuate-tram", "eventuate-tram", "outbox: {preset: eventuate-tram}\n      inbox: {preset: eventuate-tram}",
			`INSERT INTO eventuate.message (id, destination, headers, payload, published, creation_time)
			SELECT 'h' || g, 'D', '{}', '{}', 1, (extract(epoch FROM $1::timestamptz) * 1000)::bigint - g * 1000 FROM generate_series(1, $2) g;
			INSERT INTO eventuate.received_messages (consumer_id, message_id, creation_time)
			SELECT 'C', 'h' || g, (extract(epoch FROM $1::timestamptz) * 1000)::bigint - g * 1000 FROM generate_series(1, $2) g`},
		{"nservicebus", "nservicebus", "outbox: {preset: nservicebus, table: Sales_OutboxData}",
			`INSERT INTO "Sales_OutboxData" ("MessageId", "Dispatched", "DispatchedAt", "PersistenceVersion", "Operations")
			SELECT 'h' || g, true, $1::timestamptz AT TIME ZONE 'UTC' - make_interval(secs => g), '9.0.3.0', '[]' FROM generate_series(1, $2) g`},
		{"masstransit", "masstransit", "outbox: {preset: masstransit}\n      inbox: {preset: masstransit}",
			`INSERT INTO "InboxState" ("MessageId", "ConsumerId", "LockId", "Received", "ReceiveCount", "Consumed", "Delivered")
			SELECT gen_random_uuid(), 'c0000000-0000-0000-0000-000000000001', gen_random_uuid(), $1::timestamptz - make_interval(secs => g),
				2, $1::timestamptz - make_interval(secs => g), $1::timestamptz - make_interval(secs => g) FROM generate_series(1, $2) g`},
		{"wolverine", "wolverine", "outbox: {preset: wolverine}\n      inbox: {preset: wolverine}",
			`INSERT INTO wolverine.wolverine_incoming_envelopes (id, status, owner_id, attempts, body, message_type, received_at, keep_until)
			SELECT gen_random_uuid(), 'Handled', 1, 0, '\x'::bytea, 'T' || (g % 5), 'rabbitmq://queue/orders', $1::timestamptz - make_interval(secs => g) FROM generate_series(1, $2) g`},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			d := newPresetDB(t, tc.fixture)
			for _, stmt := range strings.Split(tc.history, ";\n") {
				d.Exec(stmt, collectortest.At(-3600), history)
			}
			// (nservicebus.sql holds only commented statements: the
			// library's own indexes serve its queries.)
			pgtest.ExecRepoFiles(t, d.Admin, nil, "deploy/sql/presets/"+tc.preset+".sql")
			d.Exec(`ANALYZE`)
			e := d.newExporter(presetConfig(tc.tables))
			conn := pgtest.Connect(t, d.DSN)
			for _, r := range resolvedRequirements(t, d, e) {
				for _, req := range append([]pgschema.Requirements{r.Requirements}, r.Related...) {
					queueTable := false
					for _, ix := range req.Indexes {
						queueTable = queueTable || ix.NoneNeeded != ""
					}
					for _, q := range req.Queries {
						name := req.Table + "/" + q.Name
						touched, seq, raw := explainRows(t, conn, name, q)
						if seq && !queueTable {
							t.Errorf("%s: sequential scan over %d history rows:\n%s", name, history, raw)
						}
						if touched > 20 {
							t.Errorf("%s touched %v rows; only the few open or recent rows should be read:\n%s", name, touched, raw)
						}
					}
				}
			}
		})
	}
}
