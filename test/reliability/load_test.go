//go:build !pgonly

package reliability

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/sim/faultproxy"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

// TestLoad: 50 scrapers for a minute against a real PostgreSQL and a real
// engine. The servers' own counts (pg_stat_statements for the database,
// requests counted at a proxy for the engine) show at most one collection
// per min_interval per source, and every scrape answers within its scrape
// timeout, although each engine collection takes longer than a scrape may
// wait. LOAD_DURATION shortens or lengthens the minute.
func TestLoad(t *testing.T) {
	const (
		scrapers      = 50
		minInterval   = 2 * time.Second
		scrapeTimeout = 2 * time.Second // the budget is 1.5s (offset 500ms)
		engineDelay   = 2 * time.Second // on one endpoint: every collection outlasts the budget
	)
	duration := time.Minute
	if d, err := time.ParseDuration(os.Getenv("LOAD_DURATION")); err == nil && d > 0 {
		duration = d
	}

	srv := pgtest.NewServer(t, "shared_preload_libraries=pg_stat_statements")
	d := newFaultDB(t, srv)
	d.exec(t, "CREATE EXTENSION pg_stat_statements")
	e := camundatest.Shared(t, camundatest.FlavorCamunda)
	topic, _ := engineWithTasks(t, e)
	proxy := faultproxy.Start(t, e.BaseURL, faultproxy.Options{})
	// The exporter as it is deployed: the binary, built without the race
	// detector (which would multiply its CPU time several times over and
	// measure the detector, not the exporter).
	x := exportertest.Start(t, exportertest.Options{Config: fmt.Sprintf(`
camunda:
  - {name: main, url: %q, min_interval: %s, topics: [%s]}
databases:
  - {name: orders, dsn_env: WFX_REL_DSN, min_interval: %s}
`, proxy.URL, minInterval, topic, minInterval), Env: []string{"WFX_REL_DSN=" + d.dsn}})
	if body := x.Get(t, "/metrics"); !strings.Contains(body, `workflow_exporter_source_up{name="orders",source="database"} 1`) || !strings.Contains(body, `camunda_up{engine="main"} 1`) {
		t.Fatalf("sources not up before the load:\n%s\n%s", body, x.Log)
	}
	must(t, proxy.Set(faultproxy.Fault{Kind: faultproxy.Slow, Endpoint: "/incident/count", Delay: engineDelay}))
	// Every collection of the database runs its probe once: its calls are
	// the collections, counted by the server.
	probeCalls := func() int64 {
		var n int64
		if err := d.admin.QueryRow(context.Background(), `SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements s
			JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = $1 AND s.query IN ('SELECT 1', 'SELECT $1')`, d.role).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Wait out min_interval, so the load starts with stale snapshots.
	time.Sleep(minInterval)
	pgBefore := probeCalls()
	proxy.Counts()

	type stats struct {
		n, failed int
		worst     time.Duration
		slow      []string
		took      []time.Duration
	}
	var mu sync.Mutex
	var total stats
	start := time.Now()
	stop := start.Add(duration)
	var wg sync.WaitGroup
	for i := 0; i < scrapers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{}
			var s stats
			// Scrapers are not in step: they start within the first 1.5s.
			// (Fifty scrapes whose deadlines fall in the same millisecond
			// render fifty pages at once: under the race detector, on two
			// cores, that alone takes longer than the 500ms offset.)
			time.Sleep(time.Duration(rand.IntN(1500)) * time.Millisecond)
			for time.Now().Before(stop) {
				req, _ := http.NewRequest(http.MethodGet, x.URL+"/metrics", nil)
				req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", fmt.Sprint(scrapeTimeout.Seconds()))
				t0 := time.Now()
				resp, err := client.Do(req)
				var body []byte
				if err == nil {
					body, err = io.ReadAll(resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("HTTP %d", resp.StatusCode)
					}
				}
				took := time.Since(t0)
				s.n++
				s.took = append(s.took, took)
				if err != nil || !strings.Contains(string(body), `workflow_exporter_source_up{name="orders",source="database"} 1`) ||
					!strings.Contains(string(body), `camunda_up{engine="main"} 1`) {
					s.failed++
				}
				if took > s.worst {
					s.worst = took
				}
				if took > scrapeTimeout {
					s.slow = append(s.slow, fmt.Sprintf("%s at %s", took.Round(time.Millisecond), t0.Sub(start).Round(time.Millisecond)))
				}
				// Scrapers that scrape about once a second, not in step.
				time.Sleep(time.Duration(500+rand.IntN(1000)) * time.Millisecond)
			}
			mu.Lock()
			defer mu.Unlock()
			total.n += s.n
			total.failed += s.failed
			total.worst = max(total.worst, s.worst)
			total.slow = append(total.slow, s.slow...)
			total.took = append(total.took, s.took...)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	engine := proxy.Counts()["/version"]
	database := probeCalls() - pgBefore

	// A source collects when a scrape finds its snapshot older than
	// min_interval, so the starts of its collections are at least
	// min_interval apart: at most elapsed/min_interval + 1 of them. The
	// lower bound says the scrapers kept both sources busy.
	most := int(elapsed/minInterval) + 1
	least := int(float64(elapsed/minInterval) / 2)
	slices.Sort(total.took)
	pct := func(p float64) time.Duration {
		return total.took[int(p*float64(len(total.took)-1))].Round(time.Millisecond)
	}
	t.Logf("%d scrapers, %s: %d scrapes (median %s, 99th percentile %s, worst %s; scrape timeout %s); collections: engine %d, database %d (at most %d, min_interval %s)",
		scrapers, elapsed.Round(time.Millisecond), total.n, pct(0.5), pct(0.99), total.worst.Round(time.Millisecond), scrapeTimeout, engine, database, most, minInterval)
	// Each scraper waits at most the scrape timeout and sleeps at most 1.5s.
	if total.n < scrapers*int(elapsed/(scrapeTimeout+1500*time.Millisecond)) {
		t.Errorf("only %d scrapes in %s: the load was not there", total.n, elapsed)
	}
	if len(total.slow) > 0 {
		t.Errorf("%d scrapes took longer than their %s timeout: %v", len(total.slow), scrapeTimeout, total.slow[:min(10, len(total.slow))])
	}
	if total.failed > 0 {
		t.Errorf("%d of %d scrapes failed or served a source down", total.failed, total.n)
	}
	for name, n := range map[string]int64{"engine": int64(engine), "database": database} {
		if n > int64(most) || n < int64(least) {
			t.Errorf("%s: %d collections in %s with min_interval %s, want between %d and %d", name, n, elapsed, minInterval, least, most)
		}
	}
}
