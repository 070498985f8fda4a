// Package reliability holds the tests of docs/reliability.md: the fault
// matrix of each source kind against real PostgreSQL servers and a real
// Camunda engine (behind a fault proxy for what an engine cannot be made to
// do), the leak tests, the load test, the read-only role. The exporter runs
// in-process, built as the binary builds it (internal/sources), served by
// the binary's metrics handler, with every log line, error and page it
// produces kept for the secrets scan.
package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
	"github.com/workflow-exporter/workflow-exporter/internal/sources"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m, camundatest.StopShared, pgtest.StopShared) }

// outputs keeps everything the exporter showed the world in a test: log
// lines, the errors of its collections, the pages it served.
type outputs struct {
	mu    sync.Mutex
	texts []string
	logs  []*testkit.LogBuffer
}

func (o *outputs) add(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.texts = append(o.texts, s)
}

// scan fails the test for every secret found in any output. It also fails
// when there is too little output to prove anything.
func (o *outputs) scan(t *testing.T, secrets ...string) {
	t.Helper()
	o.mu.Lock()
	all := append([]string(nil), o.texts...)
	for _, l := range o.logs {
		all = append(all, l.String())
	}
	o.mu.Unlock()
	n := 0
	for _, s := range all {
		n += len(s)
	}
	if n < 10000 {
		t.Fatalf("the secrets scan saw only %d bytes of output; it would prove nothing", n)
	}
	for _, secret := range secrets {
		if len(secret) < 6 {
			t.Fatalf("secret %q too short to scan for", secret)
		}
		for _, s := range all {
			if i := strings.Index(s, secret); i >= 0 {
				t.Errorf("a secret appears in the output: ...%s...", s[max(0, i-200):min(len(s), i+len(secret)+50)])
				break
			}
		}
	}
	t.Logf("secrets scan: %d secrets, %d outputs, %d bytes", len(secrets), len(all), n)
}

// rig is the exporter under test.
type rig struct {
	t    testing.TB
	mgr  *sources.Manager
	logs *testkit.LogBuffer
	url  string
	out  *outputs
}

// newRig builds the sources of the config document as the binary does and
// serves them on a test server with the binary's metrics handler. Logs are
// JSON at debug level.
func newRig(t testing.TB, doc string, out *outputs) *rig {
	t.Helper()
	cfg, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("config: %v\n%s", err, doc)
	}
	logs := &testkit.LogBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	mgr := sources.New(sources.Options{Logger: logger})
	if _, err := mgr.Apply(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(mgr.Set())
	srv := httptest.NewServer(poll.Handler(mgr.Set(), reg, poll.HandlerOptions{DefaultTimeout: 10 * time.Second, Offset: 500 * time.Millisecond}))
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		mgr.Close(ctx)
	})
	if out == nil {
		out = &outputs{}
	}
	out.mu.Lock()
	out.logs = append(out.logs, logs)
	out.mu.Unlock()
	return &rig{t: t, mgr: mgr, logs: logs, url: srv.URL + "/metrics", out: out}
}

// page is one scrape: every sample by its series ("name{k="v",...}", labels
// sorted).
type page map[string]float64

// scrape scrapes like Prometheus with the given scrape timeout.
func (r *rig) scrape(timeout time.Duration) (page, error) {
	req, err := http.NewRequest(http.MethodGet, r.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", fmt.Sprintf("%.3f", timeout.Seconds()))
	ctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape: HTTP %d\n%s", resp.StatusCode, body)
	}
	r.out.add(string(body))
	return parsePage(string(body))
}

func parsePage(body string) (page, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	out := page{}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := make([]string, 0, len(m.GetLabel()))
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			sort.Strings(labels)
			key := name + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				out[key] = float64(m.GetHistogram().GetSampleCount())
			default:
				out[key] = m.GetUntyped().GetValue()
			}
		}
	}
	return out, nil
}

// collect waits past min_interval (1ms in these tests), scrapes, and keeps
// the errors of the collection for the secrets scan.
func (r *rig) collect() page {
	r.t.Helper()
	time.Sleep(3 * time.Millisecond)
	p, err := r.scrape(60 * time.Second)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, src := range r.mgr.Set().Sources() {
		if snap := src.Current(); snap != nil {
			for _, res := range snap.Results {
				if res.Err != nil {
					r.out.add(res.Err.Error())
				}
			}
		}
	}
	return p
}

// selfMetrics are the exporter's own families: up, errors, durations and
// the like, which stay while data series come and go.
var selfMetrics = map[string]bool{
	catalog.ExporterSourceUp: true, catalog.ExporterCollectorUp: true, catalog.ExporterCollectDuration: true,
	catalog.ExporterCollectErrors: true, catalog.ExporterLastSuccessfulCollect: true,
	catalog.ExporterLabelValuesFolded: true, catalog.CamundaUp: true,
	// What the exporter holds in memory, not what it read: it stays through
	// a source's fault (the memory is still held).
	catalog.ExporterRememberedEntries: true, catalog.ExporterCollectionSkipped: true,
}

// data returns the data series of the page: what the collectors read from
// the sources, without the exporter's self-metrics.
func (p page) data() page {
	out := page{}
	for k, v := range p {
		if !selfMetrics[k[:strings.IndexByte(k, '{')]] {
			out[k] = v
		}
	}
	return out
}

// get returns the sample of a series given as name and label pairs.
func (p page) get(name string, kv ...string) (float64, bool) {
	labels := make([]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		labels = append(labels, fmt.Sprintf("%s=%q", kv[i], kv[i+1]))
	}
	sort.Strings(labels)
	v, ok := p[name+"{"+strings.Join(labels, ",")+"}"]
	return v, ok
}

// family returns the series of one metric family.
func (p page) family(name string) page {
	out := page{}
	for k, v := range p {
		if strings.HasPrefix(k, name+"{") {
			out[k] = v
		}
	}
	return out
}

// keys returns the series of the page, sorted.
func (p page) keys() []string { return slices.Sorted(maps.Keys(p)) }

// logLine is one JSON log line of the exporter.
type logLine map[string]any

func (l logLine) str(k string) string { s, _ := l[k].(string); return s }

// logLines returns the log lines at level (DEBUG, INFO, WARN, ERROR) from
// offset on (a length of r.logs.String() taken earlier).
func (r *rig) logLines(from int, level string) []logLine {
	r.t.Helper()
	var out []logLine
	for _, line := range strings.Split(r.logs.String()[from:], "\n") {
		if line == "" {
			continue
		}
		var l logLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			r.t.Fatalf("log line is not JSON: %v\n%s", err, line)
		}
		if l.str("level") == level {
			out = append(out, l)
		}
	}
	return out
}

func (r *rig) logOffset() int { return len(r.logs.String()) }

// missingAndExtra compares two sets of series.
func missingAndExtra(want, got page) (missing, extra []string) {
	for _, k := range want.keys() {
		if _, ok := got[k]; !ok {
			missing = append(missing, k)
		}
	}
	for _, k := range got.keys() {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	return missing, extra
}
