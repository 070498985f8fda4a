package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/internal/status"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/sim/faultproxy"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// TestStatusPageNamesTheTasksInDoubt is the status page's end-to-end test
// (docs/status.md): a real Camunda engine and PostgreSQL are driven into the
// two crash cases of the Camunda join, the exporter binary serves the page,
// and /status.json must name exactly those tasks and keys; Debian's
// headless Chromium must render /status with them (screenshots: see
// browser.screenshot). Then the database goes
// away: the page says so and lists nothing from it as current.
func TestStatusPageNamesTheTasksInDoubt(t *testing.T) {
	besideTheMatrix(t)
	browser := browser{bin: testkit.Tool(t, "chromium", "chromium")}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, dsn := newDatabase(t)
	// The exporter reaches the database through a proxy the test closes.
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := faultproxy.StartTCP(t, u.Host)
	u.Host = proxy.Addr()
	proxiedDSN := u.String()

	engine := sharedEngine(t)
	c := engine.Client()
	key := camundatest.UniqueName("status")
	topic := key + ".submit"
	if _, err := c.Deploy(ctx, key, map[string][]byte{key + ".bpmn": engineclient.ExternalTaskProcess(key, topic)}); err != nil {
		t.Fatal(err)
	}
	businessKey := map[string]string{}
	for i := range 4 {
		pi, err := c.StartProcess(ctx, key, fmt.Sprintf("order-%d-%s", 1000+i, key), nil)
		if err != nil {
			t.Fatal(err)
		}
		businessKey[pi.ID] = pi.BusinessKey
	}
	x := exportertest.Start(t, exportertest.Options{Config: engineAndOrders(engine.BaseURL, topic, fmt.Sprintf(`
  - name: billing
    dsn: postgres://exporter@127.0.0.1:%d/billing
    min_interval: 1s
    tables: {outbox: {}}
`, deadPort(t))), Env: []string{"E2E_ORDERS_DSN=" + proxiedDSN}})
	base := x.URL

	// The two crash cases, and two tasks that are fine.
	w1, w2 := engineclient.NewWorker(c, "worker-1"), engineclient.NewWorker(c, "worker-2")
	fetch, ok := taskFetcher(t, ctx, topic)
	record := func(key, st, taskID string) {
		t.Helper()
		pgtest.Exec(t, conn, `INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at,
			request_hash, result_payload) VALUES ('ORDER_FULFILLMENT_SUBMISSION', $1, 'order', $2, $3, now() - interval '1 minute', 'SECRET-HASH', '{"secret": "SECRET-RESULT"}')`,
			key, taskID, st)
	}
	// Completion lost: the side effect is recorded COMPLETED (and the job
	// processed), the worker died before completing the task; its lock
	// lapses.
	lost := fetch(w1, 2*time.Second)
	record("lost-completion", "COMPLETED", lost.ID)
	pgtest.Exec(t, conn, `INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at)
		VALUES ('main', $1, $2, $3, 'worker-1', 'COMPLETED', now() - interval '1 minute')`, lost.ID, lost.ProcessInstanceID, lost.ActivityID)
	// In doubt: STARTED, the lock lapses, another worker fetches the task.
	doubt := fetch(w1, 2*time.Second)
	record("in-doubt", "STARTED", doubt.ID)
	// Fine: completed with its record, and one still held.
	done := fetch(w1, time.Minute)
	record("done", "COMPLETED", done.ID)
	ok(w1.Complete(ctx, done.ID, nil))
	held := fetch(w1, 10*time.Minute)
	record("held", "STARTED", held.ID)
	time.Sleep(4 * time.Second) // both short locks lapse; the exporter sees the lapse
	waitForStatus(t, x, func(r status.Report) bool { return len(items(r, vocab.KindLockExpired, topic)) == 2 })
	// worker-2 takes the in-doubt task over (lock: a fetch of that task).
	ok(w2.Lock(ctx, doubt.ID, 10*time.Minute))

	// The database's lists join what the engine's collection published
	// before the database's own collection began: the takeover reaches
	// the in-doubt list up to one collection after the engine's lists.
	r := waitForStatus(t, x, func(r status.Report) bool {
		doubted := items(r, vocab.KindInDoubt, "")
		return len(items(r, vocab.KindRedelivered, topic)) == 1 && len(items(r, vocab.KindLockExpired, topic)) == 1 &&
			len(doubted) == 1 && doubted[0].WorkerID == "worker-2"
	})
	want := func(kind, topicFilter string, lines ...string) {
		t.Helper()
		var got []string
		for _, it := range items(r, kind, topicFilter) {
			got = append(got, strings.Join([]string{it.Engine, it.Topic, it.ExternalTaskID, it.ProcessInstanceID, it.BusinessKey,
				it.WorkerID, it.TaskState, it.Scope, it.IdempotencyKey, it.JobReference}, " "))
		}
		if !slices.Equal(got, lines) {
			t.Errorf("%s lists\n  %s\nwant\n  %s", kind, strings.Join(got, "\n  "), strings.Join(lines, "\n  "))
		}
	}
	task := func(tk engineclient.ExternalTask, worker, state string) string {
		return strings.Join([]string{"main", topic, tk.ID, tk.ProcessInstanceID, businessKey[tk.ProcessInstanceID], worker, state}, " ")
	}
	want(vocab.KindCompletedTaskOpen, "", task(lost, "worker-1", "lock_expired")+" ORDER_FULFILLMENT_SUBMISSION lost-completion "+lost.ID)
	want(vocab.KindInDoubt, "", task(doubt, "worker-2", "locked")+" ORDER_FULFILLMENT_SUBMISSION in-doubt "+doubt.ID)
	want(vocab.KindProcessedJobTaskOpen, "", task(lost, "worker-1", "lock_expired")+"   "+lost.ID)
	want(vocab.KindLockExpired, topic, task(lost, "worker-1", "lock_expired")+"   ")
	want(vocab.KindRedelivered, topic, task(doubt, "worker-2", "locked")+"   ")
	raw := x.Get(t, "/status.json")
	for _, secret := range []string{"SECRET", "postgres://", "E2E_ORDERS_DSN"} {
		if strings.Contains(raw, secret) {
			t.Errorf("/status.json shows %q", secret)
		}
	}
	if s := source(r, "billing"); s.State != status.StateDown {
		t.Errorf("billing: %+v, want down", s)
	}
	// The shared engine runs at history level full (the test engines'
	// default): the page names it, with no note of what is missing.
	if s := source(r, "main"); s.HistoryLevel != "full" || len(s.HistorySupport) == 0 || s.HistorySupport[len(s.HistorySupport)-1].Support == "absent" {
		t.Errorf("engine main: history level %q, support %+v, want full, nothing absent", s.HistoryLevel, s.HistorySupport)
	}

	// The browser renders the same: each crash case in its own list, with
	// the task, the process instance, the business key and the key.
	dom := browser.dom(t, base+"/status")
	browser.screenshot(t, base+"/status", "status-desktop.png", "1280,1700")
	browser.screenshot(t, base+"/status", "status-phone.png", "412,2400")
	article := func(kind string) string {
		t.Helper()
		i := strings.Index(dom, `id="`+kind+`--database-orders--`)
		if i < 0 {
			t.Fatalf("the rendered page has no %s list of database orders:\n%s", kind, dom)
		}
		return dom[i : i+strings.Index(dom[i:], "</article>")]
	}
	for kind, want := range map[string][]string{
		vocab.KindCompletedTaskOpen: {lost.ID, lost.ProcessInstanceID, businessKey[lost.ProcessInstanceID], "lost-completion", "worker-1", "WorkflowCompletedSideEffectTaskOpen.md"},
		vocab.KindInDoubt:           {doubt.ID, doubt.ProcessInstanceID, businessKey[doubt.ProcessInstanceID], "in-doubt", "worker-2", "WorkflowIdempotencyInDoubt.md"},
	} {
		a := article(kind)
		for _, w := range want {
			if !strings.Contains(a, w) {
				t.Errorf("the rendered %s list lacks %s:\n%s", kind, w, a)
			}
		}
		for _, other := range []string{held.ID, done.ID, "SECRET"} {
			if strings.Contains(a, other) {
				t.Errorf("the rendered %s list shows %s", kind, other)
			}
		}
	}
	if !strings.Contains(dom, `<td class="history-level">full</td>`) || strings.Contains(dom, "history-note") {
		t.Errorf("the rendered page does not name engine main's history level full, or notes a level below full")
	}
	if !strings.Contains(dom, `<span class="badge state-down">down</span>`) || !strings.Contains(dom, "Not listed: database billing") {
		t.Errorf("the rendered page does not say billing is down")
	}

	// The database goes away: the page says so, and nothing of it, not
	// even the joins it made a moment ago, is listed as current.
	proxy.Close()
	r = waitForStatus(t, x, func(r status.Report) bool { return source(r, "orders").State == status.StateDown })
	for _, l := range r.Lists {
		if l.Source.Name == "orders" {
			t.Errorf("a list of the database that is down: %s", l.Kind)
		}
	}
	if got := items(r, vocab.KindLockExpired, topic); len(got) != 1 || got[0].ExternalTaskID != lost.ID {
		t.Errorf("the engine's lists went with the database: lock_expired %+v", got)
	}
	dom = browser.dom(t, base+"/status")
	browser.screenshot(t, base+"/status", "status-database-down.png", "1280,1400")
	if !strings.Contains(dom, "Not listed: database billing, database orders") || strings.Contains(dom, "lost-completion") || strings.Contains(dom, "in-doubt") {
		t.Errorf("with the database down the page still shows its records, or does not say it is down:\n%s", dom)
	}
}

// items are the items of the lists of a kind, of one topic if given.
func items(r status.Report, kind, topic string) []collectors.Item {
	var out []collectors.Item
	for _, l := range r.Lists {
		if l.Kind != kind {
			continue
		}
		for _, it := range l.Items {
			if topic == "" || it.Topic == topic {
				out = append(out, it)
			}
		}
	}
	return out
}

func source(r status.Report, name string) status.Source {
	for _, s := range r.Sources {
		if s.Name == name {
			return s
		}
	}
	return status.Source{}
}

// waitForStatus polls /status.json until cond holds (30 s at most).
func waitForStatus(t *testing.T, x *exportertest.Exporter, cond func(status.Report) bool) status.Report {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var r status.Report
	for {
		raw := x.Get(t, "/status.json")
		r = status.Report{}
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			t.Fatalf("%v\n%s", err, raw)
		}
		if r.SchemaVersion != status.SchemaVersion {
			t.Fatalf("schema_version %d", r.SchemaVersion)
		}
		if cond(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("the status page did not reach the expected state within 30s:\n%s", raw)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// engineAndOrders is an exporter config with the engine at engineURL
// (topic configured) and the orders database from $E2E_ORDERS_DSN, both
// polled every second; more follows the orders entry (more of its keys, or
// more databases).
func engineAndOrders(engineURL, topic, more string) string {
	return fmt.Sprintf(`
camunda:
  - name: main
    url: %s
    min_interval: 1s
    topics: [%s]
    history_cleanup: {interval: 1s} # the history panels see the instances that end during a test
databases:
  - name: orders
    dsn_env: E2E_ORDERS_DSN
    min_interval: 1s
`, engineURL, topic) + strings.TrimPrefix(more, "\n")
}

// deadPort is a port nothing listens on.
func deadPort(t *testing.T) int {
	t.Helper()
	port, err := testkit.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// browser is Debian's headless Chromium (testkit.Tool finds it: without it
// the test is skipped, unless PROMTEST_REQUIRE is set, which make test sets).
type browser struct{ bin string }

// run runs chromium headless with a throwaway profile and returns stdout.
func (b browser) run(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir()}, args...)
	cmd := exec.CommandContext(ctx, b.bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

// dom loads url and returns the DOM as rendered.
func (b browser) dom(t *testing.T, url string) string {
	t.Helper()
	return b.run(t, "--dump-dom", url)
}

// screenshot saves the rendered url as name, at the given window size
// ("width,height"), in the directory STATUS_SCREENSHOTS names (make test
// sets .tmp/screenshots), or else in the test's artifact directory (kept
// with go test -artifacts).
func (b browser) screenshot(t *testing.T, url, name, size string) {
	t.Helper()
	dir := os.Getenv("STATUS_SCREENSHOTS")
	if dir == "" {
		dir = t.ArtifactDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	b.run(t, "--screenshot="+path, "--window-size="+size, url)
	if fi, err := os.Stat(path); err != nil || fi.Size() < 1000 {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	t.Logf("screenshot: %s", path)
}
