package dashboards

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/test/harness/promtest"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// Label values the panels select on; every other label gets "x".
var syntheticValues = map[string][]string{
	"state":  {"waiting", "locked", vocab.StateRetriesExhausted, vocab.StateLockExpired},
	"status": {vocab.StatusUnknownOutcome, "STARTED", "IGNORED_DUPLICATE", "FAILED_FINAL", "unreserved", vocab.StatusFailedRetryable},
	"source": {string(catalog.SourceCamunda), string(catalog.SourceDatabase), string(catalog.SourceDelivery)},
}

// syntheticExposition renders one or more series of every catalog metric, plus
// the Go and process series the exporter dashboard reads, in the text format.
// Counters grow with n so rates are positive.
func syntheticExposition(n int64) string {
	var b strings.Builder
	for _, m := range catalog.All() {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", m.Name, m.Help, m.Name, m.Type)
		for _, ls := range labelSets(m.Labels) {
			switch m.Type {
			case catalog.Histogram:
				for i, le := range []string{"1", "10", "+Inf"} {
					fmt.Fprintf(&b, "%s_bucket{%s} %d\n", m.Name, join(ls, `le="`+le+`"`), n*int64(i+1))
				}
				fmt.Fprintf(&b, "%s_sum{%s} %d\n%s_count{%s} %d\n", m.Name, join(ls), 5*n, m.Name, join(ls), 3*n)
			case catalog.Counter:
				fmt.Fprintf(&b, "%s{%s} %d\n", m.Name, join(ls), 10*n)
			default:
				fmt.Fprintf(&b, "%s{%s} 1\n", m.Name, join(ls))
			}
		}
	}
	fmt.Fprintf(&b, "# TYPE %s gauge\n%s 12345678\n", processResidentMemory, processResidentMemory)
	fmt.Fprintf(&b, "# TYPE %s counter\n%s %d\n", processCPUSeconds, processCPUSeconds, n)
	fmt.Fprintf(&b, "# TYPE %s gauge\n%s 12\n", goGoroutines, goGoroutines)
	return b.String()
}

func join(parts ...any) string {
	var out []string
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			out = append(out, v)
		case []string:
			out = append(out, v...)
		}
	}
	return strings.Join(out, ",")
}

// labelSets returns the label sets to expose for a metric: the product of the
// special values of its labels, "x" for the rest.
func labelSets(labels []string) [][]string {
	sets := [][]string{{}}
	for _, l := range labels {
		values := syntheticValues[l]
		if len(values) == 0 {
			values = []string{"x"}
		}
		var next [][]string
		for _, s := range sets {
			for _, v := range values {
				next = append(next, append(append([]string{}, s...), fmt.Sprintf("%s=%q", l, v)))
			}
		}
		sets = next
	}
	return sets
}

// TestLiveCheckWithRealPrometheus starts the Prometheus server of each
// flavor (Debian's 2.42, as the end-to-end test uses, and the current 3.x)
// scraping a fake exporter that serves every catalog metric, with one
// always-firing alert of the bundle, and requires every panel query to
// return data. It proves the queries parse in those Prometheus versions and
// select what the catalog says the exporter serves; the end-to-end test
// repeats it against the real exporter.
func TestLiveCheckWithRealPrometheus(t *testing.T) {
	qs := mustQueries(t)
	rules := `groups:
  - name: dashboard-test
    interval: 1s
    rules:
      - alert: WorkflowDashboardTestAlwaysFiring
        expr: vector(1)
        labels:
          severity: critical
`
	sloRules := promtest.SLORules(t, promtest.LiveSLOs)
	promtest.Each(t, promtest.Flavors(t), func(t *testing.T, f promtest.Flavor) {
		var scrapes atomic.Int64
		exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := scrapes.Add(1)
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			fmt.Fprint(w, syntheticExposition(n))
		}))
		defer exporter.Close()
		prom := f.StartPrometheus(t, promtest.PrometheusConfig(strings.TrimPrefix(exporter.URL, "http://"), ""), promtest.Files{"rules.yml": rules, promtest.SLORulesFile: sloRules})
		// Wait until Prometheus has scraped a few times and the alert fires.
		var failed []LiveResult
		checked := false
		client := &http.Client{Timeout: 10 * time.Second}
		for deadline := time.Now().Add(45 * time.Second); time.Now().Before(deadline); {
			time.Sleep(time.Second)
			if scrapes.Load() < 4 {
				continue
			}
			rs, err := LiveCheck(t.Context(), client, prom.URL, "1m", qs)
			if err != nil {
				t.Fatal(err)
			}
			checked = true
			failed = Failed(rs)
			if len(failed) == 0 {
				break
			}
		}
		if !checked {
			t.Fatalf("Prometheus scraped the fake exporter only %d times in time; nothing was checked", scrapes.Load())
		}
		sort.Slice(failed, func(i, j int) bool { return failed[i].String() < failed[j].String() })
		for _, r := range failed {
			t.Errorf("no data: %s", r)
		}
		t.Logf("%d of %d panel queries returned data from Prometheus after %d scrapes", len(qs)-len(failed), len(qs), scrapes.Load())
	})
}
