// Package histogram is a histogram kept by a collector between scrapes and
// exposed as a classic and a native histogram at once.
//
// The exporter's histograms (external task durations, outbox publish delay)
// are built from table rows and history entries, not from live calls, so
// they are const metrics: the collector keeps the counts, commits them only
// when a collection succeeds, and builds the metric per scrape. client_golang
// builds such a metric with classic buckets (NewConstHistogram) or with
// native buckets (NewConstNativeHistogram), not with both; a Prometheus that
// scrapes native histograms would then have to choose. Dual keeps both and
// writes both into the one metric: a Prometheus that negotiates the protobuf
// exposition with native histograms on gets the sparse exponential buckets
// (full resolution, no bucket layout to choose), while the text exposition,
// the dashboards' classic queries and every Prometheus without native
// histograms see the configured buckets as before.
package histogram

import (
	"math"
	"slices"
	"sort"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Schema is the native buckets' resolution: 2^-Schema octaves per bucket,
// so at 3 each bucket's upper bound is 2^(1/8), about 1.09 times its lower
// bound (client_golang's NativeHistogramBucketFactor 1.1 picks the same).
// A duration from a millisecond to a day spans about 27 octaves, 216
// buckets at most, held only where observations fell.
const Schema = 3

// ZeroThreshold is the native histogram's zero bucket's width: values at
// or below it (durations of 0) count there. client_golang's default.
const ZeroThreshold = 2.938735877055719e-39 // 2^-128

// nativeBounds are the fractions (as math.Frexp returns them, in [0.5, 1))
// at which the native buckets of Schema split one octave.
var nativeBounds = func() []float64 {
	n := 1 << Schema
	b := make([]float64, n)
	for j := range b {
		b[j] = math.Exp2(float64(j)/float64(n)) / 2
	}
	return b
}()

// Dual is one histogram's counts in classic and native buckets. The zero
// value is an empty histogram; a Dual is a value: Clone before changing a
// copy whose original must stay (collector state committed on success).
type Dual struct {
	// classic counts per classic bucket, not cumulative; the last is +Inf.
	// nil until the first observation.
	classic []uint64
	// native counts per native bucket index (see nativeIndex).
	native map[int]uint64
	zero   uint64
	sum    float64
	count  uint64
}

// Observe adds v. bounds are the classic buckets' upper bounds, sorted; the
// same slice for every call on one histogram.
func (h *Dual) Observe(bounds []float64, v float64) {
	if math.IsNaN(v) {
		return
	}
	if h.classic == nil {
		h.classic = make([]uint64, len(bounds)+1)
	}
	h.classic[sort.SearchFloat64s(bounds, v)]++
	if math.Abs(v) <= ZeroThreshold || v < 0 {
		// The exporter observes durations and delays, clamped at 0; a
		// negative value would need negative buckets it never has.
		h.zero++
	} else {
		if h.native == nil {
			h.native = map[int]uint64{}
		}
		h.native[nativeIndex(v)]++
	}
	h.sum += v
	h.count++
}

// nativeIndex is the native bucket v (> 0) falls in: bucket i holds the
// values in (2^((i-1)/2^Schema), 2^(i/2^Schema)]. Computed from the
// binary exponent and fraction, as client_golang does, so that powers of
// two land exactly on their bucket's upper bound.
func nativeIndex(v float64) int {
	if math.IsInf(v, +1) {
		v = math.MaxFloat64
	}
	frac, exp := math.Frexp(v)
	return sort.SearchFloat64s(nativeBounds, frac) + (exp-1)*len(nativeBounds)
}

// Count is the number of observations.
func (h Dual) Count() uint64 { return h.count }

// Sum is the sum of the observations.
func (h Dual) Sum() float64 { return h.sum }

// Clone returns a copy that shares nothing with h.
func (h Dual) Clone() Dual {
	h.classic = slices.Clone(h.classic)
	if h.native != nil {
		m := make(map[int]uint64, len(h.native))
		for k, v := range h.native {
			m[k] = v
		}
		h.native = m
	}
	return h
}

// Metric builds the const metric with both bucket kinds: the classic
// buckets at bounds (the ones Observe was given) and the native buckets.
// It fails like prometheus.NewConstHistogram (label values not matching
// desc).
func (h Dual) Metric(desc *prometheus.Desc, bounds []float64, labelValues ...string) (prometheus.Metric, error) {
	buckets := make(map[float64]uint64, len(bounds))
	var cum uint64
	for i, ub := range bounds {
		if h.classic != nil {
			cum += h.classic[i]
		}
		buckets[ub] = cum
	}
	classic, err := prometheus.NewConstHistogram(desc, h.count, h.sum, buckets, labelValues...)
	if err != nil {
		return nil, err
	}
	// The metric is served later, maybe while the collector observes more
	// (a snapshot outlives its collection): it keeps its own copy.
	return dual{Metric: classic, h: h.Clone()}, nil
}

// MustMetric is Metric that panics on an error, for label values the
// collector itself produced.
func (h Dual) MustMetric(desc *prometheus.Desc, bounds []float64, labelValues ...string) prometheus.Metric {
	m, err := h.Metric(desc, bounds, labelValues...)
	if err != nil {
		panic(err)
	}
	return m
}

// dual writes the classic metric and then adds the native buckets to it.
type dual struct {
	prometheus.Metric
	h Dual
}

func (d dual) Write(out *dto.Metric) error {
	if err := d.Metric.Write(out); err != nil {
		return err
	}
	hist := out.GetHistogram()
	schema := int32(Schema)
	zt := ZeroThreshold
	zero := d.h.zero
	hist.Schema = &schema
	hist.ZeroThreshold = &zt
	hist.ZeroCount = &zero
	hist.PositiveSpan, hist.PositiveDelta = spans(d.h.native)
	if len(hist.PositiveSpan) == 0 {
		// An empty native histogram still needs a sign that it is one:
		// an empty span, as client_golang writes it.
		var off int32
		var length uint32
		hist.PositiveSpan = []*dto.BucketSpan{{Offset: &off, Length: &length}}
	}
	return nil
}

// spans encodes sparse bucket counts the way the exposition carries them:
// runs of consecutive indexes (each span's offset counted from the end of
// the previous one, the first from 0) and each bucket's count as the
// difference from the bucket before it.
func spans(counts map[int]uint64) ([]*dto.BucketSpan, []int64) {
	if len(counts) == 0 {
		return nil, nil
	}
	idx := make([]int, 0, len(counts))
	for i := range counts {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var (
		out    []*dto.BucketSpan
		deltas []int64
		prev   int64
		next   int // the index after the last span's end
	)
	for n, i := range idx {
		if n == 0 || i != next {
			off := int32(i - next)
			var length uint32
			out = append(out, &dto.BucketSpan{Offset: &off, Length: &length})
		}
		*out[len(out)-1].Length++
		c := int64(counts[i])
		deltas = append(deltas, c-prev)
		prev = c
		next = i + 1
	}
	return out, deltas
}
