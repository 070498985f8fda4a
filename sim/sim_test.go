package sim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/relaytest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestLookupFaultNamesTheValidOnes(t *testing.T) {
	if _, err := LookupFault(FaultSlowWorker); err != nil {
		t.Fatal(err)
	}
	_, err := LookupFault("slow-workers")
	if err == nil {
		t.Fatal("an unknown fault was accepted")
	}
	for _, f := range Faults() {
		if !strings.Contains(err.Error(), f.Name) {
			t.Errorf("the error does not list %s: %v", f.Name, err)
		}
	}
}

// workerDatabase is a database with the reference schema and the
// duplicate_count extension.
func workerDatabase(t *testing.T) string {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	pgtest.ExecRepoFiles(t, pgtest.Connect(t, dsn), nil, "deploy/sql/001_reference_schema.sql", "deploy/sql/002_duplicate_count_extension.sql")
	return dsn
}

// The control endpoint: unknown faults and targets are 400 with the valid
// names; a fault that cannot be injected (no proxy for it, the engine not
// answering) is 409 with the reason, never silently accepted.
func TestControlEndpoint(t *testing.T) {
	var engineUp atomic.Bool
	engineUp.Store(true)
	fakeEngine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !engineUp.Load() {
			http.Error(w, `{"message":"down"}`, http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, `{"version":"7.24.0"}`)
	}))
	defer fakeEngine.Close()
	ctx := context.Background()
	s, err := New(ctx, Config{EngineURL: fakeEngine.URL, Databases: map[string]string{"orders": workerDatabase(t)},
		Lanes: []Lane{{Name: "orders", Database: "orders"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctl := httptest.NewServer(s.Handler())
	defer ctl.Close()
	do := func(method, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, ctl.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct {
		method, path string
		status       int
		says         string
	}{
		{"POST", "/faults/nope?target=orders", 400, "valid faults: bpmn-error"},
		{"POST", "/faults/slow-worker?target=billing", 400, "lanes: orders"},
		{"POST", "/faults/engine-500", 409, "no engine proxy"},
		{"POST", "/faults/database-down?target=orders", 409, "no proxy for database"},
		{"POST", "/faults/slow-worker?target=orders", 204, ""},
	} {
		status, body := do(c.method, c.path)
		if status != c.status || !strings.Contains(body, c.says) {
			t.Errorf("%s %s: %d %q, want %d saying %q", c.method, c.path, status, body, c.status, c.says)
		}
	}
	_, body := do("GET", "/")
	var st Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Lanes) != 1 || strings.Join(st.Lanes[0].Faults, ",") != FaultSlowWorker {
		t.Fatalf("status after injecting slow-worker: %+v", st)
	}
	if status, _ := do("DELETE", "/faults/slow-worker?target=orders"); status != 204 || len(s.laneFaults("orders").list()) != 0 {
		t.Fatalf("clear: %d, faults left %v", status, s.laneFaults("orders").list())
	}
	// The engine is gone: a lane fault cannot act, and says so.
	engineUp.Store(false)
	if status, body := do("POST", "/faults/retry-storm?target=orders"); status != 409 || !strings.Contains(body, "does not answer") {
		t.Fatalf("inject with the engine down: %d %q", status, body)
	}
}

// New refuses databases without the worker tables, naming the table.
func TestNewNamesAMissingTable(t *testing.T) {
	_, err := New(context.Background(), Config{EngineURL: "http://127.0.0.1:1", Databases: map[string]string{"orders": pgtest.NewDatabase(t)},
		Lanes: []Lane{{Name: "orders", Database: "orders"}}})
	if err == nil || !strings.Contains(err.Error(), "table ") || !strings.Contains(err.Error(), "001_reference_schema.sql") {
		t.Fatalf("err = %v", err)
	}
}

// Without an engine (make run where Java is missing) the lanes' workers
// take their commands from the lanes' feeds and write the same rows: records
// completed, their events published, processed-job rows, inbox messages
// processed. The faults that act through the engine are refused, the
// others work.
func TestWithoutEngine(t *testing.T) {
	dsn := workerDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := New(ctx, Config{Databases: map[string]string{"orders": dsn}, Lanes: []Lane{{Name: "orders", Database: "orders"}},
		Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		fault string
		ok    bool
	}{{FaultSlowWorker, false}, {FaultRetriesExhausted, false}, {FaultDuplicateDelivery, true}} {
		err := s.Inject(ctx, c.fault, "orders")
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrCannotInject)) {
			t.Errorf("inject %s without an engine: %v, want accepted %v", c.fault, err, c.ok)
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	conn := pgtest.Connect(t, dsn)
	counts := func() (completed, published, jobs, processed, duplicates int) {
		t.Helper()
		err := conn.QueryRow(ctx, `SELECT
  (SELECT count(*) FROM workflow_idempotency_record WHERE scope = 'SIM_ORDERS' AND status = 'COMPLETED'),
  (SELECT count(*) FROM event_outbox WHERE aggregate_type = 'sim-orders' AND status = 'PUBLISHED'),
  (SELECT count(*) FROM workflow_processed_job WHERE activity_id = 'submit-orders'),
  (SELECT count(*) FROM message_inbox WHERE message_type = 'orders.validated' AND processing_status = 'PROCESSED'),
  (SELECT count(*) FROM message_inbox WHERE message_type = 'orders.validated' AND processing_status = 'IGNORED_DUPLICATE')`).
			Scan(&completed, &published, &jobs, &processed, &duplicates)
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, p, j, m, d := counts()
		if c >= 3 && p >= 3 && j >= 3 && m >= 3 && d >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s: %d records completed, %d events published, %d processed jobs, %d messages processed, %d duplicates; status %+v", c, p, j, m, d, s.Status())
		}
		time.Sleep(200 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A delivering lane: every event its publisher publishes arrives in the
// consumer database's inbox under its event id and is processed there;
// with messages-lost on, the events published meanwhile never arrive. A
// lane without a consumer refuses the fault.
func TestDeliveringLane(t *testing.T) {
	orders, billing := workerDatabase(t), workerDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := New(ctx, Config{Databases: map[string]string{"orders": orders}, Lanes: []Lane{{Name: "o", Database: "orders", Consumer: "billing"}}}); err == nil ||
		!strings.Contains(err.Error(), `lane "o" delivers to database "billing", which is not configured`) {
		t.Fatalf("a consumer that is not configured: %v", err)
	}
	s, err := New(ctx, Config{Databases: map[string]string{"orders": orders, "billing": billing},
		Lanes:    []Lane{{Name: "o", Database: "orders", Consumer: "billing"}, {Name: "plain", Database: "orders"}},
		Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Inject(ctx, FaultMessagesLost, "plain"); !errors.Is(err, ErrCannotInject) || !strings.Contains(err.Error(), "delivers to no consumer database") {
		t.Errorf("messages-lost on a lane without a consumer: %v", err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	defer func() { stop(); <-done }() //nolint:errcheck // the run ends with the context it was given
	prod, cons := pgtest.Connect(t, orders), pgtest.Connect(t, billing)
	published := func() []string {
		t.Helper()
		rows, err := prod.Query(ctx, `SELECT event_id::text FROM event_outbox WHERE aggregate_type = 'sim-o' AND event_type = 'o-submitted' AND published_at IS NOT NULL`)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	// processed reports how many of ids the inbox holds, and how many of
	// those are PROCESSED (from source system sim-orders, type o.delivered).
	received := func(ids []string) (held, processed int) {
		t.Helper()
		if err := cons.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE processing_status = 'PROCESSED') FROM message_inbox
WHERE source_system = 'sim-orders' AND message_type = 'o.delivered' AND message_id = ANY($1)`, ids).Scan(&held, &processed); err != nil {
			t.Fatal(err)
		}
		return
	}
	var before []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		before = published()
		if held, processed := received(before); len(before) >= 3 && held == len(before) && processed == len(before) {
			break
		}
		if time.Now().After(deadline) {
			held, processed := received(before)
			t.Fatalf("after 30s: %d events published, %d of them in billing's inbox, %d processed; status %+v", len(before), held, processed, s.Status())
		}
	}
	if err := s.Inject(ctx, FaultMessagesLost, "o"); err != nil {
		t.Fatal(err)
	}
	// Every event published from now on is published after the fault.
	before = published()
	var lost []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		seen := map[string]bool{}
		for _, id := range before {
			seen[id] = true
		}
		lost = lost[:0]
		for _, id := range published() {
			if !seen[id] {
				lost = append(lost, id)
			}
		}
		if len(lost) >= 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s only %d events published under messages-lost", len(lost))
		}
	}
	time.Sleep(time.Second) // the broker had its chance
	if held, _ := received(lost); held != 0 {
		t.Errorf("messages-lost: %d of the %d events published since are in the inbox", held, len(lost))
	}
	st := s.Status()
	if st.Lanes[0].Delivery != "sim-o" || st.Lanes[0].Consumer != "billing" || st.Lanes[0].EventType != "o-submitted" || st.Lanes[0].Counts["dropped"] == 0 {
		t.Errorf("status of the delivering lane: %+v", st.Lanes[0])
	}
}

// A relay lane: its events go to its own Debezium-shaped outbox table,
// which stays empty, and pg_recvlogical on its slot publishes them;
// relay-stopped stops the relay (the slot inactive) while the events keep
// coming, clearing it starts it again, and Close drops the slot it created.
// relay-stopped is refused on a lane without a relay.
func TestRelayLane(t *testing.T) {
	dsn, _ := relaytest.NewLogicalDatabase(t)
	pgtest.ExecRepoFiles(t, pgtest.Connect(t, dsn), nil, "deploy/sql/001_reference_schema.sql", "deploy/sql/002_duplicate_count_extension.sql")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lane := Lane{Name: "cdc-lane", Database: "orders", Relay: true}
	s, err := New(ctx, Config{Databases: map[string]string{"orders": dsn},
		Lanes: []Lane{lane, {Name: "orders", Database: "orders"}}, Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			s.Close()
		}
	}()
	if err := s.Inject(ctx, FaultRelayStopped, "orders"); !errors.Is(err, ErrCannotInject) {
		t.Errorf("relay-stopped on a lane without a relay: %v, want ErrCannotInject", err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	conn := pgtest.Connect(t, dsn)
	published := func() int {
		for _, l := range s.Status().Lanes {
			if l.Name == lane.Name {
				return l.Counts["published"]
			}
		}
		return 0
	}
	written := func() (inserted, left int) {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT coalesce((SELECT n_tup_ins FROM pg_stat_user_tables WHERE relname = $1), 0), (SELECT count(*) FROM sim_cdc_lane_outbox)`,
			lane.RelayTable()).Scan(&inserted, &left); err != nil {
			t.Fatal(err)
		}
		return
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("after 30s: %s; status %+v", what, s.Status())
			}
		}
	}
	slot := func() relaytest.SlotState {
		t.Helper()
		st, err := relaytest.Slot(ctx, dsn, lane.Slot())
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	waitFor("3 events published by the relay", func() bool { return published() >= 3 && slot().Active })
	// The statistics count the inserts once the writers flush them.
	waitFor("3 inserts into the relay outbox counted", func() bool { ins, _ := written(); return ins >= 3 })
	if _, left := written(); left != 0 {
		t.Errorf("relay outbox: %d rows left; want every event inserted and deleted in its transaction", left)
	}

	if err := s.Inject(ctx, FaultRelayStopped, lane.Name); err != nil {
		t.Fatal(err)
	}
	waitFor("the slot inactive after relay-stopped", func() bool { return !slot().Active })
	before, ins := published(), 0
	waitFor("3 more events written while the relay is stopped", func() bool { ins, _ = written(); return ins >= before+3 })
	if p := published(); p != before {
		t.Errorf("%d events published while the relay was stopped", p-before)
	}
	if err := s.Clear(ctx, FaultRelayStopped, lane.Name); err != nil {
		t.Fatal(err)
	}
	waitFor("the backlog published after the relay is back", func() bool { return slot().Active && published() >= ins })

	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s.Close()
	closed = true
	if _, err := relaytest.Slot(ctx, dsn, lane.Slot()); !errors.Is(err, relaytest.ErrNoSlot) {
		t.Errorf("the slot the simulator created is still there after Close: %v", err)
	}
}

// A relay lane on a server without logical decoding is refused, saying why.
func TestRelayLaneNeedsLogicalDecoding(t *testing.T) {
	_, err := New(context.Background(), Config{Databases: map[string]string{"orders": workerDatabase(t)},
		Lanes: []Lane{{Name: "cdc", Database: "orders", Relay: true}}})
	if !errors.Is(err, ErrNoLogicalDecoding) || !strings.Contains(err.Error(), "relay lane cdc (database orders)") || !strings.Contains(err.Error(), "wal_level=replica") {
		t.Fatalf("err = %v", err)
	}
}
