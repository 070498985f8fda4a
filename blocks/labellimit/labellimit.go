// Package labellimit bounds the label values drawn from data (topics, scopes, event
// types, worker ids). Past a per-metric limit, label value tuples fold into
// "other", and the folding is counted in a self-metric so it is never
// silent. A Limiter admits for the process lifetime (counters must keep
// their series); a Ranked admits anew in every collection (gauges whose
// label values come and go, like worker ids).
//
// Admission is deterministic, so that two exporters on the same sources
// (replicas), or one exporter before and after a restart, give the same
// values their own label: values that compete for the last free places
// are admitted in a stable order of their own (Order: a hash of the
// tuple, not the order a source returns them in), values that must always
// be reported are reserved first (Reserve: configured topics), and a
// value keeps its label once admitted. What stays history-dependent, and
// why, is in docs/production.md ("Two replicas"): only values beyond the
// limit, which the folding self-metric reports, can be admitted differently
// by a process that saw other values earlier in its life.
package labellimit

import (
	"hash/fnv"
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Other is the label value that folded tuples get.
const Other = "other"

// Stats counts folded series per metric across all collectors. It is safe
// for concurrent use.
type Stats struct {
	mu     sync.Mutex
	folded map[string]float64
}

// NewStats returns empty stats.
func NewStats() *Stats {
	return &Stats{folded: map[string]float64{}}
}

func (s *Stats) add(metric string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.folded[metric] += float64(n)
}

// Metrics returns the folds of every metric that has a limiter, including
// those that never folded, as counters of desc
// (workflow_exporter_label_values_folded_total, whose one label is the
// metric's name).
func (s *Stats) Metrics(desc *prometheus.Desc) []prometheus.Metric {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.folded))
	for n := range s.folded {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]prometheus.Metric, 0, len(names))
	for _, n := range names {
		out = append(out, prometheus.MustNewConstMetric(desc, prometheus.CounterValue, s.folded[n], n))
	}
	return out
}

// Limiter admits at most Limit distinct label tuples of one metric (plus
// the reserved ones) and folds the rest. Admission is permanent, so a
// counter's series never moves between its own tuple and "other". A
// Limiter belongs to one collector and is not safe for concurrent use.
//
// A collector that has the tuples of a reading at hand offers them first
// (Offer): the new ones are admitted in Order while places remain, so the
// choice does not depend on the order of the reading. Admit alone admits a
// new tuple while a place remains.
type Limiter struct {
	metric   string
	limit    int
	stats    *Stats
	admitted map[string]struct{}
	pending  map[string]struct{}
}

// NewLimiter returns a limiter for one metric family. Several limiters
// (one per source) may share a metric name; their folds add up.
func NewLimiter(stats *Stats, metric string, limit int) *Limiter {
	stats.add(metric, 0)
	return &Limiter{metric: metric, limit: limit, stats: stats, admitted: map[string]struct{}{}, pending: map[string]struct{}{}}
}

// Reserve admits the tuple whatever the limit: a value the configuration
// names (a configured topic) is always reported under its own label. The
// configuration bounds these; they take places of the limit like any
// other admitted tuple.
func (l *Limiter) Reserve(values ...string) {
	l.admitted[strings.Join(values, "\xff")] = struct{}{}
}

// Offer admits the new tuples among tuples (a reading's, in any order, with
// repeats) in Order while places remain. Tuples it leaves out fold when
// Admit is asked for them; it counts no fold itself.
func (l *Limiter) Offer(tuples ...[]string) {
	if len(l.admitted) >= l.limit {
		return
	}
	var fresh [][]string
	seen := map[string]bool{}
	for _, t := range tuples {
		key := strings.Join(t, "\xff")
		if _, ok := l.admitted[key]; ok || seen[key] {
			continue
		}
		seen[key] = true
		fresh = append(fresh, t)
	}
	Order(fresh)
	for _, t := range fresh {
		if len(l.admitted) >= l.limit {
			return
		}
		l.admitted[strings.Join(t, "\xff")] = struct{}{}
	}
}

// OfferValues is Offer for a limiter of one label: each value is a tuple.
func (l *Limiter) OfferValues(values []string) {
	tuples := make([][]string, len(values))
	for i, v := range values {
		tuples[i] = []string{v}
	}
	l.Offer(tuples...)
}

// Order sorts label tuples into the stable order in which they compete for
// a limiter's last places: by a 64-bit FNV-1a hash of the tuple, ties by the
// values. A hash rather than the values themselves, so that the values that
// keep their label past the limit are not always the alphabetically first
// (one team's prefix taking every place); stable, so that every process,
// whatever order a source returns the values in, makes the same choice.
func Order(tuples [][]string) {
	keys := make([]uint64, len(tuples))
	idx := make([]int, len(tuples))
	for i, t := range tuples {
		h := fnv.New64a()
		for j, v := range t {
			if j > 0 {
				h.Write([]byte{0xff})
			}
			h.Write([]byte(v))
		}
		keys[i], idx[i] = h.Sum64(), i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		if keys[idx[a]] != keys[idx[b]] {
			return keys[idx[a]] < keys[idx[b]]
		}
		return strings.Join(tuples[idx[a]], "\xff") < strings.Join(tuples[idx[b]], "\xff")
	})
	sorted := make([][]string, len(tuples))
	for i, j := range idx {
		sorted[i] = tuples[j]
	}
	copy(tuples, sorted)
}

// Admit returns the tuple itself, or a tuple of "other" values when the
// metric is at its limit and the tuple is new.
func (l *Limiter) Admit(values ...string) []string {
	key := strings.Join(values, "\xff")
	if _, ok := l.admitted[key]; ok {
		return values
	}
	if len(l.admitted) < l.limit {
		l.admitted[key] = struct{}{}
		return values
	}
	l.pending[key] = struct{}{}
	out := make([]string, len(values))
	for i := range out {
		out[i] = Other
	}
	return out
}

// Flush adds the distinct tuples folded since the last Flush to the stats.
// Collectors call it once per successful collection.
func (l *Limiter) Flush() {
	if n := len(l.pending); n > 0 {
		l.stats.add(l.metric, n)
		clear(l.pending)
	}
}

// Discard forgets the folds of a failed collection.
func (l *Limiter) Discard() { clear(l.pending) }

// Ranked bounds a label of a gauge whose values come and go (worker ids: pod
// names change with every rollout). Unlike a Limiter it admits anew in every
// call: the Limit values with the highest weights (ties by value, so the
// choice is deterministic) keep their own label value and the rest add up
// under "other". A value that disappears frees its place, and its series
// goes away, which is right for a gauge of the current state (never use it
// for a counter: a series would move between its own value and "other").
// A Ranked belongs to one collector and is not safe for concurrent use.
type Ranked struct {
	metric  string
	limit   int
	stats   *Stats
	pending int
}

// NewRanked returns a per-collection limiter for one metric family.
func NewRanked(stats *Stats, metric string, limit int) *Ranked {
	stats.add(metric, 0)
	return &Ranked{metric: metric, limit: limit, stats: stats}
}

// Fold returns weights by label value: the Limit heaviest values as they
// are, the others summed under Other (absent when nothing folds). Each value
// folded counts once per call (once per collection and label set, e.g. per
// topic) in workflow_exporter_label_values_folded_total, after Flush.
func (r *Ranked) Fold(weights map[string]int64) map[string]int64 {
	values := make([]string, 0, len(weights))
	for v := range weights {
		values = append(values, v)
	}
	sort.Slice(values, func(i, j int) bool {
		a, b := values[i], values[j]
		if weights[a] != weights[b] {
			return weights[a] > weights[b]
		}
		return a < b
	})
	out := make(map[string]int64, min(len(values), r.limit+1))
	for i, v := range values {
		if i < r.limit {
			out[v] += weights[v]
			continue
		}
		out[Other] += weights[v]
		r.pending++
	}
	return out
}

// Flush adds the values folded since the last Flush to the stats.
// Collectors call it once per successful collection.
func (r *Ranked) Flush() {
	if r.pending > 0 {
		r.stats.add(r.metric, r.pending)
		r.pending = 0
	}
}

// Discard forgets the folds of a failed collection.
func (r *Ranked) Discard() { r.pending = 0 }
