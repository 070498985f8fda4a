package relaytest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// Event kinds.
const (
	// KindEvent is an outbox event the relay published (an INSERT into the outbox table).
	KindEvent = "event"
	// KindHeartbeat is a Debezium heartbeat record (heartbeat.interval.ms): no event, but an
	// offset Debezium commits, which lets it confirm the LSN of the last transaction it saw.
	KindHeartbeat = "heartbeat"
	// KindChange is a Debezium change event when the outbox event router is off (Op c or d).
	KindChange = "change"
)

// Event is one record a relay published, as the relay's JSON line has it (the Debezium relay's
// stdout; the harness builds the same from pg_recvlogical's output).
type Event struct {
	Kind          string          `json:"kind"`
	ID            string          `json:"id,omitempty"`
	AggregateType string          `json:"aggregatetype,omitempty"`
	AggregateID   string          `json:"aggregateid,omitempty"`
	Type          string          `json:"type,omitempty"`
	Topic         string          `json:"topic,omitempty"`
	Payload       json.RawMessage `json:"payload,omitempty"`
	// Op is the operation of a KindChange record: c (insert), d (delete).
	Op string `json:"op,omitempty"`
	// LSN is the change's position (Debezium: the source offset's lsn). CommitLSN is, for
	// Debezium, the offset's lsn_commit: the commit LSN of the last transaction completed before
	// this record (the LSN it confirms to the slot once the offset is committed); for
	// pg_recvlogical with pgoutput, the end LSN of the event's own transaction; empty where the
	// output says nothing (test_decoding).
	LSN       string `json:"lsn,omitempty"`
	CommitLSN string `json:"lsn_commit,omitempty"`
	TxID      int64  `json:"txid,omitempty"`
	// Received is when the harness read the line.
	Received time.Time `json:"-"`
}

// DefaultStopTimeout bounds how long Stop waits after the stop signal before it kills.
const DefaultStopTimeout = 60 * time.Second

// Relay is a running relay process: what it published, its log, stopping it. Debezium and
// RecvLogical embed it.
type Relay struct {
	// Name is "debezium" or "pg_recvlogical".
	Name string
	// DSN is the database and Slot the slot the relay reads.
	DSN, Slot string
	// PID is the relay process's id (leader of its own process group).
	PID int
	// StartupTime is how long it took from exec until the slot was active.
	StartupTime time.Duration
	// StopSignal is what Stop sends: SIGTERM for the Debezium relay, SIGINT for pg_recvlogical
	// (PostgreSQL 15's pg_recvlogical ends cleanly on SIGINT only; SIGTERM kills it).
	StopSignal syscall.Signal
	// StopTimeout bounds Stop's wait after StopSignal (default DefaultStopTimeout).
	StopTimeout time.Duration

	cmd     *exec.Cmd
	log     *testkit.LogBuffer
	mu      sync.Mutex
	events  []Event
	changed chan struct{} // closed and replaced on each new record
	done    chan struct{} // closed once the process has exited and its output is read
	waitErr error
	tmpDir  string
	once    sync.Once
}

// decoder reads a relay's stdout until EOF, handing each record to emit and anything it cannot
// decode to log.
type decoder func(out io.Reader, emit func(Event), log io.Writer)

// start runs cmd (its stdout decoded by dec, its stderr into the log), then waits until the slot
// is active; on failure nothing is left running.
func start(ctx context.Context, name, dsn, slot string, cmd *exec.Cmd, dec decoder, stop syscall.Signal, tmpDir string, timeout time.Duration) (*Relay, error) {
	r := &Relay{Name: name, DSN: dsn, Slot: slot, StopSignal: stop, StopTimeout: DefaultStopTimeout, cmd: cmd, log: &testkit.LogBuffer{},
		changed: make(chan struct{}), done: make(chan struct{}), tmpDir: tmpDir}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = r.log
	testkit.OwnProcessGroup(cmd)
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("relaytest: starting %s: %w", name, err)
	}
	r.PID = cmd.Process.Pid
	decoded := make(chan struct{})
	go func() {
		dec(stdout, r.emit, r.log)
		_, _ = io.Copy(io.Discard, stdout)
		close(decoded)
	}()
	go func() {
		<-decoded // Wait closes stdout: read it all first
		r.waitErr = cmd.Wait()
		close(r.done)
	}()
	if err := r.waitActive(ctx, timeout); err != nil {
		r.Close()
		return nil, err
	}
	r.StartupTime = time.Since(began)
	return r, nil
}

// waitActive waits until pg_replication_slots says the slot is active.
func (r *Relay) waitActive(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		s, err := Slot(ctx, r.DSN, r.Slot)
		switch {
		case err == nil && s.Active:
			return nil
		case err == nil:
			last = "slot inactive"
		default:
			last = err.Error()
		}
		select {
		case <-r.done:
			return fmt.Errorf("relaytest: %s exited before the slot %s was active (%v)\n--- %s log (tail) ---\n%s",
				r.Name, r.Slot, r.waitErr, r.Name, testkit.Tail(r.Log(), 40)) //nolint:errorlint // waitErr is nil for a clean exit
		case <-ctx.Done():
			return fmt.Errorf("relaytest: %s: slot %s not active within %s (%s)\n--- %s log (tail) ---\n%s",
				r.Name, r.Slot, timeout, last, r.Name, testkit.Tail(r.Log(), 40))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (r *Relay) emit(e Event) {
	e.Received = time.Now()
	r.mu.Lock()
	r.events = append(r.events, e)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// Records returns every record the relay published so far, heartbeats included.
func (r *Relay) Records() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Events returns the outbox events (KindEvent) the relay published so far.
func (r *Relay) Events() []Event {
	var out []Event
	for _, e := range r.Records() {
		if e.Kind == KindEvent {
			out = append(out, e)
		}
	}
	return out
}

// WaitEvents waits until the relay has published at least n outbox events and returns them all.
func (r *Relay) WaitEvents(ctx context.Context, n int, timeout time.Duration) ([]Event, error) {
	return r.WaitRecords(ctx, timeout, func(all []Event) bool {
		k := 0
		for _, e := range all {
			if e.Kind == KindEvent {
				k++
			}
		}
		return k >= n
	})
}

// WaitRecords waits until cond holds for the records published so far, and returns the outbox
// events among them; it fails when the relay exits first or the time is up.
func (r *Relay) WaitRecords(ctx context.Context, timeout time.Duration, cond func([]Event) bool) ([]Event, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		r.mu.Lock()
		all := append([]Event(nil), r.events...)
		changed := r.changed
		r.mu.Unlock()
		if cond(all) {
			return r.Events(), nil
		}
		select {
		case <-changed:
		case <-r.done:
			if !cond(r.Records()) {
				return r.Events(), fmt.Errorf("relaytest: %s exited (%v) with %d records published\n--- %s log (tail) ---\n%s",
					r.Name, r.waitErr, len(r.Records()), r.Name, testkit.Tail(r.Log(), 30)) //nolint:errorlint // waitErr is nil for a clean exit
			}
		case <-ctx.Done():
			return r.Events(), fmt.Errorf("relaytest: %s: %d records published, condition not met within %s", r.Name, len(all), timeout)
		}
	}
}

// Log returns what the relay wrote to stderr (and any stdout it could not decode).
func (r *Relay) Log() string { return r.log.String() }

// Done is closed when the relay has exited.
func (r *Relay) Done() <-chan struct{} { return r.done }

// Exited reports whether the relay has exited.
func (r *Relay) Exited() bool { return testkit.Closed(r.done) }

// ErrKilled is what Stop returns when the relay did not exit within StopTimeout of its stop
// signal.
var ErrKilled = errors.New("relaytest: the relay did not exit after its stop signal: killed")

// Stop sends StopSignal and waits for the relay to exit (a clean stop: the relay confirms what it
// published and closes its replication connection). It returns nil when the relay exited 0, its
// exit error (with the log's tail) otherwise, and ErrKilled when it had to be killed after
// StopTimeout. Safe to call more than once.
func (r *Relay) Stop() error {
	if !r.Exited() {
		_ = r.cmd.Process.Signal(r.StopSignal)
		select {
		case <-r.done:
		case <-time.After(r.StopTimeout):
			_ = testkit.KillGroup(r.cmd.Process)
			<-r.done
			return ErrKilled
		}
	}
	if r.waitErr != nil {
		return fmt.Errorf("relaytest: %s exited with %w\n--- %s log (tail) ---\n%s", r.Name, r.waitErr, r.Name, testkit.Tail(r.Log(), 30))
	}
	return nil
}

// Kill kills the relay's process group at once (SIGKILL: nothing is confirmed or closed; the
// server notices the replication connection's end when the kernel closes the socket) and waits
// for it to exit.
func (r *Relay) Kill() {
	if !r.Exited() {
		_ = testkit.KillGroup(r.cmd.Process)
		<-r.done
	}
}

// Close kills the relay if it still runs and removes its temporary files. Safe to call more than
// once; the New* constructors register it with t.Cleanup.
func (r *Relay) Close() {
	r.once.Do(func() {
		r.Kill()
		if r.tmpDir != "" {
			_ = os.RemoveAll(r.tmpDir)
		}
	})
}
