//go:build !pgonly

package tables_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/modulithtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// The preset spring-modulith against the real library: a Spring Modulith
// 2.0.3 application on Spring Boot 4.0.7 (test/relays/modulith, started by
// test/harness/modulithtest) whose JDBC event publication registry creates
// event_publication and writes it. Per order one listener completes and one
// throws, leaving a FAILED publication (schema v2, the default) or, with
// the legacy structure (schema v1), an incomplete one. The exporter reads
// the table the library wrote, at the database's real clock.
func TestPresetSpringModulithRealLibrary(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		legacy bool
	}{
		{"schema v2", nil, false},
		{"schema v1 (use-legacy-structure)", []string{"--spring.modulith.events.jdbc.use-legacy-structure=true"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) { modulithScenario(t, tc.args, tc.legacy) })
	}
}

func modulithScenario(t *testing.T, args []string, legacy bool) {
	ctx := context.Background()
	d := newTestDB(t, false)
	app := modulithtest.New(t, modulithtest.Options{DSN: d.DSN, ExtraArgs: args})
	settled := func(orders int) []modulithtest.Publication {
		t.Helper()
		pubs, err := modulithtest.WaitPublications(ctx, d.DSN, time.Minute, func(p []modulithtest.Publication) bool {
			done, failed := 0, 0
			for _, x := range p {
				switch {
				case x.Completed():
					done++
				case legacy || x.Status == "FAILED":
					failed++
				}
			}
			return len(p) == 2*orders && done == orders && failed == orders
		})
		if err != nil {
			t.Fatalf("%v\n--- application log (tail) ---\n%s", err, testkit.Tail(app.Log.String(), 30))
		}
		return pubs
	}
	// The exporter's clock is the database's own now(), taken after the
	// application settled: the frozen clock of the other tests is set to it.
	var clock time.Time
	collect := func(e *exporter) {
		t.Helper()
		if err := d.Admin.QueryRow(ctx, `UPDATE testclock.clock SET t = clock_timestamp() RETURNING t`).Scan(&clock); err != nil {
			t.Fatal(err)
		}
		e.Collect()
	}
	age := func(since time.Time) float64 { return clock.Sub(since).Seconds() }
	near := func(name string, labels map[string]string, e *exporter, want float64) {
		t.Helper()
		// Ages are exact to the microsecond both sides keep.
		if got := e.Value(name, labels); math.Abs(got-want) > 1e-6 {
			t.Errorf("%s%v = %v, want %v", name, labels, got, want)
		}
	}
	ship := map[string]string{"aggregate_type": modulithtest.ListenerCompletes, "event_type": modulithtest.EventType}
	bill := map[string]string{"aggregate_type": modulithtest.ListenerFails, "event_type": modulithtest.EventType}

	pubs := settled(1)
	e := d.newExporter(presetConfig("outbox: {preset: spring-modulith}"))
	collect(e)
	byListener := func(pubs []modulithtest.Publication, listener, order string) modulithtest.Publication {
		for _, p := range pubs {
			if p.ListenerID == listener && p.SerializedEvent == fmt.Sprintf(`{"orderId":%q}`, order) {
				return p
			}
		}
		t.Fatalf("no publication of %s for %s in %+v", listener, order, pubs)
		return modulithtest.Publication{}
	}
	first := byListener(pubs, modulithtest.ListenerFails, "startup-1")
	if legacy {
		// 1.x records no failure: the failed publication is pending, and
		// ages; there is no failed or retrying series.
		e.wantValues([]seriesValue{{catalog.OutboxEventsPending, bill, 1}, {catalog.OutboxEventsPending, ship, 0}})
		near(catalog.OutboxOldestPendingAge, bill, e, age(first.PublicationDate))
		if err := e.Compare("", catalog.OutboxEventsFailed, catalog.OutboxEventsRetrying, catalog.OutboxOldestFailedAge); err != nil {
			t.Errorf("series the 1.x schema cannot support are served: %v", err)
		}
	} else {
		e.wantValues([]seriesValue{{catalog.OutboxEventsPending, bill, 0}, {catalog.OutboxEventsFailed, bill, 1},
			{catalog.OutboxEventsFailed, ship, 0}, {catalog.OutboxEventsPending, ship, 0}, {catalog.OutboxEventsRetrying, bill, 0}})
		near(catalog.OutboxOldestFailedAge, bill, e, age(first.PublicationDate))
	}

	// A second order: its publications are created, one published.
	if err := app.PlaceOrder(ctx, "order-2"); err != nil {
		t.Fatal(err)
	}
	pubs = settled(2)
	collect(e)
	done := byListener(pubs, modulithtest.ListenerCompletes, "order-2")
	want := []seriesValue{{catalog.OutboxEventsCreated, ship, 1}, {catalog.OutboxEventsCreated, bill, 1},
		{catalog.OutboxEventsPublished, ship, 1}, {catalog.OutboxEventsPublished, bill, 0}}
	if legacy {
		want = append(want, seriesValue{catalog.OutboxEventsPending, bill, 2})
		near(catalog.OutboxOldestPendingAge, bill, e, age(first.PublicationDate))
	} else {
		want = append(want, seriesValue{catalog.OutboxEventsFailed, bill, 2}, seriesValue{catalog.OutboxEventsPending, bill, 0})
		near(catalog.OutboxOldestFailedAge, bill, e, age(first.PublicationDate))
	}
	e.wantValues(want)
	delay := collectortest.Series(t, e.Set, catalog.OutboxPublishDelay, nil)
	if delay == nil || delay.GetHistogram().GetSampleCount() != 1 ||
		math.Abs(delay.GetHistogram().GetSampleSum()-done.CompletionDate.Sub(done.PublicationDate).Seconds()) > 1e-6 {
		t.Errorf("publish delay %v, want one observation of %v", delay, done.CompletionDate.Sub(done.PublicationDate))
	}
	// With the page on, nothing is pending in v2 (the failed ones are
	// not listed as pending); in v1 the failed listener's publications are.
	pending := e.Lists()["outbox_pending/event_publication"]
	wantPending := 0
	if legacy {
		wantPending = 2
	}
	if pending.Total != wantPending || len(pending.Items) != wantPending {
		t.Errorf("pending list %+v, want %d items", pending, wantPending)
	}
	for _, it := range pending.Items {
		if it.AggregateType != modulithtest.ListenerFails {
			t.Errorf("pending item %+v", it)
		}
	}
	if err := app.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
}
