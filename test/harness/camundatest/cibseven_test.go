package camundatest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

// TestCIBSevenNeedsPostgres: the cibseven flavor refuses to start without a database, before any
// build.
func TestCIBSevenNeedsPostgres(t *testing.T) {
	_, err := camundatest.Start(context.Background(), camundatest.Options{Flavor: camundatest.FlavorCIBSeven})
	if err == nil || !strings.Contains(err.Error(), "PostgresURL") {
		t.Fatalf("Start(cibseven) without PostgresURL: err = %v, want one naming PostgresURL", err)
	}
	if !camundatest.FlavorCIBSeven.NeedsPostgres() || camundatest.FlavorCIBSeven.RESTAPI() || !camundatest.FlavorCamunda719.RESTAPI() {
		t.Fatal("cibseven must need PostgreSQL and have no REST API; the Camunda flavors the opposite")
	}
	for f, want := range map[camundatest.Flavor]camundatest.Flavor{
		camundatest.FlavorCamunda: camundatest.FlavorCamunda, camundatest.FlavorCamunda719: camundatest.FlavorCamunda,
		camundatest.FlavorOperaton: camundatest.FlavorOperaton, camundatest.FlavorCIBSeven: camundatest.FlavorCIBSeven,
	} {
		if got := f.Product(); got != want {
			t.Errorf("%s.Product() = %s, want %s", f, got, want)
		}
	}
}

// TestCIBSevenOnPostgres starts a real CIB seven engine on a throwaway PostgreSQL database, drives
// one external task through fetchAndLock and complete with the harness's unchanged Client and
// Worker (through the test driver), and checks what the engine wrote to its database: the tables
// the exporter's engine-database mode reads, the schema version and the task's history; and that
// its job executor runs an async continuation.
func TestCIBSevenOnPostgres(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e, err := camundatest.Start(ctx, camundatest.Options{Flavor: camundatest.FlavorCIBSeven, PostgresURL: dbURL, TimeZone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	t.Logf("cibseven %s started in %s at %s", e.Version, e.StartupTime.Round(100*time.Millisecond), e.BaseURL)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("engine log (tail):\n%s", e.LogTail(6000))
		}
	})
	if e.Version != "2.0.0" {
		t.Errorf("GET /version = %q, want 2.0.0", e.Version)
	}

	c := e.Client()
	key := camundatest.UniqueName(t.Name())
	topic := key + ".charge"
	d, err := c.Deploy(ctx, key, map[string][]byte{key + ".bpmn": engineclient.ExternalTaskProcess(key, topic)})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.DeployedProcessDefinitions) != 1 {
		t.Fatalf("deployment %s: %d process definitions, want 1", d.ID, len(d.DeployedProcessDefinitions))
	}
	if again, err := c.Deploy(ctx, key, map[string][]byte{key + ".bpmn": engineclient.ExternalTaskProcess(key, topic)}); err != nil || len(again.DeployedProcessDefinitions) != 0 {
		t.Errorf("deploying the same model again: %d definitions, %v; want none (duplicate filtering)", len(again.DeployedProcessDefinitions), err)
	}
	before := time.Now()
	pi, err := c.StartProcess(ctx, key, "order-1", map[string]any{"amount": 42})
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now()

	w := engineclient.NewWorker(c, "worker-1")
	tasks, err := w.FetchAndLock(ctx, topic, time.Minute, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 {
		t.Fatalf("fetchAndLock: %d tasks, want 1", len(tasks))
	}
	tk := tasks[0]
	if tk.ProcessInstanceID != pi.ID || tk.TopicName != topic || tk.WorkerID == nil || *tk.WorkerID != w.ID || tk.CreateTime == nil || tk.BusinessKey == nil || *tk.BusinessKey != "order-1" {
		t.Errorf("locked task %+v: want instance %s, topic %s, worker %s, a createTime and business key order-1", tk, pi.ID, topic, w.ID)
	}
	if ct, err := engineclient.ParseTime(*tk.CreateTime); err != nil || ct.Before(before.Add(-2*time.Second)) || ct.After(after.Add(2*time.Second)) {
		t.Errorf("createTime %s (%v) not within the process start", *tk.CreateTime, err)
	}
	if n, err := c.Count(ctx, "/external-task/count", q("topicName", topic, "locked", "true")); err != nil || n != 1 {
		t.Errorf("locked tasks of the topic: %d, %v; want 1", n, err)
	}
	if err := w.Complete(ctx, tk.ID, map[string]any{"charged": true}); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Count(ctx, "/external-task/count", q("topicName", topic)); err != nil || n != 0 {
		t.Errorf("open tasks after complete: %d, %v; want 0", n, err)
	}
	if n, err := c.Count(ctx, "/history/external-task-log/count", q("topicName", topic, "successLog", "true")); err != nil || n != 1 {
		t.Errorf("success log entries: %d, %v; want 1", n, err)
	}

	// What the engine wrote to its database, as the exporter's engine-database mode reads it.
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	_, _, hasCreateTime := engineSchema(ctx, t, conn)
	if !hasCreateTime {
		t.Error("ACT_RU_EXT_TASK has no CREATE_TIME_")
	}
	var kinds string
	if err := conn.QueryRow(ctx, `SELECT string_agg(CASE state_ WHEN 0 THEN 'created' WHEN 1 THEN 'failed' WHEN 2 THEN 'successful' ELSE 'deleted' END, ',' ORDER BY timestamp_)
		FROM act_hi_ext_task_log WHERE topic_name_ = $1`, topic).Scan(&kinds); err != nil {
		t.Fatal(err)
	}
	if kinds != "created,successful" {
		t.Errorf("ACT_HI_EXT_TASK_LOG of the topic = %s, want created,successful", kinds)
	}
	var ended bool
	if err := conn.QueryRow(ctx, `SELECT end_time_ IS NOT NULL FROM act_hi_procinst WHERE id_ = $1`, pi.ID).Scan(&ended); err != nil || !ended {
		t.Errorf("ACT_HI_PROCINST: instance ended = %v, %v; want true", ended, err)
	}

	// The job executor runs: an async continuation completes by itself.
	async := camundatest.UniqueName(t.Name(), "async")
	if _, err := c.Deploy(ctx, async, map[string][]byte{async + ".bpmn": engineclient.AsyncProcess(async)}); err != nil {
		t.Fatal(err)
	}
	api, err := c.StartProcess(ctx, async, "", map[string]any{"fail": false})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		if err := conn.QueryRow(ctx, `SELECT end_time_ IS NOT NULL FROM act_hi_procinst WHERE id_ = $1`, api.ID).Scan(&ended); err != nil {
			t.Fatal(err)
		}
		if ended {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the async continuation of %s did not run within 90 s: is the job executor on?", api.ID)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
