package tables_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/sources"
	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/relaytest"
)

// The outbox's change-data-capture relay (tables.outbox.relay) on a real
// wal_level=logical server. The tests in this file consume the slot with
// PostgreSQL's own SQL functions, which need no process beside the server,
// so they run on both PostgreSQL majors (make test-pg-current); the tests
// with Debezium and pg_recvlogical are in relay_relays_test.go.

// cdcTable is the outbox in the shape of Debezium's outbox event router
// (relaytest.OutboxDDL): no status, no time, empty at all times.
const cdcTable = "public.cdc_outbox"

// relayDB is a database on the shared logical server with the reference
// schema (the status-column outbox event_outbox among it), the frozen
// clock, and a Debezium-shaped outbox.
func relayDB(t *testing.T) (*testDB, string) {
	t.Helper()
	dsn := relaytest.SharedLogicalDatabase(t)
	d := &testDB{collectortest.NewDBAt(t, dsn, false)}
	if err := relaytest.CreateOutbox(context.Background(), dsn, cdcTable); err != nil {
		t.Fatal(err)
	}
	return d, dsn
}

// slotName is a replication slot name of the test's own: slots belong to
// the server, which the tests share.
func slotName(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "outbox_" + hex.EncodeToString(b)
}

// relayConfig is the exporter's config for one outbox with a relay.
func relayConfig(outbox string) string {
	return collectortest.BaseConfig + "    tables:\n      outbox: " + outbox + "\n"
}

// waitInserts waits until the table's statistics count at least n
// inserts: they reach other sessions when the writer flushes them (at the
// end of its session here), a moment after its commit.
func waitInserts(t *testing.T, d *testDB, table string, n int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got int64
		if err := d.Admin.QueryRow(context.Background(), "SELECT coalesce((SELECT n_tup_ins FROM pg_stat_user_tables WHERE relid = to_regclass($1)), 0)", table).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the statistics count %d inserts after 30 s, want %d", table, got, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// write writes events into the outbox as Debezium's pattern does (insert
// and delete in one transaction, a session of its own) and waits until the
// statistics count them.
func write(t *testing.T, d *testDB, dsn string, events int) relaytest.Write {
	t.Helper()
	var before int64
	if err := d.Admin.QueryRow(context.Background(), "SELECT coalesce((SELECT n_tup_ins FROM pg_stat_user_tables WHERE relid = to_regclass($1)), 0)", cdcTable).Scan(&before); err != nil {
		t.Fatal(err)
	}
	w, err := relaytest.WriteEvents(context.Background(), dsn, cdcTable, make([]relaytest.OutboxEvent, events)...)
	if err != nil {
		t.Fatal(err)
	}
	waitInserts(t, d, cdcTable, before+int64(events))
	waitWALWritten(t, d)
	return w
}

// rollBack runs sql in a transaction of a session of its own and rolls it
// back; the session ends, which flushes its statistics.
func rollBack(t *testing.T, dsn, sql string) {
	t.Helper()
	ctx := context.Background()
	conn := pgtest.Connect(t, dsn)
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
}

// waitWALWritten waits until the server has written and flushed its WAL up
// to where it was inserted now: with synchronous_commit off (the test
// servers) the WAL writer does so within wal_writer_delay, and only then
// do pg_current_wal_lsn() (the written position) and logical decoding
// (which reads up to the flushed one) get there.
func waitWALWritten(t *testing.T, d *testDB) {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var done bool
		if err := d.Admin.QueryRow(ctx, "SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn", insertLSN(t, d)).Scan(&done); err != nil {
			t.Fatal(err)
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the WAL writer did not write the WAL within 10 s")
		}
	}
}

func insertLSN(t *testing.T, d *testDB) string {
	t.Helper()
	var lsn string
	if err := d.Admin.QueryRow(context.Background(), "SELECT pg_current_wal_insert_lsn()::text").Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	return lsn
}

// relayValues are the relay's series of one collection.
type relayValues struct {
	active, written, lagBytes float64
	lag                       *float64 // nil: absent
}

func (e *exporter) relay(slot string) relayValues {
	e.T.Helper()
	l := map[string]string{"database": "orders", "slot": slot}
	v := relayValues{
		active:   e.Value(catalog.OutboxRelaySlotActive, l),
		written:  e.Value(catalog.OutboxEventsWritten, map[string]string{"database": "orders"}),
		lagBytes: e.Value(catalog.OutboxRelayLagBytes, l),
	}
	if m := collectortest.Series(e.T, e.Set, catalog.OutboxRelayLagSeconds, l); m != nil {
		lag := m.GetGauge().GetValue()
		v.lag = &lag
	}
	return v
}

// expectLag checks the lag in seconds (and the slot's activity and the
// writes counted) after a collection.
func (e *exporter) expectLag(slot string, lag, active, written float64) relayValues {
	e.T.Helper()
	v := e.relay(slot)
	if v.lag == nil || *v.lag != lag || v.active != active || v.written != written {
		got := "absent"
		if v.lag != nil {
			got = fmt.Sprint(*v.lag)
		}
		e.T.Fatalf("lag_seconds %s, slot_active %v, events_written_total %v; want %v, %v, %v", got, v.active, v.written, lag, active, written)
	}
	return v
}

// consume reads the slot's changes with SQL, as a relay that confirms the
// server's WAL end does: confirmed_flush_lsn moves to the end of what was
// decoded.
func consume(t *testing.T, d *testDB, slot, publication string) {
	t.Helper()
	// Decoding reads up to the flushed WAL: the clock's updates too.
	waitWALWritten(t, d)
	d.Exec("SELECT count(*) FROM pg_logical_slot_get_binary_changes($1, NULL, NULL, 'proto_version', '1', 'publication_names', $2)", slot, publication)
}

// The lag in seconds from the table's statistics and the slot's confirmed
// position, exact against the frozen database clock: a write counts from
// the collection before the one that saw it, until the slot confirms WAL
// past that collection; rolled-back inserts and other tables' writes are
// not outbox writes; the first collection does not know the lag.
func TestRelayLagCountsOutboxWritesOnly(t *testing.T) {
	d, _ := relayDB(t)
	dsn := d.DSN
	slot, pub := slotName(t), "cdc_pub"
	if err := relaytest.CreatePublication(context.Background(), dsn, pub, cdcTable); err != nil {
		t.Fatal(err)
	}
	if _, err := relaytest.CreateSlot(context.Background(), dsn, slot, relaytest.PluginPgoutput); err != nil {
		t.Fatal(err)
	}
	e := d.newExporter(relayConfig(fmt.Sprintf("{table: %s, relay: {slot: %s, publication: %s}}", cdcTable, slot, pub)))

	// First collection: the lag is unknown (absent), the rest is there.
	e.Collect()
	if v := e.relay(slot); v.lag != nil || v.active != 0 || v.written != 0 {
		t.Fatalf("first collection: %+v, want no lag_seconds, inactive, 0 written", v)
	}
	e.Expect(collectortest.HelpHeader(catalog.OutboxRelayWALStatus)+fmt.Sprintf(`%[1]s{database="orders",slot=%[2]q,status="extended"} 0
%[1]s{database="orders",slot=%[2]q,status="lost"} 0
%[1]s{database="orders",slot=%[2]q,status="reserved"} 1
%[1]s{database="orders",slot=%[2]q,status="unreserved"} 0
`, catalog.OutboxRelayWALStatus, slot), catalog.OutboxRelayWALStatus)
	// The table's columns are not read: its collector does not run.
	if err := e.Compare("", catalog.OutboxEventsPending); err != nil {
		t.Errorf("the outbox's status-column series are served beside a relay without columns: %v", err)
	}

	// Two events, nobody relays them: from the collection before, 30 s
	// ago, then 90 s.
	write(t, d, dsn, 2)
	d.SetClock(30 * time.Second)
	e.Collect()
	e.expectLag(slot, 30, 0, 2)
	d.SetClock(90 * time.Second)
	e.Collect()
	e.expectLag(slot, 90, 0, 2)

	// The slot is consumed: caught up.
	consume(t, d, slot, pub)

	d.SetClock(100 * time.Second)
	e.Collect()
	e.expectLag(slot, 0, 0, 2)

	// Other tables only: WAL the slot has not confirmed, and no outbox
	// write.
	d.Exec("CREATE TABLE busy AS SELECT g AS id, repeat('x', 100) AS filler FROM generate_series(1, 1000) g")
	waitWALWritten(t, d)
	d.SetClock(130 * time.Second)
	e.Collect()
	if v := e.expectLag(slot, 0, 0, 2); v.lagBytes < 50000 {
		t.Errorf("lag_bytes %v after 1000 rows into another table, want the WAL they took (> 50 kB)", v.lagBytes)
	}

	// A rolled-back insert is counted as written (n_tup_ins counts it) but
	// is no outbox write the relay must confirm.
	rollBack(t, dsn, fmt.Sprintf("INSERT INTO %s VALUES (gen_random_uuid(), 'order', 'o-1', 'OrderCreated', '{}')", cdcTable))
	waitInserts(t, d, cdcTable, 3)
	d.SetClock(160 * time.Second)
	e.Collect()
	e.expectLag(slot, 0, 0, 3)

	// Written again and left: from 160 s on.
	write(t, d, dsn, 1)
	d.SetClock(200 * time.Second)
	e.Collect()
	e.expectLag(slot, 40, 0, 4)
}

// A relay beside status columns: the outbox's status-column series and
// the relay's are both served, and with columns: naming none the table's
// columns are not read (a Debezium-shaped table needs none).
func TestRelayBesideStatusColumns(t *testing.T) {
	d, dsn := relayDB(t)
	slot := slotName(t)
	if _, err := relaytest.CreateSlot(context.Background(), dsn, slot, relaytest.PluginTestDecoding); err != nil {
		t.Fatal(err)
	}
	d.insertOutbox(outboxRow{uuid(1), "Order", "OrderCreated", "PENDING", -120, nil})
	cases := []struct {
		name, outbox string
		columns      bool
	}{
		{"status columns beside the relay", fmt.Sprintf("{relay: {slot: %s}, columns: {status: status}}", slot), true},
		{"relay alone on the same table", fmt.Sprintf("{relay: {slot: %s}}", slot), false},
		{"relay alone on a Debezium-shaped table", fmt.Sprintf("{table: %s, relay: {slot: %s}}", cdcTable, slot), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := d.newExporter(relayConfig(tc.outbox))
			e.Collect()
			for _, c := range []string{"outbox", "outbox_relay"} {
				want := 1.0
				if c == "outbox" && !tc.columns {
					continue
				}
				if got := e.Value(catalog.ExporterCollectorUp, map[string]string{"collector": c}); got != want {
					t.Errorf("collector %s up %v; log:\n%s", c, got, e.Logs.String())
				}
			}
			pending := collectortest.Series(t, e.Set, catalog.OutboxEventsPending, map[string]string{"aggregate_type": "Order"})
			switch {
			case tc.columns && (pending == nil || pending.GetGauge().GetValue() != 1):
				t.Errorf("pending events beside the relay: %v, want 1", pending)
			case !tc.columns && pending != nil:
				t.Errorf("pending events served without columns: %v", pending)
			}
			if v := e.relay(slot); v.active != 0 {
				t.Errorf("slot_active %v, want 0", v.active)
			}
		})
	}
}

// Every reason the relay cannot be watched is an error that names it and
// the key to fix, at collection (the relay's collector down, the outbox's
// other collector unaffected) and in `check`.
func TestRelayErrorsNameTheProblem(t *testing.T) {
	type setup struct {
		exec func(sql string, args ...any)
	}
	cases := []struct {
		name string
		// logical: on the shared wal_level=logical server (else the
		// shared default server, wal_level=replica).
		logical bool
		prepare func(s setup, slot string)
		outbox  string // SLOT: the slot
		// want is in the error at collection and in check (SLOT: the
		// slot), check says wantCheck instead where it is set.
		want, wantCheck string
		key             string
	}{
		{"wal_level is not logical", false, nil, "{relay: {slot: SLOT}}",
			"wal_level is replica: logical replication slots, and so any change-data-capture relay, need wal_level = logical", "", "databases[0].tables.outbox.relay"},
		{"slot missing", true, nil, "{relay: {slot: SLOT}}",
			`replication slot "SLOT" does not exist (logical slots of database`, "", "databases[0].tables.outbox.relay.slot"},
		{"physical slot", true, func(s setup, slot string) { s.exec("SELECT pg_create_physical_replication_slot($1)", slot) }, "{relay: {slot: SLOT}}",
			`replication slot "SLOT" is a physical slot, not a logical one`, "", "databases[0].tables.outbox.relay.slot"},
		{"slot of another database", true, func(s setup, slot string) {
			s.exec("SELECT pg_create_logical_replication_slot($1, 'test_decoding')", slot)
		}, "{relay: {slot: SLOT}}", `replication slot "SLOT" decodes database postgres, not`, "", "databases[0].tables.outbox.relay.slot"},
		{"no publication covers the table", true, func(s setup, slot string) {
			s.exec("CREATE TABLE other (id int); CREATE PUBLICATION other_pub FOR TABLE other")
			s.exec("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", slot)
		}, "{table: " + cdcTable + ", relay: {slot: SLOT}}",
			"no publication publishes the inserts of table " + cdcTable + " (publications: other_pub)", "", "databases[0].tables.outbox.relay"},
		{"configured publication missing", true, func(s setup, slot string) {
			s.exec("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", slot)
		}, "{table: " + cdcTable + ", relay: {slot: SLOT, publication: dbz_publication}}",
			`publication "dbz_publication" does not exist (publications: none)`, "", "databases[0].tables.outbox.relay.publication"},
		{"configured publication leaves out the table", true, func(s setup, slot string) {
			s.exec("CREATE TABLE other (id int); CREATE PUBLICATION dbz_publication FOR TABLE other")
			s.exec("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", slot)
		}, "{table: " + cdcTable + ", relay: {slot: SLOT, publication: dbz_publication}}",
			`publication "dbz_publication" does not cover table ` + cdcTable, "", "databases[0].tables.outbox.relay.publication"},
		{"configured publication leaves out inserts", true, func(s setup, slot string) {
			s.exec("CREATE PUBLICATION dbz_publication FOR TABLE " + cdcTable + " WITH (publish = 'update, delete')")
			s.exec("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", slot)
		}, "{table: " + cdcTable + ", relay: {slot: SLOT, publication: dbz_publication}}",
			`publication "dbz_publication" does not publish inserts`, "", "databases[0].tables.outbox.relay.publication"},
		{"table missing", true, func(s setup, slot string) {
			s.exec("SELECT pg_create_logical_replication_slot($1, 'test_decoding')", slot)
		}, "{table: public.nope, relay: {slot: SLOT}}",
			"table public.nope does not exist or is not visible to this role", `table public.nope
    ERROR table does not exist or role "postgres" cannot see it`, "databases[0].tables.outbox.table"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var d *testDB
			if tc.logical {
				d, _ = relayDB(t)
			} else {
				d = newTestDB(t, false)
			}
			slot := slotName(t)
			if tc.prepare != nil {
				exec := func(sql string, args ...any) { d.Exec(sql, args...) }
				if tc.name == "slot of another database" {
					// The server's maintenance database, so the slot
					// is another database's.
					admin := pgtest.Connect(t, pgtest.WithDatabase(d.Admin.Config().ConnString(), "postgres"))
					exec = func(sql string, args ...any) { pgtest.Exec(t, admin, sql, args...) }
					t.Cleanup(func() { pgtest.Exec(t, admin, "SELECT pg_drop_replication_slot($1)", slot) })
				}
				if tc.name == "physical slot" {
					t.Cleanup(func() { d.Exec("SELECT pg_drop_replication_slot($1)", slot) })
				}
				tc.prepare(setup{exec: exec}, slot)
			}
			sub := func(s string) string { return strings.ReplaceAll(s, "SLOT", slot) }
			want, wantCheck, keyCheck := sub(tc.want), sub(tc.wantCheck), "(config key "+tc.key
			if wantCheck == "" {
				wantCheck = want
			} else {
				keyCheck = ""
			}
			doc := relayConfig(sub(tc.outbox))
			e := d.newExporter(doc)
			e.Collect()
			if got := e.Value(catalog.ExporterCollectorUp, map[string]string{"collector": "outbox_relay"}); got != 0 {
				t.Fatalf("collector outbox_relay up %v, want 0", got)
			}
			if log := logText(e); !strings.Contains(log, want) || !strings.Contains(log, "(config key "+tc.key) {
				t.Errorf("the collection's error does not say %q (config key %s); log:\n%s", want, tc.key, log)
			}
			if m := collectortest.Series(t, e.Set, catalog.OutboxRelaySlotActive, nil); m != nil {
				t.Errorf("the relay's series are served while it fails: %v", m)
			}
			if out := runCheck(t, d.DSN, doc); !strings.Contains(out, "ERROR") || !strings.Contains(out, wantCheck) || !strings.Contains(out, keyCheck) {
				t.Errorf("check does not say %q %s:\n%s", wantCheck, keyCheck, out)
			}
		})
	}
}

// The exporter's role needs no grant for the relay beyond SELECT on its
// tables (deploy/sql/004_exporter_role.sql): no REPLICATION, no pg_monitor,
// everything it reads is PUBLIC's. A role that may not read the slot (its
// SELECT on pg_replication_slots revoked from PUBLIC, as a hardened server
// may) gets an error that names the role and what it lacks. The server is
// the test's own: the revoke is server-wide.
func TestRelayRoleThatCannotReadTheSlot(t *testing.T) {
	dsn, _ := relaytest.NewLogicalDatabase(t)
	d := &testDB{collectortest.NewDBAt(t, dsn, false)}
	slot, pub := slotName(t), "cdc_pub"
	if err := relaytest.CreateOutbox(context.Background(), dsn, cdcTable); err != nil {
		t.Fatal(err)
	}
	if err := relaytest.CreatePublication(context.Background(), dsn, pub, cdcTable); err != nil {
		t.Fatal(err)
	}
	if _, err := relaytest.CreateSlot(context.Background(), dsn, slot, relaytest.PluginPgoutput); err != nil {
		t.Fatal(err)
	}
	d.Exec(`CREATE ROLE watcher LOGIN; GRANT USAGE ON SCHEMA testclock TO watcher; GRANT SELECT ON ALL TABLES IN SCHEMA public, testclock TO watcher;
ALTER ROLE watcher SET default_transaction_read_only = on`)
	watcher := strings.Replace(d.DSN, "postgres@", "watcher@", 1)
	doc := strings.Replace(relayConfig(fmt.Sprintf("{table: %s, relay: {slot: %s, publication: %s}}", cdcTable, slot, pub)), "WFX_TEST_DSN", "WFX_WATCHER_DSN", 1)
	t.Setenv("WFX_WATCHER_DSN", watcher)
	e := d.newExporter(doc)
	e.Collect()
	if got := e.Value(catalog.ExporterCollectorUp, map[string]string{"collector": "outbox_relay"}); got != 1 {
		t.Fatalf("a SELECT-only role cannot watch the relay: collector up %v; log:\n%s", got, logText(e))
	}

	d.Exec("REVOKE SELECT ON pg_replication_slots FROM PUBLIC")
	e.Collect()
	want := `role "watcher" may not read what watching the relay needs (permission denied for view pg_replication_slots)`
	if log := logText(e); !strings.Contains(log, want) || !strings.Contains(log, `cause="relay: privileges missing (databases[0].tables.outbox.relay)"`) {
		t.Errorf("the collection's error does not say %q, classed as privileges missing; log:\n%s", want, log)
	}
	if out := runCheck(t, watcher, doc); !strings.Contains(out, want) {
		t.Errorf("check does not say %q:\n%s", want, out)
	}
}

// logText is the exporter's log with the quotes inside its values as
// written.
func logText(e *exporter) string { return strings.ReplaceAll(e.Logs.String(), `\"`, `"`) }

// runCheck runs `workflow-exporter check` as wired at start-up on the
// config, its DSNs from the test's environment and dsn.
func runCheck(t *testing.T, dsn, doc string) string {
	t.Helper()
	t.Setenv("WFX_TEST_DSN", dsn)
	cfg, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sources.RunCheck(context.Background(), cfg, &out, nil)
	return out.String()
}
