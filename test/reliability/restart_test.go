//go:build !pgonly

package reliability

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/statefile"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

// TestRestartKeepsWhatTheAlertsDependOn runs the exporter binary against a
// Camunda 7.24 engine and a worker database: a task whose lock a worker
// holds (a), and a task whose first worker's lock lapsed and which another
// worker fetched again (b, redelivered), whose idempotency record is
// STARTED: in doubt. After SIGTERM and a start on the same --storage.path,
// the oldest lock's age goes on from where it was (not from 0, which would
// resolve CamundaExternalTaskLockHeldTooLong and make it wait its whole
// window again), b's record is still in doubt, and nothing is counted
// twice (the redelivery counter starts from 0 and stays there). The same
// restart without the flag, the control, reads the lock age from about 0
// and the record as not in doubt.
func TestRestartKeepsWhatTheAlertsDependOn(t *testing.T) {
	eng := camundatest.Shared(t, camundatest.FlavorCamunda)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	url := pgtest.NewDatabase(t)
	conn := pgtest.Connect(t, url)
	pgtest.ExecRepoFiles(t, conn, nil, "deploy/sql/001_reference_schema.sql", "deploy/sql/003_exporter_indexes.sql")

	c := eng.Client()
	key := camundatest.UniqueName(t.Name())
	topic := key + ".charge"
	if _, err := c.Deploy(ctx, key, map[string][]byte{key + ".bpmn": engineclient.ExternalTaskProcess(key, topic)}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := c.StartProcess(ctx, key, fmt.Sprintf("order-%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	w1, w2 := engineclient.NewWorker(c, "w1"), engineclient.NewWorker(c, "w2")
	fetch := func(w *engineclient.Worker, lock time.Duration) engineclient.ExternalTask {
		t.Helper()
		tasks, err := w.FetchAndLock(ctx, topic, lock, 1)
		if err != nil || len(tasks) != 1 {
			t.Fatalf("fetch and lock by %s: %v, %v", w.ID, tasks, err)
		}
		return tasks[0]
	}

	cfg := fmt.Sprintf(`
camunda:
  - name: main
    url: %s
    min_interval: 1ms
    topics: [%s]
databases:
  - name: orders
    dsn_env: WFX_RESTART_DSN
    min_interval: 1ms
    tables:
      idempotency: {camunda: {engine: main}}
`, eng.BaseURL, topic)
	bin := exportertest.Build(t)
	storage := t.TempDir()
	start := func(flags ...string) *exportertest.Exporter {
		return exportertest.Start(t, exportertest.Options{Binary: bin, Config: cfg, Env: []string{"WFX_RESTART_DSN=" + url}, Flags: flags})
	}
	scrape := func(x *exportertest.Exporter) page {
		t.Helper()
		time.Sleep(3 * time.Millisecond) // past min_interval
		p, err := parsePage(x.Get(t, "/metrics"))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	byTopic := fmt.Sprintf(`{engine="main",topic=%q}`, topic)
	inDoubt := fmt.Sprintf(`{database="orders",engine="main",scope="CHARGE",topic=%q}`, topic)
	value := func(p page, name, labels string) float64 {
		t.Helper()
		v, ok := p[name+labels]
		if !ok {
			t.Fatalf("no %s%s served", name, labels)
		}
		return v
	}

	x := start("--storage.path", storage)
	a := fetch(w1, time.Hour)
	b := fetch(w1, 3*time.Second)
	scrape(x) // a and b locked by w1: both locks first seen now
	if _, err := conn.Exec(ctx, `INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at)
		VALUES ('CHARGE', 'order-b', 'order', $1, 'STARTED', now())`, b.ID); err != nil {
		t.Fatal(err)
	}
	bt, err := c.ExternalTask(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	exp, ok, err := bt.LockExpiration()
	if err != nil || !ok {
		t.Fatalf("b's lock expiration: %v, %v", ok, err)
	}
	time.Sleep(time.Until(exp) + 1500*time.Millisecond)
	scrape(x) // b's lock lapsed
	if again := fetch(w2, time.Hour); again.ID != b.ID {
		t.Fatalf("w2 fetched %s, want b (%s); a is %s", again.ID, b.ID, a.ID)
	}
	p := scrape(x)
	if v := value(p, catalog.CamundaExternalTaskRedeliveries, byTopic); v != 1 {
		t.Fatalf("redeliveries before the restart = %v, want 1", v)
	}
	if v := value(p, catalog.IdempotencyInDoubt, inDoubt); v != 1 {
		t.Fatalf("in doubt before the restart = %v, want 1", v)
	}
	time.Sleep(3 * time.Second)
	before := value(scrape(x), catalog.CamundaExternalTaskOldestLockAge, byTopic)
	if before < 5 {
		t.Fatalf("a's lock age before the restart = %vs, want at least 5s", before)
	}

	if err := x.Stop(); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	if f, err := statefile.Read(statefile.Path(storage, "camunda", "main")); err != nil || !f.Final {
		t.Fatalf("state file after SIGTERM: %v (final: %v)", err, f != nil && f.Final)
	}
	if !strings.Contains(x.Log.String(), "shutting down") {
		t.Fatalf("no shutdown logged:\n%s", x.Log.String())
	}

	next := start("--storage.path", storage)
	p = scrape(next)
	after := value(p, catalog.CamundaExternalTaskOldestLockAge, byTopic)
	if after < before {
		t.Errorf("a's lock age after the restart = %vs, before it %vs: it restarted from 0", after, before)
	}
	if v := value(p, catalog.IdempotencyInDoubt, inDoubt); v != 1 {
		t.Errorf("in doubt after the restart = %v, want 1: the redelivery was forgotten", v)
	}
	if v := value(p, catalog.CamundaExternalTaskRedeliveries, byTopic); v != 0 {
		t.Errorf("redeliveries after the restart = %v, want 0 (counted once, before it)", v)
	}
	if v := value(p, catalog.ExporterRememberedEntries, `{kind="redeliveries",name="main",source="camunda"}`); v < 1 {
		t.Errorf("remembered redeliveries after the restart = %v", v)
	}
	if log := next.Log.String(); !strings.Contains(log, "state restored; counters go on from where the previous process stopped") {
		t.Errorf("the restore is not logged:\n%s", log)
	}

	// The control: the same restart without the flag.
	if err := next.Stop(); err != nil {
		t.Fatal(err)
	}
	control := start()
	p = scrape(control)
	if v := value(p, catalog.CamundaExternalTaskOldestLockAge, byTopic); v >= before {
		t.Errorf("without --storage.path the lock age after a restart is %vs, not from about 0: the test proves nothing", v)
	}
	if v := value(p, catalog.IdempotencyInDoubt, inDoubt); v != 0 {
		t.Errorf("without --storage.path the record is in doubt after a restart (%v): the test proves nothing", v)
	}
	entries, _ := os.ReadDir(storage)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{filepath.Base(statefile.Path(storage, "camunda", "main")), filepath.Base(statefile.Path(storage, "database", "orders"))}; fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("storage holds %v, want %v (one file per source, no temporary file left)", names, want)
	}
}
