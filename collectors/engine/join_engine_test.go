//go:build !pgonly

package engine_test

import (
	"context"
	"fmt"
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
	"github.com/workflow-exporter/workflow-exporter/internal/sources"
	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
)

// scenarioJoinCrashCases replays the two crash cases of the Camunda join
// (docs/design.md) on a real engine and a real database: a worker records
// COMPLETED and dies before completing its task; another records STARTED
// and its lock lapses; a second worker fetches both again, replays the
// stored result, reconciles, and completes. After each step the join metrics must say exactly that.
func scenarioJoinCrashCases(s *scenario) {
	t := s.t
	d := collectortest.NewDB(t, false)
	// The engine as the scenario's exporter reads it (over REST, or from
	// its database alone), beside the worker database.
	cfg, err := config.Parse([]byte(s.u.config(s.topic, "") + fmt.Sprintf(`
databases:
  - name: orders
    dsn: %q
    min_interval: 1ms
`, d.DSN)))
	if err != nil {
		t.Fatal(err)
	}
	// The database side joins against what the scenario's Camunda collector
	// publishes, exactly as the binary wires them.
	db, err := sources.NewDatabase(cfg.Databases[0], "databases[0]", sources.DatabaseOptions{Views: s.exp.views, Engines: []string{"e1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.DB.Close)
	set := poll.NewSet(nil, db.Source)
	collect := func() {
		t.Helper()
		s.exp.collect()
		time.Sleep(2 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		set.Refresh(ctx)
	}
	join := func(name, scope string) float64 {
		t.Helper()
		for _, sm := range gatherSamples(t, set, name) {
			if sm.labels["scope"] == scope && sm.labels["engine"] == "e1" && sm.labels["topic"] == s.topic && sm.labels["database"] == "orders" {
				return sm.value
			}
		}
		t.Fatalf("no sample %s{scope=%q,topic=%q}", name, scope, s.topic)
		return 0
	}
	want := func(step string, completedOpen, inDoubt float64) {
		t.Helper()
		if got := join(catalog.IdempotencyCompletedTaskOpen, "CASE_COMPLETED"); got != completedOpen {
			t.Errorf("%s: completed_task_open = %v, want %v", step, got, completedOpen)
		}
		if got := join(catalog.IdempotencyInDoubt, "CASE_STARTED"); got != inDoubt {
			t.Errorf("%s: in_doubt = %v, want %v", step, got, inDoubt)
		}
	}
	record := func(scope, key, status, ref string, updated float64) {
		t.Helper()
		d.Exec(`INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at)
			VALUES ($1, $2, 'order', $3, $4, $5)
			ON CONFLICT (scope, idempotency_key) DO UPDATE SET status = EXCLUDED.status, updated_at = EXCLUDED.updated_at`,
			scope, key, ref, status, collectortest.At(updated))
	}

	s.start(2)
	w1, w2 := s.worker("w1"), s.worker("w2")
	tasks := s.fetch(w1, 5*time.Second, 2)
	a, b := tasks[0], tasks[1]
	// w1 performed a's side effect and recorded COMPLETED, then died before
	// completing a. On b it recorded STARTED and died mid-way.
	record("CASE_COMPLETED", "order-a", "COMPLETED", a.ID, -100)
	record("CASE_STARTED", "order-b", "STARTED", b.ID, -100)
	collect()
	// a: the side effect is recorded as done but the task is open: the
	// completion is lost already, lock or no lock. b: w1 still holds the
	// lock, so it may simply still be working.
	want("locked by w1", 1, 0)

	sleepPast(lockExpiry(t, a))
	collect()
	want("w1's locks lapsed", 1, 1)
	if v := s.counter(catalog.CamundaExternalTaskLockExpirations); v != 2 {
		t.Errorf("lock expirations = %v, want 2", v)
	}

	// w2 fetches both again: a redelivery each; b is still in doubt.
	again := s.fetch(w2, 5*time.Minute, 2)
	collect()
	want("re-fetched by w2", 1, 1)
	s.wantCounter(catalog.CamundaExternalTaskRedeliveries, 2)

	// w2 finds b's STARTED record, the first attempt's, and backs off:
	// it fails b with a short retry timeout. b stays in doubt while it
	// backs off and, after the backoff, while it waits for its next fetch,
	// in both modes' views.
	s.ok(w2.Failure(s.ctx, b.ID, 3, 2*time.Second, "order-b is in progress in another attempt"))
	collect()
	want("w2 backs off b", 1, 1)
	backoff, err := s.c.ExternalTask(s.ctx, b.ID)
	s.ok(err)
	sleepPast(lockExpiry(t, backoff))
	collect()
	want("b's backoff over, not fetched yet", 1, 1)
	for mode, e := range map[string]*camExporter{"REST": s.exp, "engine-database": s.exp.twin} {
		if e == nil {
			continue
		}
		view, _ := e.views.Get("e1")
		found := false
		for _, vt := range view.Tasks {
			if vt.ID == b.ID {
				found = vt.State == correlate.Waiting && vt.Redelivered
			}
		}
		if !found {
			t.Errorf("%s: b after its backoff is not in the view as waiting and redelivered: %+v", mode, view.Tasks)
		}
	}
	if got := s.fetch(w2, 5*time.Minute, 1); got[0].ID != b.ID {
		t.Fatalf("w2 fetched %s, want b (%s)", got[0].ID, b.ID)
	}
	collect()
	want("b fetched again by w2", 1, 1)

	// w2 finds a's COMPLETED record and completes a with the stored result
	// (no second side effect); it reconciles b with the external system,
	// records COMPLETED and completes b.
	for _, tk := range again {
		if tk.ID == b.ID {
			record("CASE_STARTED", "order-b", "COMPLETED", b.ID, -10)
		}
		s.ok(w2.Complete(s.ctx, tk.ID, nil))
	}
	collect()
	want("replayed and completed", 0, 0)
}
