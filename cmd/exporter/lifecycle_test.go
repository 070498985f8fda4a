package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/sim/faultproxy"
	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

func runExporter(t *testing.T, doc string, env []string, flags ...string) *exportertest.Exporter {
	t.Helper()
	return exportertest.Start(t, exportertest.Options{Config: doc, Env: env, Flags: flags})
}

// scrape returns the metrics page, or "" when the scrape fails.
func scrape(x *exportertest.Exporter) string {
	req, _ := http.NewRequest(http.MethodGet, x.URL+"/metrics", nil)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "5")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	return string(b)
}

// waitLog waits until the log holds s, past offset from.
func waitLog(t *testing.T, x *exportertest.Exporter, from int, s string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(x.Log.String()[from:], s) {
		if time.Now().After(deadline) {
			t.Fatalf("the log has no %q:\n%s", s, x.Log.String()[from:])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sample returns the value of a series in a page, and whether it is there.
func sample(page, series string) (float64, bool) {
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, series+" ") {
			var v float64
			_, err := fmt.Sscan(strings.TrimPrefix(line, series+" "), &v)
			return v, err == nil
		}
	}
	return 0, false
}

// TestShutdownWithinItsBound: SIGTERM while every collection hangs (the
// engine never answers, the database query waits on a lock held by a
// migration) and a scrape waits for them: the exporter exits 0 within
// shutdownBound, the waiting scrape gets its answer, and the database
// query was cancelled on the server (no session of the exporter is left
// waiting on the lock).
func TestShutdownWithinItsBound(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	admin := pgtest.Connect(t, dsn)
	pgtest.ExecRepoFiles(t, admin, nil, "deploy/sql/001_reference_schema.sql")
	ctx := context.Background()
	tx, err := admin.Begin(ctx)
	must(t, err)
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, "LOCK TABLE event_outbox IN ACCESS EXCLUSIVE MODE")
	must(t, err)
	proxy := faultproxy.Start(t, "http://127.0.0.1:1/engine-rest", faultproxy.Options{})
	must(t, proxy.Set(faultproxy.Fault{Kind: faultproxy.Hang}))
	dbName := pgx.Identifier{admin.Config().Database}.Sanitize()
	x := runExporter(t, fmt.Sprintf(`
camunda:
  - {name: main, url: %q, timeout: 5m, request_timeout: 5m, min_interval: 1ms}
databases:
  - {name: orders, dsn_env: WFX_TEST_DSN, timeout: 5m, statement_timeout: 5m, lock_timeout: 5m, min_interval: 1ms, tables: {outbox: {}}}
`, proxy.URL), []string{"WFX_TEST_DSN=" + dsn})

	scraped := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, x.URL+"/metrics", nil)
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "120")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			scraped <- -1
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		scraped <- resp.StatusCode
	}()
	// From another session: the one holding the lock sees pg_stat_activity
	// as of its transaction's first look.
	watch := pgtest.Connect(t, dsn)
	waiting := func() int {
		var n int
		must(t, watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'workflow-exporter'
			AND datname = `+strings.ReplaceAll(dbName, `"`, `'`)+` AND wait_event_type = 'Lock'`).Scan(&n))
		return n
	}
	deadline := time.Now().Add(30 * time.Second)
	engineAsked := 0
	for waiting() == 0 || engineAsked == 0 {
		engineAsked += proxy.Counts()["/version"]
		if time.Now().After(deadline) {
			t.Fatalf("the collections never hung:\n%s", x.Log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	from := len(x.Log.String())
	start := time.Now()
	must(t, x.Signal(syscall.SIGTERM))
	select {
	case <-x.Done():
		took := time.Since(start)
		err := x.Err()
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, x.Log.String()[from:])
		}
		if took > shutdownBound {
			t.Fatalf("stopped %s after SIGTERM, the bound is %s:\n%s", took, shutdownBound, x.Log.String()[from:])
		}
		t.Logf("stopped %s after SIGTERM (bound %s)", took.Round(time.Millisecond), shutdownBound)
	case <-time.After(shutdownBound + 10*time.Second):
		t.Fatalf("still running %s after SIGTERM:\n%s", shutdownBound+10*time.Second, x.Log.String()[from:])
	}
	select {
	case code := <-scraped:
		if code != http.StatusOK {
			t.Errorf("the scrape waiting for the collections got %d, want its answer (200)", code)
		}
	case <-time.After(5 * time.Second):
		t.Error("the scrape waiting for the collections never got an answer")
	}
	for _, want := range []string{"shutting down", `msg=stopped`} {
		if !strings.Contains(x.Log.String()[from:], want) {
			t.Errorf("the log lacks %q:\n%s", want, x.Log.String()[from:])
		}
	}
	deadline = time.Now().Add(5 * time.Second)
	for waiting() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("a session of the exporter still waits on the lock after it exited: the query was not cancelled")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReload: SIGHUP and POST /-/reload (with --web.enable-lifecycle) read
// the config again. A valid one replaces the sources while scrapes go on:
// an unchanged source keeps serving without a gap and keeps its counters,
// a changed one is rebuilt, a new one appears, a removed one goes and its
// connections close. An invalid one is refused with the message of
// --config.check and the running config stays.
func TestReload(t *testing.T) {
	orders := pgtest.NewDatabase(t)
	billing := pgtest.NewDatabase(t)
	conn := pgtest.Connect(t, orders)
	pgtest.ExecRepoFiles(t, conn, nil, "deploy/sql/001_reference_schema.sql")
	// The outbox table is missing: its collector fails at every
	// collection, so its error counter shows whether the source was kept.
	pgtest.Exec(t, conn, "DROP TABLE event_outbox")
	billingDB := pgtest.Connect(t, billing).Config().Database
	env := []string{"WFX_ORDERS=" + orders, "WFX_BILLING=" + billing}
	ordersEntry := "  - {name: orders, dsn_env: WFX_ORDERS, min_interval: 1ms}\n"
	first := "camunda: [{name: main, url: 'http://127.0.0.1:1/engine-rest', min_interval: 1ms}]\ndatabases:\n" + ordersEntry
	second := "camunda: [{name: main, url: 'http://127.0.0.1:2/engine-rest', min_interval: 1ms}]\ndatabases:\n" + ordersEntry +
		"  - {name: billing, dsn_env: WFX_BILLING, min_interval: 1ms, tables: {inbox: {}}}\n"
	third := "camunda: [{name: main, url: 'http://127.0.0.1:2/engine-rest', min_interval: 1ms}]\ndatabases:\n" + ordersEntry
	invalid := "databases:\n" + ordersEntry + "  - {name: broken, dsn: 'postgres://127.0.0.1:notaport/x'}\n"
	x := runExporter(t, first, env, "--web.enable-lifecycle")

	const ordersUp = `workflow_exporter_source_up{name="orders",source="database"}`
	const ordersErrors = `workflow_exporter_collect_errors_total{collector="outbox",name="orders",source="database"}`
	// Scrape all along: orders must be in every page, its error counter
	// never going down.
	var mu sync.Mutex
	var gaps []string
	var last float64
	var scrapes int
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			page := scrape(x)
			up, okUp := sample(page, ordersUp)
			errs, okErrs := sample(page, ordersErrors)
			mu.Lock()
			scrapes++
			switch {
			case !okUp || up != 1 || !okErrs:
				gaps = append(gaps, fmt.Sprintf("scrape %d: orders up %v (present %v), errors present %v", scrapes, up, okUp, okErrs))
			case errs < last:
				gaps = append(gaps, fmt.Sprintf("scrape %d: orders' error counter went from %v to %v", scrapes, last, errs))
			}
			last = errs
			mu.Unlock()
			time.Sleep(10 * time.Millisecond)
		}
	}()
	defer func() { close(stop); <-done }()
	// moreScrapes waits until the scraper has scraped n more times, so
	// every step is watched.
	moreScrapes := func(n int) {
		t.Helper()
		mu.Lock()
		want := scrapes + n
		mu.Unlock()
		deadline := time.Now().Add(20 * time.Second)
		for {
			mu.Lock()
			got := scrapes
			mu.Unlock()
			if got >= want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the scraper is stuck at %d scrapes", got)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitUntil := func(what string, ok func(page string) bool) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			page := scrape(x)
			if ok(page) {
				return page
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never happened:\n%s\n%s", what, page, x.Log)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitUntil("orders collected", func(p string) bool { v, _ := sample(p, ordersErrors); return v >= 3 })
	backends := func() int {
		var n int
		must(t, conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'workflow-exporter' AND datname = $1`, billingDB).Scan(&n))
		return n
	}

	// SIGHUP with a valid config: billing appears, main is rebuilt, orders
	// goes on.
	from := len(x.Log.String())
	x.WriteConfig(t, second)
	moreScrapes(5)
	must(t, x.Reload())
	waitLog(t, x, from, "configuration reloaded")
	for _, want := range []string{`kept=[database/orders]`, `added=[database/billing]`, `replaced=[camunda/main]`, `trigger=SIGHUP`} {
		if !strings.Contains(x.Log.String()[from:], want) {
			t.Errorf("the reload's log line lacks %s:\n%s", want, x.Log.String()[from:])
		}
	}
	waitUntil("billing collected", func(p string) bool {
		v, ok := sample(p, `workflow_exporter_source_up{name="billing",source="database"}`)
		return ok && v == 1
	})
	if backends() == 0 {
		t.Fatal("billing is served but has no session")
	}
	moreScrapes(5)

	// An invalid config, by SIGHUP and by POST: refused with the message of
	// --config.check; billing and orders stay.
	x.WriteConfig(t, invalid)
	checkCmd := exec.Command(exportertest.Build(t), "--config.file", x.ConfigFile, "--config.check")
	checkCmd.Env = append(os.Environ(), env...)
	check, err := checkCmd.CombinedOutput()
	if err == nil {
		t.Fatalf("--config.check accepts the invalid config:\n%s", check)
	}
	checkMsg := strings.TrimSpace(string(check))
	from = len(x.Log.String())
	must(t, x.Reload())
	waitLog(t, x, from, "configuration reload refused")
	if !strings.Contains(x.Log.String()[from:], fmt.Sprintf("err=%q", checkMsg)) {
		t.Errorf("the refusal does not give --config.check's message %q:\n%s", checkMsg, x.Log.String()[from:])
	}
	resp, err := http.Post(x.URL+"/-/reload", "", nil)
	must(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), checkMsg) {
		t.Errorf("POST /-/reload with an invalid config: %d %s, want 500 with %q", resp.StatusCode, body, checkMsg)
	}
	if v, ok := sample(scrape(x), `workflow_exporter_source_up{name="billing",source="database"}`); !ok || v != 1 {
		t.Errorf("billing gone after a refused reload")
	}
	moreScrapes(5)

	// POST with a valid config that drops billing: its series go and its
	// connections close.
	x.WriteConfig(t, third)
	from = len(x.Log.String())
	resp, err = http.Post(x.URL+"/-/reload", "", nil)
	must(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /-/reload: %d %s\n%s", resp.StatusCode, body, x.Log.String()[from:])
	}
	waitLog(t, x, from, "configuration reloaded")
	if !strings.Contains(x.Log.String()[from:], `removed=[database/billing]`) || !strings.Contains(x.Log.String()[from:], `kept="[database/orders camunda/main]"`) {
		t.Errorf("the reload's log line:\n%s", x.Log.String()[from:])
	}
	if _, ok := sample(scrape(x), `workflow_exporter_source_up{name="billing",source="database"}`); ok {
		t.Error("billing still served after it was removed")
	}
	deadline := time.Now().Add(5 * time.Second)
	for backends() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("billing's connections stay open after it was removed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if resp, err := http.Get(x.URL + "/-/reload"); err != nil {
		t.Errorf("GET /-/reload: %v, want 405", err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET /-/reload: %d, want 405", resp.StatusCode)
		}
	}
	moreScrapes(5)

	close(stop)
	<-done
	stop = make(chan struct{})
	done = make(chan struct{})
	close(done) // for the deferred stop
	mu.Lock()
	defer mu.Unlock()
	if len(gaps) > 0 {
		t.Errorf("%d of %d scrapes during the reloads had a gap for the unchanged source: %v", len(gaps), scrapes, gaps[:min(5, len(gaps))])
	}
	if scrapes < 20 {
		t.Errorf("only %d scrapes during the reloads", scrapes)
	}
	t.Logf("%d scrapes during the reloads, orders' error counter at %v", scrapes, last)
}

// TestReloadNeedsTheFlag: without --web.enable-lifecycle there is no
// /-/reload.
func TestReloadNeedsTheFlag(t *testing.T) {
	x := runExporter(t, "camunda: [{name: main, url: 'http://127.0.0.1:1/engine-rest'}]\n", nil)
	resp, err := http.Post(x.URL+"/-/reload", "", nil)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("POST /-/reload without --web.enable-lifecycle: %d, want 404", resp.StatusCode)
	}
}
