// Package relaytest runs real change-data-capture outbox relays against a throwaway PostgreSQL,
// for the tests of what the exporter reads from logical replication slots: Debezium's embedded
// engine (test/relays/debezium, a Maven project built once and cached like the Camunda engines)
// and PostgreSQL's own pg_recvlogical, with pgoutput or test_decoding.
//
// The application side is Debezium's outbox pattern: WriteEvents inserts events into an outbox
// table (OutboxDDL) and deletes them in the same transaction, so the events exist only in the
// WAL. A relay reads them from its slot, "publishes" each (the Debezium relay prints a JSON line,
// the harness decodes pg_recvlogical's output into the same Event), and confirms what it
// published to the slot, which moves pg_replication_slots.confirmed_flush_lsn. Slot reads the
// slot's row; WaitSlot polls it until a condition holds.
//
// The server needs wal_level=logical, which is read at start-up only: NewLogicalDatabase starts
// a server of the test's own with LogicalSettings (pgtest.NewServer) and creates a database.
//
//	dsn, _ := relaytest.NewLogicalDatabase(t)
//	relaytest.CreateOutbox(ctx, dsn, "")
//	relaytest.CreateSlot(ctx, dsn, "outbox_relay", relaytest.PluginPgoutput)
//	relaytest.CreatePublication(ctx, dsn, "outbox_publication")
//	w, _ := relaytest.WriteEvents(ctx, dsn, "", relaytest.OutboxEvent{Type: "OrderCreated"})
//	d := relaytest.NewDebezium(t, relaytest.DebeziumOptions{DSN: dsn, Slot: "outbox_relay",
//		Publication: "outbox_publication", Heartbeat: 500 * time.Millisecond})
//	events, _ := d.WaitEvents(ctx, 1, time.Minute)
//	relaytest.WaitSlot(ctx, dsn, "outbox_relay", 30*time.Second, func(s relaytest.SlotState) bool {
//		return s.ConfirmedFlushLSN > w.LastChange
//	})
//	d.Stop() // SIGTERM: offsets committed, LSN confirmed, exit 0
//
// What each relay does to its slot, and when, is in test/relays/README.md. Every test that
// starts a server or a relay is skipped under -short.
package relaytest
