package tables_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// TestCatchUpAfterAnHourWithoutScrapes scripts a gap: an outbox written at
// 2,000 events a second for an hour (7.2M rows, written by SQL in one go)
// while nothing collected, then the frozen database clock moved an hour on
// and a collection. Three exporters read it:
//
//   - at the defaults (late_commit_window 5m, max_catch_up 5m, a 5s
//     statement_timeout, a 20s timeout), the first collection reads the
//     last ten minutes only, within its timeouts: it counts those minutes' 1.2M events
//     created and published, counts the 55 skipped minutes in
//     workflow_exporter_collection_skipped_seconds_total and logs the skip
//     once;
//   - with max_catch_up 0 (no bound: the exporter before it), the first
//     collection reads the whole hour and times out, and so does its retry:
//     the collector stays down;
//   - with a statement_timeout too short for the catch-up, each retry reads
//     half as far back as the one before, until one succeeds: the collector
//     does not stay down.
func TestCatchUpAfterAnHourWithoutScrapes(t *testing.T) {
	testkit.SkipIfShort(t, "7.2M rows")
	d := collectortest.NewDB(t, false)
	exporter := func(extra string) *collectortest.Exporter {
		return d.NewExporter(`
databases:
  - name: orders
    dsn_env: WFX_TEST_DSN
    min_interval: 1ms
    tables: {outbox: {}}
` + extra)
	}
	// The race detector (make test) slows the exporter's handling of
	// each row several times, and a statement's time includes handing its
	// rows to the client: under it the bounded and unbounded exporters get
	// a statement_timeout three times the default's (15s) and a collection
	// timeout of 28s (the harness's collection waits 30s for it), so that
	// what the test measures is the bound on the read, not the detector's
	// cost. The unbounded read, six times the rows, still runs into them.
	timeouts := ""
	if raceDetector {
		timeouts = "    statement_timeout: 15s\n    timeout: 28s\n"
	}
	bounded := exporter(timeouts)
	unbounded := exporter("    max_catch_up: 0s\n" + timeouts)
	tight := exporter("    late_commit_window: 10s\n    statement_timeout: 250ms\n")
	// The baselines, before the traffic.
	for _, e := range []*collectortest.Exporter{bounded, unbounded, tight} {
		e.Collect()
	}

	// An hour of traffic after T0: event i created at T0 + i/2000 s and
	// published half a second later, the last second's still pending. The
	// event ids ascend with i, as time-ordered ids do (random ones would
	// only make the insert slower).
	const rate, gap = 2000, 3600
	start := time.Now()
	d.Exec(`ALTER TABLE event_outbox SET UNLOGGED`) // a test table: no WAL to write
	d.Exec(fmt.Sprintf(`INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at, published_at)
SELECT lpad(to_hex(i), 32, '0')::uuid, 'Order', 'o', 'OrderPlaced', 'k' || i, '{}', 'NEW', c, CASE WHEN c <= $1 THEN c + interval '500 ms' END
FROM generate_series(1, %d) i, LATERAL (SELECT $2::timestamptz + i * interval '500 microseconds' AS c) t`, rate*gap),
		collectortest.At(gap-0.5), collectortest.T0)
	d.Exec(`ANALYZE event_outbox`)
	t.Logf("%d rows written in %s", rate*gap, time.Since(start).Round(time.Millisecond))
	d.SetClock(gap * time.Second)

	outbox := map[string]string{"source": "database", "name": "orders", "collector": "outbox"}
	events := map[string]string{"database": "orders", "aggregate_type": "Order", "event_type": "OrderPlaced"}
	// Every event of the gap and the lookback before it (3,900 s, from the
	// baseline's lower bound T0 less 5m) is either counted or skipped,
	// none twice: created / rate + skipped = 3,900 s.
	accounted := func(e *collectortest.Exporter) {
		t.Helper()
		created := e.Value(catalog.OutboxEventsCreated, events)
		skipped := e.Value(catalog.ExporterCollectionSkipped, outbox)
		// Within one event: a bound between two events' times.
		if d := created/rate + skipped - (gap + 300); d < -1.0/rate || d > 1.0/rate {
			t.Errorf("created %v (%vs of events) and skipped %vs: %vs, want %ds accounted for", created, created/rate, skipped, created/rate+skipped, gap+300)
		}
	}
	// up collects until the collector is up, at most tries times, a second
	// apart, and returns the attempt that was. The pause lets a stall of
	// the server pass: once, on PostgreSQL 18 on a 2-core machine, a dozen
	// attempts in a row with the 250ms statement_timeout all failed, the
	// last even on the list of the 1,000 pending events, which takes a
	// millisecond (the stall's cause was not established).
	up := func(e *collectortest.Exporter, tries int) int {
		t.Helper()
		for try := 1; try <= tries; try++ {
			e.Collect()
			if e.Value(catalog.ExporterCollectorUp, outbox) == 1 {
				return try
			}
			time.Sleep(time.Second)
		}
		t.Fatalf("the collector is still down after %d attempts:\n%s", tries, testkit.Tail(e.Logs.String(), 20))
		return 0
	}

	// The first collection at the defaults reads the last max_catch_up
	// plus late_commit_window, 600 s of events. How long that takes is
	// docs/benchmarks.md's business (on a 2-core machine shared with other
	// work a statement can still run into its timeout; the retry then reads
	// less, as below).
	try := up(bounded, 4)
	took := bounded.Value(catalog.ExporterCollectDuration, outbox)
	t.Logf("the first successful collection after the gap was attempt %d and took %.2fs", try, took)
	accounted(bounded)
	if try == 1 {
		if got := bounded.Value(catalog.OutboxEventsCreated, events); got != 600*rate {
			t.Errorf("created after the gap = %v, want %d (the last 10 minutes)", got, 600*rate)
		}
		if got := bounded.Value(catalog.OutboxEventsPublished, events); got != 600*rate {
			t.Errorf("published after the gap = %v, want %d", got, 600*rate)
		}
		// Skipped: from the baseline's lower bound (T0 less 5m) to the
		// catch-up bound (T0 + 1h less 10m).
		if got := bounded.Value(catalog.ExporterCollectionSkipped, outbox); got != 3300 {
			t.Errorf("skipped = %vs, want 3300s", got)
		}
	}
	if got := bounded.Value(catalog.OutboxEventsPending, events); got != rate/2 {
		t.Errorf("pending = %v, want %d", got, rate/2)
	}
	if n := strings.Count(bounded.Logs.String(), "a gap without collections was longer than max_catch_up"); n != 1 {
		t.Errorf("the skip is logged %d times, want once:\n%s", n, bounded.Logs.String())
	}
	// The next collection reads on from this one: nothing more skipped,
	// nothing counted twice.
	createdBefore := bounded.Value(catalog.OutboxEventsCreated, events)
	d.SetClock((gap + 30) * time.Second)
	up(bounded, 1)
	if got := bounded.Value(catalog.OutboxEventsCreated, events); got != createdBefore {
		t.Errorf("created after the next collection = %v, want %v (nothing new)", got, createdBefore)
	}
	accounted(bounded)

	// The other two collect at the end of the hour, as the first did.
	d.SetClock(gap * time.Second)

	// Without the bound the first collection reads the whole hour: it
	// times out, and its retry reads as much again.
	for try := 1; try <= 2; try++ {
		unbounded.Collect()
		if up := unbounded.Value(catalog.ExporterCollectorUp, outbox); up != 0 {
			t.Fatalf("without max_catch_up, attempt %d read the whole hour within the statement timeout: the scenario proves nothing", try)
		}
	}

	// Too short a statement_timeout for the catch-up: each retry reads
	// half as far back; one succeeds, having skipped more, and everything
	// is still accounted for.
	try = up(tight, 30)
	skipped := tight.Value(catalog.ExporterCollectionSkipped, outbox)
	t.Logf("a 250ms statement_timeout: up at attempt %d, %vs skipped", try, skipped)
	if try == 1 || skipped <= 3300 {
		t.Errorf("up at attempt %d having skipped %vs: the retries did not read less than the first attempt", try, skipped)
	}
	if created := tight.Value(catalog.OutboxEventsCreated, events); created/rate+skipped < gap+10-1.0/rate || created/rate+skipped > gap+10+1.0/rate {
		t.Errorf("created %v and skipped %vs: want %ds accounted for (late_commit_window 10s)", created, skipped, gap+10)
	}
}
