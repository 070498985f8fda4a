package histogram

import (
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// TestNativeIndex checks the bucket of each value against its bounds, and
// pins the convention (a power of two is its bucket's upper bound) exactly.
func TestNativeIndex(t *testing.T) {
	for _, v := range []float64{1e-9, 0.001, 0.5, 0.75, 1, 1.0000001, math.Exp2(1.0 / 8), 2, 3, 59.9, 60, 3600, 86400 * 30} {
		got := nativeIndex(v)
		lo, hi := math.Exp2(float64(got-1)/8), math.Exp2(float64(got)/8)
		if !(v > lo*(1-1e-12) && v <= hi*(1+1e-12)) {
			t.Errorf("nativeIndex(%g) = %d, whose bucket (%g, %g] does not hold it", v, got, lo, hi)
		}
	}
	for _, tc := range []struct {
		v    float64
		want int
	}{{1, 0}, {1.0000001, 1}, {2, 8}, {4, 16}, {0.5, -8}} {
		if got := nativeIndex(tc.v); got != tc.want {
			t.Errorf("nativeIndex(%g) = %d, want %d", tc.v, got, tc.want)
		}
	}
	if nativeIndex(math.Inf(1)) != nativeIndex(math.MaxFloat64) {
		t.Errorf("+Inf is not clamped to the largest float's bucket")
	}
}

func TestSpans(t *testing.T) {
	for _, tc := range []struct {
		name    string
		counts  map[int]uint64
		offsets []int32
		lengths []uint32
		deltas  []int64
	}{
		{"empty", nil, nil, nil, nil},
		{"one", map[int]uint64{5: 3}, []int32{5}, []uint32{1}, []int64{3}},
		{"run", map[int]uint64{-2: 1, -1: 4, 0: 2}, []int32{-2}, []uint32{3}, []int64{1, 3, -2}},
		{"gap", map[int]uint64{0: 1, 1: 1, 4: 5}, []int32{0, 2}, []uint32{2, 1}, []int64{1, 0, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, deltas := spans(tc.counts)
			if len(sp) != len(tc.offsets) {
				t.Fatalf("%d spans, want %d", len(sp), len(tc.offsets))
			}
			for i, s := range sp {
				if s.GetOffset() != tc.offsets[i] || s.GetLength() != tc.lengths[i] {
					t.Errorf("span %d = (%d, %d), want (%d, %d)", i, s.GetOffset(), s.GetLength(), tc.offsets[i], tc.lengths[i])
				}
			}
			if len(deltas) != len(tc.deltas) {
				t.Fatalf("deltas %v, want %v", deltas, tc.deltas)
			}
			for i := range deltas {
				if deltas[i] != tc.deltas[i] {
					t.Fatalf("deltas %v, want %v", deltas, tc.deltas)
				}
			}
		})
	}
}

func TestCloneSharesNothing(t *testing.T) {
	bounds := []float64{1, 10}
	var a Dual
	a.Observe(bounds, 5)
	b := a.Clone()
	b.Observe(bounds, 5)
	b.Observe(bounds, 0)
	if a.Count() != 1 || a.classic[1] != 1 || a.native[nativeIndex(5)] != 1 || a.zero != 0 {
		t.Fatalf("the original changed with its clone: %+v", a)
	}
}

// A metric built from a histogram is a snapshot: observations after it do
// not reach it (a scrape may serve it while the next collection observes).
func TestMetricIsASnapshot(t *testing.T) {
	bounds := []float64{1, 10}
	desc := prometheus.NewDesc("delay_seconds", "h", []string{"database"}, nil)
	var h Dual
	h.Observe(bounds, 5)
	m := h.MustMetric(desc, bounds, "orders")
	h.Observe(bounds, 5)
	h.Observe(bounds, 50)
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	hist := out.GetHistogram()
	// Native buckets are deltas: bucket i holds the sum of the first i+1.
	var native, cur int64
	for _, d := range hist.GetPositiveDelta() {
		cur += d
		native += cur
	}
	native += int64(hist.GetZeroCount())
	if hist.GetSampleCount() != 1 || native != 1 {
		t.Fatalf("count %d, native buckets hold %d: the metric changed after it was built", hist.GetSampleCount(), native)
	}
}

// collector serves one Dual, as the exporter's collectors do.
type collector struct {
	desc   *prometheus.Desc
	bounds []float64
	h      Dual
}

func (c collector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }
func (c collector) Collect(ch chan<- prometheus.Metric) {
	ch <- c.h.MustMetric(c.desc, c.bounds, "orders")
}

// scrape fetches the exposition with the given Accept header and returns
// the family named name.
func scrape(t *testing.T, url, accept, name string) *dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err != nil {
			t.Fatalf("no family %s in the %s exposition: %v", name, expfmt.ResponseFormat(resp.Header), err)
		}
		if mf.GetName() == name {
			return &mf
		}
	}
}

// TestExpositionCarriesBoth scrapes a registry over HTTP as Prometheus does:
// the protobuf exposition carries the classic and the native buckets of the
// same observations (equal count and sum; the native median within one
// classic bucket of the classic estimate), the text exposition the classic
// ones.
func TestExpositionCarriesBoth(t *testing.T) {
	bounds := []float64{0.1, 0.5, 1, 5, 10, 30, 60, 300}
	var h Dual
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		h.Observe(bounds, r.ExpFloat64()*4) // mean 4 s
	}
	h.Observe(bounds, 0)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collector{
		desc:   prometheus.NewDesc("test_delay_seconds", "Delay.", []string{"database"}, nil),
		bounds: bounds,
		h:      h,
	})
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	proto := scrape(t, srv.URL, `application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited`, "test_delay_seconds")
	hist := proto.GetMetric()[0].GetHistogram()
	if hist.GetSchema() != Schema || len(hist.GetPositiveSpan()) == 0 {
		t.Fatalf("the protobuf exposition has no native buckets: %v", hist)
	}
	if len(hist.GetBucket()) != len(bounds) {
		t.Fatalf("the protobuf exposition has %d classic buckets, want %d", len(hist.GetBucket()), len(bounds))
	}
	var nativeCount uint64 = hist.GetZeroCount()
	var c int64
	idx := 0
	var native []struct {
		hi float64
		n  uint64
	}
	for _, sp := range hist.GetPositiveSpan() {
		idx += int(sp.GetOffset())
		for range sp.GetLength() {
			c += hist.GetPositiveDelta()[len(native)]
			native = append(native, struct {
				hi float64
				n  uint64
			}{math.Exp2(float64(idx) / 8), uint64(c)})
			nativeCount += uint64(c)
			idx++
		}
	}
	if nativeCount != hist.GetSampleCount() || hist.GetSampleCount() != 5001 {
		t.Fatalf("native buckets count %d, classic count %d, observed 5001", nativeCount, hist.GetSampleCount())
	}
	if hist.GetZeroCount() != 1 {
		t.Errorf("zero bucket %d, want the one 0 observed", hist.GetZeroCount())
	}
	if math.Abs(hist.GetSampleSum()-h.Sum()) > 1e-9 {
		t.Errorf("sum %g, want %g", hist.GetSampleSum(), h.Sum())
	}

	// The median both ways. Classic: linear interpolation in the bucket the
	// rank falls in, as histogram_quantile does.
	rank := 0.5 * float64(hist.GetSampleCount())
	classicQ, classicBucket := 0.0, 0
	lower, below := 0.0, uint64(0)
	for i, b := range hist.GetBucket() {
		if float64(b.GetCumulativeCount()) >= rank {
			classicBucket = i
			classicQ = lower + (b.GetUpperBound()-lower)*(rank-float64(below))/float64(b.GetCumulativeCount()-below)
			break
		}
		lower, below = b.GetUpperBound(), b.GetCumulativeCount()
	}
	// Native: the upper bound of the native bucket the rank falls in.
	cum := hist.GetZeroCount()
	nativeQ := 0.0
	for _, b := range native {
		cum += b.n
		if float64(cum) >= rank {
			nativeQ = b.hi
			break
		}
	}
	nb := sort.SearchFloat64s(bounds, nativeQ)
	if nb < classicBucket-1 || nb > classicBucket+1 {
		t.Errorf("native median %g (classic bucket %d) is more than one classic bucket from the classic estimate %g (bucket %d)", nativeQ, nb, classicQ, classicBucket)
	}
	if want := 4 * math.Ln2; math.Abs(nativeQ-want)/want > 0.1 {
		t.Errorf("native median %g, want about %g (an exponential distribution of mean 4)", nativeQ, want)
	}

	text := scrape(t, srv.URL, `text/plain;version=0.0.4`, "test_delay_seconds")
	th := text.GetMetric()[0].GetHistogram()
	// The text format writes the +Inf bucket; it has no native buckets.
	if len(th.GetBucket()) != len(bounds)+1 || th.GetSampleCount() != 5001 || len(th.GetPositiveSpan()) != 0 {
		t.Fatalf("the text exposition should carry the classic buckets only: %v", th)
	}
}

func TestEmptyIsStillNative(t *testing.T) {
	var h Dual
	m := h.MustMetric(prometheus.NewDesc("x", "x", nil, nil), []float64{1, 2})
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	hist := out.GetHistogram()
	if len(hist.GetPositiveSpan()) != 1 || hist.GetPositiveSpan()[0].GetLength() != 0 || hist.GetSchema() != Schema {
		t.Fatalf("an empty histogram must carry an empty span to read as native: %v", hist)
	}
	if len(hist.GetBucket()) != 2 || hist.GetSampleCount() != 0 {
		t.Fatalf("classic buckets: %v", hist.GetBucket())
	}
}

func TestMetricRejectsWrongLabels(t *testing.T) {
	var h Dual
	if _, err := h.Metric(prometheus.NewDesc("x", "x", []string{"a"}, nil), []float64{1}); err == nil {
		t.Fatal("a metric with a missing label value was built")
	}
}
