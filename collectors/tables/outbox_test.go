package tables_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

type outboxRow struct {
	id, agg, typ, status string
	created              float64
	published            *float64
}

func pub(s float64) *float64 { return &s }

func (d *testDB) insertOutbox(rows ...outboxRow) {
	d.T.Helper()
	for _, r := range rows {
		d.Exec(`INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at, published_at)
			VALUES ($1::uuid, $2, 'agg-1', $3, $1::text, '{}', $4, $5, $6)`, r.id, r.agg, r.typ, r.status, collectortest.At(r.created), collectortest.AtOrNull(r.published))
	}
}

func uuid(n int) string { return fmt.Sprintf("00000000-0000-0000-0000-%012d", n) }

// outboxState is the expected value of every outbox series of one tuple.
type outboxState struct {
	agg, typ                string
	pending, oldest, failed float64
	created, published      float64
}

func outboxExpect(states []outboxState, histCount int, histSum float64, cumBuckets []int) string {
	var b strings.Builder
	names := []string{catalog.OutboxEventsCreated, catalog.OutboxEventsFailed, catalog.OutboxEventsPending, catalog.OutboxEventsPublished, catalog.OutboxOldestPendingAge}
	for _, n := range names {
		b.WriteString(collectortest.HelpHeader(n))
		for _, s := range states {
			v := map[string]float64{
				catalog.OutboxEventsCreated: s.created, catalog.OutboxEventsFailed: s.failed,
				catalog.OutboxEventsPending: s.pending, catalog.OutboxEventsPublished: s.published,
				catalog.OutboxOldestPendingAge: s.oldest,
			}[n]
			fmt.Fprintf(&b, "%s{aggregate_type=%q,database=\"orders\",event_type=%q} %v\n", n, s.agg, s.typ, v)
		}
	}
	b.WriteString(collectortest.HelpHeader(catalog.OutboxPublishDelay))
	bounds := []string{"0.1", "0.5", "1", "2.5", "5", "10", "30", "60", "120", "300", "600", "1800", "3600"}
	for i, ub := range bounds {
		fmt.Fprintf(&b, "%s_bucket{database=\"orders\",le=%q} %d\n", catalog.OutboxPublishDelay, ub, cumBuckets[i])
	}
	fmt.Fprintf(&b, "%s_bucket{database=\"orders\",le=\"+Inf\"} %d\n", catalog.OutboxPublishDelay, histCount)
	fmt.Fprintf(&b, "%s_sum{database=\"orders\"} %v\n", catalog.OutboxPublishDelay, histSum)
	fmt.Fprintf(&b, "%s_count{database=\"orders\"} %d\n", catalog.OutboxPublishDelay, histCount)
	return b.String()
}

var outboxNames = []string{catalog.OutboxEventsCreated, catalog.OutboxEventsFailed, catalog.OutboxEventsPending,
	catalog.OutboxEventsPublished, catalog.OutboxOldestPendingAge, catalog.OutboxPublishDelay}

func TestOutboxExactValues(t *testing.T) {
	d := newTestDB(t, false)
	d.insertOutbox(
		outboxRow{uuid(1), "Order", "OrderCreated", "PENDING", -600, nil},
		outboxRow{uuid(2), "Order", "OrderCreated", "PENDING", -300, nil},
		outboxRow{uuid(3), "Order", "OrderPaid", "PENDING", -30, nil},
		outboxRow{uuid(4), "Order", "OrderPaid", "FAILED", -1000, nil},
		outboxRow{uuid(5), "Order", "OrderPaid", "DEAD", -2000, nil},
		outboxRow{uuid(6), "Quote", "QuoteApproved", "PUBLISHED", -7200, pub(-7199)},
		outboxRow{uuid(7), "Quote", "QuoteApproved", "PUBLISHED", -50, pub(-40)},
	)
	e := d.newExporter(collectortest.BaseConfig)

	// First collection: gauges exact; counters start at 0 (rows already in
	// the lookback happened before the exporter watched).
	e.Collect()
	zero := []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	e.Expect(outboxExpect([]outboxState{
		{"Order", "OrderCreated", 2, 600, 0, 0, 0},
		{"Order", "OrderPaid", 1, 30, 2, 0, 0},
		{"Quote", "QuoteApproved", 0, 0, 0, 0, 0},
	}, 0, 0, zero), outboxNames...)

	// 30 s later: e1 published (delay 625 s), e8 created, e9 created and
	// published within 0.5 s, e10 created failed with a new event type.
	d.SetClock(30 * time.Second)
	d.Exec(`UPDATE event_outbox SET status = 'PUBLISHED', published_at = $1 WHERE event_id = $2`, collectortest.At(25), uuid(1))
	d.insertOutbox(
		outboxRow{uuid(8), "Order", "OrderCreated", "PENDING", 10, nil},
		outboxRow{uuid(9), "Quote", "QuoteApproved", "PUBLISHED", 12, pub(12.5)},
		outboxRow{uuid(10), "Invoice", "InvoiceSent", "FAILED", 20, nil},
	)
	e.Collect()
	after := outboxExpect([]outboxState{
		{"Invoice", "InvoiceSent", 0, 0, 1, 1, 0},
		{"Order", "OrderCreated", 2, 330, 0, 1, 1},
		{"Order", "OrderPaid", 1, 60, 2, 0, 0},
		{"Quote", "QuoteApproved", 0, 0, 0, 1, 1},
	}, 2, 625.5, []int{0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2})
	e.Expect(after, outboxNames...)

	// Nothing changes: the same rows are read again inside the lookback and
	// must not be counted twice.
	d.SetClock(60 * time.Second)
	e.Collect()
	e.Expect(strings.ReplaceAll(strings.ReplaceAll(after, "} 330\n", "} 360\n"), `event_type="OrderPaid"} 60`+"\n", `event_type="OrderPaid"} 90`+"\n"), outboxNames...)

	// Retention deletes every published event: no counter moves, and the
	// drained Quote tuple keeps reporting 0 instead of vanishing.
	d.Exec(`DELETE FROM event_outbox WHERE published_at IS NOT NULL`)
	d.SetClock(90 * time.Second)
	e.Collect()
	e.Expect(outboxExpect([]outboxState{
		{"Invoice", "InvoiceSent", 0, 0, 1, 1, 0},
		{"Order", "OrderCreated", 2, 390, 0, 1, 1},
		{"Order", "OrderPaid", 1, 120, 2, 0, 0},
		{"Quote", "QuoteApproved", 0, 0, 0, 1, 1},
	}, 2, 625.5, []int{0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2}), outboxNames...)
}

func TestOutboxLateCommitCountedExactlyOnce(t *testing.T) {
	d := newTestDB(t, false)
	e := d.newExporter(collectortest.BaseConfig)
	e.Collect()

	// A writer's transaction stamps its event at t0+5 and stays open.
	ctx := t.Context()
	writer1 := collectortest.NewConn(t, d.DB)
	tx, err := writer1.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at, published_at)
		VALUES ($1, 'Order', 'a', 'OrderCreated', 'k', '{}', 'PUBLISHED', $2, $3)`, uuid(1), collectortest.At(5), collectortest.At(6)); err != nil {
		t.Fatal(err)
	}
	// Meanwhile a row stamped later commits at once.
	writer2 := collectortest.NewConn(t, d.DB)
	pgtest.Exec(t, writer2, `INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at)
		VALUES ($1, 'Order', 'b', 'OrderCreated', 'k2', '{}', 'PENDING', $2)`, uuid(2), collectortest.At(8))

	labels := map[string]string{"aggregate_type": "Order", "event_type": "OrderCreated"}
	for _, step := range []struct {
		clock              time.Duration
		commit             bool
		created, published float64
	}{
		{10 * time.Second, false, 1, 0}, // the watermark passes t0+5 while the writer is still open
		{40 * time.Second, false, 1, 0},
		{40 * time.Second, true, 1, 0},  // commit happens now, 35 s after its timestamp
		{70 * time.Second, false, 2, 1}, // counted at the next poll
		{100 * time.Second, false, 2, 1},
		{200 * time.Second, false, 2, 1}, // and never again
	} {
		if step.commit {
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			continue
		}
		d.SetClock(step.clock)
		e.Collect()
		if got := e.Value(catalog.OutboxEventsCreated, labels); got != step.created {
			t.Fatalf("at t0+%s created_total = %v, want %v", step.clock, got, step.created)
		}
		if got := e.Value(catalog.OutboxEventsPublished, labels); got != step.published {
			t.Fatalf("at t0+%s published_total = %v, want %v", step.clock, got, step.published)
		}
	}
}
