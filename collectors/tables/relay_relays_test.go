//go:build !pgonly

package tables_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/relaytest"
)

// The outbox relay watched while real relays drain a Debezium-shaped outbox
// (insert and delete in one transaction, the table always empty): Debezium's
// embedded engine with its PostgreSQL connector (pgoutput, the outbox event
// router, heartbeats on, lsn.flush.mode at its default, connector) and
// PostgreSQL's pg_recvlogical (pgoutput). They start a JVM or a client
// beside the server, so they stay out of the second PostgreSQL major's run
// (make test-pg-current ships no pg_recvlogical of that major).
//
// The lag in seconds is exact against the frozen database clock: the
// relays' confirmations are real, the times are the clock's.
func TestRelayLagWithRealRelays(t *testing.T) {
	ctx := context.Background()
	type relay interface {
		Stop() error
		WaitEvents(ctx context.Context, n int, timeout time.Duration) ([]relaytest.Event, error)
	}
	cases := []struct {
		name string
		// start starts the relay on the slot (creating slot and
		// publication where the relay does not) and returns it once the
		// slot is active; again says it resumes a relay that ran.
		start func(t *testing.T, dsn, slot, pub, offsets string, again bool) relay
		// followsWALEnd: the relay confirms the server's WAL end on an
		// idle outbox (pg_recvlogical); Debezium with
		// lsn.flush.mode=connector confirms only what it was sent.
		followsWALEnd bool
	}{
		{"Debezium", func(t *testing.T, dsn, slot, pub, offsets string, _ bool) relay {
			d := relaytest.NewDebezium(t, relaytest.DebeziumOptions{DSN: dsn, Slot: slot, Publication: pub,
				Tables: []string{cdcTable}, Heartbeat: 500 * time.Millisecond, OffsetDir: offsets})
			// The slot is active while the connector creates it too; its
			// first heartbeat says it streams.
			if _, err := d.WaitRecords(ctx, time.Minute, func(evs []relaytest.Event) bool {
				return slices.ContainsFunc(evs, func(e relaytest.Event) bool { return e.Kind == relaytest.KindHeartbeat })
			}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := relaytest.WaitSlot(ctx, dsn, slot, 30*time.Second, func(s relaytest.SlotState) bool { return s.Active }); err != nil {
				t.Fatal(err)
			}
			return d
		}, false},
		{"pg_recvlogical", func(t *testing.T, dsn, slot, pub, _ string, again bool) relay {
			if !again {
				if err := relaytest.CreatePublication(ctx, dsn, pub, cdcTable); err != nil {
					t.Fatal(err)
				}
			}
			return relaytest.NewRecvLogical(t, relaytest.RecvLogicalOptions{DSN: dsn, Slot: slot, Plugin: relaytest.PluginPgoutput,
				Publication: pub, Table: cdcTable, CreateSlot: !again})
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, dsn := relayDB(t)
			slot, pub, offsets := slotName(t), "outbox_publication", t.TempDir()
			r := tc.start(t, dsn, slot, pub, offsets, false)
			e := d.newExporter(relayConfig(fmt.Sprintf("{table: %s, relay: {slot: %s, publication: %s}}", cdcTable, slot, pub)))
			e.Collect()
			if v := e.relay(slot); v.lag != nil || v.active != 1 {
				t.Fatalf("first collection with the relay running: %+v, want no lag_seconds yet, active", v)
			}
			// caughtUp: r publishes the two events written since it last
			// published and confirms them (up to lsn); the collection at
			// clock finds it active and not behind, written events in all.
			caughtUp := func(r relay, lsn relaytest.LSN, clock time.Duration, written float64) {
				t.Helper()
				if _, err := r.WaitEvents(ctx, 2, 30*time.Second); err != nil {
					t.Fatal(err)
				}
				waitConfirmed(t, dsn, slot, lsn)
				d.SetClock(clock)
				e.Collect()
				e.expectLag(slot, 0, 1, written)
			}

			// Caught up: published and confirmed.
			w := write(t, d, dsn, 2)
			caughtUp(r, w.LastChange, 30*time.Second, 2)

			// Writes to other tables only: not behind, whatever the
			// bytes say.
			d.Exec("CREATE TABLE busy AS SELECT g AS id, repeat('x', 100) AS filler FROM generate_series(1, 1000) g")
			waitWALWritten(t, d)
			if tc.followsWALEnd {
				waitConfirmed(t, dsn, slot, lsnNow(t, d))
			} else {
				time.Sleep(2 * time.Second) // heartbeats every 500 ms: they confirm nothing of it
			}
			d.SetClock(60 * time.Second)
			e.Collect()
			v := e.expectLag(slot, 0, 1, 2)
			if tc.followsWALEnd && v.lagBytes > 10000 || !tc.followsWALEnd && v.lagBytes < 50000 {
				t.Errorf("lag_bytes %v after 1000 rows into another table; want it %s", v.lagBytes,
					map[bool]string{true: "near 0 (the relay confirms the WAL end)", false: "over 50 kB (the relay confirms only what it was sent)"}[tc.followsWALEnd])
			}

			// The relay stops while events keep coming: inactive, and
			// behind from the collection before the first write on.
			if err := r.Stop(); err != nil {
				t.Fatal(err)
			}
			write(t, d, dsn, 1)
			d.SetClock(90 * time.Second)
			e.Collect()
			e.expectLag(slot, 30, 0, 3)
			w = write(t, d, dsn, 1)
			d.SetClock(150 * time.Second)
			e.Collect()
			e.expectLag(slot, 90, 0, 4)

			// Back: it publishes the backlog, confirms it, caught up.
			caughtUp(tc.start(t, dsn, slot, pub, offsets, true), w.LastChange, 160*time.Second, 4)
		})
	}
}

// waitConfirmed waits until the slot's confirmed_flush_lsn is past lsn.
func waitConfirmed(t *testing.T, dsn, slot string, lsn relaytest.LSN) {
	t.Helper()
	if _, _, err := relaytest.WaitSlot(context.Background(), dsn, slot, 30*time.Second, func(s relaytest.SlotState) bool {
		return s.ConfirmedFlushLSN > lsn
	}); err != nil {
		t.Fatal(err)
	}
}

// lsnNow is the server's WAL position of the last change made.
func lsnNow(t *testing.T, d *testDB) relaytest.LSN {
	t.Helper()
	l, err := relaytest.ParseLSN(insertLSN(t, d))
	if err != nil {
		t.Fatal(err)
	}
	return l - 1
}
