package modulithtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// settled reports whether every publication of n events has left PROCESSING: per event one
// completed and one failed.
func settled(n int) func([]Publication) bool {
	return func(p []Publication) bool {
		done, failed := 0, 0
		for _, x := range p {
			switch {
			case x.Completed() && x.Status == "COMPLETED":
				done++
			case !x.Completed() && x.Status == "FAILED":
				failed++
			}
		}
		return done == n && failed == n && len(p) == 2*n
	}
}

// TestPublications runs the application on a throwaway database: each order leaves one completed
// publication (the listener that returns) and one incomplete, FAILED one (the listener that
// throws) in event_publication, whose shape is the registry's schema v2.
func TestPublications(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	began := time.Now()
	app := New(t, Options{DSN: dsn})
	t.Logf("modulith app: JVM start to GET /health %s", time.Since(began).Round(time.Millisecond))

	pubs, err := WaitPublications(ctx, dsn, time.Minute, settled(1))
	if err != nil {
		t.Fatalf("%v\n--- application log (tail) ---\n%s", err, testkit.Tail(app.Log.String(), 30))
	}
	for _, p := range pubs {
		if p.EventType != EventType || p.SerializedEvent != `{"orderId":"startup-1"}` || p.CompletionAttempts != 1 {
			t.Errorf("publication %+v", p)
		}
		switch p.ListenerID {
		case ListenerCompletes:
			if !p.Completed() || p.Status != "COMPLETED" {
				t.Errorf("the completing listener's publication: %+v", p)
			}
		case ListenerFails:
			if p.Completed() || p.Status != "FAILED" {
				t.Errorf("the failing listener's publication: %+v", p)
			}
		default:
			t.Errorf("unknown listener %q", p.ListenerID)
		}
	}

	if err := app.PlaceOrder(ctx, "order-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := WaitPublications(ctx, dsn, 30*time.Second, settled(2)); err != nil {
		t.Fatal(err)
	}
	if err := app.Stop(); err != nil {
		t.Fatalf("stop: %v\n%s", err, testkit.Tail(app.Log.String(), 20))
	}
	// Stopped, the failed publications stay as they were.
	if _, err := WaitPublications(ctx, dsn, time.Second, settled(2)); err != nil {
		t.Error(err)
	}

	// The table as the registry created it (test/relays/README.md has its pg_dump).
	c := pgtest.Connect(t, dsn)
	var cols string
	if err := c.QueryRow(ctx, `SELECT string_agg(column_name || ' ' || data_type || ' ' || is_nullable, ', ' ORDER BY ordinal_position)
	  FROM information_schema.columns WHERE table_name = 'event_publication'`).Scan(&cols); err != nil {
		t.Fatal(err)
	}
	const want = "id uuid NO, listener_id text NO, event_type text NO, serialized_event text NO, " +
		"publication_date timestamp with time zone NO, completion_date timestamp with time zone YES, status text YES, " +
		"completion_attempts integer YES, last_resubmission_date timestamp with time zone YES"
	if cols != want {
		t.Errorf("event_publication columns:\n %s\nwant\n %s", cols, want)
	}
	var idx string
	if err := c.QueryRow(ctx, `SELECT string_agg(indexdef, '; ' ORDER BY indexname) FROM pg_indexes WHERE tablename = 'event_publication'`).Scan(&idx); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"USING btree (completion_date)", "USING hash (serialized_event)", "event_publication_pkey"} {
		if !strings.Contains(idx, w) {
			t.Errorf("event_publication indexes %q lack %q", idx, w)
		}
	}
}
