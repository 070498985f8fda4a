package sim

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A relay lane's outbox is drained by change data capture, as with
// Debezium's outbox event router: its workers insert each event into the
// lane's own outbox table (Debezium's columns) and delete it in the same
// transaction, so the table stays empty, and a real relay, PostgreSQL's
// pg_recvlogical, reads the inserts from the lane's logical replication slot
// and confirms them. relay-stopped stops it while the workers keep writing.

// RelayTable, Slot: the relay lane's outbox table and replication slot,
// named after the lane so the exporter's labels name it.
func (l Lane) RelayTable() string { return "sim_" + l.under() + "_outbox" }
func (l Lane) Slot() string       { return "sim_" + l.under() }
func (l Lane) under() string      { return strings.ReplaceAll(l.Name, "-", "_") }

// relayPlugin is the output plugin of the simulator's slots: text, every
// table of the database, no publication to keep.
const relayPlugin = "test_decoding"

// relayOutboxDDL is the outbox in the shape of Debezium's outbox event
// router: no status, no time.
const relayOutboxDDL = `CREATE TABLE IF NOT EXISTS %s (
  id            uuid         PRIMARY KEY,
  aggregatetype varchar(255) NOT NULL,
  aggregateid   varchar(255) NOT NULL,
  type          varchar(255) NOT NULL,
  payload       jsonb
)`

// ErrNoLogicalDecoding is returned for a relay lane whose database's
// server does not run wal_level=logical.
var ErrNoLogicalDecoding = errors.New("wal_level is not logical")

// CheckRelay says whether a relay lane can run on the database at dsn with
// the pg_recvlogical at bin ("" to look for one): the server's wal_level
// must be logical, and pg_recvlogical must be there. It changes nothing.
func CheckRelay(ctx context.Context, dsn, bin string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var level string
	if err := conn.QueryRow(ctx, "SELECT current_setting('wal_level')").Scan(&level); err != nil {
		return err
	}
	if level != "logical" {
		return fmt.Errorf("%w: the server runs wal_level=%s; a relay lane reads a logical replication slot, which needs wal_level = logical (postgresql.conf, then restart PostgreSQL)", ErrNoLogicalDecoding, level)
	}
	_, err = FindRecvLogical(bin)
	return err
}

// FindRecvLogical returns bin if set, else pg_recvlogical from PATH, else the
// newest of Debian's /usr/lib/postgresql/*/bin.
func FindRecvLogical(bin string) (string, error) {
	if bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("pg_recvlogical %s: %w", bin, err)
		}
		return bin, nil
	}
	if p, err := exec.LookPath("pg_recvlogical"); err == nil {
		return p, nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_recvlogical")
	sort.Slice(found, func(i, j int) bool { return pgMajor(found[i]) > pgMajor(found[j]) })
	if len(found) > 0 {
		return found[0], nil
	}
	return "", errors.New("pg_recvlogical not found in PATH or /usr/lib/postgresql/*/bin: a relay lane runs it as its relay (Debian: apt-get install postgresql-client)")
}

func pgMajor(path string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
	return v
}

// setupRelay creates the relay lane's outbox table and its slot where they
// are missing, after CheckRelay; it reports whether it created the slot
// (Close drops it then, so that no slot is left to hold WAL).
func setupRelay(ctx context.Context, pool *pgxpool.Pool, l Lane) (created bool, err error) {
	if _, err := pool.Exec(ctx, fmt.Sprintf(relayOutboxDDL, pgx.Identifier{l.RelayTable()}.Sanitize())); err != nil {
		return false, fmt.Errorf("creating the relay outbox %s: %w", l.RelayTable(), err)
	}
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)", l.Slot()).Scan(&exists); err != nil {
		return false, err
	}
	if exists {
		return false, nil
	}
	if _, err := pool.Exec(ctx, "SELECT pg_create_logical_replication_slot($1, $2)", l.Slot(), relayPlugin); err != nil {
		return false, fmt.Errorf("creating the replication slot %s (the role needs REPLICATION): %w", l.Slot(), err)
	}
	return true, nil
}

// writeEvent writes the lane's outbox event in tx: a row of event_outbox
// for the publisher to mark published, or, on a relay lane, an insert into
// the lane's outbox table and its delete, for the relay to read from the
// WAL.
func (s *Simulator) writeEvent(ctx context.Context, tx pgx.Tx, l Lane, entity, key, result string) error {
	if !l.Relay {
		_, err := tx.Exec(ctx, `INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status)
VALUES (gen_random_uuid(), $1, $2, $3, $4, jsonb_build_object('result', $5::text), 'PENDING')`,
			l.AggregateType(), entity, l.EventType(), key, result)
		return err
	}
	// Two statements: a DELETE beside a data-modifying WITH would not see
	// the row it inserts.
	table := pgx.Identifier{l.RelayTable()}.Sanitize()
	var id string
	if err := tx.QueryRow(ctx, `INSERT INTO `+table+` (id, aggregatetype, aggregateid, type, payload)
VALUES (gen_random_uuid(), $1, $2, $3, jsonb_build_object('result', $4::text, 'key', $5::text)) RETURNING id::text`,
		l.AggregateType(), entity, l.EventType(), result, key).Scan(&id); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE id = $1::uuid`, id)
	return err
}

// relay keeps the lane's relay running, pg_recvlogical on its slot, while
// relay-stopped is off, and stops it (SIGINT, its clean stop: it confirms
// what it wrote) while it is on. A relay that exits on its own is started
// again. The events it reads count as published.
func (s *Simulator) relay(ctx context.Context, l Lane) {
	var r *recvLogical
	defer func() {
		if r != nil {
			r.stop()
		}
	}()
	for ctx.Err() == nil {
		stopped := s.laneFaults(l.Name).on(FaultRelayStopped)
		switch {
		case stopped && r != nil:
			r.stop()
			r = nil
			s.count(l, "relay_stops")
		case !stopped && r != nil && r.exited():
			s.logf(l, "relay exited: %s", r.lastLine())
			r = nil
		case !stopped && r == nil:
			var err error
			if r, err = s.startRecvLogical(l); err != nil {
				s.failed(ctx, l, "starting the relay", err)
				r = nil
			} else {
				s.count(l, "relay_starts")
			}
		}
		sleep(ctx, 300*time.Millisecond)
	}
}

// recvLogical is a running pg_recvlogical.
type recvLogical struct {
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	last string
}

func (s *Simulator) startRecvLogical(l Lane) (*recvLogical, error) {
	cfg, err := pgconn.ParseConfig(s.cfg.Databases[l.Database])
	if err != nil {
		return nil, errors.New("the DSN cannot be parsed")
	}
	if strings.HasPrefix(cfg.Host, "/") {
		return nil, fmt.Errorf("the DSN connects through a Unix socket (%s); the relay needs host and port", cfg.Host)
	}
	conninfo := fmt.Sprintf("host=%s port=%d user=%s dbname=%s", cfg.Host, cfg.Port, cfg.User, cfg.Database)
	// -F 0: report what it wrote as flushed at once (its output is a pipe);
	// -s 1: send status updates every second, so confirmations follow
	// within about two seconds.
	cmd := exec.Command(s.recvLogical, "-d", conninfo, "-S", l.Slot(), "--start", "-f", "-", "-F", "0", "-s", "1",
		"-o", "include-xids=0", "-o", "skip-empty-xacts=1")
	cmd.Env = append(os.Environ(), "PGPASSWORD="+cfg.Password, "PGAPPNAME=workflow-sim-relay-"+l.Name)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	r := &recvLogical{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = lineWriter(r.setLast)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	insert := "table public." + l.RelayTable() + ": INSERT:"
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), insert) {
				s.count(l, "published")
			}
		}
		_ = cmd.Wait()
		close(r.done)
	}()
	return r, nil
}

func (r *recvLogical) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// stop interrupts pg_recvlogical (SIGINT: a final status update, exit 0)
// and kills it if it has not exited within 5 seconds.
func (r *recvLogical) stop() {
	_ = r.cmd.Process.Signal(os.Interrupt)
	select {
	case <-r.done:
	case <-time.After(5 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
}

func (r *recvLogical) setLast(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = line
}

func (r *recvLogical) lastLine() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// lineWriter calls f with each line written to it.
type lineWriter func(string)

func (f lineWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if line != "" {
			f(line)
		}
	}
	return len(p), nil
}

// dropSlot drops a slot the simulator created, once its relay is gone:
// the server releases a slot a moment after its relay's connection ends,
// so it waits (until ctx ends) for the slot to be inactive, and never
// drops one a relay still holds.
func dropSlot(ctx context.Context, pool *pgxpool.Pool, slot string) error {
	for {
		var active bool
		err := pool.QueryRow(ctx, "SELECT active FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&active)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return nil
		case err != nil:
			return err
		case !active:
			_, err := pool.Exec(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active", slot)
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("slot %s still active: %w", slot, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
