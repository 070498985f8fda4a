// Package sim is the workload simulator behind `workflow-sim`, `make demo`
// and `make run`: idempotent external-task workers, an outbox publisher, an
// inbox broker and consumer, a reconciler and a fake downstream service,
// running against a real Camunda engine and real PostgreSQL tables (the
// reference schema of deploy/sql), healthy by default, with the failure
// windows of at-least-once workers injectable by name (faults.go) on one
// lane at a time.
//
// Without an engine (Config.EngineURL empty: make run where Java is
// missing) each lane's workers take their commands from the lane's own feed
// instead of the engine's external tasks and write the same rows; the
// faults that act through the engine are refused then.
//
// It writes only to the databases it is given, and only to the four worker
// tables, and for a relay lane (relay.go) to the lane's own outbox table,
// which it creates with the lane's replication slot (dropped again by
// Close); it never writes to the engine's database (only through the
// engine's REST API, as a worker does). The engine and database faults act
// on proxies in front of them (sim/faultproxy) that only the
// exporter uses.
package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/sim/faultproxy"
)

// Config configures a Simulator.
type Config struct {
	// EngineURL is the REST root the workers use, e.g.
	// http://127.0.0.1:8080/engine-rest; empty: no engine (see the package
	// comment).
	EngineURL string
	// EngineName is the engine label the exporter uses for this engine
	// (written to the processed-job table's engine column).
	EngineName string
	// Databases are the worker databases by name (DSNs). The simulator
	// writes to the four worker tables in them and nowhere else.
	Databases map[string]string
	// Lanes are the workloads; each names one of Databases.
	Lanes []Lane
	// Interval is how often each lane starts a process instance and
	// delivers an inbox message (default 2s).
	Interval time.Duration
	// Workers per lane (default 2; slow-worker needs a second one to
	// redeliver to).
	Workers int
	// LockDuration of the workers' fetchAndLock (default 20s).
	LockDuration time.Duration
	// StaleAfter is how long an in-progress idempotency record may go
	// without an update before a new attempt takes the command over (the
	// earlier attempt crashed); younger ones make the new attempt back off
	// (default 2m).
	StaleAfter time.Duration
	// EngineProxy, when set, is the address of an HTTP proxy to EngineURL
	// for the exporter (engine-down, engine-500 act on it), e.g.
	// "127.0.0.1:0".
	EngineProxy string
	// DatabaseProxies are TCP proxies to databases for the exporter, by
	// database name (database-down acts on them).
	DatabaseProxies map[string]string
	// RecvLogical is the pg_recvlogical the relay lanes run as their relay
	// ("": from PATH or Debian's PostgreSQL bin directories).
	RecvLogical string
	Logger      *slog.Logger
}

// Simulator runs the workload. Create it with New, then Run.
type Simulator struct {
	cfg Config
	// engine is nil without an engine: then feeds holds each lane's
	// commands.
	engine *engineclient.Client
	feeds  map[string]chan engineclient.ExternalTask
	down   *downstream
	pools  map[string]*pgxpool.Pool
	lanes  map[string]Lane
	logger *slog.Logger

	engineProxy  *faultproxy.Proxy
	engineFaults faultSet
	dbProxies    map[string]*dbProxy

	// recvLogical is pg_recvlogical, for the relay lanes; slots are the
	// replication slots New created, which Close drops.
	recvLogical string
	slots       map[string]string // slot -> database

	mu       sync.Mutex
	faults   map[string]*faultSet // per lane
	counts   map[string]map[string]int
	crashed  map[string]crash // by task: the crashes not yet replayed
	lastLogs map[string]string
}

// New validates cfg, connects to the databases, checks their tables and
// starts the proxies and the downstream service. It does not start the
// workload: Run does.
func New(ctx context.Context, cfg Config) (*Simulator, error) {
	if cfg.EngineURL == "" && cfg.EngineProxy != "" {
		return nil, errors.New("sim: an engine proxy needs the engine URL")
	}
	if len(cfg.Lanes) == 0 {
		return nil, errors.New("sim: at least one lane is required")
	}
	if cfg.EngineName == "" {
		cfg.EngineName = "main"
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 2 * time.Second
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.LockDuration <= 0 {
		cfg.LockDuration = 20 * time.Second
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = 2 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Simulator{cfg: cfg, pools: map[string]*pgxpool.Pool{}, slots: map[string]string{},
		lanes: map[string]Lane{}, logger: cfg.Logger, dbProxies: map[string]*dbProxy{},
		faults: map[string]*faultSet{}, counts: map[string]map[string]int{}, crashed: map[string]crash{}, lastLogs: map[string]string{}}
	if cfg.EngineURL != "" {
		s.engine = &engineclient.Client{BaseURL: strings.TrimRight(cfg.EngineURL, "/")}
	} else {
		s.feeds = map[string]chan engineclient.ExternalTask{}
	}
	fail := func(err error) (*Simulator, error) { s.Close(); return nil, err }
	for _, l := range cfg.Lanes {
		if !laneNameRE.MatchString(l.Name) {
			return fail(fmt.Errorf("sim: lane name %q: use lower-case letters, digits and '-', starting with a letter", l.Name))
		}
		if _, dup := s.lanes[l.Name]; dup {
			return fail(fmt.Errorf("sim: lane %q is configured twice", l.Name))
		}
		if _, ok := cfg.Databases[l.Database]; !ok {
			return fail(fmt.Errorf("sim: lane %q names database %q, which is not configured (configured: %s)", l.Name, l.Database, strings.Join(sortedNames(cfg.Databases), ", ")))
		}
		if _, ok := cfg.Databases[l.Consumer]; l.Consumer != "" && !ok {
			return fail(fmt.Errorf("sim: lane %q delivers to database %q, which is not configured (configured: %s)", l.Name, l.Consumer, strings.Join(sortedNames(cfg.Databases), ", ")))
		}
		s.lanes[l.Name] = l
		s.faults[l.Name] = &faultSet{}
		s.counts[l.Name] = map[string]int{}
		if s.engine == nil {
			s.feeds[l.Name] = make(chan engineclient.ExternalTask, feedSize)
		}
	}
	for name, dsn := range cfg.Databases {
		pool, err := pgxpool.New(ctx, dsn)
		if err != nil {
			return fail(fmt.Errorf("sim: database %s: the DSN cannot be parsed", name))
		}
		s.pools[name] = pool
		if err := checkTables(ctx, pool); err != nil {
			return fail(fmt.Errorf("sim: database %s: %w", name, err))
		}
	}
	for _, name := range sortedNames(s.lanes) {
		l := s.lanes[name]
		if !l.Relay {
			continue
		}
		if err := CheckRelay(ctx, cfg.Databases[l.Database], cfg.RecvLogical); err != nil {
			return fail(fmt.Errorf("sim: relay lane %s (database %s): %w", l.Name, l.Database, err))
		}
		bin, err := FindRecvLogical(cfg.RecvLogical)
		if err != nil {
			return fail(fmt.Errorf("sim: relay lane %s: %w", l.Name, err))
		}
		s.recvLogical = bin
		created, err := setupRelay(ctx, s.pools[l.Database], l)
		if err != nil {
			return fail(fmt.Errorf("sim: relay lane %s (database %s): %w", l.Name, l.Database, err))
		}
		if created {
			s.slots[l.Slot()] = l.Database
		}
	}
	down, err := startDownstream(s.laneFaults)
	if err != nil {
		return fail(err)
	}
	s.down = down
	if cfg.EngineProxy != "" {
		if s.engineProxy, err = faultproxy.New(cfg.EngineURL, faultproxy.Options{Listen: cfg.EngineProxy}); err != nil {
			return fail(fmt.Errorf("sim: engine proxy: %w", err))
		}
	}
	for name, listen := range cfg.DatabaseProxies {
		target, err := hostPort(cfg.Databases[name])
		if err != nil {
			return fail(fmt.Errorf("sim: database proxy %s: %w", name, err))
		}
		p, err := faultproxy.NewTCP(listen, target)
		if err != nil {
			return fail(fmt.Errorf("sim: database proxy %s: %w", name, err))
		}
		s.dbProxies[name] = &dbProxy{TCP: p}
	}
	return s, nil
}

// feedSize bounds a lane's feed without an engine: commands its workers
// cannot keep up with are dropped beyond it (counted as feed_dropped), as a
// bounded queue does.
const feedSize = 1000

// dbProxy is the exporter's way to a database, and the faults on it.
type dbProxy struct {
	*faultproxy.TCP
	faults faultSet
}

func sortedNames[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkTables names a missing worker table or column before anything runs.
func checkTables(ctx context.Context, pool *pgxpool.Pool) error {
	for table, col := range map[string]string{
		"workflow_idempotency_record": "duplicate_count", "workflow_processed_job": "job_reference",
		"message_inbox": "processing_status", "event_outbox": "published_at",
	} {
		var ok bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_name = $1 AND column_name = $2)`, table, col).Scan(&ok); err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("table %s with column %s not found: load deploy/sql/001_reference_schema.sql and 002_duplicate_count_extension.sql", table, col)
		}
	}
	return nil
}

// EngineProxyAddr is the address of the exporter's engine proxy ("" when
// none is configured).
func (s *Simulator) EngineProxyAddr() string {
	if s.engineProxy == nil {
		return ""
	}
	return s.engineProxy.Addr()
}

// DatabaseProxyAddr is the address of the exporter's proxy to a database.
func (s *Simulator) DatabaseProxyAddr(name string) string {
	if p := s.dbProxies[name]; p != nil {
		return p.Addr()
	}
	return ""
}

// Run deploys each lane's process and runs the workload until ctx ends.
func (s *Simulator) Run(ctx context.Context) error {
	for _, name := range sortedNames(s.lanes) {
		l := s.lanes[name]
		if s.engine != nil {
			if _, err := s.engine.Deploy(ctx, l.ProcessKey(), map[string][]byte{l.ProcessKey() + ".bpmn": l.bpmn()}); err != nil {
				return fmt.Errorf("sim: deploying lane %s: %w", l.Name, err)
			}
		}
	}
	var wg sync.WaitGroup
	spawn := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }
	for _, l := range s.lanes {
		db := s.pools[l.Database]
		spawn(func() { s.startProcesses(ctx, l) })
		for i := 1; i <= s.cfg.Workers; i++ {
			w := s.newWorker(l, fmt.Sprintf("%s-w%d", l.Name, i), db, i == 1)
			spawn(func() { w.run(ctx) })
		}
		if l.Relay {
			spawn(func() { s.relay(ctx, l) })
		} else {
			spawn(func() { s.publish(ctx, l, db) })
		}
		spawn(func() { s.deliver(ctx, l, db) })
		spawn(func() { s.consume(ctx, l, db, l.MessageType(), SourceSystem) })
		if l.Consumer != "" {
			spawn(func() { s.consume(ctx, l, s.pools[l.Consumer], l.DeliveredMessageType(), l.DeliverySourceSystem()) })
		}
		spawn(func() { s.reconcile(ctx, l, db) })
	}
	engine := s.cfg.EngineURL
	if engine == "" {
		engine = "none (the lanes' own feeds)"
	}
	s.logger.Info("workflow-sim running", "lanes", strings.Join(sortedNames(s.lanes), ","), "engine", engine)
	wg.Wait()
	return nil
}

// startProcesses starts a process instance of the lane per interval, or
// without an engine puts a command on the lane's feed.
func (s *Simulator) startProcesses(ctx context.Context, l Lane) {
	for n := 1; ctx.Err() == nil; n++ {
		businessKey := fmt.Sprintf("%s-%06d", l.Name, n)
		if s.engine == nil {
			t := engineclient.ExternalTask{ID: fmt.Sprintf("%s-task-%06d", l.Name, n), TopicName: l.Topic(), BusinessKey: &businessKey,
				ProcessInstanceID: fmt.Sprintf("%s-command-%06d", l.Name, n), ActivityID: l.ActivityID()}
			select {
			case s.feeds[l.Name] <- t:
			default:
				s.count(l, "feed_dropped")
			}
		} else if _, err := s.engine.StartProcess(ctx, l.ProcessKey(), businessKey, nil); err != nil && ctx.Err() == nil {
			s.logf(l, "starting a process: %v", err)
		}
		sleep(ctx, s.cfg.Interval)
	}
}

// Close stops the proxies and the downstream service and closes the pools.
func (s *Simulator) Close() {
	if s.engineProxy != nil {
		s.engineProxy.Close()
	}
	for _, p := range s.dbProxies {
		p.Close()
	}
	if s.down != nil {
		s.down.stop()
	}
	// The slots the simulator created go with it: a slot left behind
	// keeps WAL from removal for ever. Run has stopped their relays.
	for slot, db := range s.slots {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := dropSlot(ctx, s.pools[db], slot); err != nil {
			s.logger.Warn("dropping the relay lane's replication slot", "slot", slot, "err", err)
		}
		cancel()
	}
	for _, p := range s.pools {
		p.Close()
	}
}

func (s *Simulator) laneFaults(lane string) *faultSet {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.faults[lane]; f != nil {
		return f
	}
	return &faultSet{}
}

// Inject turns a fault on. target is a lane name for lane faults, a
// database name for database-down, and ignored for the engine faults. The
// error says why a fault cannot be injected (unknown fault or target, no
// proxy for it, the engine not answering).
func (s *Simulator) Inject(ctx context.Context, fault, target string) error {
	return s.toggle(ctx, fault, target, true)
}

// Clear turns a fault off.
func (s *Simulator) Clear(ctx context.Context, fault, target string) error {
	return s.toggle(ctx, fault, target, false)
}

// engineFault is what the engine proxy does for the engine faults on: a
// hang-up without an answer (engine-down, like a stopped engine behind a
// load balancer) before an HTTP 500 as a failing engine answers
// (engine-500).
func (s *Simulator) engineFault() faultproxy.Fault {
	switch {
	case s.engineFaults.on(FaultEngineDown):
		return faultproxy.Fault{Kind: faultproxy.Reset}
	case s.engineFaults.on(FaultEngine500):
		return faultproxy.Fault{Kind: faultproxy.Status, Status: 500,
			Body: `{"type":"ProcessEngineException","message":"simulated engine failure (workflow-sim engine-500)"}`}
	}
	return faultproxy.Fault{}
}

// ErrCannotInject wraps the reasons a known fault cannot be injected now.
var ErrCannotInject = errors.New("cannot inject")

func (s *Simulator) toggle(ctx context.Context, name, target string, on bool) error {
	f, err := LookupFault(name)
	if err != nil {
		return err
	}
	switch f.Target {
	case TargetLane:
		if _, ok := s.lanes[target]; !ok {
			return fmt.Errorf("%s needs a lane: unknown lane %q (lanes: %s)", name, target, strings.Join(sortedNames(s.lanes), ", "))
		}
		if on && name == FaultMessagesLost && s.lanes[target].Consumer == "" {
			return fmt.Errorf("%w %s on lane %s: the lane delivers to no consumer database (give it one: --deliver %s=DATABASE)", ErrCannotInject, name, target, target)
		}
		if on && f.NeedsEngine {
			// The fault acts through the workers' engine: refuse rather
			// than pretend when it is not there.
			if s.engine == nil {
				return fmt.Errorf("%w %s on lane %s: it acts through the workers' engine, and the simulator runs without one", ErrCannotInject, name, target)
			}
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := s.engine.Version(cctx)
			cancel()
			if err != nil {
				return fmt.Errorf("%w %s on lane %s: the engine at %s does not answer: %w", ErrCannotInject, name, target, s.cfg.EngineURL, err)
			}
		}
		if on && name == FaultRelayStopped && !s.lanes[target].Relay {
			return fmt.Errorf("%w %s on lane %s: the lane has no relay (its outbox is drained by the publisher; publisher-stopped stops that)", ErrCannotInject, name, target)
		}
		s.laneFaults(target).set(name, on)
	case TargetDatabase:
		p := s.dbProxies[target]
		if p == nil {
			return fmt.Errorf("%w %s: no proxy for database %q (proxied: %s); start workflow-sim with --database-proxy %s=ADDR and point the exporter at it",
				ErrCannotInject, name, target, strings.Join(sortedNames(s.dbProxies), ", "), target)
		}
		p.faults.set(name, on)
		kind := faultproxy.None
		if p.faults.on(FaultDatabaseDown) {
			kind = faultproxy.Reset // connections accepted and closed at once, the open ones cut
		}
		if err := p.Set(kind); err != nil {
			return err
		}
	case TargetEngine:
		if s.engineProxy == nil {
			return fmt.Errorf("%w %s: no engine proxy; start workflow-sim with --engine-proxy ADDR and point the exporter at it", ErrCannotInject, name)
		}
		s.engineFaults.set(name, on)
		if err := s.engineProxy.Set(s.engineFault()); err != nil {
			return err
		}
	}
	verb := "cleared"
	if on {
		verb = "injected"
	}
	s.logger.Info("fault "+verb, "fault", name, "target", target)
	return nil
}

// Status is what the simulator reports of itself (GET / of the control
// endpoint).
type Status struct {
	Lanes []LaneStatus `json:"lanes"`
	// EngineFaults and DatabaseFaults are the faults on the exporter's
	// proxies.
	EngineFaults   []string            `json:"engine_faults"`
	DatabaseFaults map[string][]string `json:"database_faults"`
	// Downstream: side effects performed, and repeated requests answered
	// from a stored result (duplicates the idempotency key absorbed).
	DownstreamExecutions int `json:"downstream_executions"`
	DownstreamReplays    int `json:"downstream_replays"`
}

// LaneStatus is one lane's identifiers, faults and counts.
type LaneStatus struct {
	Name          string `json:"name"`
	Database      string `json:"database"`
	Topic         string `json:"topic"`
	Scope         string `json:"scope"`
	AggregateType string `json:"aggregate_type"`
	EventType     string `json:"event_type"`
	MessageType   string `json:"message_type"`
	// Consumer and Delivery: a delivering lane's consumer database and the
	// delivery name the exporter's config gives it.
	Consumer string `json:"consumer,omitempty"`
	Delivery string `json:"delivery,omitempty"`
	// Slot is a relay lane's replication slot (its outbox table:
	// RelayTable); empty for a lane the publisher drains.
	Slot   string         `json:"slot,omitempty"`
	Faults []string       `json:"faults"`
	Counts map[string]int `json:"counts"`
}

// Status returns the current status.
func (s *Simulator) Status() Status {
	var st Status
	for _, name := range sortedNames(s.lanes) {
		l := s.lanes[name]
		faults := s.laneFaults(name).list()
		sort.Strings(faults)
		s.mu.Lock()
		counts := map[string]int{}
		for k, v := range s.counts[name] {
			counts[k] = v
		}
		s.mu.Unlock()
		ls := LaneStatus{Name: name, Database: l.Database, Topic: l.Topic(), Scope: l.Scope(),
			AggregateType: l.AggregateType(), EventType: l.EventType(), MessageType: l.MessageType(), Faults: faults, Counts: counts}
		if l.Consumer != "" {
			ls.Consumer, ls.Delivery = l.Consumer, l.Delivery()
		}
		if l.Relay {
			ls.Slot = l.Slot()
		}
		st.Lanes = append(st.Lanes, ls)
	}
	if s.engineProxy != nil {
		st.EngineFaults = s.engineFaults.list()
	}
	st.DatabaseFaults = map[string][]string{}
	for name, p := range s.dbProxies {
		st.DatabaseFaults[name] = p.faults.list()
	}
	st.DownstreamExecutions, st.DownstreamReplays = s.down.stats()
	return st
}

func (s *Simulator) count(l Lane, what string) { s.add(l, what, 1) }

func (s *Simulator) add(l Lane, what string, n int) {
	if n == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[l.Name][what] += n
}

// crash is a worker's crash on a task, not yet replayed: the id the
// task's lapsing lock is under.
type crash struct {
	workerID string
	at       time.Time
}

// crashOnce reports whether the worker should "crash" on the task it has
// just finished, and if so the id it restarts under (worker.restart). The
// side effect is committed, so a task crashes once: its redelivery finds
// the record COMPLETED and replays. The new id is the worker's first, or
// it with the lowest suffix r1, r2, ..., that neither it is under now nor
// any crash still waiting for its replay was under, so no replay is under
// its lapsed lock's id. A crash is forgotten at its replay, or three lock
// durations after it (its process instance may have been deleted).
func (s *Simulator) crashOnce(w *worker, taskID string) (restartAs string, crashed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, done := s.crashed[taskID]; done {
		return "", false
	}
	now := time.Now()
	owed := map[string]bool{w.id: true}
	for id, c := range s.crashed {
		if now.Sub(c.at) >= 3*s.cfg.LockDuration {
			delete(s.crashed, id)
			continue
		}
		owed[c.workerID] = true
	}
	s.crashed[taskID] = crash{workerID: w.id, at: now}
	restartAs = w.base
	for n := 1; owed[restartAs]; n++ {
		restartAs = fmt.Sprintf("%sr%d", w.base, n)
	}
	return restartAs, true
}

// replayed notes that a crashed task's redelivery replayed its completion.
func (s *Simulator) replayed(taskID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.crashed, taskID)
}

// logf logs a lane's problem when it differs from the last one logged for
// the lane, so a repeating failure is one line, not one per task.
func (s *Simulator) logf(l Lane, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	same := s.lastLogs[l.Name] == msg
	s.lastLogs[l.Name] = msg
	s.mu.Unlock()
	if !same {
		s.logger.Warn(msg, "lane", l.Name)
	}
}
