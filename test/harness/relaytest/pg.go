package relaytest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

// LogicalSettings are the server settings a relay needs: logical decoding in the WAL, and room for
// the slots and the walsenders of a test's relays. PostgreSQL 15's defaults for the last two are
// 10 already; they are spelled out so a test that adds slots knows where the limit is.
// pgtest.NewServer takes them as they are: wal_level needs a server of the test's own (it is read
// at start-up only), which is what NewServer gives.
var LogicalSettings = []string{"wal_level=logical", "max_replication_slots=10", "max_wal_senders=10"}

// NewLogicalDatabase starts a PostgreSQL server of the test's own with LogicalSettings and the
// extra settings (pgtest.NewServer: removed when the test ends, skipped under -short) and creates
// a database on it; it returns the database's URL and the server.
func NewLogicalDatabase(t testing.TB, settings ...string) (string, *pgtest.Server) {
	t.Helper()
	srv := pgtest.NewServer(t, append(append([]string{}, LogicalSettings...), settings...)...)
	name := "relay_" + randomHex(4)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := execSQL(ctx, srv.AdminURL, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("relaytest: %v", err)
	}
	return pgtest.WithDatabase(srv.AdminURL, name), srv
}

// OutboxDDL creates the outbox table in the shape of Debezium's outbox event router (its
// documented columns: id, aggregatetype, aggregateid, type, payload). %s is the table name.
const OutboxDDL = `CREATE TABLE %s (
  id            uuid         PRIMARY KEY,
  aggregatetype varchar(255) NOT NULL,
  aggregateid   varchar(255) NOT NULL,
  type          varchar(255) NOT NULL,
  payload       jsonb
)`

// DefaultTable is the outbox table the helpers and relays use when given none.
const DefaultTable = "public.event_outbox"

// CreateOutbox creates an outbox table (OutboxDDL) named table (default DefaultTable).
func CreateOutbox(ctx context.Context, dsn, table string) error {
	if table == "" {
		table = DefaultTable
	}
	return execSQL(ctx, dsn, fmt.Sprintf(OutboxDDL, table))
}

// CreateSlot creates a logical replication slot with the output plugin ("pgoutput",
// "test_decoding") and returns the LSN it starts at (its confirmed_flush_lsn): the slot keeps
// every change committed after it for its consumer, running or not.
func CreateSlot(ctx context.Context, dsn, slot, plugin string) (LSN, error) {
	var lsn string
	err := query(ctx, dsn, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, "SELECT lsn::text FROM pg_create_logical_replication_slot($1, $2)", slot, plugin).Scan(&lsn)
	})
	if err != nil {
		return 0, fmt.Errorf("relaytest: creating slot %s (%s): %w", slot, plugin, err)
	}
	return ParseLSN(lsn)
}

// CreatePublication creates a publication for the tables (pgoutput decodes only the changes of
// the tables of the publications its consumer names).
func CreatePublication(ctx context.Context, dsn, name string, tables ...string) error {
	if len(tables) == 0 {
		tables = []string{DefaultTable}
	}
	return execSQL(ctx, dsn, fmt.Sprintf("CREATE PUBLICATION %s FOR TABLE %s", name, strings.Join(tables, ", ")))
}

// OutboxEvent is one row of the outbox table. WriteEvents fills in an empty ID (a random UUID),
// AggregateType ("order"), AggregateID and Type ("OrderCreated"), and Payload ({}).
type OutboxEvent struct {
	ID            string
	AggregateType string
	AggregateID   string
	Type          string
	Payload       json.RawMessage
}

// Write is what WriteEvents did: the events, the transaction, and WAL positions around it.
type Write struct {
	Events []OutboxEvent
	XID    int64
	// Start is the WAL insert position when the transaction began, LastChange its position after
	// the last insert or delete, just before COMMIT: the commit record comes after LastChange, so a
	// slot whose confirmed_flush_lsn is greater than LastChange has confirmed the transaction (a
	// consumer confirms a transaction with its commit's end LSN).
	Start, LastChange LSN
	// After is pg_current_wal_insert_lsn() after the commit (at or after the commit's end).
	After LSN
	// Committed is when COMMIT returned, on the test's clock.
	Committed time.Time
}

// IDs returns the events' ids in order.
func (w Write) IDs() []string {
	ids := make([]string, len(w.Events))
	for i, e := range w.Events {
		ids[i] = e.ID
	}
	return ids
}

// WriteEvents inserts the events into the outbox table (default DefaultTable) and deletes them
// again in one transaction, as an application using Debezium's outbox pattern does: the table
// stays empty and the events live only in the WAL, for the relay reading the slot.
func WriteEvents(ctx context.Context, dsn, table string, events ...OutboxEvent) (Write, error) {
	if table == "" {
		table = DefaultTable
	}
	w := Write{Events: make([]OutboxEvent, len(events))}
	for i, e := range events {
		if e.ID == "" {
			e.ID = newUUID()
		}
		if e.AggregateType == "" {
			e.AggregateType = "order"
		}
		if e.AggregateID == "" {
			e.AggregateID = "order-" + e.ID[:8]
		}
		if e.Type == "" {
			e.Type = "OrderCreated"
		}
		if e.Payload == nil {
			e.Payload = json.RawMessage(`{}`)
		}
		w.Events[i] = e
	}
	err := query(ctx, dsn, func(c *pgx.Conn) error {
		tx, err := c.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		var start string
		if err := tx.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text, txid_current()").Scan(&start, &w.XID); err != nil {
			return err
		}
		for _, e := range w.Events {
			if _, err := tx.Exec(ctx, "INSERT INTO "+table+" (id, aggregatetype, aggregateid, type, payload) VALUES ($1, $2, $3, $4, $5)",
				e.ID, e.AggregateType, e.AggregateID, e.Type, string(e.Payload)); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, "DELETE FROM "+table+" WHERE id = ANY($1::uuid[])", w.IDs()); err != nil {
			return err
		}
		var last string
		if err := tx.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&last); err != nil {
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
		w.Committed = time.Now()
		var after string
		if err := c.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&after); err != nil {
			return err
		}
		for _, p := range []struct {
			s   string
			dst *LSN
		}{{start, &w.Start}, {last, &w.LastChange}, {after, &w.After}} {
			if *p.dst, err = ParseLSN(p.s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Write{}, fmt.Errorf("relaytest: writing %d outbox events: %w", len(events), err)
	}
	return w, nil
}

// SlotState is a row of pg_replication_slots, with the server's WAL position read in the same
// query.
type SlotState struct {
	Name, Plugin, Database string
	Active                 bool
	// ActivePID is the walsender's pid while a consumer streams from the slot, else 0.
	ActivePID int
	// RestartLSN is the oldest WAL the slot retains; ConfirmedFlushLSN is what its consumer
	// confirmed (the slot streams from there after a reconnect).
	RestartLSN, ConfirmedFlushLSN LSN
	// WALStatus is reserved, extended, unreserved or lost.
	WALStatus string
	// CurrentLSN is pg_current_wal_lsn(); InsertLSN pg_current_wal_insert_lsn().
	CurrentLSN, InsertLSN LSN
}

// LagBytes is the WAL between the slot's confirmed position and the server's current one.
func (s SlotState) LagBytes() int64 { return int64(s.CurrentLSN) - int64(s.ConfirmedFlushLSN) }

// RetainedBytes is the WAL the slot keeps from being removed (current position less restart_lsn).
func (s SlotState) RetainedBytes() int64 { return int64(s.CurrentLSN) - int64(s.RestartLSN) }

// ErrNoSlot is returned by Slot when no slot has the name.
var ErrNoSlot = errors.New("relaytest: no such replication slot")

// Slot reads the slot's row of pg_replication_slots.
func Slot(ctx context.Context, dsn, name string) (SlotState, error) {
	var s SlotState
	err := query(ctx, dsn, func(c *pgx.Conn) error {
		var pid *int32
		var restart, confirmed, walStatus *string
		var cur, ins string
		err := c.QueryRow(ctx, `SELECT slot_name::text, coalesce(plugin::text, ''), coalesce(database::text, ''), active, active_pid,
		       restart_lsn::text, confirmed_flush_lsn::text, wal_status, pg_current_wal_lsn()::text, pg_current_wal_insert_lsn()::text
		  FROM pg_replication_slots WHERE slot_name = $1`, name).
			Scan(&s.Name, &s.Plugin, &s.Database, &s.Active, &pid, &restart, &confirmed, &walStatus, &cur, &ins)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNoSlot
		}
		if err != nil {
			return err
		}
		if pid != nil {
			s.ActivePID = int(*pid)
		}
		if walStatus != nil {
			s.WALStatus = *walStatus
		}
		for _, p := range []struct {
			s   *string
			dst *LSN
		}{{restart, &s.RestartLSN}, {confirmed, &s.ConfirmedFlushLSN}, {&cur, &s.CurrentLSN}, {&ins, &s.InsertLSN}} {
			if p.s == nil {
				continue
			}
			if *p.dst, err = ParseLSN(*p.s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return SlotState{}, fmt.Errorf("relaytest: reading slot %s: %w", name, err)
	}
	return s, nil
}

// WaitSlot polls the slot every 50 ms until cond holds, and returns the state that satisfied it
// with the time it took; on timeout (or ctx's end) it returns the last state and an error.
func WaitSlot(ctx context.Context, dsn, name string, timeout time.Duration, cond func(SlotState) bool) (SlotState, time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last SlotState
	var lastErr error
	for {
		s, err := Slot(ctx, dsn, name)
		if err == nil {
			last = s
			if cond(s) {
				return s, time.Since(start), nil
			}
		}
		lastErr = err
		select {
		case <-ctx.Done():
			if lastErr != nil {
				return last, time.Since(start), fmt.Errorf("relaytest: slot %s: condition not met within %s: %w", name, timeout, lastErr)
			}
			return last, time.Since(start), fmt.Errorf("relaytest: slot %s: condition not met within %s (last: %+v)", name, timeout, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// connParams are the parts of a postgres:// URL a relay's command line needs.
type connParams struct {
	Host, Port, User, Password, Database string
}

func parseURL(dsn string) (connParams, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return connParams{}, errors.New("relaytest: the database must be given as postgres://user:password@host:port/db")
	}
	p := connParams{Host: u.Hostname(), Port: u.Port(), Database: strings.TrimPrefix(u.Path, "/")}
	if p.Port == "" {
		p.Port = "5432"
	}
	if u.User != nil {
		p.User = u.User.Username()
		p.Password, _ = u.User.Password()
	}
	if p.Database == "" {
		return connParams{}, errors.New("relaytest: the database URL names no database")
	}
	return p, nil
}

func query(ctx context.Context, dsn string, f func(*pgx.Conn) error) error {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	return f(c)
}

func execSQL(ctx context.Context, dsn, sql string) error {
	return query(ctx, dsn, func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, sql)
		return err
	})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
