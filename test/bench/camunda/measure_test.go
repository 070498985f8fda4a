package benchcamunda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
	"github.com/workflow-exporter/workflow-exporter/internal/sources"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/bench/benchkit"
	"github.com/workflow-exporter/workflow-exporter/test/harness/proccpu"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// requests sums the requests of a proxy's counts.
func requests(paths map[string]int) int {
	n := 0
	for _, c := range paths {
		n += c
	}
	return n
}

// cpuMeter reads the CPU time the engine's JVM and the PostgreSQL server
// have used so far.
type cpuMeter struct {
	jvm, postmaster int
}

// cpuSample: jvm is the engine's JVM, db the PostgreSQL server, self this
// process (the exporter's collector or the baseline's client, and the
// counting proxy).
// jit and gc are the part of jvm spent by the JVM's compiler threads and
// its garbage collector's threads (those alive at both samples).
type cpuSample struct{ jvm, jit, gc, db, self time.Duration }

// sample (self is left 0: see selfCPU): the JVM's utime+stime, and the
// server's (proccpu.Tree).
func (m cpuMeter) sample() (cpuSample, error) {
	var s cpuSample
	var err error
	if s.jvm, err = proccpu.Process(m.jvm); err != nil {
		return s, fmt.Errorf("engine JVM: %w", err)
	}
	s.jit, s.gc = proccpu.JVMThreads(m.jvm)
	if s.db, err = proccpu.Tree(m.postmaster); err != nil {
		return s, fmt.Errorf("postmaster: %w", err)
	}
	return s, nil
}

// selfCPU is this process's CPU time so far (user and system, all threads).
func selfCPU() time.Duration { return proccpu.Self() }

// postmasterPID is the parent of a backend of the server.
func postmasterPID(ctx context.Context, conn *pgx.Conn) (int, error) {
	var backend int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		return 0, err
	}
	ppid, _, _, err := proccpu.Stat(backend)
	return ppid, err
}

// groups are a topic's open tasks by the engine's own state filters: what
// every contender must agree on.
type groups struct {
	total, suspended, exhausted, locked, lapsed int64
}

// waiting is what is neither suspended, exhausted, locked nor lapsed.
func (g groups) waiting() int64 { return g.total - g.suspended - g.exhausted - g.locked - g.lapsed }

// contender is one way of getting the per-topic state counts.
type contender struct {
	name string
	// collect runs one collection.
	collect func(ctx context.Context) error
	// counts are the per-topic groups of the last collection; states, for
	// the exporter, its camunda_external_tasks per topic and state.
	counts func() (map[string]groups, map[string]map[string]float64, error)
	close  func()
	logs   *testkit.LogBuffer
	// paths, for the exporter, are its REST requests by endpoint since the
	// last call (requestCounter); nil: the counting proxy's.
	paths func() map[string]int
}

// requestCounter is the exporter's slog.Handler in the benchmark: it counts
// the REST requests by endpoint from the REST client's debug record of
// every attempt ("camunda request", "camunda request failed", "camunda
// request failed, retrying") without formatting them, and passes records
// at info level and above to next. The exporter then talks to the engine
// directly: a counting proxy in between would add its own latency and CPU
// to every request.
type requestCounter struct {
	next   slog.Handler
	mu     *sync.Mutex
	counts map[string]int
}

func newRequestCounter(next slog.Handler) *requestCounter {
	return &requestCounter{next: next, mu: &sync.Mutex{}, counts: map[string]int{}}
}

func (h *requestCounter) Enabled(context.Context, slog.Level) bool { return true }

func (h *requestCounter) Handle(ctx context.Context, r slog.Record) error {
	switch r.Message {
	case "camunda request", "camunda request failed", "camunda request failed, retrying":
		r.Attrs(func(a slog.Attr) bool {
			if a.Key != "endpoint" {
				return true
			}
			h.mu.Lock()
			h.counts[a.Value.String()]++
			h.mu.Unlock()
			return false
		})
	}
	if r.Level < slog.LevelInfo {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h *requestCounter) WithAttrs(as []slog.Attr) slog.Handler {
	return &requestCounter{next: h.next.WithAttrs(as), mu: h.mu, counts: h.counts}
}

func (h *requestCounter) WithGroup(name string) slog.Handler {
	return &requestCounter{next: h.next.WithGroup(name), mu: h.mu, counts: h.counts}
}

// take returns the counts since the last take. The handlers derived by
// WithAttrs share the map, so it is copied and cleared, never replaced.
func (h *requestCounter) take() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := maps.Clone(h.counts)
	clear(h.counts)
	return out
}

const (
	restMode     = "exporter, REST mode"
	databaseMode = "exporter, engine-database mode"
	// databaseStatus is engine-database mode as the binary runs it by
	// default: with the status page on (status.max_items lists), whose
	// reading adds the business keys of the in-flight tasks and the
	// exhausted tasks' list.
	databaseStatus = "exporter, engine-database mode, status page on (the default)"
	listAll        = "baseline: list everything"
	physical       = "physical limit: one SQL query"
	fairFloor      = "fair floor: the query and the in-flight list"
)

// exporterConfig is the config file of the exporter contenders: the
// defaults, except min_interval (every Refresh must collect) and
// label_value_limit (every topic reported on its own).
func exporterConfig(restURL, database string) string {
	y := fmt.Sprintf(`camunda:
  - name: bench
    url: %s
    min_interval: 1ms
    label_value_limit: 300
`, restURL)
	if database != "" {
		y += fmt.Sprintf("    database:\n      dsn: %q\n      time_zone: UTC\n", database)
	}
	return y
}

// newExporter builds a Camunda source from a config file as the binary does
// (config.Parse, sources.NewCamundaSource); a collection is one Refresh.
// status turns the status page's reading on, with the config's
// status.max_items, as the binary does unless --web.disable-status.
func newExporter(name, yamlCfg string, status bool) (*contender, error) {
	cfg, err := config.Parse([]byte(yamlCfg))
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, yamlCfg)
	}
	logs := &testkit.LogBuffer{}
	counter := newRequestCounter(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	logger := slog.New(counter)
	folds := labellimit.NewStats()
	o := sources.CamundaOptions{Folds: folds, Logger: logger}
	if status {
		o.StatusItems = cfg.Status.MaxItems
	}
	eng, err := sources.NewCamundaSource(cfg.Camunda[0], "camunda[0]", o)
	if err != nil {
		return nil, err
	}
	set := poll.NewSet(folds, eng.Source)
	c := &contender{name: name, close: eng.Close, logs: logs, paths: counter.take}
	c.collect = func(ctx context.Context) error {
		time.Sleep(2 * time.Millisecond) // past min_interval
		snap := eng.Source.Refresh(ctx)
		if snap == nil {
			return errors.New("no snapshot")
		}
		for _, r := range snap.Results {
			if r.Err != nil {
				return fmt.Errorf("collector %s: %w", r.Collector, r.Err)
			}
		}
		if !snap.Up {
			return errors.New("source down")
		}
		return nil
	}
	c.counts = func() (map[string]groups, map[string]map[string]float64, error) {
		reg := prometheus.NewPedanticRegistry()
		if err := reg.Register(set); err != nil {
			return nil, nil, err
		}
		mfs, err := reg.Gather()
		if err != nil {
			return nil, nil, err
		}
		states := map[string]map[string]float64{}
		for _, mf := range mfs {
			if mf.GetName() != catalog.CamundaExternalTasks {
				continue
			}
			for _, m := range mf.GetMetric() {
				ls := map[string]string{}
				for _, l := range m.GetLabel() {
					ls[l.GetName()] = l.GetValue()
				}
				if states[ls["topic"]] == nil {
					states[ls["topic"]] = map[string]float64{}
				}
				states[ls["topic"]][ls["state"]] = m.GetGauge().GetValue()
			}
		}
		out := map[string]groups{}
		for topic, s := range states {
			var g groups
			for _, v := range s {
				g.total += int64(v)
			}
			g.suspended = int64(s["suspended"])
			g.exhausted = int64(s["retries_exhausted"])
			g.locked = int64(s["locked"] + s["retry_backoff"])
			g.lapsed = int64(s["lock_expired"])
			out[topic] = g
		}
		return out, states, nil
	}
	return c, nil
}

// listPage is the page size of the list-everything baseline.
const listPage = 1000

// newListEverything pages through every open task (GET /external-task,
// sorted by id, 1000 at a time) and counts per topic and state on the
// client, by the engine's rules, against the client's clock.
func newListEverything(c *engineclient.Client) *contender {
	var last map[string]groups
	ct := &contender{name: listAll, close: func() {}}
	ct.collect = func(ctx context.Context) error {
		now := time.Now()
		out := map[string]groups{}
		for first := 0; ; first += listPage {
			tasks, err := c.ExternalTasks(ctx, url.Values{"sortBy": {"id"}, "sortOrder": {"asc"},
				"firstResult": {strconv.Itoa(first)}, "maxResults": {strconv.Itoa(listPage)}})
			if err != nil {
				return err
			}
			for _, t := range tasks {
				g := out[t.TopicName]
				g.total++
				exp, hasLock, err := t.LockExpiration()
				if err != nil {
					return err
				}
				switch {
				case t.Suspended:
					g.suspended++
				case t.Retries != nil && *t.Retries == 0:
					g.exhausted++
				case hasLock && exp.After(now):
					g.locked++
				case hasLock:
					g.lapsed++
				}
				out[t.TopicName] = g
			}
			if len(tasks) < listPage {
				break
			}
		}
		last = out
		return nil
	}
	ct.counts = func() (map[string]groups, map[string]map[string]float64, error) { return last, nil, nil }
	return ct
}

// countsSQL is the physical limit: every topic's state groups in one
// statement, the engine's own filters (ExternalTask.xml), $1 the engine's
// now as a local time of its zone (UTC here).
const countsSQL = `SELECT topic_name_, count(*),
  count(*) FILTER (WHERE suspension_state_ = 2),
  count(*) FILTER (WHERE suspension_state_ = 1 AND retries_ = 0),
  count(*) FILTER (WHERE suspension_state_ = 1 AND (retries_ IS NULL OR retries_ > 0) AND lock_exp_time_ > $1::timestamp),
  count(*) FILTER (WHERE suspension_state_ = 1 AND (retries_ IS NULL OR retries_ > 0) AND lock_exp_time_ < $1::timestamp)
FROM act_ru_ext_task
GROUP BY topic_name_`

func sqlCounts(ctx context.Context, conn *pgx.Conn) (map[string]groups, error) {
	rows, err := conn.Query(ctx, countsSQL, time.Now().UTC().Format("2006-01-02 15:04:05.999"))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]groups{}
	for rows.Next() {
		var topic string
		var g groups
		if err := rows.Scan(&topic, &g.total, &g.suspended, &g.exhausted, &g.locked, &g.lapsed); err != nil {
			return nil, err
		}
		out[topic] = g
	}
	return out, rows.Err()
}

func newPhysical(conn *pgx.Conn) *contender {
	var last map[string]groups
	ct := &contender{name: physical, close: func() {}}
	ct.collect = func(ctx context.Context) (err error) {
		last, err = sqlCounts(ctx, conn)
		return err
	}
	ct.counts = func() (map[string]groups, map[string]map[string]float64, error) { return last, nil, nil }
	return ct
}

// inflightFloorSQL lists what lock tracking must read besides the counts:
// every in-flight task (locked or lapsed: active, retries left, a lock
// expiration) with its topic, worker, lock expiration and retries, the
// least from which lock ages, lapses and redeliveries can be told.
const inflightFloorSQL = `SELECT id_, topic_name_, worker_id_, lock_exp_time_, retries_
FROM act_ru_ext_task
WHERE suspension_state_ = 1 AND (retries_ IS NULL OR retries_ > 0) AND lock_exp_time_ IS NOT NULL`

// newFairFloor is the fair floor of a collection with lock tracking: the
// physical limit's GROUP BY and the in-flight list (inflightFloorSQL), in
// one read-only transaction, every row read.
func newFairFloor(conn *pgx.Conn) *contender {
	var last map[string]groups
	ct := &contender{name: fairFloor, close: func() {}}
	ct.collect = func(ctx context.Context) error {
		return pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, countsSQL, time.Now().UTC().Format("2006-01-02 15:04:05.999"))
			if err != nil {
				return err
			}
			out := map[string]groups{}
			for rows.Next() {
				var topic string
				var g groups
				if err := rows.Scan(&topic, &g.total, &g.suspended, &g.exhausted, &g.locked, &g.lapsed); err != nil {
					rows.Close()
					return err
				}
				out[topic] = g
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			last = out
			return benchkit.Drain(ctx, tx, inflightFloorSQL)
		})
	}
	ct.counts = func() (map[string]groups, map[string]map[string]float64, error) { return last, nil, nil }
	return ct
}

// measurement is one contender at one size.
type measurement struct {
	wall     []time.Duration // per timed collection
	requests []int
	cpu      cpuSample // summed over the timed collections
	paths    map[string]int
	checked  string // outcome of the count check
}

func (m *measurement) medianWall() time.Duration {
	s := append([]time.Duration(nil), m.wall...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (m *measurement) medianRequests() int {
	s := append([]int(nil), m.requests...)
	sort.Ints(s)
	return s[len(s)/2]
}

// perCollection is the CPU of one collection: the timed collections'
// sum divided by their number (a single one is below the 10 ms resolution
// of /proc for the cheap contenders).
func (m *measurement) perCollection() cpuSample {
	n := time.Duration(len(m.wall))
	return cpuSample{jvm: m.cpu.jvm / n, jit: m.cpu.jit / n, gc: m.cpu.gc / n, db: m.cpu.db / n, self: m.cpu.self / n}
}
