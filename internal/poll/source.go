// Package poll runs collections of sources (Camunda engines, databases) on
// behalf of scrapes and keeps their immutable snapshots.
//
// The rules (docs/design.md, "Data flow"):
//   - A collection is triggered by a scrape, but at most once per the
//     source's min_interval; later scrapes within the interval are served from
//     the snapshot, so load on the source is bounded by configuration, not by
//     the number of Prometheus replicas.
//   - Concurrent scrapes share one running collection.
//   - A scrape never waits past its deadline: it gets the previous snapshot
//     and the collection finishes in the background, bounded by its own
//     timeout.
//   - A failed source reports up 0 and drops its data series: an outage must
//     look like missing data, never like "all clear".
package poll

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/internal/status"
)

// Collector reads one aspect of a source (one table, one engine) and returns
// const metrics. A source calls its collectors one at a time, never
// concurrently, so a collector may keep state between calls (watermarks,
// counters) without locking.
type Collector interface {
	// Name is the value of the collector label on the exporter's self-metrics.
	Name() string
	// Collect reads the source once. On error the collector's metrics of
	// this collection are discarded and its state must stay as it was.
	Collect(ctx context.Context) ([]prometheus.Metric, error)
}

// ConnectCollector is the collector label of a source's reachability check.
const ConnectCollector = "connect"

// Source is one configured Camunda engine or database.
type Source struct {
	kind, name  string
	minInterval time.Duration
	timeout     time.Duration
	probe       func(context.Context) error
	collectors  []Collector
	upMetrics   func(up bool) []prometheus.Metric
	phase       int
	statusItems int
	logger      *slog.Logger
	now         func() time.Time

	mu          sync.Mutex
	snap        *Snapshot
	inflight    chan struct{}
	errorsTotal map[string]float64
	lastSuccess time.Time

	// lastErr is the last error message per collector, so a failure is
	// logged at warn level when it starts or changes, and at debug level
	// while it repeats: an outage is one log line, not one per poll.
	lastErr map[string]string
}

// SourceOptions configures a Source.
type SourceOptions struct {
	// Kind is the source label of self-metrics: "camunda" or "database".
	Kind string
	// Name is the configured name (the engine or database label).
	Name string
	// MinInterval is the least time between two collections.
	MinInterval time.Duration
	// Timeout bounds one whole collection.
	Timeout time.Duration
	// Probe checks that the source can be reached before the collectors run;
	// nil means the source is up when every collector succeeded.
	Probe func(context.Context) error
	// Collectors read the source, in order.
	Collectors []Collector
	// UpMetrics, if set, returns extra metrics reporting up/down in the
	// source's own vocabulary (camunda_up).
	UpMetrics func(up bool) []prometheus.Metric
	// Phase orders refreshes within a scrape: sources of a lower phase
	// refresh first, those of one phase in parallel. A database whose
	// tables join with a Camunda engine's tasks refreshes after the engine,
	// so the join sees the engine's view of this scrape, not the last one.
	Phase int
	// StatusItems, when above 0, gives every collector a status.Sink in
	// its collection's context (lists of at most that many items) and keeps
	// the lists of the collectors that succeeded in the snapshot, for the
	// status page; 0 turns the page's reading off.
	StatusItems int
	Logger      *slog.Logger
	// Now is the exporter clock, for tests; it only decides freshness.
	Now func() time.Time
}

// NewSource returns a source that has not collected yet.
func NewSource(o SourceOptions) *Source {
	s := &Source{
		kind: o.Kind, name: o.Name, minInterval: o.MinInterval, timeout: o.Timeout,
		probe: o.Probe, collectors: o.Collectors, upMetrics: o.UpMetrics, phase: o.Phase, statusItems: o.StatusItems,
		logger: o.Logger, now: o.Now, errorsTotal: map[string]float64{}, lastErr: map[string]string{},
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.timeout <= 0 {
		s.timeout = 30 * time.Second
	}
	if s.probe != nil {
		s.errorsTotal[ConnectCollector] = 0
	}
	for _, c := range s.collectors {
		s.errorsTotal[c.Name()] = 0
	}
	return s
}

// Kind returns the source kind ("camunda" or "database").
func (s *Source) Kind() string { return s.kind }

// Name returns the configured source name.
func (s *Source) Name() string { return s.name }

// Snapshot is the immutable result of one collection.
type Snapshot struct {
	// Started is when the collection began, by the exporter clock.
	Started time.Time
	// Up reports whether the source could be reached.
	Up bool
	// Data holds the collectors' metrics; empty when the source is down.
	Data []prometheus.Metric
	// Results has one entry per collector that ran (the probe first, as
	// ConnectCollector).
	Results []Result
	// ErrorsTotal is the cumulative number of failed collections per
	// collector, as of this snapshot.
	ErrorsTotal map[string]float64
	// LastSuccess is when a collection last succeeded in full; zero if never.
	LastSuccess time.Time
	// UpMetrics are the source's own up metrics (camunda_up).
	UpMetrics []prometheus.Metric
	// Status holds the status page's lists of the collectors that
	// succeeded; empty when the source is down or the page is off.
	Status []status.List
}

// Result is the outcome of one collector in one collection.
type Result struct {
	Collector string
	Err       error
	Duration  time.Duration
}

// Current returns the latest snapshot without collecting; nil before the
// first collection ends.
func (s *Source) Current() *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap
}

// Refresh makes sure a snapshot at most MinInterval old exists, collecting
// if needed, and returns the newest snapshot available when ctx ends. A
// collection it starts is not tied to ctx: it runs to its own timeout so the
// next scrape benefits from it.
func (s *Source) Refresh(ctx context.Context) *Snapshot {
	s.mu.Lock()
	if s.snap != nil && s.now().Sub(s.snap.Started) < s.minInterval {
		snap := s.snap
		s.mu.Unlock()
		return snap
	}
	if s.inflight == nil {
		done := make(chan struct{})
		s.inflight = done
		go s.run(done)
	}
	done := s.inflight
	s.mu.Unlock()

	select {
	case <-done:
	case <-ctx.Done():
	}
	return s.Current()
}

func (s *Source) run(done chan struct{}) {
	defer close(done)
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	snap := s.collect(ctx)
	s.mu.Lock()
	s.snap = snap
	s.inflight = nil
	s.mu.Unlock()
}

func (s *Source) collect(ctx context.Context) *Snapshot {
	snap := &Snapshot{Started: s.now(), Up: true}
	failed := map[string]bool{}
	if s.probe != nil {
		start := time.Now()
		err := s.probe(ctx)
		snap.Results = append(snap.Results, Result{ConnectCollector, err, time.Since(start)})
		if err != nil {
			snap.Up = false
			failed[ConnectCollector] = true
		}
		s.report(ConnectCollector, err, "source unreachable; its series are dropped until it answers")
	}
	if snap.Up {
		for _, c := range s.collectors {
			start := time.Now()
			cctx, sink := s.statusContext(ctx)
			ms, err := s.safeCollect(cctx, c)
			snap.Results = append(snap.Results, Result{c.Name(), err, time.Since(start)})
			if err == nil && sink != nil {
				snap.Status = append(snap.Status, sink.Lists()...)
			}
			s.report(c.Name(), err, "collector failed; its series are dropped until it succeeds")
			if err != nil {
				failed[c.Name()] = true
				continue
			}
			snap.Data = append(snap.Data, ms...)
		}
		// Without a probe the source is up only if every collector succeeded.
		if s.probe == nil && len(failed) > 0 {
			snap.Up = false
			snap.Data = nil
			snap.Status = nil
		}
	}
	if s.upMetrics != nil {
		snap.UpMetrics = s.upMetrics(snap.Up)
	}

	s.mu.Lock()
	for name := range failed {
		s.errorsTotal[name]++
	}
	if len(failed) == 0 {
		s.lastSuccess = snap.Started
	}
	snap.ErrorsTotal = make(map[string]float64, len(s.errorsTotal))
	for k, v := range s.errorsTotal {
		snap.ErrorsTotal[k] = v
	}
	snap.LastSuccess = s.lastSuccess
	s.mu.Unlock()
	return snap
}

// report logs a collector's outcome when it changes: the first failure and
// a changed error at warn level, a repeat at debug level, the recovery at
// info level. Only the collecting goroutine calls it.
func (s *Source) report(collector string, err error, msg string) {
	prev, failing := s.lastErr[collector]
	switch {
	case err == nil && failing:
		delete(s.lastErr, collector)
		s.logger.Info("collector recovered", "kind", s.kind, "name", s.name, "collector", collector)
	case err == nil:
	case failing && prev == err.Error():
		s.logger.Debug(msg, "kind", s.kind, "name", s.name, "collector", collector, "err", err)
	default:
		s.lastErr[collector] = err.Error()
		s.logger.Warn(msg, "kind", s.kind, "name", s.name, "collector", collector, "err", err)
	}
}

// statusContext gives one collector's run its own status sink, so its
// lists are kept only if it succeeds; without the status page ctx is
// returned as it is.
func (s *Source) statusContext(ctx context.Context) (context.Context, *status.Sink) {
	if s.statusItems <= 0 {
		return ctx, nil
	}
	sink := status.NewSink(status.SourceRef{Kind: s.kind, Name: s.name}, s.statusItems)
	return status.NewContext(ctx, sink), sink
}

// safeCollect turns a collector panic into an error: one broken collector
// must never take the exporter down.
func (s *Source) safeCollect(ctx context.Context, c Collector) (ms []prometheus.Metric, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("collector panicked: %v", r)
		}
	}()
	return c.Collect(ctx)
}
