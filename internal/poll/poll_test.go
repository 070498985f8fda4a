package poll

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

var testDesc = prometheus.NewDesc("test_value", "Test value.", []string{"c"}, nil)

// fakeCollector counts calls and can block, fail or panic on demand.
type fakeCollector struct {
	name    string
	calls   atomic.Int32
	release chan struct{} // if set, Collect waits for it
	err     error
	panics  bool
	value   float64
}

func (f *fakeCollector) Name() string { return f.name }
func (f *fakeCollector) Collect(ctx context.Context, _ *collectors.Sink) ([]prometheus.Metric, error) {
	f.calls.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, err // as a real collector fails once its context has ended
	}
	if f.release != nil {
		select {
		case <-f.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.panics {
		panic("boom")
	}
	if f.err != nil {
		return nil, f.err
	}
	return []prometheus.Metric{prometheus.MustNewConstMetric(testDesc, prometheus.GaugeValue, f.value, f.name)}, nil
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestMinIntervalBoundsCollections(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	fc := &fakeCollector{name: "outbox", value: 1}
	src := NewSource(SourceOptions{Kind: "database", Name: "orders", MinInterval: 30 * time.Second, Collectors: []collectors.Collector{fc}, Now: clk.now})
	ctx := context.Background()
	steps := []struct {
		advance   time.Duration
		wantCalls int32
	}{
		{0, 1},                                 // first scrape collects
		{10 * time.Second, 1},                  // within min_interval: served from the snapshot
		{16 * time.Second, 1},                  // 26 s after the collection: still served
		{1 * time.Second, 2},                   // 27 s, the last tenth of min_interval: collects again
		{30*time.Second - time.Millisecond, 3}, // a scraper every min_interval, a little early: a collection each time
		{30*time.Second - time.Millisecond, 4},
		{100 * time.Second, 5}, // long pause: one collection, not a catch-up burst
		{0, 5},
	}
	for i, s := range steps {
		clk.advance(s.advance)
		if snap := src.Refresh(ctx); snap == nil || !snap.Up {
			t.Fatalf("step %d: no healthy snapshot", i)
		}
		if got := fc.calls.Load(); got != s.wantCalls {
			t.Fatalf("step %d: %d collections, want %d", i, got, s.wantCalls)
		}
	}
}

func TestConcurrentScrapesShareOneCollection(t *testing.T) {
	fc := &fakeCollector{name: "outbox", release: make(chan struct{})}
	src := NewSource(SourceOptions{Kind: "database", Name: "orders", MinInterval: time.Minute, Collectors: []collectors.Collector{fc}})
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if snap := src.Refresh(context.Background()); snap == nil {
				t.Error("scrape got no snapshot")
			}
		}()
	}
	// Let every scrape reach the wait before the collection finishes.
	time.Sleep(100 * time.Millisecond)
	close(fc.release)
	wg.Wait()
	if got := fc.calls.Load(); got != 1 {
		t.Fatalf("%d collections for 20 concurrent scrapes, want 1", got)
	}
}

func TestScrapeNeverWaitsPastDeadline(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	fc := &fakeCollector{name: "outbox", value: 1}
	src := NewSource(SourceOptions{Kind: "database", Name: "orders", MinInterval: 30 * time.Second, Timeout: 10 * time.Second, Collectors: []collectors.Collector{fc}, Now: clk.now})
	first := src.Refresh(context.Background())

	// The next collection hangs; the scrape must return the previous
	// snapshot at its deadline.
	fc.release = make(chan struct{})
	fc.value = 2
	clk.advance(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	got := src.Refresh(ctx)
	if waited := time.Since(start); waited > time.Second {
		t.Fatalf("scrape waited %s past its 100ms deadline", waited)
	}
	if got != first {
		t.Fatalf("scrape during a slow collection must get the previous snapshot")
	}
	// The collection finishes in the background and serves the next scrape.
	close(fc.release)
	deadline := time.Now().Add(5 * time.Second)
	for src.Current() == first && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	next := src.Refresh(context.Background())
	if next == first || fc.calls.Load() != 2 {
		t.Fatalf("background collection did not land (calls=%d)", fc.calls.Load())
	}
	if got := gatherText(t, NewSet(nil, src)); !strings.Contains(got, `test_value{c="outbox"} 2`) {
		t.Fatalf("new snapshot lacks the new value:\n%s", got)
	}
}

func TestFirstScrapeBeforeAnyCollectionServesNoData(t *testing.T) {
	fc := &fakeCollector{name: "outbox", release: make(chan struct{})}
	defer close(fc.release)
	src := NewSource(SourceOptions{Kind: "database", Name: "orders", MinInterval: time.Minute, Collectors: []collectors.Collector{fc}})
	set := NewSet(nil, src)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	set.Refresh(ctx)
	want := `
# HELP workflow_exporter_collect_errors_total Exporter: failed collections of this collector since the exporter started.
# TYPE workflow_exporter_collect_errors_total counter
workflow_exporter_collect_errors_total{collector="outbox",name="orders",source="database"} 0
`
	if err := testutil.CollectAndCompare(set, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

func TestFailuresDropDataAndReportDown(t *testing.T) {
	probeErr := errors.New("connection refused")
	var probeFails atomic.Bool
	outbox := &fakeCollector{name: "outbox", value: 7}
	inbox := &fakeCollector{name: "inbox", err: errors.New(`relation "message_inbox" does not exist`)}
	broken := &fakeCollector{name: "idempotency", panics: true}
	clk := &clock{t: time.Unix(1000, 0)}
	src := NewSource(SourceOptions{
		Kind: "database", Name: "orders", MinInterval: time.Second, Now: clk.now,
		Probe: func(context.Context) error {
			if probeFails.Load() {
				return probeErr
			}
			return nil
		},
		Collectors: []collectors.Collector{outbox, inbox, broken},
	})
	set := NewSet(nil, src)

	// Reachable, one collector healthy, one failing, one panicking: the
	// source is up, only the healthy collector's data is served.
	set.Refresh(context.Background())
	got := gatherText(t, set)
	for _, want := range []string{
		`workflow_exporter_source_up{name="orders",source="database"} 1`,
		`workflow_exporter_collector_up{collector="outbox",name="orders",source="database"} 1`,
		`workflow_exporter_collector_up{collector="inbox",name="orders",source="database"} 0`,
		`workflow_exporter_collector_up{collector="idempotency",name="orders",source="database"} 0`,
		`workflow_exporter_collect_errors_total{collector="inbox",name="orders",source="database"} 1`,
		`workflow_exporter_collect_errors_total{collector="idempotency",name="orders",source="database"} 1`,
		`workflow_exporter_collect_errors_total{collector="connect",name="orders",source="database"} 0`,
		`test_value{c="outbox"} 7`,
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, `test_value{c="inbox"}`) {
		t.Errorf("failing collector's data served")
	}
	if strings.Contains(got, "workflow_exporter_last_successful_collect_timestamp_seconds") {
		t.Errorf("a partly failed collection must not count as a full success")
	}

	// Unreachable: up 0 and no data at all, not stale values.
	probeFails.Store(true)
	clk.advance(time.Minute)
	set.Refresh(context.Background())
	got = gatherText(t, set)
	if !strings.Contains(got, `workflow_exporter_source_up{name="orders",source="database"} 0`) {
		t.Errorf("source not reported down:\n%s", got)
	}
	if strings.Contains(got, "test_value") || strings.Contains(got, "workflow_exporter_collector_up") {
		t.Errorf("a down source must drop its data series:\n%s", got)
	}
	if !strings.Contains(got, `workflow_exporter_collect_errors_total{collector="connect",name="orders",source="database"} 1`) {
		t.Errorf("connect error not counted:\n%s", got)
	}
}

func TestUpMetricsWithoutProbe(t *testing.T) {
	upDesc := prometheus.NewDesc("camunda_up", "Up.", []string{"engine"}, nil)
	fc := &fakeCollector{name: "camunda", err: errors.New("GET /version: HTTP 401")}
	src := NewSource(SourceOptions{Kind: "camunda", Name: "main", MinInterval: time.Second, Collectors: []collectors.Collector{fc},
		UpMetrics: func(up bool) []prometheus.Metric {
			return []prometheus.Metric{prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, boolFloat(up), "main")}
		}})
	set := NewSet(nil, src)
	set.Refresh(context.Background())
	got := gatherText(t, set)
	for _, want := range []string{`camunda_up{engine="main"} 0`, `workflow_exporter_source_up{name="main",source="camunda"} 0`} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
}

func TestScrapeBudget(t *testing.T) {
	cases := []struct {
		header string
		want   time.Duration
	}{
		{"", 9500 * time.Millisecond},
		{"10", 9500 * time.Millisecond},
		{"2.5", 2 * time.Second},
		{"0.3", 30 * time.Millisecond}, // floor: a tenth of the timeout
		{"junk", 9500 * time.Millisecond},
		{"-1", 9500 * time.Millisecond},
	}
	for _, c := range cases {
		h := http.Header{}
		if c.header != "" {
			h.Set("X-Prometheus-Scrape-Timeout-Seconds", c.header)
		}
		if got := ScrapeBudget(h, 10*time.Second, 500*time.Millisecond); got != c.want {
			t.Errorf("header %q: budget %s, want %s", c.header, got, c.want)
		}
	}
}

// brokenCollector makes Gather fail, as an inconsistent collector would.
type brokenCollector struct{}

func (brokenCollector) Describe(chan<- *prometheus.Desc) {}
func (brokenCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.NewInvalidMetric(prometheus.NewDesc("broken", "Broken.", nil, nil), errors.New("broken on purpose"))
}

func TestHandlerHonoursScrapeTimeoutAndContinuesOnError(t *testing.T) {
	slow := &fakeCollector{name: "outbox", release: make(chan struct{})}
	defer close(slow.release)
	src := NewSource(SourceOptions{Kind: "database", Name: "orders", MinInterval: time.Minute, Collectors: []collectors.Collector{slow}})
	set := NewSet(nil, src)
	reg := prometheus.NewRegistry()
	reg.MustRegister(set, brokenCollector{})
	srv := httptest.NewServer(Handler(set, reg, HandlerOptions{DefaultTimeout: 10 * time.Second, Offset: 100 * time.Millisecond}))
	defer srv.Close()

	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "0.5")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("scrape took %s with a 0.5s scrape timeout", took)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: one broken collector must not fail the scrape", resp.StatusCode)
	}
	if !strings.Contains(string(body), "workflow_exporter_collect_errors_total") {
		t.Fatalf("healthy metrics missing:\n%s", body)
	}
}

func gatherText(t *testing.T, c prometheus.Collector) string {
	t.Helper()
	var sb strings.Builder
	for _, mf := range testkit.Gather(t, c) {
		for _, m := range mf.GetMetric() {
			sb.WriteString(mf.GetName())
			sb.WriteString("{")
			for i, l := range m.GetLabel() {
				if i > 0 {
					sb.WriteString(",")
				}
				sb.WriteString(l.GetName() + "=\"" + l.GetValue() + "\"")
			}
			sb.WriteString("} ")
			switch {
			case m.GetGauge() != nil:
				sb.WriteString(ftoa(m.GetGauge().GetValue()))
			case m.GetCounter() != nil:
				sb.WriteString(ftoa(m.GetCounter().GetValue()))
			}
			sb.WriteString("\n")
		}
	}
	return strings.ReplaceAll(sb.String(), "{} ", " ")
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func TestRepeatedFailureLogsOnceAndRecoveryIsLogged(t *testing.T) {
	var buf strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelInfo}))
	clk := &clock{t: time.Unix(1000, 0)}
	fc := &fakeCollector{name: "outbox", err: errors.New(`relation "event_outbox" does not exist`)}
	src := NewSource(SourceOptions{Kind: "database", Name: "orders", MinInterval: time.Second, Collectors: []collectors.Collector{fc}, Logger: logger, Now: clk.now})
	for i := 0; i < 5; i++ {
		clk.advance(time.Minute)
		src.Refresh(context.Background())
	}
	fc.err = errors.New("permission denied for table event_outbox")
	clk.advance(time.Minute)
	src.Refresh(context.Background())
	fc.err = nil
	clk.advance(time.Minute)
	src.Refresh(context.Background())
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	if n := strings.Count(out, "level=WARN"); n != 2 {
		t.Errorf("%d warnings for 5 identical failures and one changed one, want 2:\n%s", n, out)
	}
	if !strings.Contains(out, "collector recovered") {
		t.Errorf("recovery not logged:\n%s", out)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestLaterPhasesRefreshAfterEarlierOnes(t *testing.T) {
	var mu sync.Mutex
	var order []string
	mk := func(name string, phase int) *Source {
		fc := &orderCollector{name: name, record: func(n string) { mu.Lock(); order = append(order, n); mu.Unlock() }}
		return NewSource(SourceOptions{Kind: "x", Name: name, MinInterval: time.Minute, Collectors: []collectors.Collector{fc}, Phase: phase})
	}
	set := NewSet(nil, mk("db", 1), mk("engine", 0))
	set.Refresh(context.Background())
	if strings.Join(order, ",") != "engine,db" {
		t.Fatalf("refresh order %v, want engine before db", order)
	}
}

// TestSlowEngineDoesNotStarveTheJoins: an engine whose collection hangs
// (until its own timeout, long after the scrape) delays the database
// whose joins read its view by half the scrape's budget, not the whole:
// the database collects within the scrape.
func TestSlowEngineDoesNotStarveTheJoins(t *testing.T) {
	hang := &fakeCollector{name: "camunda", release: make(chan struct{})}
	defer close(hang.release)
	engine := NewSource(SourceOptions{Kind: "camunda", Name: "main", MinInterval: time.Minute, Timeout: time.Minute, Collectors: []collectors.Collector{hang}})
	join := &fakeCollector{name: "idempotency_join", value: 1}
	db := NewSource(SourceOptions{Kind: "database", Name: "orders", MinInterval: time.Minute, Timeout: time.Minute, Collectors: []collectors.Collector{join}, Phase: 1})
	set := NewSet(nil, engine, db)
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	start := time.Now()
	set.Refresh(ctx)
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Fatalf("the scrape waited %s for a hanging engine and a quick database", took)
	}
	if snap := db.Current(); snap == nil || !snap.Up || len(snap.Data) != 1 {
		t.Fatalf("the database did not collect within the scrape: %+v", snap)
	}
	if engine.Current() != nil {
		t.Fatal("the hanging engine has a snapshot")
	}
}

type orderCollector struct {
	name   string
	record func(string)
}

func (o *orderCollector) Name() string { return o.name }
func (o *orderCollector) Collect(context.Context, *collectors.Sink) ([]prometheus.Metric, error) {
	time.Sleep(20 * time.Millisecond)
	o.record(o.name)
	return nil, nil
}

// logCapture is a logger writing text lines into a buffer that tests read.
func logCapture(level slog.Level) (*slog.Logger, func() string) {
	buf := &testkit.LogBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: level})), buf.String
}

// TestOutageLogsOneLineAndItsEnd: a database outage produces a different
// error text at almost every poll (the ephemeral port of a reset
// connection, "unexpected EOF", "connection refused" while the server is
// down); all of it is one failure of the source, logged once at warn level
// naming the source, the step and the cause, and its end once at info level.
func TestOutageLogsOneLineAndItsEnd(t *testing.T) {
	logger, logs := logCapture(slog.LevelInfo)
	clk := &clock{t: time.Unix(1000, 0)}
	var probeErr atomic.Pointer[error]
	outbox := &fakeCollector{name: "outbox", value: 1}
	inbox := &fakeCollector{name: "inbox", value: 2}
	src := NewSource(SourceOptions{Kind: "database", Name: "orders", MinInterval: time.Second, Now: clk.now, Logger: logger,
		Probe: func(context.Context) error {
			if p := probeErr.Load(); p != nil {
				return *p
			}
			return nil
		},
		Collectors: []collectors.Collector{outbox, inbox}})
	poll := func() *Snapshot { clk.advance(time.Minute); return src.Refresh(context.Background()) }
	poll()
	for i := 0; i < 12; i++ {
		var err error
		switch i % 3 {
		case 0:
			err = fmt.Errorf("database orders: read tcp 127.0.0.1:%d->127.0.0.1:43793: %w", 40000+i, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET})
		case 1:
			err = fmt.Errorf("database orders: %w", io.ErrUnexpectedEOF)
		case 2:
			err = fmt.Errorf("database orders: dial tcp 127.0.0.1:43793: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
		}
		probeErr.Store(&err)
		if snap := poll(); snap.Up || len(snap.Data) != 0 {
			t.Fatalf("poll %d: up %v with %d series during the outage", i, snap.Up, len(snap.Data))
		}
	}
	// The source comes back, but mid-collection the connection is lost
	// again: the source is down, the collectors after the failing one do
	// not run, and it is the same outage (no new warning).
	probeErr.Store(nil)
	outbox.err = fmt.Errorf("database orders: read tcp 127.0.0.1:50388->127.0.0.1:43793: %w", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET})
	inbox.calls.Store(0)
	if snap := poll(); snap.Up || len(snap.Data) != 0 || inbox.calls.Load() != 0 {
		t.Fatalf("connection lost mid-collection: up %v, %d series, inbox ran %d times", snap.Up, len(snap.Data), inbox.calls.Load())
	}
	outbox.err = nil
	if snap := poll(); !snap.Up || len(snap.Data) != 2 {
		t.Fatalf("after the outage: up %v with %d series", snap.Up, len(snap.Data))
	}
	poll()
	out := logs()
	if n := strings.Count(out, "level=WARN"); n != 1 {
		t.Errorf("%d warnings for one outage of 13 polls, want 1:\n%s", n, out)
	}
	for _, want := range []string{
		`level=WARN msg="source unreachable; its series are dropped until it answers" kind=database name=orders collector=connect cause=unreachable`,
		`level=INFO msg="source recovered" kind=database name=orders cause=unreachable failed_for=13m0s failed_collections=13`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "level=INFO"); n != 1 {
		t.Errorf("%d info lines, want one for the end of the outage:\n%s", n, out)
	}
}

// TestSlowCollectorCannotStarveTheOthers: a collector that hangs is cut at
// its own deadline, the collection's timeout less the time kept for the
// collectors after it, which still run and succeed within the timeout;
// the hanging one fails alone, logged once while it repeats.
func TestSlowCollectorCannotStarveTheOthers(t *testing.T) {
	logger, logs := logCapture(slog.LevelInfo)
	clk := &clock{t: time.Unix(1000, 0)}
	slow := &fakeCollector{name: "outbox", release: make(chan struct{})} // never released: waits for its deadline
	after := &fakeCollector{name: "inbox", value: 1}
	join := &fakeCollector{name: "idempotency_join", value: 2}
	const timeout = 300 * time.Millisecond
	src := NewSource(SourceOptions{Kind: "database", Name: "orders", MinInterval: time.Second, Timeout: timeout, Now: clk.now, Logger: logger,
		Probe: func(context.Context) error { return nil }, Collectors: []collectors.Collector{slow, after, join}})
	for i := 0; i < 3; i++ {
		clk.advance(time.Minute)
		start := time.Now()
		snap := src.Refresh(context.Background())
		if took := time.Since(start); took > timeout+100*time.Millisecond {
			t.Fatalf("collection %d took %s, beyond the timeout %s", i, took, timeout)
		}
		errs := map[string]error{}
		for _, r := range snap.Results {
			errs[r.Collector] = r.Err
		}
		if errs["outbox"] == nil || errs["inbox"] != nil || errs["idempotency_join"] != nil {
			t.Fatalf("collection %d: outbox %v, inbox %v, join %v; want only the hanging outbox to fail", i, errs["outbox"], errs["inbox"], errs["idempotency_join"])
		}
	}
	out := logs()
	if n := strings.Count(out, "level=WARN"); n != 1 || !strings.Contains(out, "collector=outbox cause=timeout") ||
		!strings.Contains(out, "collector ran past its own deadline") {
		t.Errorf("%d warnings for three cut collections, want 1 naming the outbox with cause=timeout:\n%s", n, out)
	}
	got := gatherText(t, NewSet(nil, src))
	for _, want := range []string{
		`workflow_exporter_collector_up{collector="outbox",name="orders",source="database"} 0`,
		`workflow_exporter_collector_up{collector="inbox",name="orders",source="database"} 1`,
		`workflow_exporter_collector_up{collector="idempotency_join",name="orders",source="database"} 1`,
		`workflow_exporter_source_up{name="orders",source="database"} 1`,
		`test_value{c="inbox"} 1`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
}

// TestCollectorDeadlines checks the reserves from the deadlines the
// collectors get: between two consecutive collectors' deadlines lies the
// reserve of the second; the last one's deadline is the collection's.
// Before a collector has run its reserve is the least (timeout/2n here);
// then twice its peak, at most timeout/n: a collector cut by its deadline
// counts as having needed all it was given.
func TestCollectorDeadlines(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	deadlines := map[string]time.Time{}
	record := func(name string, work time.Duration) collectors.Collector {
		return collectorFunc{name, func(ctx context.Context) error {
			deadlines[name], _ = ctx.Deadline()
			if work == 0 {
				return nil
			}
			select {
			case <-time.After(work):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}}
	}
	// Timeout 400 ms, 4 collectors: reserves between 50 and 100 ms. b
	// hangs until its deadline; d works 80 ms.
	const timeout = 400 * time.Millisecond
	src := NewSource(SourceOptions{Kind: "camunda", Name: "main", MinInterval: time.Second, Timeout: timeout, Now: clk.now,
		Collectors: []collectors.Collector{record("a", 0), record("b", time.Hour), record("c", 0), record("d", 80*time.Millisecond)}})
	reserves := func() []time.Duration {
		return []time.Duration{deadlines["b"].Sub(deadlines["a"]), deadlines["c"].Sub(deadlines["b"]), deadlines["d"].Sub(deadlines["c"])}
	}
	for i, want := range [][]time.Duration{
		{50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond},
		// b was cut (it needed all of its 300 ms): 100; c ran for nothing:
		// 50; d ran 80 ms: 100.
		{100 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond},
	} {
		clk.advance(time.Minute)
		snap := src.Refresh(context.Background())
		if got := reserves(); !slices.Equal(got, want) {
			t.Fatalf("collection %d: reserves of b, c, d %v, want %v", i, got, want)
		}
		for _, r := range snap.Results {
			if (r.Err != nil) != (r.Collector == "b") {
				t.Fatalf("collection %d: %s failed with %v; only b should", i, r.Collector, r.Err)
			}
		}
	}
}

// collectorFunc is a collector made of a function.
type collectorFunc struct {
	name string
	f    func(context.Context) error
}

func (c collectorFunc) Name() string { return c.name }
func (c collectorFunc) Collect(ctx context.Context, _ *collectors.Sink) ([]prometheus.Metric, error) {
	return nil, c.f(ctx)
}

// TestCollectorIgnoringItsContextTimesTheCollectionOut: a collector that
// overruns its deadline (it ignores its context) leaves the ones after it
// no time: they fail at once, as a timeout of the collection, logged once.
func TestCollectorIgnoringItsContextTimesTheCollectionOut(t *testing.T) {
	logger, logs := logCapture(slog.LevelInfo)
	clk := &clock{t: time.Unix(1000, 0)}
	stubborn := collectorFunc{"outbox", func(context.Context) error { time.Sleep(60 * time.Millisecond); return nil }}
	after := &fakeCollector{name: "inbox", value: 1}
	src := NewSource(SourceOptions{Kind: "database", Name: "orders", MinInterval: time.Second, Timeout: 40 * time.Millisecond, Now: clk.now, Logger: logger,
		Collectors: []collectors.Collector{stubborn, after}})
	for i := 0; i < 2; i++ {
		clk.advance(time.Minute)
		src.Refresh(context.Background())
	}
	out := logs()
	if n := strings.Count(out, "level=WARN"); n != 1 || !strings.Contains(out, "collection timed out") {
		t.Errorf("%d warnings, want 1 saying the collection timed out:\n%s", n, out)
	}
	if got := gatherText(t, NewSet(nil, src)); !strings.Contains(got, `workflow_exporter_collector_up{collector="inbox",name="orders",source="database"} 0`) {
		t.Errorf("inbox not down after a collection that left it no time:\n%s", got)
	}
}

// TestCloseCancelsTheRunningCollection: Close cancels a collection in
// flight, waits for it, keeps the last snapshot and starts no other.
func TestCloseCancelsTheRunningCollection(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	fc := &fakeCollector{name: "outbox", value: 1}
	logger, logs := logCapture(slog.LevelDebug)
	src := NewSource(SourceOptions{Kind: "database", Name: "orders", MinInterval: time.Second, Timeout: time.Hour, Now: clk.now, Collectors: []collectors.Collector{fc}, Logger: logger})
	first := src.Refresh(context.Background())
	fc.release = make(chan struct{}) // the next collection hangs until cancelled
	clk.advance(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	src.Refresh(ctx)
	start := time.Now()
	closeCtx, cancelClose := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelClose()
	src.Close(closeCtx)
	if took := time.Since(start); took > time.Second {
		t.Fatalf("Close took %s with a collection in flight", took)
	}
	if src.Current() != first {
		t.Fatal("the cancelled collection replaced the last snapshot")
	}
	if out := logs(); out != "" {
		t.Errorf("a collection cancelled by Close was logged as a failure:\n%s", out)
	}
	clk.advance(time.Minute)
	calls := fc.calls.Load()
	src.Refresh(context.Background())
	if fc.calls.Load() != calls {
		t.Fatal("a closed source collected again")
	}
}

// slowOnce takes most of the collection's timeout at its first collection
// and none after: its peak makes it reserve the whole timeout.
type slowOnce struct {
	name string
	took time.Duration
	n    atomic.Int32
}

func (s *slowOnce) Name() string { return s.name }
func (s *slowOnce) Collect(ctx context.Context, _ *collectors.Sink) ([]prometheus.Metric, error) {
	if s.n.Add(1) == 1 {
		select {
		case <-time.After(s.took):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return []prometheus.Metric{prometheus.MustNewConstMetric(testDesc, prometheus.GaugeValue, 1, s.name)}, nil
}

// TestProbeKeepsItsShareAfterASlowCollection: a source's only collector
// once took most of the timeout, so it reserves all of it (twice its peak,
// at most timeout/1); the probe of the next collection still gets its own
// share and succeeds (it had none: the source was called unreachable at
// the next collection after a slow one).
func TestProbeKeepsItsShareAfterASlowCollection(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	const timeout = 400 * time.Millisecond
	slow := &slowOnce{name: "outbox", took: 300 * time.Millisecond}
	probe := func(ctx context.Context) error {
		// A probe needs a little time: a round trip to the source.
		select {
		case <-time.After(5 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	src := NewSource(SourceOptions{Kind: "database", Name: "orders", MinInterval: time.Second, Timeout: timeout, Now: clk.now,
		Probe: probe, Collectors: []collectors.Collector{slow}})
	for i := 0; i < 2; i++ {
		clk.advance(time.Minute)
		snap := src.Refresh(context.Background())
		if !snap.Up {
			t.Fatalf("collection %d: source down: %+v", i, snap.Results)
		}
	}
}
