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
//   - A source's collectors run one after another within the source's
//     timeout, each under a deadline of its own (deadlines below), so one
//     slow collector cannot starve the others; a later phase (the databases
//     whose joins read an engine's view) waits for an earlier one at most
//     half the scrape's budget (Set.Refresh).
package poll

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/workflow-exporter/workflow-exporter/blocks/failure"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// The source's state file (--storage.path) is in state.go.

// Source is one configured Camunda engine or database.
type Source struct {
	// o is the configuration as given, with the defaults filled in.
	o SourceOptions

	// base is the parent of every collection's context; Close cancels it.
	base   context.Context
	cancel context.CancelFunc

	mu          sync.Mutex
	snap        *Snapshot
	inflight    chan struct{}
	closed      bool
	errorsTotal map[string]float64
	lastSuccess time.Time

	// storage keeps the collectors' state in a file (state.go); nil
	// without --storage.path. Its own lock orders the writes.
	storage *storage

	// failures are the ongoing failures by log key (a step, or sourceKey
	// for the source as a whole), so a failure is logged at warn level when
	// it starts or its class changes, at debug level while it repeats, and
	// at info level when it ends: an outage is one line and its end another,
	// not one line per poll. Only the collecting goroutine touches it.
	failures map[string]*ongoing
	// peaks are the collectors' recent peak durations, by name, for their
	// reserves (deadlines below). Only the collecting goroutine touches it.
	peaks map[string]time.Duration
}

// ongoing is an ongoing failure of one step (or of the whole source).
type ongoing struct {
	class, fingerprint string
	since              time.Time
	count              int
}

// sourceKey is the log key of failures that concern the whole source
// rather than one step: the source unreachable (whichever step found out),
// and the collection running out of time.
const sourceKey = ""

// SourceOptions configures a Source.
type SourceOptions struct {
	// Kind is the source label of self-metrics: "camunda" or "database".
	Kind string
	// Name is the configured name (the engine or database label).
	Name string
	// MinInterval is the least time between two collections, less the
	// last tenth of it (fresh).
	MinInterval time.Duration
	// Timeout bounds one whole collection.
	Timeout time.Duration
	// Probe checks that the source can be reached before the collectors run;
	// nil means the source is up when every collector succeeded.
	Probe func(context.Context) error
	// Collectors read the source, in order.
	Collectors []collectors.Collector
	// UpMetrics, if set, returns extra metrics reporting up/down in the
	// source's own vocabulary (camunda_up).
	UpMetrics func(up bool) []prometheus.Metric
	// Phase orders refreshes within a scrape: sources of a lower phase
	// refresh first, those of one phase in parallel. A database whose
	// tables join with a Camunda engine's tasks refreshes after the engine,
	// so the join sees the engine's view of this scrape, not the last one.
	Phase int
	// StatusItems, when above 0, gives every collector a collectors.Sink with
	// each collection (lists of at most that many items) and keeps
	// the lists of the collectors that succeeded in the snapshot, for the
	// status page; 0 turns the page's reading off.
	StatusItems int
	Logger      *slog.Logger
	// Now is the exporter clock, for tests; it only decides freshness.
	Now func() time.Time
}

// NewSource returns a source that has not collected yet.
func NewSource(o SourceOptions) *Source {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	s := &Source{o: o, errorsTotal: map[string]float64{}, failures: map[string]*ongoing{}, peaks: map[string]time.Duration{}}
	s.base, s.cancel = context.WithCancel(context.Background())
	if o.Probe != nil {
		s.errorsTotal[vocab.CollectorConnect] = 0
	}
	for _, c := range o.Collectors {
		s.errorsTotal[c.Name()] = 0
	}
	return s
}

// Kind returns the source kind ("camunda" or "database").
func (s *Source) Kind() string { return s.o.Kind }

// Name returns the configured source name.
func (s *Source) Name() string { return s.o.Name }

// MinInterval returns the source's min_interval: a snapshot is at most that
// old when a scrape or a page load asks for it.
func (s *Source) MinInterval() time.Duration { return s.o.MinInterval }

// Snapshot is the immutable result of one collection.
type Snapshot struct {
	// Started is when the collection began, by the exporter clock.
	Started time.Time
	// Up reports whether the source could be reached.
	Up bool
	// Data holds the collectors' metrics; empty when the source is down.
	Data []prometheus.Metric
	// Results has one entry per collector that ran (the probe first, as
	// vocab.CollectorConnect).
	Results []Result
	// ErrorsTotal is the cumulative number of failed collections per
	// collector, as of this snapshot.
	ErrorsTotal map[string]float64
	// LastSuccess is when a collection last succeeded in full; zero if never.
	LastSuccess time.Time
	// UpMetrics are the source's own up metrics (camunda_up).
	UpMetrics []prometheus.Metric
	// Lists are the status page's lists of the collectors that succeeded;
	// empty when the source is down or the page is off.
	Lists []collectors.List
	// Remembered are the entries the collectors keep between collections
	// by kind (collectors.Remembering), after this collection: kept while
	// the source is down, as the memory is.
	Remembered map[string]int
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
	if s.closed || (s.snap != nil && s.fresh(s.o.Now().Sub(s.snap.Started))) {
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

// fresh says whether a snapshot of this age serves a scrape. Its last
// tenth of min_interval does not: Prometheus scraping every min_interval
// (the documented setup: 30s and 30s) asks again a little less than
// min_interval after the collection it caused started, and would
// otherwise read every other snapshot twice, each series a collection
// behind. Several scrapers within that tenth still share one collection.
func (s *Source) fresh(age time.Duration) bool {
	return age < s.o.MinInterval-s.o.MinInterval/10
}

// Close stops the source: no collection starts any more, and a running one
// is cancelled (its queries and requests end with their context; a
// PostgreSQL query is also cancelled on the server). Close waits for it to
// end, or for ctx. The last snapshot stays readable.
func (s *Source) Close(ctx context.Context) {
	s.mu.Lock()
	s.closed = true
	done := s.inflight
	s.mu.Unlock()
	s.cancel()
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	if s.storage != nil {
		s.storage.wait(ctx)
	}
}

func (s *Source) run(done chan struct{}) {
	ctx, cancel := context.WithTimeout(s.base, s.o.Timeout)
	defer cancel()
	snap := s.collect(ctx)
	// The state is encoded here, while no other collection can run; the
	// file is written after the scrapes waiting for this one are served.
	var pending *encodedState
	if s.storage != nil && s.base.Err() == nil {
		pending = s.storage.due(s)
	}
	s.mu.Lock()
	// A collection cut short by Close is not a finding about the source.
	if s.base.Err() == nil || s.snap == nil {
		s.snap = snap
	}
	s.inflight = nil
	if pending != nil {
		s.storage.writing.Add(1) // before done: Close waits for it
	}
	s.mu.Unlock()
	close(done)
	if pending != nil {
		s.storage.write(s, pending)
		s.storage.writing.Done()
	}
}

// Deadlines. A source's collectors run one after another within the
// source's timeout T (one whole collection, as configured). Each runs
// under a deadline of its own: the collection's deadline less the time
// reserved for the collectors after it. A collector's reserve is twice its
// recent peak duration, at least minReserve and at most T/n (n collectors);
// before a collector has run, its reserve is minReserve. So every collector
// is guaranteed its reserve whatever the ones before it do, a collector
// that hangs or crawls uses up only the time the others do not need, and
// the collection as a whole still ends within T. The probe runs first,
// under the collection's deadline less every collector's reserve, but
// never with less than a collector's least reserve (minReserve, or
// T/2(n+1) when that is less): a collector whose peak took most of T
// reserves all of it. A
// collector cut by its own deadline fails alone (its series are dropped,
// its failure is logged under its name), and a cut collector's peak is the
// time it was given, so its reserve doubles at the next collection. Only a
// collector that ignores its context can leave the ones after it no time:
// they fail at once, as a timeout of the collection, logged once.
const (
	// minReserve is the least time reserved for a collector (or T/2n when
	// that is less).
	minReserve = time.Second
	// peakDecay is how much of a collector's peak duration is kept from
	// one collection to the next: a collector that reads at long intervals
	// (camunda_history, every history_cleanup.interval) keeps a reserve
	// close to its long reading for a few dozen collections.
	peakDecay = 0.95
)

// reserve is the time kept for collector c of n in a collection of timeout.
func (s *Source) reserve(c string, n int, timeout time.Duration) time.Duration {
	lo, hi := min(minReserve, timeout/time.Duration(2*n)), timeout/time.Duration(n)
	return min(max(2*s.peaks[c], lo), hi)
}

// notePeak records how long a collector ran (or was given, when its
// deadline cut it).
func (s *Source) notePeak(c string, d time.Duration) {
	s.peaks[c] = max(d, time.Duration(float64(s.peaks[c])*peakDecay))
}

func (s *Source) collect(ctx context.Context) *Snapshot {
	snap := &Snapshot{Started: s.o.Now(), Up: true}
	failed := map[string]bool{}
	// sourceFailed says a failure of the whole source was seen in this
	// collection; without one, an ongoing source failure has ended.
	sourceFailed := false
	// after[i] is the time reserved for the collectors after collector i;
	// the probe runs before all of them.
	n := len(s.o.Collectors)
	after := make([]time.Duration, n+1)
	for i := n - 1; i >= 0; i-- {
		after[i] = after[i+1] + s.reserve(s.o.Collectors[i].Name(), n, s.o.Timeout)
	}
	deadline, hasDeadline := ctx.Deadline()
	// within returns ctx bounded by the deadline less keep (ctx itself
	// when it has no deadline).
	within := func(keep time.Duration) (context.Context, context.CancelFunc) {
		if !hasDeadline {
			return context.WithCancel(ctx)
		}
		return context.WithDeadline(ctx, deadline.Add(-keep))
	}
	if s.o.Probe != nil {
		start := time.Now()
		// The collectors' reserves may add up to the whole timeout (one
		// slow collector alone reserves all of it): the probe keeps its
		// own share, as a collector's least reserve.
		pctx, cancel := within(min(after[0], s.o.Timeout-min(minReserve, s.o.Timeout/time.Duration(2*(n+1)))))
		err := s.o.Probe(pctx)
		cancel()
		snap.Results = append(snap.Results, Result{vocab.CollectorConnect, err, time.Since(start)})
		if err != nil {
			snap.Up = false
			if s.closing() {
				return snap
			}
			failed[vocab.CollectorConnect] = true
			sourceFailed = true
			s.failed(sourceKey, vocab.CollectorConnect, err, "source unreachable; its series are dropped until it answers")
		}
	}
	if snap.Up {
		for i, c := range s.o.Collectors {
			start := time.Now()
			sink := s.newSink()
			cctx, cancel := within(after[i+1])
			// late: the collectors before this one left it no time (one
			// that ignores its context can overrun its deadline).
			late := cctx.Err() != nil
			ms, err := s.safeCollect(cctx, c, sink)
			cut := err != nil && cctx.Err() != nil && !late
			cancel()
			d := time.Since(start)
			snap.Results = append(snap.Results, Result{c.Name(), err, d})
			if cut {
				// Given too little: its reserve grows with what it was given.
				end, _ := cctx.Deadline()
				s.notePeak(c.Name(), end.Sub(start))
			} else {
				s.notePeak(c.Name(), d)
			}
			if err == nil {
				s.recovered(c.Name())
				snap.Data = append(snap.Data, ms...)
				if sink != nil {
					snap.Lists = append(snap.Lists, sink.Lists()...)
				}
				continue
			}
			if s.closing() {
				// Close cancelled the collection: not a finding about the
				// source, neither logged nor counted (run discards it).
				snap.Up, snap.Data, snap.Lists = false, nil, nil
				return snap
			}
			failed[c.Name()] = true
			class := failure.Class(err)
			if class == failure.Unreachable {
				// Lost during the collection: the source is down, and the
				// remaining collectors would each wait to connect in turn.
				snap.Up = false
				sourceFailed = true
				s.failed(sourceKey, c.Name(), err, "source unreachable; its series are dropped until it answers")
				break
			}
			if cut {
				s.failed(c.Name(), c.Name(), err, "collector ran past its own deadline (the collection's timeout less the time kept for the collectors after it); its series are dropped until it finishes in time")
				continue
			}
			if late {
				// The collection ran out of time before this collector
				// began: it and those after it fail at once, with the same
				// cause, logged once.
				sourceFailed = true
				s.failed(sourceKey, c.Name(), err, "collection timed out; the series of the collectors it did not finish are dropped")
				continue
			}
			s.failed(c.Name(), c.Name(), err, "collector failed; its series are dropped until it succeeds")
		}
		// Without a probe the source is up only if every collector succeeded.
		if s.o.Probe == nil && len(failed) > 0 {
			snap.Up = false
		}
		if !snap.Up {
			snap.Data = nil
			snap.Lists = nil
		}
	}
	if !sourceFailed {
		s.recovered(sourceKey)
	}
	if s.o.UpMetrics != nil {
		snap.UpMetrics = s.o.UpMetrics(snap.Up)
	}
	snap.Remembered = s.remembered()

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

// closing says Close has cancelled the source's collections.
func (s *Source) closing() bool { return s.base.Err() != nil }

// failed logs a failure of a step under key (the step, or sourceKey) when it
// starts or changes, at warn level naming the source, the step and the
// cause (its class, blocks/failure); a repeat is logged at debug level.
// The error text itself may differ between polls (addresses, ports,
// "connection reset" against "unexpected EOF"): failure.Fingerprint
// decides what is a repeat.
// Only the collecting goroutine calls it.
func (s *Source) failed(key, step string, err error, msg string) {
	class, fingerprint := failure.Class(err), failure.Fingerprint(err)
	f := s.failures[key]
	if f != nil && f.fingerprint == fingerprint {
		f.count++
		s.o.Logger.Debug(msg, "kind", s.o.Kind, "name", s.o.Name, "collector", step, "cause", class, "err", err)
		return
	}
	if f == nil {
		f = &ongoing{since: s.o.Now()}
		s.failures[key] = f
	}
	f.class, f.fingerprint = class, fingerprint
	f.count++
	s.o.Logger.Warn(msg, "kind", s.o.Kind, "name", s.o.Name, "collector", step, "cause", class, "err", err)
}

// recovered logs the end of an ongoing failure under key at info level,
// with how long it lasted and how many collections it failed.
func (s *Source) recovered(key string) {
	f := s.failures[key]
	if f == nil {
		return
	}
	delete(s.failures, key)
	if key == sourceKey {
		s.o.Logger.Info("source recovered", "kind", s.o.Kind, "name", s.o.Name, "cause", f.class,
			"failed_for", s.o.Now().Sub(f.since).Round(time.Millisecond).String(), "failed_collections", f.count)
		return
	}
	s.o.Logger.Info("collector recovered", "kind", s.o.Kind, "name", s.o.Name, "collector", key, "cause", f.class,
		"failed_for", s.o.Now().Sub(f.since).Round(time.Millisecond).String(), "failed_collections", f.count)
}

// newSink gives one collector's run its own status sink, so its lists are
// kept only if it succeeds; nil without the status page.
func (s *Source) newSink() *collectors.Sink {
	if s.o.StatusItems <= 0 {
		return nil
	}
	return collectors.NewSink(collectors.SourceRef{Kind: s.o.Kind, Name: s.o.Name}, s.o.StatusItems)
}

// safeCollect turns a collector panic into an error: one broken collector
// must never take the exporter down.
func (s *Source) safeCollect(ctx context.Context, c collectors.Collector, sink *collectors.Sink) (ms []prometheus.Metric, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("collector panicked: %v", r)
		}
	}()
	return c.Collect(ctx, sink)
}
