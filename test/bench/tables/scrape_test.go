package benchtables

// BenchmarkScrapeFromSnapshot measures what a scrape costs when it is served
// from the snapshot (within min_interval, no database work), with about 10k
// series, and the exporter's resident memory at that size.
//
// Setup: one database with the seed tables and the exporter's indexes
// (deploy/sql/001 and 003), holding open and recent rows with enough
// distinct scopes, message kinds, event kinds and activities for about 10k
// series (seriesSQL), and one database with the same tables and no rows.
// The real binary, built from this tree, runs as child processes, each with
// a config file as a user writes it:
//
//   - snapshot: the 10k-series database, min_interval 1h, so every scrape
//     after the first is served from the snapshot;
//   - collecting: the same database, min_interval 1ms, so every scrape
//     runs a collection first (the cost the snapshot saves);
//   - idle: the database without rows, min_interval 1h.
//
// Baseline: constserver, a plain client_golang registry with the Go and
// process collectors and the snapshot exporter's own series (read from its
// first scrape) as const metrics, served by promhttp with the same options.
//
// One HTTP client scrapes /metrics of each target in turn, over one
// keep-alive connection per target, with gzip and the text format, as
// Prometheus does; -scrape-warmup untimed rounds, then -scrapes timed
// rounds, the order of the targets rotating from round to round. Latency:
// from sending the request to the last byte of the decompressed body. Then
// VmRSS and VmHWM of every process from /proc/<pid>/status.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/test/bench/benchkit"
	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

var (
	scrapesFlag      = flag.Int("scrapes", 1000, "timed scrapes per target in the scrape benchmark (p50, p90, p99 are reported)")
	scrapeWarmupFlag = flag.Int("scrape-warmup", 20, "untimed scrapes per target before the timed ones")
)

// The 10k-series state: distinct label tuples per table. With the seed's
// statuses an idempotency scope has 20 series (3 gauges x 4 open statuses,
// 7 transition counters, 1 conflict counter), an inbox (source_system,
// message_type) 11 (2 gauges x 4 open statuses, 3 processed counters), an
// outbox (aggregate_type, event_type) 5, a processed-job (engine,
// activity_id, status) 1.
const (
	seriesScopes      = 250
	seriesInboxKinds  = 200
	seriesOutboxKinds = 500
	seriesJobKinds    = 220
	// seriesLabelLimit is the config's label_value_limit: above every tuple
	// count, so nothing folds into "other".
	seriesLabelLimit = 500
)

// seriesSQL fills the 10k-series database: per idempotency scope one record
// in each open status and one completed in the last minute; per inbox kind
// one message in each open status and one processed in the last minute; per
// outbox kind two pending events, one failed and one published in the last
// minute; per processed-job kind two rows in the last minute.
var seriesSQL = []string{
	`INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at)
SELECT 'scope-' || s, 'open-' || s || '-' || st, 'order-' || s, 'task-' || s || '-' || st, st, now() - make_interval(mins => s % 60)
FROM generate_series(1, {scopes}) s, unnest(ARRAY['STARTED', 'SIDE_EFFECT_SUBMITTED', 'FAILED_RETRYABLE', 'UNKNOWN_OUTCOME']) st`,
	`INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at, completed_at)
SELECT 'scope-' || s, 'done-' || s, 'order-' || s, 'task-done-' || s, 'COMPLETED', now() - make_interval(secs => s % 60), now() - make_interval(secs => s % 60)
FROM generate_series(1, {scopes}) s`,
	`INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at)
SELECT 'source-' || (k % 10), 'open-' || k || '-' || st, 'Type' || k, 'corr-' || k, st, now() - make_interval(secs => k)
FROM generate_series(1, {inbox}) k, unnest(ARRAY['RECEIVED', 'PROCESSING', 'FAILED_RETRYABLE', 'UNKNOWN_OUTCOME']) st`,
	`INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at, processed_at)
SELECT 'source-' || (k % 10), 'done-' || k, 'Type' || k, 'corr-' || k, 'PROCESSED', now() - make_interval(secs => k % 60 + 1), now() - make_interval(secs => k % 60)
FROM generate_series(1, {inbox}) k`,
	`INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at, published_at)
SELECT gen_random_uuid(), 'Agg' || (k % 20), 'agg-' || k || '-' || n, 'Event' || k, 'k-' || k || '-' || n, '{"amount": 1}',
	CASE n WHEN 3 THEN 'FAILED' WHEN 4 THEN 'PUBLISHED' ELSE 'PENDING' END, now() - make_interval(secs => k % 60 + 1),
	CASE n WHEN 4 THEN now() - make_interval(secs => k % 60) END
FROM generate_series(1, {outbox}) k, generate_series(1, 4) n`,
	`INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at)
SELECT 'main', 'job-' || k || '-' || n, 'pi-' || k || '-' || n, 'activity-' || (k / 2), 'worker-' || (n % 4),
	CASE k % 2 WHEN 0 THEN 'COMPLETED' ELSE 'FAILED' END, now() - make_interval(secs => k % 60)
FROM generate_series(0, {jobs} - 1) k, generate_series(1, 2) n`,
}

// scrapeTarget is one process the client scrapes.
type scrapeTarget struct {
	name    string
	pid     int
	url     string
	client  *http.Client
	samples []float64 // ms
	bytes   int64     // decompressed body of the last scrape
	gzip    bool
	last    []byte // body of the last untimed scrape
}

func BenchmarkScrapeFromSnapshot(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	exporterBin := exportertest.Build(b)
	constBin := testkit.GoBuild(b, "./test/bench/tables/constserver")

	start := time.Now()
	seriesURL, idleURL := pgtest.NewDatabase(b), pgtest.NewDatabase(b)
	for _, u := range []string{seriesURL, idleURL} {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range []string{"001_reference_schema.sql", "003_exporter_indexes.sql"} {
			if err := pgtest.ExecFile(ctx, conn, filepath.Join("..", "..", "deploy", "sql", f), nil); err != nil {
				b.Fatal(err)
			}
		}
		if u == seriesURL {
			r := strings.NewReplacer("{scopes}", strconv.Itoa(seriesScopes), "{inbox}", strconv.Itoa(seriesInboxKinds),
				"{outbox}", strconv.Itoa(seriesOutboxKinds), "{jobs}", strconv.Itoa(seriesJobKinds))
			for _, q := range seriesSQL {
				pgtest.Exec(b, conn, r.Replace(q))
			}
			pgtest.Exec(b, conn, "VACUUM (ANALYZE)")
		}
		conn.Close(ctx)
	}

	exporter := func(name, url, minInterval string) *scrapeTarget {
		y := fmt.Sprintf("databases:\n  - name: bench\n    dsn: %q\n    min_interval: %s\n    label_value_limit: %d\n", url, minInterval, seriesLabelLimit)
		x := exportertest.Start(b, exportertest.Options{Binary: exporterBin, Config: y, Flags: []string{"--log.level", "warn"}})
		return newTarget(name, x.Server)
	}
	snapshot := exporter("snapshot", seriesURL, "1h")
	collecting := exporter("collecting", seriesURL, "1ms")
	idle := exporter("idle", idleURL, "1h")
	// The first scrapes collect; the snapshot exporter's output is the
	// baseline's input.
	for _, t := range []*scrapeTarget{snapshot, collecting, idle} {
		if _, err := t.scrape(true); err != nil {
			b.Fatalf("%s: %v", t.name, err)
		}
	}
	if bytes.Contains(snapshot.last, []byte(`="other"`)) {
		b.Fatalf("a label value folded into \"other\": raise seriesLabelLimit\n%s", grepLines(snapshot.last, `="other"`))
	}
	firstCollect := sampleValue(snapshot.last, "workflow_exporter_last_successful_collect_timestamp_seconds")
	if firstCollect == "" {
		b.Fatalf("snapshot exporter: no successful collection\n%s", grepLines(snapshot.last, "workflow_exporter_"))
	}
	metricsFile := filepath.Join(dir, "snapshot.prom")
	if err := os.WriteFile(metricsFile, snapshot.last, 0o600); err != nil {
		b.Fatal(err)
	}
	addr := testkit.FreeAddr(b)
	constServer, err := testkit.StartServer(ctx, testkit.ServerOptions{Name: "baseline", Path: constBin, Args: []string{"-metrics", metricsFile, "-listen", addr},
		Addr: addr, Ready: "/-/ready", ReadyTimeout: 30 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = constServer.Stop() })
	baseline := newTarget("baseline", constServer)
	if _, err := baseline.scrape(true); err != nil {
		b.Fatalf("baseline: %v", err)
	}
	progress("scrape targets ready in %s", time.Since(start).Round(time.Second))

	// Committed transactions in the 10k-series database count the
	// collections: each is 5 (the probe and the four tables), and only the
	// collecting exporter should make any.
	stats, err := pgx.Connect(ctx, seriesURL)
	if err != nil {
		b.Fatal(err)
	}
	defer stats.Close(ctx)
	xacts := func() float64 {
		var n float64
		if err := stats.QueryRow(ctx, "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	xactsBefore := xacts()

	targets := []*scrapeTarget{snapshot, baseline, collecting, idle}
	start = time.Now()
	loadBefore := loadAverage()
	for round := 0; round < *scrapeWarmupFlag+*scrapesFlag; round++ {
		for i := range targets {
			t := targets[(i+round)%len(targets)]
			d, err := t.scrape(false)
			if err != nil {
				b.Fatalf("%s: %v", t.name, err)
			}
			if round >= *scrapeWarmupFlag {
				t.samples = append(t.samples, ms2(d))
			}
		}
	}
	loadAfter := loadAverage()
	progress("scraped in %s", time.Since(start).Round(time.Second))

	type memory struct{ rss, hwm float64 }
	mem := map[string]memory{}
	for _, t := range targets {
		rss, hwm, err := benchkit.ResidentMemory(t.pid)
		if err != nil {
			b.Fatal(err)
		}
		mem[t.name] = memory{rss, hwm}
	}
	// A last untimed scrape: series counts, the Go heap, and proof of which
	// scrapes collected.
	for _, t := range targets {
		if _, err := t.scrape(true); err != nil {
			b.Fatalf("%s: %v", t.name, err)
		}
	}
	if got := sampleValue(snapshot.last, "workflow_exporter_last_successful_collect_timestamp_seconds"); got != firstCollect {
		b.Fatalf("the snapshot exporter collected again (last success %s, then %s): min_interval did not hold", firstCollect, got)
	}
	// Backends report their transaction counts when idle, at the latest
	// after 10 s (PostgreSQL 15).
	time.Sleep(11 * time.Second)
	perScrape := (xacts() - xactsBefore) / float64(*scrapeWarmupFlag+*scrapesFlag)
	if perScrape < 5 {
		b.Fatalf("the collecting exporter did not collect on every scrape: %.2f transactions per scrape, want at least 5", perScrape)
	}

	w := os.Stdout
	fmt.Fprintf(w, "\n## Scrape latency and memory at 10k series\n\n")
	fmt.Fprintf(w, "date %s; commit %s; %d CPUs (GOMAXPROCS %d in the client process); %s/%s, %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"),
		benchkit.Commit(), runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(w, "load average (1, 5, 15 min) before scraping: %s; after: %s\n", loadBefore, loadAfter)
	fmt.Fprintf(w, "state: %d idempotency scopes, %d inbox kinds, %d outbox kinds, %d processed-job kinds; label_value_limit %d (nothing folds)\n",
		seriesScopes, seriesInboxKinds, seriesOutboxKinds, seriesJobKinds, seriesLabelLimit)
	fmt.Fprintf(w, "client: one keep-alive connection per target, gzip %s, text format; %d timed scrapes per target after %d warm-up, targets interleaved\n\n",
		yesNo(snapshot.gzip && baseline.gzip), *scrapesFlag, *scrapeWarmupFlag)
	base := baseline.samples
	fmt.Fprintln(w, "| target | series | body KB | p50 ms | p90 ms | p99 ms | p50 / baseline | p99 / baseline | RSS MB | peak RSS MB | Go heap in use MB |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	labels := map[string]string{
		"snapshot":   "exporter, served from the snapshot (min_interval 1h)",
		"baseline":   "baseline: plain registry, the same series as const metrics",
		"collecting": "exporter, collecting on every scrape (min_interval 1ms)",
		"idle":       "exporter, idle (tables empty)",
	}
	for _, t := range targets {
		heap, _ := strconv.ParseFloat(sampleValue(t.last, "go_memstats_heap_inuse_bytes"), 64)
		fmt.Fprintf(w, "| %s | %d | %.0f | %.2f | %.2f | %.2f | %.2fx | %.2fx | %.1f | %.1f | %.1f |\n", labels[t.name], seriesCount(t.last),
			float64(t.bytes)/1024, percentile(t.samples, 50), percentile(t.samples, 90), percentile(t.samples, 99),
			percentile(t.samples, 50)/percentile(base, 50), percentile(t.samples, 99)/percentile(base, 99),
			mem[t.name].rss, mem[t.name].hwm, heap/(1<<20))
	}
	fmt.Fprintf(w, "\nExporter memory at 10k series versus the idle exporter: RSS %.1f MB versus %.1f MB (%.2fx, +%.1f MB); peak RSS %.1f MB versus %.1f MB.\n",
		mem["snapshot"].rss, mem["idle"].rss, mem["snapshot"].rss/mem["idle"].rss, mem["snapshot"].rss-mem["idle"].rss, mem["snapshot"].hwm, mem["idle"].hwm)
	fmt.Fprintf(w, "Scrape from the snapshot versus a scrape that collects: p50 %.2f ms versus %.2f ms (%.1fx).\n",
		percentile(snapshot.samples, 50), percentile(collecting.samples, 50), percentile(collecting.samples, 50)/percentile(snapshot.samples, 50))
	fmt.Fprintf(w, "Collections: the snapshot exporter's last successful collection stayed at its first scrape's; the 10k-series database committed %.2f transactions per scrape round (a collection is 5).\n\n", perScrape)
}

// scrape GETs /metrics as Prometheus does and reads the whole body. keep
// stores the body in t.last.
func (t *scrapeTarget) scrape(keep bool) (time.Duration, error) {
	req, err := http.NewRequest(http.MethodGet, t.url+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "10")
	start := time.Now()
	resp, err := t.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	var dst io.Writer = io.Discard
	if keep {
		dst = &buf
	}
	n, err := io.Copy(dst, resp.Body)
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	t.bytes, t.gzip = n, resp.Uncompressed
	if keep {
		t.last = buf.Bytes()
	}
	return d, nil
}

// newTarget is a scrape target for a process serving /metrics, with a
// client of one keep-alive connection.
func newTarget(name string, s *testkit.Server) *scrapeTarget {
	return &scrapeTarget{name: name, pid: s.PID(), url: s.URL,
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}}
}

// seriesCount counts the samples of a text exposition: every line that is
// not a comment, as Prometheus counts series.
func seriesCount(body []byte) int {
	n := 0
	for line := range bytes.Lines(body) {
		if l := bytes.TrimSpace(line); len(l) > 0 && l[0] != '#' {
			n++
		}
	}
	return n
}

// sampleValue returns the value of the first sample of a metric (any
// labels), or "".
func sampleValue(body []byte, name string) string {
	for line := range bytes.Lines(body) {
		l := string(bytes.TrimSpace(line))
		if rest, ok := strings.CutPrefix(l, name); ok && (strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, "{")) {
			f := strings.Fields(l)
			return f[len(f)-1]
		}
	}
	return ""
}

func grepLines(body []byte, s string) string {
	var out []string
	for line := range bytes.Lines(body) {
		if bytes.Contains(line, []byte(s)) && len(out) < 20 {
			out = append(out, strings.TrimSpace(string(line)))
		}
	}
	return strings.Join(out, "\n")
}

// percentile is the nearest-rank percentile p (0-100) of v.
func percentile(v []float64, p float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(i, 0)]
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
