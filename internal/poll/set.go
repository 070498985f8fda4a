package poll

import (
	"context"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// Set is every configured source, exposed as one prometheus.Collector that
// renders their snapshots without I/O.
type Set struct {
	mu      sync.RWMutex
	sources []*Source
	folds   *labellimit.Stats

	descSourceUp, descCollectorUp, descDuration, descErrors, descLastSuccess, descFolded, descRemembered *prometheus.Desc
}

// NewSet returns a set over the sources. folds may be nil.
func NewSet(folds *labellimit.Stats, sources ...*Source) *Set {
	return &Set{
		sources:         sources,
		folds:           folds,
		descSourceUp:    catalog.Desc(catalog.ExporterSourceUp),
		descCollectorUp: catalog.Desc(catalog.ExporterCollectorUp),
		descDuration:    catalog.Desc(catalog.ExporterCollectDuration),
		descErrors:      catalog.Desc(catalog.ExporterCollectErrors),
		descLastSuccess: catalog.Desc(catalog.ExporterLastSuccessfulCollect),
		descFolded:      catalog.Desc(catalog.ExporterLabelValuesFolded),
		descRemembered:  catalog.Desc(catalog.ExporterRememberedEntries),
	}
}

// Sources returns the sources of the set.
func (s *Set) Sources() []*Source {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.sources
}

// Replace makes sources the set's sources, in one step: a scrape sees
// either the old sources or the new ones. Sources that stay keep their
// snapshots. Closing the sources that left is the caller's business.
func (s *Set) Replace(sources ...*Source) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sources = sources
}

// Refresh refreshes the sources, phase by phase (see SourceOptions.Phase),
// those of one phase in parallel, and returns when all are fresh or ctx
// ends, whichever is first. A later phase waits for the earlier ones at
// most half of ctx's time (when it has a deadline): an engine whose
// collection is slow (or hangs until its timeout) delays the databases
// whose joins read its view by half a scrape at most, never the whole
// scrape; their joins then read the engine's last published view, which
// carries its own time, and the engine's collection goes on in the
// background, bounded by its own timeout.
func (s *Set) Refresh(ctx context.Context) {
	phases := map[int][]*Source{}
	var order []int
	for _, src := range s.Sources() {
		if _, ok := phases[src.o.Phase]; !ok {
			order = append(order, src.o.Phase)
		}
		phases[src.o.Phase] = append(phases[src.o.Phase], src)
	}
	sort.Ints(order)
	wait := ctx
	if deadline, ok := ctx.Deadline(); ok && len(order) > 1 {
		var cancel context.CancelFunc
		wait, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(deadline)/2))
		defer cancel()
	}
	for i, p := range order {
		phaseCtx := wait
		if i == len(order)-1 {
			phaseCtx = ctx
		}
		var wg sync.WaitGroup
		for _, src := range phases[p] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				src.Refresh(phaseCtx)
			}()
		}
		wg.Wait()
	}
}

// Describe sends nothing: the set is an unchecked collector because the
// label values of its const metrics come from data.
func (s *Set) Describe(chan<- *prometheus.Desc) {}

// Collect renders the current snapshots.
func (s *Set) Collect(ch chan<- prometheus.Metric) {
	for _, src := range s.Sources() {
		snap := src.Current()
		// Error counters exist from the start, so rate() works from the
		// first failure on.
		for _, name := range src.collectorNames() {
			v := 0.0
			if snap != nil {
				v = snap.ErrorsTotal[name]
			}
			ch <- prometheus.MustNewConstMetric(s.descErrors, prometheus.CounterValue, v, src.Kind(), src.Name(), name)
		}
		if snap == nil {
			// The first collection is still running: no data yet rather
			// than a guess.
			continue
		}
		// What the collectors keep is kept while the source is down too.
		for _, kind := range sortedKinds(snap.Remembered) {
			ch <- prometheus.MustNewConstMetric(s.descRemembered, prometheus.GaugeValue, float64(snap.Remembered[kind]), src.Kind(), src.Name(), kind)
		}
		ch <- prometheus.MustNewConstMetric(s.descSourceUp, prometheus.GaugeValue, boolFloat(snap.Up), src.Kind(), src.Name())
		for _, r := range snap.Results {
			ch <- prometheus.MustNewConstMetric(s.descDuration, prometheus.GaugeValue, r.Duration.Seconds(), src.Kind(), src.Name(), r.Collector)
			if r.Collector != vocab.CollectorConnect {
				ch <- prometheus.MustNewConstMetric(s.descCollectorUp, prometheus.GaugeValue, boolFloat(r.Err == nil), src.Kind(), src.Name(), r.Collector)
			}
		}
		if !snap.LastSuccess.IsZero() {
			ch <- prometheus.MustNewConstMetric(s.descLastSuccess, prometheus.GaugeValue, float64(snap.LastSuccess.UnixNano())/1e9, src.Kind(), src.Name())
		}
		for _, m := range snap.UpMetrics {
			ch <- m
		}
		for _, m := range snap.Data {
			ch <- m
		}
	}
	if s.folds != nil {
		for _, m := range s.folds.Metrics(s.descFolded) {
			ch <- m
		}
	}
}

func (s *Source) collectorNames() []string {
	names := make([]string, 0, len(s.o.Collectors)+1)
	if s.o.Probe != nil {
		names = append(names, vocab.CollectorConnect)
	}
	for _, c := range s.o.Collectors {
		names = append(names, c.Name())
	}
	sort.Strings(names)
	return names
}

func sortedKinds(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// HandlerOptions configures the metrics handler.
type HandlerOptions struct {
	// DefaultTimeout is used when the scrape sends no
	// X-Prometheus-Scrape-Timeout-Seconds header.
	DefaultTimeout time.Duration
	// Offset is subtracted from the scrape timeout so the response leaves
	// before Prometheus gives up.
	Offset time.Duration
	// ErrorLog receives gathering errors.
	ErrorLog promhttp.Logger
}

// Handler refreshes the set within the scrape's deadline, then serves the
// registry. Gathering errors are logged and the healthy metrics are still
// served (ContinueOnError): one broken collector must not fail the scrape.
func Handler(set *Set, gatherer prometheus.Gatherer, o HandlerOptions) http.Handler {
	prom := promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:      o.ErrorLog,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), ScrapeBudget(r.Header, o.DefaultTimeout, o.Offset))
		set.Refresh(ctx)
		cancel()
		prom.ServeHTTP(w, r)
	})
}

// ScrapeBudget returns how long a scrape may wait for collections: the
// Prometheus scrape timeout header (or the default) less the offset, never
// less than a tenth of the timeout.
func ScrapeBudget(h http.Header, def, offset time.Duration) time.Duration {
	timeout := def
	if v := h.Get("X-Prometheus-Scrape-Timeout-Seconds"); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil && secs > 0 {
			timeout = time.Duration(secs * float64(time.Second))
		}
	}
	budget := timeout - offset
	if floor := timeout / 10; budget < floor {
		budget = floor
	}
	return budget
}
