package relaytest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

func slotNow(t *testing.T, dsn, slot string) SlotState {
	t.Helper()
	s, err := Slot(context.Background(), dsn, slot)
	ok(t, err)
	return s
}

func lsn(t *testing.T, s string) LSN {
	t.Helper()
	l, err := ParseLSN(s)
	ok(t, err)
	return l
}

func write(t *testing.T, dsn string, evs []OutboxEvent) Write {
	t.Helper()
	w, err := WriteEvents(context.Background(), dsn, "", evs...)
	ok(t, err)
	return w
}

func waitEvents(t *testing.T, r *Relay, n int, timeout time.Duration) []Event {
	t.Helper()
	evs, err := r.WaitEvents(context.Background(), n, timeout)
	ok(t, err)
	return evs
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func events(types ...string) []OutboxEvent {
	out := make([]OutboxEvent, len(types))
	for i, ty := range types {
		out[i] = OutboxEvent{Type: ty, Payload: json.RawMessage(fmt.Sprintf(`{"n": %d}`, i))}
	}
	return out
}

func ids(evs []Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

// checkPublished fails unless the relay published exactly the writes' events, in order.
func checkPublished(t *testing.T, got []Event, writes ...Write) {
	t.Helper()
	var want []string
	for _, w := range writes {
		want = append(want, w.IDs()...)
	}
	if !slices.Equal(ids(got), want) {
		t.Fatalf("published %v, want %v", ids(got), want)
	}
	i := 0
	for _, w := range writes {
		for _, e := range w.Events {
			g := got[i]
			if g.Type != e.Type || g.AggregateType != e.AggregateType || g.AggregateID != e.AggregateID {
				t.Errorf("event %d = %+v, want %+v", i, g, e)
			}
			var a, b any
			if json.Unmarshal(g.Payload, &a) != nil || json.Unmarshal(e.Payload, &b) != nil || fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("event %d payload %s, want %s", i, g.Payload, e.Payload)
			}
			i++
		}
	}
}

// stoppedAndBehind checks a slot whose relay is gone after a write: inactive, its confirmed
// position behind the write and the server's WAL.
func stoppedAndBehind(t *testing.T, dsn, slot string, w Write) SlotState {
	t.Helper()
	// The test servers commit asynchronously (synchronous_commit=off): pg_current_wal_lsn(), the
	// WAL written, passes the commit when the WAL writer gets to it (wal_writer_delay, 200 ms).
	s, _, err := WaitSlot(context.Background(), dsn, slot, 10*time.Second, func(s SlotState) bool { return s.CurrentLSN > w.LastChange })
	ok(t, err)
	if s.Active || s.ConfirmedFlushLSN > w.LastChange || s.ConfirmedFlushLSN >= s.CurrentLSN {
		t.Errorf("slot with its relay stopped, after a write ending at %s: %+v; want inactive, confirmed_flush_lsn behind the write and pg_current_wal_lsn()", w.LastChange, s)
	}
	t.Logf("relay stopped, %d events written: confirmed_flush_lsn %s, pg_current_wal_lsn %s, lag %d bytes, retained %d bytes, wal_status %s",
		len(w.Events), s.ConfirmedFlushLSN, s.CurrentLSN, s.LagBytes(), s.RetainedBytes(), s.WALStatus)
	return s
}

// stopAndWriteBacklog stops a relay with its stop signal (named in how, for the log), waits
// until its slot is inactive, then writes two events while no relay runs and checks that the slot
// holds them back (stoppedAndBehind); it returns that write, the backlog of the next relay.
func stopAndWriteBacklog(t *testing.T, r *Relay, dsn, slot, how string) Write {
	t.Helper()
	stopStart := time.Now()
	ok(t, r.Stop())
	t.Logf("%s to exit 0 in %s", how, time.Since(stopStart).Round(time.Millisecond))
	must2(t)(WaitSlot(context.Background(), dsn, slot, 30*time.Second, inactive))
	w := write(t, dsn, events("OrderCancelled", "OrderRefunded"))
	stoppedAndBehind(t, dsn, slot, w)
	return w
}

func confirmed(w Write) func(SlotState) bool {
	return func(s SlotState) bool { return s.ConfirmedFlushLSN > w.LastChange }
}

func inactive(s SlotState) bool { return !s.Active }

// TestDebeziumRelay runs the Debezium relay on a slot and an outbox written the Debezium way
// (insert and delete in one transaction): it publishes the events, confirms them to the slot, and
// once stopped leaves the slot inactive and behind.
func TestDebeziumRelay(t *testing.T) {
	testkit.SkipIfShort(t, "PostgreSQL and the Debezium relay")
	ctx := context.Background()
	dsn, _ := NewLogicalDatabase(t)
	ok(t, CreateOutbox(ctx, dsn, ""))
	const slot, pub = "outbox_relay", "outbox_publication"
	created, err := CreateSlot(ctx, dsn, slot, PluginPgoutput)
	ok(t, err)
	ok(t, CreatePublication(ctx, dsn, pub))

	// Written before the relay runs: the slot keeps the changes for it.
	w1 := write(t, dsn, events("OrderCreated", "OrderPaid", "OrderShipped"))
	offsets := t.TempDir()

	// Heartbeats off, Debezium's default.
	d := NewDebezium(t, DebeziumOptions{DSN: dsn, Slot: slot, Publication: pub, OffsetDir: offsets})
	t.Logf("debezium: JVM start to slot active %s", d.StartupTime.Round(time.Millisecond))
	got := waitEvents(t, d.Relay, 3, time.Minute)
	checkPublished(t, got, w1)
	if got[2].LSN == "" || lsn(t, got[2].LSN) > w1.LastChange || lsn(t, got[2].LSN) < w1.Start {
		t.Errorf("last event's LSN %q outside its transaction [%s, %s]", got[2].LSN, w1.Start, w1.LastChange)
	}
	s, _ := must2(t)(WaitSlot(ctx, dsn, slot, 30*time.Second, func(s SlotState) bool { return s.ConfirmedFlushLSN > created }))
	t.Logf("no heartbeats: confirmed_flush_lsn moved from %s to %s %s after the last event was published",
		created, s.ConfirmedFlushLSN, time.Since(got[2].Received).Round(time.Millisecond))
	// Without heartbeats an event's offset carries the commit of the transaction before it: the
	// slot stays before the last transaction's commit however often offsets are flushed.
	time.Sleep(2 * time.Second)
	s = slotNow(t, dsn, slot)
	if s.ConfirmedFlushLSN > w1.LastChange {
		t.Errorf("without heartbeats the slot confirmed the last transaction (%s > %s): Debezium's offsets changed", s.ConfirmedFlushLSN, w1.LastChange)
	}
	t.Logf("no heartbeats, 2 s later: confirmed_flush_lsn %s, the transaction's last change %s, its commit after that", s.ConfirmedFlushLSN, w1.LastChange)

	// Written while no relay runs.
	w2 := stopAndWriteBacklog(t, d.Relay, dsn, slot, "debezium: SIGTERM")

	// Heartbeats on, from the same offsets: only what it had not published, then confirmed.
	d = NewDebezium(t, DebeziumOptions{DSN: dsn, Slot: slot, Publication: pub, OffsetDir: offsets, Heartbeat: 500 * time.Millisecond})
	got = waitEvents(t, d.Relay, 2, time.Minute)
	checkPublished(t, got, w2)
	s, took := must2(t)(WaitSlot(ctx, dsn, slot, 30*time.Second, confirmed(w2)))
	t.Logf("heartbeat 500 ms: confirmed_flush_lsn %s passed the backlog's commit %s after publishing", s.ConfirmedFlushLSN, took.Round(time.Millisecond))

	w3 := write(t, dsn, events("OrderCreated"))
	got = waitEvents(t, d.Relay, 3, 30*time.Second)
	checkPublished(t, got, w2, w3)
	s, _ = must2(t)(WaitSlot(ctx, dsn, slot, 30*time.Second, confirmed(w3)))
	t.Logf("heartbeat 500 ms, offset flush 100 ms: commit to published %s, commit to confirmed_flush_lsn past it %s",
		got[2].Received.Sub(w3.Committed).Round(time.Millisecond), time.Since(w3.Committed).Round(time.Millisecond))

	// WAL that is not the outbox's (another table, outside the publication): Debezium, in its
	// default lsn.flush.mode=connector, confirms only positions of messages it received, so the
	// slot's lag in bytes grows on an idle outbox although nothing is left to publish.
	ok(t, execSQL(ctx, dsn, "CREATE TABLE other AS SELECT g FROM generate_series(1, 1000) g"))
	time.Sleep(2 * time.Second)
	s = slotNow(t, dsn, slot)
	if s.ConfirmedFlushLSN >= s.CurrentLSN {
		t.Errorf("Debezium confirmed WAL it received nothing of: %+v", s)
	}
	t.Logf("idle outbox, other WAL written, 2 s of heartbeats later: lag %d bytes (confirmed_flush_lsn %s, pg_current_wal_lsn %s)",
		s.LagBytes(), s.ConfirmedFlushLSN, s.CurrentLSN)

	// A hard kill: the slot is released when the server notices the connection's end.
	killed := time.Now()
	d.Kill()
	must2(t)(WaitSlot(ctx, dsn, slot, 30*time.Second, inactive))
	t.Logf("debezium: SIGKILL to slot inactive %s", time.Since(killed).Round(time.Millisecond))
}

// TestRecvLogicalRelay runs pg_recvlogical with each output plugin on an outbox written the
// Debezium way.
func TestRecvLogicalRelay(t *testing.T) {
	testkit.SkipIfShort(t, "PostgreSQL and pg_recvlogical")
	ctx := context.Background()
	dsn, _ := NewLogicalDatabase(t)
	ok(t, CreateOutbox(ctx, dsn, ""))
	const pub = "outbox_publication"
	ok(t, CreatePublication(ctx, dsn, pub))
	for _, plugin := range []string{PluginPgoutput, PluginTestDecoding} {
		t.Run(plugin, func(t *testing.T) {
			slot := "recv_" + plugin
			opts := RecvLogicalOptions{DSN: dsn, Slot: slot, Plugin: plugin, Publication: pub, CreateSlot: true}
			r := NewRecvLogical(t, opts)
			t.Logf("pg_recvlogical %v: start to slot active %s", r.Args, r.StartupTime.Round(time.Millisecond))

			w1 := write(t, dsn, events("OrderCreated", "OrderPaid", "OrderShipped"))
			got := waitEvents(t, r.Relay, 3, 30*time.Second)
			checkPublished(t, got, w1)
			if plugin == PluginPgoutput && (got[0].CommitLSN == "" || lsn(t, got[0].CommitLSN) <= w1.LastChange) {
				t.Errorf("commit LSN %q not after the transaction's last change %s", got[0].CommitLSN, w1.LastChange)
			}
			s, _ := must2(t)(WaitSlot(ctx, dsn, slot, 30*time.Second, confirmed(w1)))
			t.Logf("-F 0 -s 1: commit to published %s, commit to confirmed_flush_lsn past it %s (now %s)",
				got[2].Received.Sub(w1.Committed).Round(time.Millisecond), time.Since(w1.Committed).Round(time.Millisecond), s.ConfirmedFlushLSN)

			// WAL that is no event (another table): pg_recvlogical confirms the server's WAL end
			// from its keepalives, so its slot follows the WAL on an idle outbox.
			ok(t, execSQL(ctx, dsn, "CREATE TABLE other_"+plugin+" AS SELECT g FROM generate_series(1, 1000) g"))
			after := slotNow(t, dsn, slot).CurrentLSN
			s, took := must2(t)(WaitSlot(ctx, dsn, slot, 30*time.Second, func(s SlotState) bool { return s.ConfirmedFlushLSN >= after }))
			t.Logf("idle outbox, other WAL written: confirmed_flush_lsn reached the WAL end %s in %s", after, took.Round(time.Millisecond))

			w2 := stopAndWriteBacklog(t, r.Relay, dsn, slot, "pg_recvlogical: SIGINT")

			// Started again, it streams from confirmed_flush_lsn: the backlog and nothing older.
			opts.CreateSlot = false
			r = NewRecvLogical(t, opts)
			got = waitEvents(t, r.Relay, 2, 30*time.Second)
			checkPublished(t, got, w2)
			must2(t)(WaitSlot(ctx, dsn, slot, 30*time.Second, confirmed(w2)))

			killed := time.Now()
			r.Kill()
			must2(t)(WaitSlot(ctx, dsn, slot, 30*time.Second, inactive))
			t.Logf("pg_recvlogical: SIGKILL to slot inactive %s", time.Since(killed).Round(time.Millisecond))
		})
	}
}

// must2 is must for WaitSlot's two results.
func must2(t *testing.T) func(SlotState, time.Duration, error) (SlotState, time.Duration) {
	return func(s SlotState, d time.Duration, err error) (SlotState, time.Duration) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s, d
	}
}
