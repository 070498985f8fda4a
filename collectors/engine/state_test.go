//go:build !pgonly

package engine_test

import (
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/statefile"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
)

// withStorage keeps the exporter's state in dir (--storage.path), written
// after a collection once every interval of the exporter's clock, and
// restores what is there.
func withStorage(e *camExporter, dir string, interval time.Duration) *poll.Source {
	src := e.set.Sources()[0]
	src.UseStorage(poll.StorageOptions{Dir: dir, Identity: "fake engine", Interval: interval, MaxAge: time.Hour})
	return src
}

// redelivered says whether the view the collector published for the
// joins holds the task as redelivered.
func redelivered(t *testing.T, e *camExporter, id string) bool {
	t.Helper()
	view, ok := e.views.Get("e1")
	if !ok {
		t.Fatal("no view published")
	}
	for _, vt := range view.Tasks {
		if vt.ID == id {
			return vt.Redelivered
		}
	}
	t.Fatalf("task %s not in the view", id)
	return false
}

// restarted is a new exporter on the same engine that restores the state
// in dir, after its first collection.
func restarted(t *testing.T, f *fakeCamunda, dir string) *camExporter {
	t.Helper()
	next := fakeExporter(t, f, "", "")
	withStorage(next, dir, time.Hour)
	next.collect()
	return next
}

// wantLocks checks topic a's oldest lock age and its lock events counted.
func wantLocks(t *testing.T, e *camExporter, oldestAge, redeliveries, expirations float64) {
	t.Helper()
	a := map[string]string{"topic": "a"}
	wantValue(t, e, catalog.CamundaExternalTaskOldestLockAge, a, oldestAge)
	wantValue(t, e, catalog.CamundaExternalTaskRedeliveries, a, redeliveries)
	wantValue(t, e, catalog.CamundaExternalTaskLockExpirations, a, expirations)
}

// stateScenario leaves a task locked by w1 for 40 s (t1) and a task
// redelivered to w2 after w1's lock lapsed (t2), read by e.
func stateScenario(t *testing.T, f *fakeCamunda, e *camExporter) {
	t.Helper()
	f.add(&fakeTask{id: "t1", topic: "a"})
	f.add(&fakeTask{id: "t2", topic: "a"})
	f.lock("t1", "w1", time.Hour)
	f.lock("t2", "w1", 10*time.Second)
	e.collect()
	f.advance(20 * time.Second) // t2's lock lapsed
	e.collect()
	f.lock("t2", "w2", time.Hour) // redelivered
	e.collect()
	f.advance(20 * time.Second)
	e.collect()
	wantLocks(t, e, 40, 1, 1)
	if !redelivered(t, e, "t2") {
		t.Fatal("t2 is not redelivered before the restart")
	}
}

// A restart on the same storage path after a clean stop (Persist) goes on
// where the previous process stopped: the lock age goes on, the worker's
// idle time too, the redelivered task stays redelivered for the joins, and
// nothing is counted again (the counters start from 0 and stay there). A
// restart without the state starts from nothing: that is what the state
// is for.
func TestCamundaStateSurvivesARestart(t *testing.T) {
	f := newFakeCamunda(t)
	dir := t.TempDir()
	e := fakeExporter(t, f, "", "")
	src := withStorage(e, dir, time.Hour)
	stateScenario(t, f, e)
	src.Close(t.Context())
	if err := src.Persist(); err != nil {
		t.Fatal(err)
	}

	f.advance(5 * time.Second)
	next := restarted(t, f, dir)
	wantLocks(t, next, 45, 0, 0)
	next.wantByWorker(catalog.CamundaExternalTaskWorkerIdle, map[string]float64{"w1": 45, "w2": 25})
	if !redelivered(t, next, "t2") {
		t.Fatal("t2 is not redelivered after the restart: the join would forget its record in doubt")
	}
	// The final file is restored once: taken over, it reads as a running
	// state, so a successor of this process that finds it (this one
	// crashed first) counts from a baseline, not again.
	if sf, err := statefile.Read(statefile.Path(dir, "camunda", "e1")); err != nil || sf.Final {
		t.Fatalf("the restored file: %v, final %v", err, sf != nil && sf.Final)
	}
	// Without the state, the same restart starts from nothing.
	fresh := fakeExporter(t, f, "", "")
	fresh.collect()
	a := map[string]string{"topic": "a"}
	wantValue(t, fresh, catalog.CamundaExternalTaskOldestLockAge, a, 0)
	if redelivered(t, fresh, "t2") {
		t.Fatal("a fresh exporter knows t2 was redelivered")
	}
	// The counting goes on: another worker takes t1 (w1's lock lapsed
	// unseen), one expiration and one redelivery.
	f.lock("t1", "w3", time.Hour)
	next.collect()
	wantValue(t, next, catalog.CamundaExternalTaskLockExpirations, a, 1)
	wantValue(t, next, catalog.CamundaExternalTaskRedeliveries, a, 1)
}

// A state written while the previous process ran (it was killed, no final
// write) restores what is remembered, and the first collection counts no
// lock event: the previous process may have counted them after the write.
func TestCamundaStateWithoutAFinalWriteCountsFromABaseline(t *testing.T) {
	f := newFakeCamunda(t)
	dir := t.TempDir()
	e := fakeExporter(t, f, "", "")
	// Written once, after the first collection (the interval is an hour of
	// the exporter's clock); the old process then counts t2's lapse and
	// redelivery, and is killed.
	withStorage(e, dir, time.Hour)
	stateScenario(t, f, e)

	next := restarted(t, f, dir)
	// The memory: t1's lock was first seen by the old process 40 s ago;
	// t2 now held by w2 is read as a redelivery (tracked), not counted.
	wantLocks(t, next, 40, 0, 0)
	if !redelivered(t, next, "t2") {
		t.Fatal("t2 is not redelivered after the restart")
	}
	// From the second collection on it counts.
	f.lock("t1", "w3", time.Hour)
	next.collect()
	a := map[string]string{"topic": "a"}
	wantValue(t, next, catalog.CamundaExternalTaskRedeliveries, a, 1)
}

// label_value_forget_after: a topic without tasks and history for that
// long loses its series and frees its place under label_value_limit; a
// configured topic stays.
func TestCamundaForgetsTopicsUnseen(t *testing.T) {
	f := newFakeCamunda(t)
	f.add(&fakeTask{id: "t1", topic: "gone"})
	e := fakeExporter(t, f, "kept", "    label_value_limit: 2\n    label_value_forget_after: 1h\n")
	e.collect()
	wantPartition(t, e, "gone", map[string]int{"waiting": 1})
	f.complete("t1")
	f.advance(30 * time.Minute)
	e.collect() // reads the completion: gone is seen now
	wantPartition(t, e, "gone", map[string]int{})
	f.advance(59 * time.Minute)
	e.collect()
	wantPartition(t, e, "gone", map[string]int{})
	f.advance(2 * time.Minute)
	e.collect() // frees gone's place after it: its series go with the next
	e.collect()
	if _, ok := e.get(catalog.CamundaExternalTasks, map[string]string{"topic": "gone"}); ok {
		t.Fatal("topic gone still reported an hour after the collection that last saw a task or history entry of it")
	}
	wantPartition(t, e, "kept", map[string]int{})
	// Its place is free: a new topic takes it instead of folding.
	f.add(&fakeTask{id: "t2", topic: "new"})
	e.collect()
	wantPartition(t, e, "new", map[string]int{"waiting": 1})
}
