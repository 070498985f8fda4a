//go:build !pgonly

package engine_test

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// Unit tests of the Camunda collector against fakeCamunda (the engine's
// filter semantics in memory, with a settable clock).

// The fake keeps an external task log, so the engine it plays is at
// history level full; the exporters read it as configured at full unless
// extra sets another history_level (the detection and the lower levels are
// tested against real engines, camunda_engine_test.go).
func fakeExporter(t *testing.T, f *fakeCamunda, topics, extra string) *camExporter {
	t.Helper()
	if !strings.Contains(extra, "history_level:") {
		extra += "    history_level: full\n"
	}
	return newCamundaExporter(t, camundaConfig(f.URL(), topics, extra))
}

// partitionOf reads the six states of one topic; it fails if any is absent.
func partitionOf(t *testing.T, e *camExporter, topic string) map[string]int {
	t.Helper()
	got := map[string]int{}
	for _, st := range vocab.ExternalTaskStates() {
		v := e.must(catalog.CamundaExternalTasks, map[string]string{"topic": topic, "state": st})
		if v != 0 {
			got[st] = int(v)
		}
	}
	return got
}

func wantPartition(t *testing.T, e *camExporter, topic string, want map[string]int) {
	t.Helper()
	got := partitionOf(t, e, topic)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("topic %s: partition %v, want %v", topic, got, want)
	}
}

func wantValue(t *testing.T, e *camExporter, name string, labels map[string]string, want float64) {
	t.Helper()
	if got := e.must(name, labels); got != want {
		t.Fatalf("%s%v = %v, want %v", name, labels, got, want)
	}
}

func TestCamundaPartitionAndLockEvents(t *testing.T) {
	f := newFakeCamunda(t)
	for i := 1; i <= 8; i++ {
		f.add(&fakeTask{id: fmt.Sprintf("t%d", i), topic: "a"})
	}
	f.add(&fakeTask{id: "s1", topic: "a", suspended: true})
	e := fakeExporter(t, f, "a, configured", "")
	e.collect()
	wantPartition(t, e, "a", map[string]int{vocab.StateWaiting: 8, vocab.StateSuspended: 1})
	wantPartition(t, e, "configured", map[string]int{})
	a := map[string]string{"topic": "a"}

	f.lock("t1", "w1", time.Minute)    // locked
	f.lock("t2", "w1", 10*time.Second) // will lapse
	f.lock("t3", "w2", time.Minute)    // will fail: backoff
	f.lock("t4", "w2", time.Minute)    // will be exhausted
	f.lock("t5", "w3", 10*time.Second) // will be extended
	f.lock("t6", "w3", 10*time.Second) // will lapse and be redelivered between polls
	f.advance(time.Second)
	e.collect()
	wantPartition(t, e, "a", map[string]int{vocab.StateWaiting: 2, vocab.StateLocked: 6, vocab.StateSuspended: 1})
	wantValue(t, e, catalog.CamundaExternalTasksLockedByWorker, map[string]string{"topic": "a", "worker_id": "w2"}, 2)

	f.failure("t3", 2, 30*time.Second, "boom")
	f.failure("t4", 0, 0, "gave up")
	f.lock("t5", "w3", time.Minute) // extendLock
	f.advance(15 * time.Second)     // t2 and t6 lapse
	f.lock("t6", "w4", time.Minute) // redelivered to w4 before the next poll
	e.collect()
	wantPartition(t, e, "a", map[string]int{vocab.StateWaiting: 2, vocab.StateLocked: 3, vocab.StateRetryBackoff: 1,
		vocab.StateLockExpired: 1, vocab.StateRetriesExhausted: 1, vocab.StateSuspended: 1})
	// t2 lapsed (seen), t6 lapsed unseen and was redelivered to another worker.
	wantValue(t, e, catalog.CamundaExternalTaskLockExpirations, a, 2)
	wantValue(t, e, catalog.CamundaExternalTaskRedeliveries, a, 1)
	wantValue(t, e, catalog.CamundaExternalTaskFailures, a, 2)
	// w2's tasks are in backoff and exhausted: w2 holds no lock.
	if v, ok := e.get(catalog.CamundaExternalTasksLockedByWorker, map[string]string{"topic": "a", "worker_id": "w2"}); ok {
		t.Fatalf("w2 reported with %v locks", v)
	}
	wantValue(t, e, catalog.CamundaExternalTasksLockedByWorker, map[string]string{"topic": "a", "worker_id": "w4"}, 1)
	// The in-flight view for the joins: what a worker touched, by state.
	view, ok := e.views.Get("e1")
	if !ok || view.Truncated {
		t.Fatalf("view %+v, published %v", view, ok)
	}
	states := map[string]string{}
	for _, vt := range view.Tasks {
		states[vt.ID] = string(vt.State)
		if vt.Redelivered {
			states[vt.ID] += "+redelivered"
		}
	}
	wantStates := map[string]string{"t1": "locked", "t2": "lock_expired", "t3": "retry_backoff", "t5": "locked", "t6": "locked+redelivered"}
	if fmt.Sprint(states) != fmt.Sprint(wantStates) {
		t.Fatalf("view states %v, want %v", states, wantStates)
	}

	// Seen lapsed again: not counted again. Backoff ends: waiting, no lapse.
	f.advance(20 * time.Second)
	e.collect()
	wantPartition(t, e, "a", map[string]int{vocab.StateWaiting: 3, vocab.StateLocked: 3, vocab.StateLockExpired: 1,
		vocab.StateRetriesExhausted: 1, vocab.StateSuspended: 1})
	wantValue(t, e, catalog.CamundaExternalTaskLockExpirations, a, 2)

	// t2 is fetched again: a redelivery. t3 is fetched after its backoff: a retry, not a redelivery.
	f.lock("t2", "w1", time.Minute)
	f.lock("t3", "w5", time.Minute)
	e.collect()
	wantPartition(t, e, "a", map[string]int{vocab.StateWaiting: 2, vocab.StateLocked: 5, vocab.StateRetriesExhausted: 1, vocab.StateSuspended: 1})
	wantValue(t, e, catalog.CamundaExternalTaskRedeliveries, a, 2)
	wantValue(t, e, catalog.CamundaExternalTaskLockExpirations, a, 2)

	// A failure that keeps retries and message (a worker that never
	// decrements retries) is found in the failure log: backoff, not a re-fetch.
	f.failure("t3", 2, time.Minute, "boom")
	e.collect()
	wantPartition(t, e, "a", map[string]int{vocab.StateWaiting: 2, vocab.StateLocked: 4, vocab.StateRetryBackoff: 1, vocab.StateRetriesExhausted: 1, vocab.StateSuspended: 1})
	// Without the log entry (more failures than one page, or history level
	// below full) the same change reads as a re-fetch: the documented limit.
	f.lock("t3", "w5", time.Minute)
	e.collect()
	f.mu.Lock()
	f.task("t3").exp = new(f.now.Add(2 * time.Minute))
	f.mu.Unlock()
	e.collect()
	wantPartition(t, e, "a", map[string]int{vocab.StateWaiting: 2, vocab.StateLocked: 5, vocab.StateRetriesExhausted: 1, vocab.StateSuspended: 1})

	// Drain everything: zeros, the topic stays; counters stay.
	for _, id := range []string{"t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "s1"} {
		f.complete(id)
	}
	e.collect()
	wantPartition(t, e, "a", map[string]int{})
	wantValue(t, e, catalog.CamundaExternalTaskCompletions, a, 9)
	wantValue(t, e, catalog.CamundaExternalTaskRedeliveries, a, 2)
	wantValue(t, e, catalog.CamundaExternalTaskOldestWaitingAge, a, 0)
}

func TestCamundaOldestWaitingAge(t *testing.T) {
	f := newFakeCamunda(t)
	f.add(&fakeTask{id: "old", topic: "a"})
	f.advance(90 * time.Second)
	f.add(&fakeTask{id: "new", topic: "a"})
	f.advance(10*time.Second + 700*time.Millisecond) // the Date header truncates to the second
	e := fakeExporter(t, f, "", "")
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskOldestWaitingAge, map[string]string{"topic": "a"}, 100)
	// A locked task does not wait.
	f.lock("old", "w", time.Minute)
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskOldestWaitingAge, map[string]string{"topic": "a"}, 10)
}

// TestCamundaOldestWaitingAgeOnEveryVersion: the same tasks on an engine
// that returns createTime (7.24, Operaton), one that sorts by it without
// returning it (7.21 to 7.23) and one that does neither (7.20 and older),
// each with the open tasks' activity instances in its history (level
// activity or higher): the same ages, each by the requests the reader's
// rule for that engine makes (docs/camunda-states.md's budget), and exact
// in camunda_engine_capability. Then at history level none on the oldest
// engine: ages from the first collection that saw each task, a lower
// bound, said so; and with max_listed_tasks cut below the fetchable tasks,
// the oldest of the listed ones.
func TestCamundaOldestWaitingAgeOnEveryVersion(t *testing.T) {
	a := map[string]string{"topic": "a"}
	type engine struct {
		name              string
		noCreate, noField bool
		// extra are the requests per collection beyond /external-task
		// (the sorted list, or the listed fetchable tasks): the activity
		// instance lookups.
		lists, lookups int
	}
	for _, v := range []engine{
		{name: "7.24", lists: 1},
		{name: "7.22", noField: true, lists: 1, lookups: 1},
		{name: "7.20", noCreate: true, lists: 1, lookups: 1},
	} {
		t.Run(v.name, func(t *testing.T) {
			f := newFakeCamunda(t)
			f.version = v.name + ".0"
			f.noCreate, f.noField, f.openActInsts = v.noCreate, v.noField, true
			f.add(&fakeTask{id: "old", topic: "a"})
			f.advance(90 * time.Second)
			f.add(&fakeTask{id: "new", topic: "a"})
			f.advance(10*time.Second + 700*time.Millisecond)
			e := fakeExporter(t, f, "", "")
			e.collect()
			wantValue(t, e, catalog.CamundaExternalTaskOldestWaitingAge, a, 100)
			wantValue(t, e, catalog.CamundaEngineCapability, map[string]string{"metric": catalog.CamundaExternalTaskOldestWaitingAge, "support": "exact"}, 1)
			// A locked task does not wait; a steady collection's requests.
			f.lock("old", "w", time.Minute)
			f.resetRequests()
			e.collect()
			wantValue(t, e, catalog.CamundaExternalTaskOldestWaitingAge, a, 10)
			f.mu.Lock()
			lists, lookups := f.requests["/external-task"], f.requests["/history/activity-instance"]
			f.mu.Unlock()
			// One more list: the locked tasks engine-wide.
			if lists != v.lists+1 || lookups != v.lookups {
				t.Errorf("%d /external-task and %d /history/activity-instance requests, want %d and %d", lists, lookups, v.lists+1, v.lookups)
			}
			wantPartition(t, e, "a", map[string]int{vocab.StateWaiting: 1, vocab.StateLocked: 1})
		})
	}

	t.Run("7.20 at history level none", func(t *testing.T) {
		f := newFakeCamunda(t)
		f.version, f.noCreate = "7.20.0", true
		f.add(&fakeTask{id: "old", topic: "a"})
		f.advance(90 * time.Second)
		e := fakeExporter(t, f, "", "    history_level: none\n")
		e.collect()
		// First seen now: the age counts from the exporter's first
		// collection, a lower bound (the task is 90 s old).
		wantValue(t, e, catalog.CamundaExternalTaskOldestWaitingAge, a, 0)
		wantValue(t, e, catalog.CamundaEngineCapability, map[string]string{"metric": catalog.CamundaExternalTaskOldestWaitingAge, "support": "lower_bound"}, 1)
		f.advance(30 * time.Second)
		f.add(&fakeTask{id: "new", topic: "a"})
		e.collect()
		wantValue(t, e, catalog.CamundaExternalTaskOldestWaitingAge, a, 30)
		// The old one fetched: the new one was seen at the last
		// collection.
		f.lock("old", "w", time.Minute)
		f.advance(20 * time.Second)
		e.collect()
		wantValue(t, e, catalog.CamundaExternalTaskOldestWaitingAge, a, 20)
		// Its lock lapses: it waits again, since it was first seen.
		f.advance(time.Minute)
		e.collect()
		wantValue(t, e, catalog.CamundaExternalTaskOldestWaitingAge, a, 110)
		f.mu.Lock()
		lookups := f.requests["/history/activity-instance"]
		f.mu.Unlock()
		if lookups != 0 {
			t.Errorf("%d activity instance requests at history level none", lookups)
		}
	})

	t.Run("7.20 with max_listed_tasks cut", func(t *testing.T) {
		f := newFakeCamunda(t)
		f.version, f.noCreate, f.openActInsts = "7.20.0", true, true
		// Ids sort against creation: the list by id reaches the newest
		// first.
		for i := range 5 {
			f.add(&fakeTask{id: fmt.Sprintf("t%d", 9-i), topic: "a"})
			f.advance(10 * time.Second)
		}
		e := fakeExporter(t, f, "", "    max_listed_tasks: 2\n")
		e.collect()
		// Listed: t5 and t6 (10 s and 20 s old): the oldest of them, a
		// lower bound; the oldest of all (t9) is 50 s old.
		wantValue(t, e, catalog.CamundaExternalTaskOldestWaitingAge, a, 20)
		cfg := "    max_listed_tasks: 10\n"
		e2 := fakeExporter(t, f, "", cfg)
		e2.collect()
		wantValue(t, e2, catalog.CamundaExternalTaskOldestWaitingAge, a, 50)
	})
}

// The history log becomes counters by reading the entries new since the
// previous collection, each counted once: the first reading is a baseline,
// history cleanup changes nothing, an entry that commits late (a timestamp
// older than entries already read) is counted once when it appears, within
// late_commit_window.
func TestCamundaHistoryCounters(t *testing.T) {
	f := newFakeCamunda(t)
	f.add(&fakeTask{id: "t1", topic: "a"})
	f.history("a", "failure", 40, time.Hour) // history from before the exporter started
	f.history("a", "success", 100, time.Hour)
	e := fakeExporter(t, f, "", "    late_commit_window: 1m\n")
	e.collect()
	a := map[string]string{"topic": "a"}
	wantValue(t, e, catalog.CamundaExternalTaskFailures, a, 0) // baseline
	wantValue(t, e, catalog.CamundaExternalTaskCompletions, a, 0)
	f.advance(10 * time.Second)
	f.history("a", "failure", 3, 0)
	f.history("a", "success", 5, 0)
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskFailures, a, 3)
	wantValue(t, e, catalog.CamundaExternalTaskCompletions, a, 5)
	// Nothing new: nothing counted, though the reading re-reads the window.
	f.advance(10 * time.Second)
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskCompletions, a, 5)
	// History cleanup removes old entries: the counters do not move.
	f.cleanup(30 * time.Minute)
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskFailures, a, 3)
	wantValue(t, e, catalog.CamundaExternalTaskCompletions, a, 5)
	// A late commit: an entry stamped 15 s ago (before the newest entry
	// read) appears now; counted once, and not again.
	f.history("a", "success", 1, 15*time.Second)
	e.collect()
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskCompletions, a, 6)
	// Later than late_commit_window: missed (an undercount, never a double
	// count).
	f.advance(10 * time.Second)
	f.history("a", "success", 1, 0)
	e.collect()
	f.history("a", "success", 1, 5*time.Minute)
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskCompletions, a, 7)
	// Entries of a topic the engine no longer holds tasks of (its tasks came
	// and went between two collections) make it a reported topic.
	f.history("b", "success", 2, 0)
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskCompletions, map[string]string{"topic": "b"}, 2)
	wantPartition(t, e, "b", map[string]int{})
}

// More new entries than max_history_entries: the newest are counted, the
// rest are not, and the self-metric says so; reading stays bounded.
func TestCamundaHistoryCut(t *testing.T) {
	f := newFakeCamunda(t)
	f.add(&fakeTask{id: "t1", topic: "a"})
	e := fakeExporter(t, f, "", "    max_history_entries: 5\n")
	e.collect()
	f.advance(time.Second)
	f.history("a", "success", 3, 0)
	e.collect()
	a := map[string]string{"topic": "a"}
	wantValue(t, e, catalog.CamundaExternalTaskCompletions, a, 3)
	wantValue(t, e, catalog.ExporterHistoryReadsCut, map[string]string{"engine": "e1"}, 0)
	f.advance(time.Second)
	f.history("a", "success", 20, 0)
	f.advance(time.Second)
	f.resetRequests()
	e.collect()
	if n := f.requests["/history/external-task-log"]; n != 1 {
		t.Fatalf("a cut reading made %d history requests, want 1", n)
	}
	if got := e.must(catalog.CamundaExternalTaskCompletions, a); got >= 23 || got < 4 {
		t.Fatalf("completions after a cut reading = %v, want fewer than all 23", got)
	}
	wantValue(t, e, catalog.ExporterHistoryReadsCut, map[string]string{"engine": "e1"}, 1)
	if !strings.Contains(e.logs.String(), "max_history_entries") {
		t.Fatalf("no warning about max_history_entries:\n%s", e.logs)
	}
	// The engine goes idle after the burst. The next reading still starts
	// late_commit_window (1m by default) before the previous one, inside
	// the burst, and is cut again, but only after it reached back past the
	// previous reading: what it left unread was read then (late commits
	// aside), so no new entry went uncounted and the cut is not counted.
	// From then on readings start after the burst and are not cut (before,
	// they started a window before the newest entry, and an idle engine
	// re-read the burst at every collection).
	f.advance(2 * time.Minute)
	e.collect()
	wantValue(t, e, catalog.ExporterHistoryReadsCut, map[string]string{"engine": "e1"}, 1)
	for i := 0; i < 3; i++ {
		f.advance(30 * time.Second)
		e.collect()
	}
	wantValue(t, e, catalog.ExporterHistoryReadsCut, map[string]string{"engine": "e1"}, 1)
	f.history("a", "success", 2, 0)
	e.collect()
	if got := e.must(catalog.CamundaExternalTaskCompletions, a); got < 6 {
		t.Fatalf("completions after the idle stretch = %v, the two new ones are missing", got)
	}
}

// Under steady load whose late_commit_window holds more entries than
// max_history_entries while each interval's new ones fit, every entry is
// counted and no reading counts as cut: the readings stop inside the
// window they read again, after the previous reading's time.
func TestCamundaHistorySteadyLoadIsNotCut(t *testing.T) {
	f := newFakeCamunda(t)
	f.add(&fakeTask{id: "t1", topic: "a"})
	e := fakeExporter(t, f, "", "    max_history_entries: 10\n")
	e.collect()
	for range 12 {
		for i := range 5 {
			f.history("a", "success", 1, time.Duration(i)*time.Second)
		}
		f.advance(15 * time.Second)
		e.collect()
	}
	wantValue(t, e, catalog.CamundaExternalTaskCompletions, map[string]string{"topic": "a"}, 60)
	wantValue(t, e, catalog.ExporterHistoryReadsCut, map[string]string{"engine": "e1"}, 0)
	if strings.Contains(e.logs.String(), "max_history_entries") {
		t.Fatalf("a steady load that fits was reported as cut:\n%s", e.logs)
	}
}

// A failed collection drops the data and leaves the state as it was: the
// lapse seen in the failed collection is counted once, by the next good one.
func TestCamundaFailedCollectionKeepsState(t *testing.T) {
	f := newFakeCamunda(t)
	f.add(&fakeTask{id: "t1", topic: "a"})
	e := fakeExporter(t, f, "", "")
	e.collect()
	f.lock("t1", "w1", 5*time.Second)
	f.history("a", "failure", 1, 0)
	e.collect()
	f.advance(10 * time.Second)
	f.history("a", "failure", 2, 0)
	f.fail["/process-definition"] = 500 // the last request of a collection fails
	f.incidents = []fakeIncident{{id: "i1", typ: "failedJob", defID: "p:9:x", activity: "a1", ts: f.now}}
	e.collect()
	// The engine answers (camunda_up 1); the external-task collector failed
	// and its series are gone.
	if v, ok := e.get(catalog.CamundaUp, nil); !ok || v != 1 {
		t.Fatalf("camunda_up = %v (present %v), want 1", v, ok)
	}
	wantValue(t, e, catalog.ExporterCollectorUp, map[string]string{"collector": "camunda"}, 0)
	if s := e.samples(catalog.CamundaExternalTasks); len(s) != 0 {
		t.Fatalf("data series present after a failed collection: %v", s)
	}
	if _, ok := e.views.Get("e1"); ok {
		t.Fatal("the in-flight view was not withdrawn after a failed collection")
	}
	delete(f.fail, "/process-definition")
	e.collect()
	a := map[string]string{"topic": "a"}
	wantValue(t, e, catalog.CamundaExternalTaskLockExpirations, a, 1)
	wantValue(t, e, catalog.CamundaExternalTaskFailures, a, 3) // 1, then 3 in the dropped collection
	wantPartition(t, e, "a", map[string]int{vocab.StateLockExpired: 1})
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskLockExpirations, a, 1)
}

func TestCamundaFolding(t *testing.T) {
	// Past label_value_limit the topics compete in labellimit.Order, not in
	// the order the engine lists them: kept are the first two in Order,
	// folded the third (with two tasks, so "other" counts both).
	order := [][]string{{"a"}, {"b"}, {"c"}}
	labellimit.Order(order)
	k1, k2, folded := order[0][0], order[1][0], order[2][0]
	f := newFakeCamunda(t)
	for i, topic := range []string{"a", "b", "c", folded} {
		f.add(&fakeTask{id: fmt.Sprintf("t%d", i), topic: topic})
	}
	for i, w := range []string{"w1", "w2", "w3"} {
		f.add(&fakeTask{id: fmt.Sprintf("l%d", i), topic: k1})
		f.lock(fmt.Sprintf("l%d", i), w, time.Minute)
	}
	f.history(folded, "success", 7, time.Minute)
	e := fakeExporter(t, f, "", "    label_value_limit: 2\n    worker_id_limit: 2\n")
	e.collect()
	wantPartition(t, e, k1, map[string]int{vocab.StateWaiting: 1, vocab.StateLocked: 3})
	wantPartition(t, e, k2, map[string]int{vocab.StateWaiting: 1})
	wantPartition(t, e, "other", map[string]int{vocab.StateWaiting: 2})
	if _, ok := e.get(catalog.CamundaExternalTasks, map[string]string{"topic": folded}); ok {
		t.Fatalf("topic %s is reported despite label_value_limit 2", folded)
	}
	wantValue(t, e, catalog.CamundaExternalTasksLockedByWorker, map[string]string{"topic": k1, "worker_id": "w1"}, 1)
	wantValue(t, e, catalog.CamundaExternalTasksLockedByWorker, map[string]string{"topic": k1, "worker_id": "other"}, 1)
	wantValue(t, e, catalog.ExporterLabelValuesFolded, map[string]string{"metric": catalog.CamundaExternalTasks}, 1)
	wantValue(t, e, catalog.ExporterLabelValuesFolded, map[string]string{"metric": catalog.CamundaExternalTasksLockedByWorker}, 1)
	wantValue(t, e, catalog.ExporterUnwatchedTasks, map[string]string{"engine": "e1"}, 0) // k1's locks are listed
	f.advance(time.Second)
	f.history(folded, "success", 2, 0)
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskCompletions, map[string]string{"topic": "other"}, 2)
	// A lock on the folded topic: counted as locked under "other", but
	// not listed, so not watched for lapses or seen by the joins.
	f.lock("t3", "w1", time.Minute)
	e.collect()
	wantPartition(t, e, "other", map[string]int{vocab.StateWaiting: 1, vocab.StateLocked: 1})
	wantValue(t, e, catalog.ExporterUnwatchedTasks, map[string]string{"engine": "e1"}, 1)
	if v, ok := e.views.Get("e1"); !ok || !v.Truncated {
		t.Fatalf("view with a folded topic's lock: published %v, %+v", ok, v)
	}
}

// TestCamundaFoldingIgnoresTheEnginesOrder: two exporters on the same
// engine (replicas), one reading the topic list in the engine's order and
// one in the reverse order (an engine whose database sorts otherwise), keep
// the same topics under their own label. Admitted as listed, they kept
// a, b and c, d.
func TestCamundaFoldingIgnoresTheEnginesOrder(t *testing.T) {
	f := newFakeCamunda(t)
	for i, topic := range []string{"a", "b", "c", "d"} {
		f.add(&fakeTask{id: fmt.Sprintf("t%d", i), topic: topic})
	}
	kept := func() []string {
		e := fakeExporter(t, f, "", "    label_value_limit: 2\n")
		e.collect()
		var out []string
		for _, topic := range []string{"a", "b", "c", "d"} {
			if _, ok := e.get(catalog.CamundaExternalTasks, map[string]string{"topic": topic, "state": vocab.StateWaiting}); ok {
				out = append(out, topic)
			}
		}
		return out
	}
	first := kept()
	f.reverseTopics = true
	if second := kept(); !slices.Equal(first, second) || len(first) != 2 {
		t.Fatalf("kept %v, then %v with the engine listing topics in reverse; want the same two", first, second)
	}
}

func TestCamundaIncidentsAndJobs(t *testing.T) {
	f := newFakeCamunda(t)
	f.defs["p:1:x"], f.defs["p:2:y"], f.defs["q:1:z"] = "p", "p", "q"
	base := f.now
	f.incidents = []fakeIncident{
		{id: "i1", typ: "failedJob", defID: "p:1:x", activity: "a1", ts: base.Add(-time.Hour)},
		{id: "i2", typ: "failedJob", defID: "p:2:y", activity: "a1", ts: base.Add(-time.Minute)},
		{id: "i3", typ: "failedExternalTask", defID: "q:1:z", activity: "t1", ts: base.Add(-10 * time.Second)},
	}
	f.jobs = []fakeJob{{id: "j1", defID: "p:1:x", defKey: "p", retries: 0}, {id: "j2", defID: "p:2:y", defKey: "", retries: 0}, {id: "j3", defID: "q:1:z", defKey: "q", retries: 3}}
	e := fakeExporter(t, f, "", "")
	e.collect()
	wantValue(t, e, catalog.CamundaIncidents, map[string]string{"incident_type": "failedJob", "process_definition_key": "p", "activity_id": "a1"}, 2)
	wantValue(t, e, catalog.CamundaIncidents, map[string]string{"incident_type": "failedExternalTask", "process_definition_key": "q", "activity_id": "t1"}, 1)
	wantValue(t, e, catalog.CamundaIncidentOldestAge, map[string]string{"incident_type": "failedJob"}, 3600)
	wantValue(t, e, catalog.CamundaIncidentOldestAge, map[string]string{"incident_type": "failedExternalTask"}, 10)
	wantValue(t, e, catalog.CamundaJobsRetriesExhausted, map[string]string{"process_definition_key": "p"}, 2)
	if _, ok := e.get(catalog.CamundaJobsRetriesExhausted, map[string]string{"process_definition_key": "q"}); ok {
		t.Fatal("a job with retries left is reported")
	}
	// Resolved: series stay at 0.
	f.incidents, f.jobs = nil, nil
	e.collect()
	wantValue(t, e, catalog.CamundaIncidents, map[string]string{"incident_type": "failedJob", "process_definition_key": "p", "activity_id": "a1"}, 0)
	wantValue(t, e, catalog.CamundaIncidentOldestAge, map[string]string{"incident_type": "failedJob"}, 0)
	wantValue(t, e, catalog.CamundaJobsRetriesExhausted, map[string]string{"process_definition_key": "p"}, 0)

	// More incidents than max_listed_tasks: the unlisted rest goes to "other".
	g := newFakeCamunda(t)
	g.defs["p:1:x"] = "p"
	for i := 0; i < 5; i++ {
		g.incidents = append(g.incidents, fakeIncident{id: fmt.Sprint(i), typ: "failedJob", defID: "p:1:x", activity: "a1", ts: g.now.Add(-time.Duration(i) * time.Minute)})
	}
	e2 := fakeExporter(t, g, "", "    max_listed_tasks: 3\n")
	e2.collect()
	wantValue(t, e2, catalog.CamundaIncidents, map[string]string{"process_definition_key": "p"}, 3)
	wantValue(t, e2, catalog.CamundaIncidents, map[string]string{"process_definition_key": "other", "activity_id": "other"}, 2)
	wantValue(t, e2, catalog.CamundaIncidentOldestAge, map[string]string{"incident_type": "failedJob"}, 240)
}

// TestCamundaRequestBudget checks the documented formula
// (docs/camunda-states.md) request by request.
func TestCamundaRequestBudget(t *testing.T) {
	f := newFakeCamunda(t)
	// Topic a: 150 locked (two list pages of 100), 3 lapsed, 2 waiting.
	for i := 0; i < 155; i++ {
		id := fmt.Sprintf("a%03d", i)
		f.add(&fakeTask{id: id, topic: "a"})
		switch {
		case i < 150:
			f.lock(id, "w", time.Hour)
		case i < 153:
			f.lock(id, "w", time.Second)
		}
	}
	f.add(&fakeTask{id: "b1", topic: "b"}) // waiting only: no lists
	f.advance(2 * time.Second)
	e := fakeExporter(t, f, "c", "") // c: configured, empty: no request of its own
	e.collect()
	got := f.requestCount()
	// 1 version + 1 telemetry (first collection) + 1 topic-names
	// + engine-wide: 1 history page, 4 state-group counts, 1 incident
	//   count = 6
	// + per topic holding tasks (a, b): 1 count each = 2 (c holds none)
	// + in-flight tasks within max_listed_tasks: one engine-wide list each
	//   of locked (150, one page of 1000) and lapsed (3) = 2
	// + oldest waiting: a, b = 2
	// + camunda_jobs: 2 job counts (no retries left, executable), 1 job
	//   log page = 3 (no job, so no job list)
	// + camunda_processes: 1 process definition statistics
	// + camunda_history, once per history_cleanup.interval: 1 page of the
	//   cleanable report, the cleanup's configuration and its jobs = 3
	const history = 3
	want := 3 + 6 + 2 + 2 + 2 + 3 + 1 + history
	if got != want {
		t.Fatalf("first collection made %d requests, want %d: %v", got, want, f.requests)
	}
	want -= history // read again only after history_cleanup.interval
	wantPartition(t, e, "a", map[string]int{vocab.StateWaiting: 2, vocab.StateLocked: 150, vocab.StateLockExpired: 3})
	wantValue(t, e, catalog.ExporterUnwatchedTasks, map[string]string{"engine": "e1"}, 0)
	f.resetRequests()
	e.collect()
	if got := f.requestCount(); got != want-1 { // telemetry is cached per engine version
		t.Fatalf("second collection made %d requests, want %d: %v", got, want-1, f.requests)
	}
	// A failure since the last collection costs nothing extra: it is in
	// the history page read anyway.
	f.failure("a000", 3, time.Minute, "boom")
	f.resetRequests()
	e.collect()
	if got := f.requestCount(); got != want-1 || f.requests["/history/external-task-log"] != 1 {
		t.Fatalf("collection after a failure made %d requests, want %d: %v", got, want-1, f.requests)
	}
	wantPartition(t, e, "a", map[string]int{vocab.StateWaiting: 2, vocab.StateLocked: 149, vocab.StateRetryBackoff: 1, vocab.StateLockExpired: 3})
	// Suspended tasks on few topics are listed engine-wide when that is
	// cheaper than a count per topic, else counted per topic.
	f.mu.Lock()
	f.task("b1").suspended = true
	f.mu.Unlock()
	f.resetRequests()
	e.collect()
	// One list of the suspended task instead of a count for a and b; b has
	// nothing fetchable left, so no oldest waiting request for it.
	if got := f.requestCount(); got != want-1+1-1 {
		t.Fatalf("collection with a suspended task made %d requests, want %d: %v", got, want-1, f.requests)
	}
	wantPartition(t, e, "b", map[string]int{vocab.StateSuspended: 1})
	f.mu.Lock()
	for _, tk := range f.tasks[:100] {
		tk.suspended = true
	}
	f.mu.Unlock()
	f.resetRequests()
	e.collect()
	if got := f.requestCount(); got != want-1+2-1 { // 101 suspended tasks cost more to list than 2 counts
		t.Fatalf("collection with 101 suspended tasks made %d requests, want %d: %v", got, want, f.requests)
	}
	wantPartition(t, e, "a", map[string]int{vocab.StateWaiting: 2, vocab.StateLocked: 50, vocab.StateSuspended: 100, vocab.StateLockExpired: 3})
	wantPartition(t, e, "b", map[string]int{vocab.StateSuspended: 1})
	// max_listed_tasks bounds the lists: with 10, a's locked list is one page
	// of 11 (10 plus one to learn the list is longer) and nothing else is listed.
	g := newFakeCamunda(t)
	for i := 0; i < 155; i++ {
		id := fmt.Sprintf("a%03d", i)
		g.add(&fakeTask{id: id, topic: "a"})
		if i < 150 {
			g.lock(id, "w", time.Hour)
		}
	}
	e2 := fakeExporter(t, g, "", "    max_listed_tasks: 10\n")
	e2.collect()
	if got, want := g.requests["/external-task"], 2; got != want { // locked list + oldest waiting
		t.Fatalf("with max_listed_tasks 10: %d list requests, want %d", got, want)
	}
	wantPartition(t, e2, "a", map[string]int{vocab.StateWaiting: 5, vocab.StateLocked: 150})
	wantValue(t, e2, catalog.CamundaExternalTasksLockedByWorker, map[string]string{"topic": "a", "worker_id": "w"}, 10)
	wantValue(t, e2, catalog.CamundaExternalTasksLockedByWorker, map[string]string{"topic": "a", "worker_id": "other"}, 140)
	if v, ok := e2.views.Get("e1"); !ok || !v.Truncated || len(v.Tasks) != 10 {
		t.Fatalf("view with a cut list: published %v, %+v", ok, v)
	}
	wantValue(t, e2, catalog.ExporterUnwatchedTasks, map[string]string{"engine": "e1"}, 140)
}

// Configured topics are reserved: reported under their own label even
// beyond label_value_limit and without a task, while a topic the engine
// holds beyond them folds into "other".
func TestCamundaConfiguredTopicsBeyondLimit(t *testing.T) {
	f := newFakeCamunda(t)
	f.add(&fakeTask{id: "t1", topic: "z"})
	e := fakeExporter(t, f, "x, y", "    label_value_limit: 1\n")
	e.collect()
	wantPartition(t, e, "x", map[string]int{})
	wantPartition(t, e, "y", map[string]int{})
	wantPartition(t, e, "other", map[string]int{vocab.StateWaiting: 1})
	if _, ok := e.get(catalog.CamundaExternalTasks, map[string]string{"topic": "z"}); ok {
		t.Fatal("topic z reported beyond label_value_limit 1")
	}
	wantValue(t, e, catalog.ExporterLabelValuesFolded, map[string]string{"metric": catalog.CamundaExternalTasks}, 1)
}

// Every camunda_* metric of the catalog is served, lint-clean, with the
// catalog's HELP and labels, and no series twice (the pedantic registry
// checks that).
func TestCamundaServesEveryCatalogMetric(t *testing.T) {
	f := newFakeCamunda(t)
	f.defs["p:1:x"] = "p"
	f.add(&fakeTask{id: "t1", topic: "a"})
	f.add(&fakeTask{id: "t2", topic: "a"})
	f.lock("t2", "w1", time.Minute)
	f.incidents = []fakeIncident{{id: "i1", typ: "failedJob", defID: "p:1:x", activity: "a1", ts: f.now.Add(-time.Minute)}}
	f.jobs = []fakeJob{{id: "j1", defID: "p:1:x", defKey: "p", retries: 0}}
	f.addJob(fakeJob{id: "j2", defID: "p:1:x", defKey: "p", retries: 3})
	f.cleanable = []fakeCleanable{{defID: "p:1:x", key: "p", ttl: new(0), finished: 3, cleanable: 2}}
	f.cleanupJobs = []map[string]any{{"id": "hc1", "retries": 3, "exceptionMessage": nil}}
	e := fakeExporter(t, f, "", "")
	e.collect()
	f.executeJob("j2", false)
	f.failure("t1", 2, time.Minute, "order 4711 timed out")
	e.collect()
	served := collectortest.ExpectCatalogFamilies(t, collectortest.LintAndGather(t, e.set))
	// Only engine-database mode can tell the engine's table sizes
	// (TestCamundaEngine's HistoryCleanup scenario reads them).
	served[catalog.CamundaEngineTableBytes] = true
	for _, m := range catalog.All() {
		if m.Source == catalog.SourceCamunda && !served[m.Name] {
			t.Errorf("catalog metric %s is not served", m.Name)
		}
	}
	wantValue(t, e, catalog.CamundaEngineInfo, map[string]string{"version": "7.24.0", "flavor": "camunda"}, 1)
}

// Entries of folded topics count under topic="other", each once: there is
// no difference of counts to wobble (completions of reported topics and
// history cleanup between requests change nothing).
func TestCamundaOtherHistory(t *testing.T) {
	f := newFakeCamunda(t)
	f.add(&fakeTask{id: "ta", topic: "a"})
	f.add(&fakeTask{id: "tb", topic: "b"})
	f.history("a", "success", 1000, time.Hour)
	f.history("b", "success", 1000, time.Hour)
	f.onRequest = func(path string, q url.Values) {
		if path == "/history/external-task-log" && q.Get("firstResult") == "0" {
			// A reported topic's tasks complete while the history is read.
			f.logLocked("x", "a", "success", "w", f.now)
		}
	}
	e := fakeExporter(t, f, "", "    label_value_limit: 1\n")
	a, other := map[string]string{"topic": "a"}, map[string]string{"topic": "other"}
	e.collect()
	e.collect()
	f.cleanup(30 * time.Minute)
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskCompletions, other, 0)
	wantValue(t, e, catalog.CamundaExternalTaskCompletions, a, 2) // one per collection after the baseline
	f.advance(time.Second)
	f.history("b", "success", 3, 0)
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskCompletions, other, 3)
}

// Incidents beyond max_listed_tasks: the engine's own types (and types
// earlier collections reported) keep their count under
// process_definition_key and activity_id "other"; other types that only
// appear beyond the list are reported under incident_type="other", so the
// series add up to the engine's count. A type whose oldest incident lies
// beyond the list has no age.
func TestCamundaIncidentTypesBeyondList(t *testing.T) {
	f := newFakeCamunda(t)
	f.defs["p:1:x"], f.defs["q:1:z"] = "p", "q"
	for i := 0; i < 3; i++ { // old, listed
		f.incidents = append(f.incidents, fakeIncident{id: fmt.Sprint("e", i), typ: "failedExternalTask", defID: "q:1:z", activity: "t1", ts: f.now.Add(-time.Hour)})
	}
	for i := 0; i < 2; i++ { // newer, beyond the list
		f.incidents = append(f.incidents, fakeIncident{id: fmt.Sprint("j", i), typ: "failedJob", defID: "p:1:x", activity: "a1", ts: f.now.Add(-time.Minute)})
	}
	f.incidents = append(f.incidents, fakeIncident{id: "c0", typ: "customType", defID: "p:1:x", activity: "a1", ts: f.now.Add(-time.Minute)})
	e := fakeExporter(t, f, "", "    max_listed_tasks: 3\n")
	e.collect()
	var sum float64
	for _, s := range e.samples(catalog.CamundaIncidents) {
		sum += s.value
	}
	if sum != 6 {
		t.Fatalf("camunda_incidents add up to %v, the engine has 6: %v", sum, e.samples(catalog.CamundaIncidents))
	}
	wantValue(t, e, catalog.CamundaIncidents, map[string]string{"incident_type": "failedExternalTask", "process_definition_key": "q", "activity_id": "t1"}, 3)
	wantValue(t, e, catalog.CamundaIncidents, map[string]string{"incident_type": "failedJob", "process_definition_key": "other", "activity_id": "other"}, 2)
	otherInc := map[string]string{"incident_type": "other", "process_definition_key": "other", "activity_id": "other"}
	wantValue(t, e, catalog.CamundaIncidents, otherInc, 1)
	// No age where the oldest incident is beyond the list: only an upper
	// bound is known (see docs/camunda-states.md).
	for _, typ := range []string{"other", "failedJob"} {
		if v, ok := e.get(catalog.CamundaIncidentOldestAge, map[string]string{"incident_type": typ}); ok {
			t.Fatalf("oldest incident age reported for incident_type=%s: %v", typ, v)
		}
	}
	wantValue(t, e, catalog.CamundaIncidentOldestAge, map[string]string{"incident_type": "failedExternalTask"}, 3600)
	// Resolved: the series stays, at 0.
	f.mu.Lock()
	f.incidents = nil
	f.mu.Unlock()
	e.collect()
	wantValue(t, e, catalog.CamundaIncidents, otherInc, 0)
}

// A type reported before whose incidents then all lie beyond a cut list
// keeps its count and loses its age for as long: neither reads as "no
// incident" (0) while the incident is open.
func TestCamundaKnownIncidentTypeBeyondList(t *testing.T) {
	f := newFakeCamunda(t)
	f.defs["p:1:x"], f.defs["q:1:z"] = "p", "q"
	f.incidents = []fakeIncident{{id: "j0", typ: "failedJob", defID: "p:1:x", activity: "a1", ts: f.now.Add(-time.Minute)}}
	e := fakeExporter(t, f, "", "    max_listed_tasks: 3\n")
	e.collect()
	job := map[string]string{"incident_type": "failedJob"}
	wantValue(t, e, catalog.CamundaIncidentOldestAge, job, 60)
	f.mu.Lock()
	for i := 0; i < 3; i++ { // older: the list now ends before the job's incident
		f.incidents = append(f.incidents, fakeIncident{id: fmt.Sprint("e", i), typ: "failedExternalTask", defID: "q:1:z", activity: "t1", ts: f.now.Add(-time.Hour)})
	}
	f.mu.Unlock()
	e.collect()
	wantValue(t, e, catalog.CamundaIncidents, map[string]string{"incident_type": "failedJob", "process_definition_key": "other", "activity_id": "other"}, 1)
	if v, ok := e.get(catalog.CamundaIncidentOldestAge, job); ok {
		t.Fatalf("failedJob's oldest age while its incident is beyond the list: %v, want none", v)
	}
	// Listed again (the older ones resolved): the age is back.
	f.mu.Lock()
	f.incidents = f.incidents[:1]
	f.mu.Unlock()
	e.collect()
	wantValue(t, e, catalog.CamundaIncidentOldestAge, job, 60)
}

// worker_id admission is per collection: workers that are gone (a rollout's
// old pods) free their places, and the workers with the most locks are
// named, ties by id.
func TestCamundaWorkerIDsPerCollection(t *testing.T) {
	f := newFakeCamunda(t)
	for i := 0; i < 6; i++ {
		f.add(&fakeTask{id: fmt.Sprint("t", i), topic: "a"})
	}
	e := fakeExporter(t, f, "", "    worker_id_limit: 2\n")
	want := func(w map[string]float64) {
		t.Helper()
		e.wantByWorker(catalog.CamundaExternalTasksLockedByWorker, w)
	}
	folded := map[string]string{"metric": catalog.CamundaExternalTasksLockedByWorker}
	f.lock("t0", "p1", time.Minute)
	f.lock("t1", "p2", time.Minute)
	e.collect()
	want(map[string]float64{"p1": 1, "p2": 1})
	f.complete("t0")
	f.complete("t1")
	f.lock("t2", "p3", time.Minute)
	f.lock("t3", "p3", time.Minute)
	e.collect()
	want(map[string]float64{"p3": 2})
	wantValue(t, e, catalog.ExporterLabelValuesFolded, folded, 0)
	// Most locks first, ties by id: p4 (1 lock) and p5 (1) tie, p4 is named.
	f.lock("t4", "p5", time.Minute)
	f.lock("t5", "p4", time.Minute)
	e.collect()
	want(map[string]float64{"p3": 2, "p4": 1, "other": 1})
	wantValue(t, e, catalog.ExporterLabelValuesFolded, folded, 1)
}

// What happens between two collections is told apart by the workers the
// history log names: a lock that lapsed and went to another worker who then
// failed or completed the task is a lapse and a redelivery, even though no
// collection saw the lapse or the second lock; a failure and a retry by
// another worker is not; a late holder completing its own lapsed task is
// not.
func TestCamundaRedeliveryFromHistory(t *testing.T) {
	f := newFakeCamunda(t)
	for _, id := range []string{"fail", "done", "retry", "late"} {
		f.add(&fakeTask{id: id, topic: "a"})
		f.lock(id, "w1", 10*time.Second)
	}
	e := fakeExporter(t, f, "", "")
	e.collect()
	a := map[string]string{"topic": "a"}
	wantPartition(t, e, "a", map[string]int{vocab.StateLocked: 4})

	// retry: w1 fails it (backoff 5 s) ...
	f.failure("retry", 3, 5*time.Second, "downstream down")
	// late: its lapse is seen first.
	f.advance(11 * time.Second) // every worker lock has lapsed
	f.lock("fail", "w2", time.Minute)
	f.failure("fail", 3, time.Minute, "in progress in another attempt")
	f.lock("done", "w2", time.Minute)
	f.complete("done")
	// ... and after its backoff w2 fetches and fails it again: a retry.
	f.lock("retry", "w2", time.Minute)
	f.failure("retry", 2, time.Minute, "downstream down")
	e.collect()
	// fail: lapse + redelivery (backoff now); done: lapse + redelivery
	// (gone); retry: nothing; late: lapsed, seen (one expiration).
	wantValue(t, e, catalog.CamundaExternalTaskLockExpirations, a, 3)
	wantValue(t, e, catalog.CamundaExternalTaskRedeliveries, a, 2)
	wantPartition(t, e, "a", map[string]int{vocab.StateRetryBackoff: 2, vocab.StateLockExpired: 1})
	view, _ := e.views.Get("e1")
	redelivered := map[string]bool{}
	for _, vt := range view.Tasks {
		redelivered[vt.ID] = vt.Redelivered
	}
	if !redelivered["fail"] || redelivered["retry"] {
		t.Fatalf("view: redelivered %v, want fail only", redelivered)
	}
	// The late holder completes its own lapsed task: no redelivery.
	f.complete("late")
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskRedeliveries, a, 2)
	wantValue(t, e, catalog.CamundaExternalTaskLockExpirations, a, 3)
	// The backoffs end: both tasks wait for their next fetch and stay in
	// the view, fail still redelivered (a record of it stays in doubt
	// between two attempts), retry not.
	f.advance(61 * time.Second)
	e.collect()
	wantPartition(t, e, "a", map[string]int{vocab.StateWaiting: 2})
	wantValue(t, e, catalog.CamundaExternalTaskLockExpirations, a, 3)
	view, _ = e.views.Get("e1")
	inView := map[string]string{}
	for _, vt := range view.Tasks {
		inView[vt.ID] = fmt.Sprintf("%s redelivered=%v", vt.State, vt.Redelivered)
	}
	if want := "map[fail:waiting redelivered=true retry:waiting redelivered=false]"; fmt.Sprint(inView) != want {
		t.Fatalf("view after the backoffs: %v, want %s", inView, want)
	}
}

// A holder that completes its own task after the lock lapsed, with no
// collection in between to see the lapse, leaves one trace: its completion
// stamped after the lock's expiration. That is one lock expiration (the
// lock lapsed), no redelivery (a late completion and a re-fetch under the
// same id look alike); a completion within the lock is neither.
func TestCamundaLateHolderCompletionIsALapse(t *testing.T) {
	f := newFakeCamunda(t)
	for _, id := range []string{"late", "ontime"} {
		f.add(&fakeTask{id: id, topic: "a"})
		f.lock(id, "w1", 10*time.Second)
	}
	e := fakeExporter(t, f, "", "")
	e.collect()
	a := map[string]string{"topic": "a"}
	f.complete("ontime")
	f.advance(16 * time.Second) // 6 s past the lock: beyond the 5 s margin for clocks
	f.complete("late")
	for range 2 { // counted once
		e.collect()
		wantValue(t, e, catalog.CamundaExternalTaskLockExpirations, a, 1)
		wantValue(t, e, catalog.CamundaExternalTaskRedeliveries, a, 0)
	}
}

// Over REST the history is read before the task lists. A lapse, a fetch by
// another worker and its failure that happen between the two show in the
// lists of one collection and in the history of the next; the redelivery
// is counted when the history names the other worker, once. The same with
// the lapse seen first.
func TestCamundaRedeliveryAcrossTheHistoryListGap(t *testing.T) {
	for _, seenLapsed := range []bool{false, true} {
		t.Run(fmt.Sprintf("seenLapsed=%v", seenLapsed), func(t *testing.T) {
			f := newFakeCamunda(t)
			f.add(&fakeTask{id: "t1", topic: "a"})
			f.lock("t1", "w1", 10*time.Second)
			e := fakeExporter(t, f, "", "")
			e.collect()
			if seenLapsed {
				f.advance(11 * time.Second)
				e.collect()
			}
			armed := true
			f.onRequest = func(path string, q url.Values) {
				if armed && path == "/external-task" && q.Get("sortBy") == "id" {
					armed = false
					// f.mu is held: change the engine directly, as it
					// changes between two of the collector's requests.
					tk := f.task("t1")
					exp, retries := f.now.Add(time.Minute), 3
					tk.worker, tk.exp, tk.retries, tk.errMsg = "w2", &exp, &retries, "in progress elsewhere"
					f.logLocked("t1", "a", "failure", "w2", f.now)
				}
			}
			e.collect()
			if armed {
				t.Fatal("the hook did not run: no task list was requested")
			}
			a := map[string]string{"topic": "a"}
			wantValue(t, e, catalog.CamundaExternalTaskRedeliveries, a, 0) // the history does not say it yet
			e.collect()
			e.collect()
			wantValue(t, e, catalog.CamundaExternalTaskRedeliveries, a, 1)
			wantValue(t, e, catalog.CamundaExternalTaskLockExpirations, a, 1)
			view, _ := e.views.Get("e1")
			if len(view.Tasks) != 1 || !view.Tasks[0].Redelivered {
				t.Fatalf("view %+v: t1 is not marked redelivered", view.Tasks)
			}
		})
	}
}

// Bad input: an engine version without an endpoint one collector needs
// fails that collector with an error naming the endpoint and the HTTP
// status, and the other collectors keep working; camunda_up says the engine
// answers. An engine that does not answer GET /version is down: every
// series of it is dropped.
func TestCamundaCollectorsFailAlone(t *testing.T) {
	f := newFakeCamunda(t)
	f.add(&fakeTask{id: "t1", topic: "a"})
	f.jobs = []fakeJob{{id: "j1", defID: "p:1:x", defKey: "p", retries: 0}}
	e := fakeExporter(t, f, "", "")
	e.collect()
	wantValue(t, e, catalog.CamundaJobsRetriesExhausted, map[string]string{"process_definition_key": "p"}, 1)

	f.mu.Lock()
	f.fail["/job/count"] = 404
	f.mu.Unlock()
	e.collect()
	wantValue(t, e, catalog.CamundaUp, nil, 1)
	wantValue(t, e, catalog.ExporterCollectorUp, map[string]string{"collector": "camunda_jobs"}, 0)
	wantValue(t, e, catalog.ExporterCollectorUp, map[string]string{"collector": "camunda"}, 1)
	if s := e.samples(catalog.CamundaJobsRetriesExhausted); len(s) != 0 {
		t.Fatalf("job series served while their collector fails: %v", s)
	}
	wantPartition(t, e, "a", map[string]int{vocab.StateWaiting: 1})
	if !strings.Contains(e.logs.String(), "collector=camunda_jobs") || !strings.Contains(e.logs.String(), "GET /job/count: HTTP 404 Not Found") {
		t.Fatalf("the failure does not name the collector, endpoint and status:\n%s", e.logs)
	}

	f.mu.Lock()
	delete(f.fail, "/job/count")
	f.fail["/version"] = 503
	f.mu.Unlock()
	e.collect()
	wantValue(t, e, catalog.CamundaUp, nil, 0)
	for _, mf := range testkit.Gather(t, e.set) {
		if strings.HasPrefix(mf.GetName(), "camunda_") && mf.GetName() != catalog.CamundaUp {
			t.Errorf("%s served while the engine does not answer GET /version", mf.GetName())
		}
	}
	wantValue(t, e, catalog.ExporterCollectErrors, map[string]string{"collector": "connect"}, 1)
}

// camunda_process_instances: the running instances of every version of a
// key add up; a deployed key without instances reports 0; keys are admitted
// in name order up to label_value_limit; a key whose definitions are gone
// keeps reporting 0. One request per collection.
func TestCamundaProcessInstances(t *testing.T) {
	f := newFakeCamunda(t)
	f.defs["p:1:x"], f.defs["p:2:y"], f.defs["q:1:z"], f.defs["r:1:w"] = "p", "p", "q", "r"
	f.instances["p:1:x"], f.instances["p:2:y"], f.instances["r:1:w"] = 2, 1, 4
	e := fakeExporter(t, f, "", "    label_value_limit: 2\n")
	e.collect()
	wantValue(t, e, catalog.CamundaProcessInstances, map[string]string{"process_definition_key": "p"}, 3)
	wantValue(t, e, catalog.CamundaProcessInstances, map[string]string{"process_definition_key": "q"}, 0)
	wantValue(t, e, catalog.CamundaProcessInstances, map[string]string{"process_definition_key": "other"}, 4)
	wantValue(t, e, catalog.ExporterLabelValuesFolded, map[string]string{"metric": catalog.CamundaProcessInstances}, 1)
	if n := f.requests["/process-definition/statistics"]; n != 1 {
		t.Fatalf("%d statistics requests in one collection, want 1", n)
	}
	f.mu.Lock()
	delete(f.defs, "q:1:z")
	f.instances["p:2:y"] = 0
	f.mu.Unlock()
	e.collect()
	wantValue(t, e, catalog.CamundaProcessInstances, map[string]string{"process_definition_key": "p"}, 2)
	wantValue(t, e, catalog.CamundaProcessInstances, map[string]string{"process_definition_key": "q"}, 0)
	if n := len(e.samples(catalog.CamundaProcessInstances)); n != 3 {
		t.Fatalf("%d series, want 3 (p, q, other)", n)
	}
}

// The jobs collector: executable jobs per key by the engine's filter, the
// age of the oldest executable job since it became due (its due date, or
// its creation without one), and job failures and successes from the job
// log, each entry once.
func TestCamundaJobs(t *testing.T) {
	f := newFakeCamunda(t)
	now := f.now
	at := func(d time.Duration) *time.Time { ts := now.Add(d); return &ts }
	f.addJob(fakeJob{id: "j1", defKey: "p", retries: 3, created: now.Add(-10 * time.Minute)})                     // continuation, due since created
	f.addJob(fakeJob{id: "j2", defKey: "p", retries: 3, due: at(time.Hour)})                                      // timer, not due yet
	f.addJob(fakeJob{id: "j3", defKey: "q", retries: 3, due: at(-5 * time.Minute), created: now.Add(-time.Hour)}) // timer due 5 minutes ago
	f.addJob(fakeJob{id: "j4", defKey: "q", retries: 3, suspended: true, created: now.Add(-2 * time.Hour)})
	f.addJob(fakeJob{id: "j5", defKey: "q", retries: 3, piSuspended: true, created: now.Add(-2 * time.Hour)})
	f.addJob(fakeJob{id: "j6", defKey: "q", retries: 0, created: now.Add(-2 * time.Hour)})
	e := fakeExporter(t, f, "", "")
	e.collect()
	p, q := map[string]string{"process_definition_key": "p"}, map[string]string{"process_definition_key": "q"}
	wantValue(t, e, catalog.CamundaJobsExecutable, p, 1)
	wantValue(t, e, catalog.CamundaJobsExecutable, q, 1)
	wantValue(t, e, catalog.CamundaJobsRetriesExhausted, q, 1)
	wantValue(t, e, catalog.CamundaJobOldestExecutableAge, map[string]string{"engine": "e1"}, 600)
	// The first reading of the job log is a baseline: its keys report 0.
	wantValue(t, e, catalog.CamundaJobFailures, p, 0)
	wantValue(t, e, catalog.CamundaJobSuccesses, q, 0)

	f.advance(time.Minute)
	f.executeJob("j1", false) // fails, retries 2, still executable
	f.executeJob("j3", true)  // done
	e.collect()
	wantValue(t, e, catalog.CamundaJobFailures, p, 1)
	wantValue(t, e, catalog.CamundaJobSuccesses, q, 1)
	wantValue(t, e, catalog.CamundaJobSuccesses, p, 0)
	wantValue(t, e, catalog.CamundaJobsExecutable, q, 0) // seen once, kept at 0
	wantValue(t, e, catalog.CamundaJobOldestExecutableAge, map[string]string{"engine": "e1"}, 660)
	// Read again within late_commit_window, and after history cleanup:
	// nothing counts twice, nothing goes down.
	f.advance(10 * time.Second)
	e.collect()
	f.mu.Lock()
	f.jobLog = nil
	f.mu.Unlock()
	e.collect()
	wantValue(t, e, catalog.CamundaJobFailures, p, 1)
	wantValue(t, e, catalog.CamundaJobSuccesses, q, 1)
	// Nothing executable: age 0.
	f.executeJob("j1", true)
	e.collect()
	wantValue(t, e, catalog.CamundaJobOldestExecutableAge, map[string]string{"engine": "e1"}, 0)
	wantValue(t, e, catalog.CamundaJobSuccesses, p, 1)
}

// Over REST the executable jobs are listed up to max_listed_tasks (by id):
// the rest count under "other", and the oldest age comes from the listed
// ones, a lower bound.
func TestCamundaJobsBeyondTheList(t *testing.T) {
	f := newFakeCamunda(t)
	for i := 0; i < 5; i++ {
		f.addJob(fakeJob{id: fmt.Sprint("j", i), defKey: "p", retries: 3, created: f.now.Add(-time.Duration(i+1) * time.Minute)})
	}
	e := fakeExporter(t, f, "", "    max_listed_tasks: 3\n")
	e.collect()
	wantValue(t, e, catalog.CamundaJobsExecutable, map[string]string{"process_definition_key": "p"}, 3)
	wantValue(t, e, catalog.CamundaJobsExecutable, map[string]string{"process_definition_key": "other"}, 2)
	wantValue(t, e, catalog.CamundaJobOldestExecutableAge, map[string]string{"engine": "e1"}, 180) // j2; j4 (5 minutes) is not listed
}

// wantByWorker fails unless the metric's samples are want, by worker_id.
func (e *camExporter) wantByWorker(name string, want map[string]float64) {
	e.t.Helper()
	got := map[string]float64{}
	for _, s := range e.samples(name) {
		got[s.labels["worker_id"]] = s.value
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		e.t.Fatalf("%s by worker_id %v, want %v", name, got, want)
	}
}

// histogram returns the count, sum and cumulative buckets of one histogram
// series whose labels include want.
func histogram(t *testing.T, e *camExporter, name string, want map[string]string) (count uint64, sum float64, buckets map[float64]uint64) {
	t.Helper()
	m := collectortest.Series(t, e.set, name, want)
	if m == nil {
		t.Fatalf("no histogram %s%v; log:\n%s", name, want, e.logs)
	}
	h := m.GetHistogram()
	buckets = map[float64]uint64{}
	for _, b := range h.GetBucket() {
		buckets[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	return h.GetSampleCount(), h.GetSampleSum(), buckets
}

// camunda_external_task_duration_seconds: creation to success from the
// history stream, each success once; tasks created before the exporter's
// first reading and deleted tasks are not observed; a failed collection
// observes nothing and the next one observes each success once.
func TestCamundaDurations(t *testing.T) {
	f := newFakeCamunda(t)
	f.add(&fakeTask{id: "old", topic: "a"}) // created before the exporter started
	f.advance(5 * time.Minute)
	e := fakeExporter(t, f, "", "    duration_buckets: [1, 5, 10, 60]\n")
	e.collect()
	a := map[string]string{"topic": "a"}
	if n, _, _ := histogram(t, e, catalog.CamundaExternalTaskDuration, a); n != 0 {
		t.Fatalf("%d durations observed on the first collection", n)
	}
	f.add(&fakeTask{id: "t1", topic: "a"})
	f.add(&fakeTask{id: "t2", topic: "a"})
	f.add(&fakeTask{id: "t3", topic: "a"})
	f.advance(3 * time.Second)
	e.collect()
	f.lock("t1", "w1", time.Minute)
	f.complete("t1") // 3 s
	f.lock("t2", "w1", time.Minute)
	f.failure("t2", 1, 0, "boom")
	f.advance(4 * time.Second)
	f.lock("t3", "w1", time.Minute)
	f.deleteTask("t3") // a BPMN error or a cancellation: no duration
	f.lock("old", "w1", time.Minute)
	f.complete("old")
	e.collect()
	n, sum, b := histogram(t, e, catalog.CamundaExternalTaskDuration, a)
	if n != 1 || sum != 3 || b[1] != 0 || b[5] != 1 || b[60] != 1 {
		t.Fatalf("after one success: count %d, sum %v, buckets %v; want 1, 3, {5: 1}", n, sum, b)
	}
	wantValue(t, e, catalog.CamundaExternalTaskCompletions, a, 2) // "old" is counted, not observed
	// t2 succeeds after its retry, 60 s after its creation, in a collection
	// that fails after reading the history: observed once, by the next one.
	f.advance(53 * time.Second)
	f.lock("t2", "w2", time.Minute)
	f.complete("t2")
	f.fail["/process-definition"] = 500 // the last request of the collection, after the history
	f.incidents = []fakeIncident{{id: "i1", typ: "failedJob", defID: "p:9:x", activity: "a1", ts: f.now}}
	e.collect()
	wantValue(t, e, catalog.ExporterCollectorUp, map[string]string{"collector": "camunda"}, 0)
	delete(f.fail, "/process-definition")
	e.collect()
	e.collect() // read again within late_commit_window
	f.cleanup(0)
	e.collect()
	n, sum, b = histogram(t, e, catalog.CamundaExternalTaskDuration, a)
	if n != 2 || sum != 63 || b[10] != 1 || b[60] != 2 {
		t.Fatalf("after the retried success: count %d, sum %v, buckets %v; want 2, 63, {5: 1, 60: 2}", n, sum, b)
	}
	wantValue(t, e, catalog.CamundaExternalTaskCompletions, a, 3)
}

// camunda_external_task_oldest_lock_age_seconds follows a lock through
// extendLock and starts anew with another worker or after a backoff;
// camunda_external_task_worker_idle_seconds counts per worker holding locks
// since its last completion or failure on the topic, at most since it was
// first seen holding one, and goes away when it holds none.
func TestCamundaLockAgeAndIdleWorkers(t *testing.T) {
	f := newFakeCamunda(t)
	for _, id := range []string{"t1", "t2", "t3", "t4"} {
		f.add(&fakeTask{id: id, topic: "a"})
	}
	e := fakeExporter(t, f, "", "    worker_id_limit: 1\n")
	e.collect()
	a := map[string]string{"topic": "a"}
	wantIdle := func(want map[string]float64) {
		t.Helper()
		e.wantByWorker(catalog.CamundaExternalTaskWorkerIdle, want)
	}
	wantValue(t, e, catalog.CamundaExternalTaskOldestLockAge, a, 0)
	wantIdle(map[string]float64{})

	f.lock("t1", "w1", time.Minute)
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskOldestLockAge, a, 0)
	wantIdle(map[string]float64{"w1": 0})
	f.advance(30 * time.Second)
	f.lock("t1", "w1", time.Minute) // extendLock: the same lock
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskOldestLockAge, a, 30)
	wantIdle(map[string]float64{"w1": 30})
	f.advance(10 * time.Second)
	f.lock("t2", "w1", time.Minute)
	f.complete("t2") // w1 makes progress
	f.advance(10 * time.Second)
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskOldestLockAge, a, 50)
	wantIdle(map[string]float64{"w1": 10})

	// A second and a third worker: worker_id_limit 1 names the one with the
	// most locks; "other" is the longest idle of the rest.
	f.lock("t3", "w2", time.Minute)
	f.lock("t4", "w1", time.Minute)
	e.collect()
	f.advance(20 * time.Second)
	e.collect()
	wantIdle(map[string]float64{"w1": 30, "other": 20})
	wantValue(t, e, catalog.CamundaExternalTaskOldestLockAge, a, 70)

	// t1's lock lapses; w2 fails t3 (a retry backoff is no lock); w1 still
	// holds t4.
	f.advance(50 * time.Second) // t1 (locked at +30s for 1m) has lapsed; t4 too
	f.lock("t4", "w1", time.Minute)
	f.failure("t3", 2, time.Minute, "boom")
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskOldestLockAge, a, 70) // t4, locked 70 s ago, extended
	wantIdle(map[string]float64{"w1": 80})                           // w2 holds nothing now
	// Another worker takes the lapsed t1: its lock is new.
	f.lock("t1", "w3", time.Minute)
	f.complete("t4")
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskOldestLockAge, a, 0)
	wantIdle(map[string]float64{"w3": 0})
	f.complete("t1")
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskOldestLockAge, a, 0)
	wantIdle(map[string]float64{})
}

// camunda_external_task_oldest_incident_age_seconds: the oldest
// failedExternalTask incident per topic, joined with its task by the
// incident's configuration; 0 for a topic without one. Beyond
// max_listed_tasks a topic none of whose incidents was listed has no value.
func TestCamundaOldestIncidentPerTopic(t *testing.T) {
	f := newFakeCamunda(t)
	for _, id := range []string{"a1", "a2", "b1"} {
		f.add(&fakeTask{id: id, topic: id[:1]})
		f.lock(id, "w1", time.Hour)
	}
	f.failure("a1", 0, 0, "gave up")
	f.advance(10 * time.Minute)
	f.failure("b1", 0, 0, "gave up")
	f.advance(5 * time.Minute)
	f.failure("a2", 0, 0, "gave up")
	f.incidents = append(f.incidents, fakeIncident{id: "j", typ: "failedJob", defID: "proc:1:abc", activity: "x", ts: f.now.Add(-time.Hour)})
	f.advance(5 * time.Minute)
	e := fakeExporter(t, f, "c", "")
	e.collect()
	age := catalog.CamundaExternalTaskOldestIncidentAge
	wantValue(t, e, age, map[string]string{"topic": "a"}, 1200)
	wantValue(t, e, age, map[string]string{"topic": "b"}, 600)
	wantValue(t, e, age, map[string]string{"topic": "c"}, 0)
	wantValue(t, e, catalog.CamundaIncidentOldestAge, map[string]string{"incident_type": "failedExternalTask"}, 1200)
	// The oldest is resolved (retries raised): the next one counts.
	f.mu.Lock()
	f.incidents = f.incidents[1:]
	*f.task("a1").retries = 1
	f.mu.Unlock()
	e.collect()
	wantValue(t, e, age, map[string]string{"topic": "a"}, 300)

	// One incident and one task out of retries listed: a1's incident is the
	// oldest and a1 is listed, so a's age is known; b's incident is beyond
	// the list, and c has none, but with the lists cut that is not known.
	g := newFakeCamunda(t)
	for _, id := range []string{"a1", "b1"} {
		g.add(&fakeTask{id: id, topic: id[:1]})
		g.lock(id, "w1", time.Hour)
	}
	g.failure("a1", 0, 0, "gave up")
	g.advance(time.Minute)
	g.failure("b1", 0, 0, "gave up")
	e2 := fakeExporter(t, g, "c", "    max_listed_tasks: 1\n")
	e2.collect()
	wantValue(t, e2, age, map[string]string{"topic": "a"}, 60)
	for _, topic := range []string{"b", "c"} {
		if v, ok := e2.get(age, map[string]string{"topic": topic}); ok {
			t.Errorf("topic %s: oldest incident age %v reported though its incidents are beyond max_listed_tasks", topic, v)
		}
	}
}

// camunda_external_task_bpmn_errors_total: deletion entries the activity
// instance history shows as BPMN errors (caught: an error catch event in
// the same root process instance; uncaught: the task's scope completed),
// each once; a cancellation is no BPMN error. The evidence costs requests
// only in collections with new deletion entries.
func TestCamundaBpmnErrors(t *testing.T) {
	f := newFakeCamunda(t)
	for _, id := range []string{"a1", "a2", "a3", "a4", "b1"} {
		f.add(&fakeTask{id: id, topic: id[:1]})
		f.lock(id, "w1", time.Minute)
	}
	e := fakeExporter(t, f, "", "")
	e.collect()
	f.advance(time.Second)
	f.bpmnError("a1", true)
	f.bpmnError("a2", false)
	f.deleteTask("a3") // a cancellation
	f.bpmnError("b1", true)
	f.resetRequests()
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskBpmnErrors, map[string]string{"topic": "a"}, 2)
	wantValue(t, e, catalog.CamundaExternalTaskBpmnErrors, map[string]string{"topic": "b"}, 1)
	wantValue(t, e, catalog.CamundaExternalTaskCompletions, map[string]string{"topic": "a"}, 0)
	// Two catch event types, one activity (task_1) of the deleted tasks.
	if n := f.requests["/history/activity-instance"]; n != 3 {
		t.Fatalf("%d activity instance requests for new deletions, want 3", n)
	}
	f.resetRequests()
	f.advance(time.Second)
	e.collect() // the same entries again, within late_commit_window
	wantValue(t, e, catalog.CamundaExternalTaskBpmnErrors, map[string]string{"topic": "a"}, 2)
	if n := f.requests["/history/activity-instance"]; n != 0 {
		t.Fatalf("%d activity instance requests without new deletions, want 0", n)
	}
	// A cancellation right after a caught error in another root process
	// instance is still no BPMN error.
	f.bpmnError("a4", true)
	f.add(&fakeTask{id: "a5", topic: "a"})
	f.deleteTask("a5")
	e.collect()
	wantValue(t, e, catalog.CamundaExternalTaskBpmnErrors, map[string]string{"topic": "a"}, 3)
}

// The requests the jobs, processes, incident-per-topic and BPMN error parts
// add to a collection (docs/camunda-states.md, "The cost of a
// collection"), request by request, without the status page's reading
// (its requests are measured against a real engine, engineRequestBudget).
func TestCamundaRequestBudgetOfJobsIncidentsAndDeletions(t *testing.T) {
	f := newFakeCamunda(t)
	f.add(&fakeTask{id: "a1", topic: "a"})
	f.add(&fakeTask{id: "a2", topic: "a"})
	f.lock("a1", "w1", time.Hour)
	f.lock("a2", "w1", time.Hour)
	e := newCamundaExporterWith(t, camundaConfig(f.URL(), "", "    history_level: full\n"), false)
	e.collect()
	f.resetRequests()
	e.collect()
	quiet := map[string]int{
		"/version": 1, "/external-task/topic-names": 1, "/history/external-task-log": 1,
		"/external-task/count": 4 + 1, // 4 engine-wide state groups, the total of a
		"/external-task":       1,     // the locked tasks (no lapsed one, nothing fetchable)
		"/incident/count":      1,
		"/job/count":           2, "/history/job-log": 1, // camunda_jobs
		"/process-definition/statistics": 1, // camunda_processes
	}
	want := func(what string, w map[string]int) {
		t.Helper()
		f.mu.Lock()
		got := maps.Clone(f.requests)
		clear(f.requests)
		f.mu.Unlock()
		if fmt.Sprint(got) != fmt.Sprint(w) {
			t.Fatalf("%s: requests %v, want %v", what, got, w)
		}
	}
	want("steady collection", quiet)

	// A task out of retries opens a failedExternalTask incident: the
	// incident list, and the tasks out of retries to join them by id. A
	// job that fails and one that waits: both job lists.
	f.failure("a1", 0, 0, "gave up")
	f.addJob(fakeJob{id: "j1", defKey: "p", retries: 3})
	f.addJob(fakeJob{id: "j2", defKey: "p", retries: 0})
	e.collect()
	w := maps.Clone(quiet)
	w["/incident"] = 1
	w["/external-task"] = 2      // the locked task a2; the task a1 out of retries
	w["/external-task/count"]++  // a holds an exhausted task: counted per topic (1 topic: cheaper than a list)
	w["/job"] = 2                // no retries left, executable
	w["/process-definition"] = 1 // the incident's definition key, not cached yet
	want("with an incident and jobs", w)
	delete(w, "/process-definition")

	// New deletion entries: the error catch events (2) and the scopes
	// completed per activity of the deleted tasks (1: task_1).
	f.bpmnError("a2", true)
	e.collect()
	w["/history/activity-instance"] = 3
	w["/external-task"] = 1 // a2 is gone: no locked task to list; the task a1 out of retries
	want("with a deletion", w)
	wantValue(t, e, catalog.CamundaExternalTaskBpmnErrors, map[string]string{"topic": "a"}, 1)
}

// More new job log entries than max_history_entries: the newest are
// counted, the collection counts in workflow_exporter_job_history_reads_cut_total.
func TestCamundaJobLogCut(t *testing.T) {
	f := newFakeCamunda(t)
	e := fakeExporter(t, f, "", "    max_history_entries: 3\n")
	e.collect()
	f.advance(time.Second)
	for i := 0; i < 2; i++ {
		f.addJob(fakeJob{id: fmt.Sprint("j", i), defKey: "p", retries: 3}) // a creation entry each
	}
	f.advance(time.Second)
	f.executeJob("j0", false)
	f.executeJob("j1", false)
	e.collect()
	// Four new entries, three read: the two failures (newest) and one creation.
	wantValue(t, e, catalog.CamundaJobFailures, map[string]string{"process_definition_key": "p"}, 2)
	wantValue(t, e, catalog.ExporterJobHistoryReadsCut, map[string]string{"engine": "e1"}, 1)
	// As for the external-task log: the next reading starts
	// late_commit_window before the previous one, still inside the burst,
	// and is cut again without counting anything twice, after it reached
	// the previous reading's time: no new entry lost, no cut counted; once
	// past the burst, it is not cut.
	f.advance(2 * time.Minute)
	e.collect()
	wantValue(t, e, catalog.ExporterJobHistoryReadsCut, map[string]string{"engine": "e1"}, 1)
	f.advance(30 * time.Second)
	e.collect()
	wantValue(t, e, catalog.ExporterJobHistoryReadsCut, map[string]string{"engine": "e1"}, 1)
	wantValue(t, e, catalog.CamundaJobFailures, map[string]string{"process_definition_key": "p"}, 2)
	if !strings.Contains(e.logs.String(), "more new job history log entries than max_history_entries") {
		t.Fatalf("no warning logged:\n%s", e.logs)
	}
}

// With tenant_label, the list of a topic's tasks without a tenant stays
// bounded by max_listed_tasks however many in-flight tasks the tenants
// hold (the query cannot select "no tenant", so the reader lists the topic
// and skips the tenants' tasks): a no-tenant task beyond that is
// unwatched, and said to be.
func TestCamundaNoTenantListIsBounded(t *testing.T) {
	f := newFakeCamunda(t)
	f.mu.Lock()
	f.defs["p:1:acme"], f.defs["p:1"] = "p", "p"
	f.defTenants["p:1:acme"] = "acme"
	f.mu.Unlock()
	for i := range 2000 {
		id := fmt.Sprintf("t%05d", i)
		f.add(&fakeTask{id: id, topic: "a", tenant: "acme", defID: "p:1:acme"})
		f.lock(id, "w1", time.Hour)
	}
	f.add(&fakeTask{id: "t99999", topic: "a", defID: "p:1"}) // sorts after the tenant's
	f.lock("t99999", "w2", time.Hour)
	e := fakeExporter(t, f, "", "    tenant_label: true\n    max_listed_tasks: 10\n")
	listed := 0
	f.mu.Lock()
	f.onRequest = func(path string, q url.Values) {
		if path == "/external-task" {
			n, _ := strconv.Atoi(q.Get("maxResults"))
			listed += n
		}
	}
	f.mu.Unlock()
	e.collect()
	if listed > 30 {
		t.Errorf("the lists asked for %d tasks with max_listed_tasks 10", listed)
	}
	wantValue(t, e, catalog.CamundaExternalTasks, map[string]string{"tenant": "", "topic": "a", "state": vocab.StateLocked}, 1)
	wantValue(t, e, catalog.CamundaExternalTasks, map[string]string{"tenant": "acme", "topic": "a", "state": vocab.StateLocked}, 2000)
	// 1991 of acme's beyond the budget, and the task without a tenant.
	wantValue(t, e, catalog.ExporterUnwatchedTasks, map[string]string{"engine": "e1"}, 1992)
}

// TestCamundaRequestBudgetWithTenants checks the budget per tenant of
// docs/camunda-states.md against an exporter without tenant_label on the
// same engine, and what the REST reader makes of tasks without a tenant,
// which the external task query cannot select: counts by subtraction,
// lists filtered, in the engine-wide lists and topic by topic.
func TestCamundaRequestBudgetWithTenants(t *testing.T) {
	f := newFakeCamunda(t)
	f.mu.Lock()
	for _, d := range []struct{ id, tenant string }{{"p:1:acme", "acme"}, {"p:1:globex", "globex"}, {"p:1", ""}} {
		f.defs[d.id] = "p"
		if d.tenant != "" {
			f.defTenants[d.id] = d.tenant
		}
	}
	f.mu.Unlock()
	// Topic a: 3 tasks of acme, 2 of globex, 1 of none; topic b: 1 of acme.
	n := 0
	add := func(topic, tenant string, k int) {
		for range k {
			n++
			def := "p:1"
			if tenant != "" {
				def += ":" + tenant
			}
			f.add(&fakeTask{id: fmt.Sprintf("t%02d", n), topic: topic, tenant: tenant, defID: def})
			f.advance(time.Second) // created one after another
		}
	}
	add("a", "acme", 3)
	add("a", "globex", 2)
	add("a", "", 1)
	add("b", "acme", 1)
	plain := fakeExporter(t, f, "", "")
	tenants := fakeExporter(t, f, "", "    tenant_label: true\n")
	steady := func(x *camExporter) map[string]int {
		x.collect()
		f.resetRequests()
		x.collect()
		return maps.Clone(f.requests)
	}
	p, q := steady(plain), steady(tenants)
	// P = 2 topics, N = 2 tenants: P x N more totals; W' = 4 keys with a
	// fetchable task against W = 2 topics: 2 more oldest-task lists (the
	// key of no tenant finds its task on the first page); 1 definition
	// statistics for the tenants.
	for path, more := range map[string]int{"/external-task/count": 2 * 2, "/external-task": 4 - 2, "/process-definition/statistics": 1} {
		if q[path]-p[path] != more {
			t.Errorf("%s: %d requests with tenant_label, %d without, want %d more", path, q[path], p[path], more)
		}
	}
	total := func(m map[string]int) (s int) {
		for _, v := range m {
			s += v
		}
		return s
	}
	if total(q)-total(p) != 2*2+2+1 {
		t.Errorf("tenant_label costs %d more requests (%v against %v), want P x N + (W' - W) + 1 = 7", total(q)-total(p), q, p)
	}
	state := func(x *camExporter, tenant, topic, st string) float64 {
		t.Helper()
		return x.must(catalog.CamundaExternalTasks, map[string]string{catalog.TenantLabel: tenant, "topic": topic, "state": st})
	}
	for _, c := range []struct {
		tenant, topic string
		waiting       float64
		age           float64 // the oldest waiting task's, by the fake's clock
	}{{"acme", "a", 3, 7}, {"globex", "a", 2, 4}, {"", "a", 1, 2}, {"acme", "b", 1, 1}} {
		if got := state(tenants, c.tenant, c.topic, vocab.StateWaiting); got != c.waiting {
			t.Errorf("tenant %q topic %s: %v waiting, want %v", c.tenant, c.topic, got, c.waiting)
		}
		labels := map[string]string{catalog.TenantLabel: c.tenant, "topic": c.topic}
		if got := tenants.must(catalog.CamundaExternalTaskOldestWaitingAge, labels); got != c.age {
			t.Errorf("tenant %q topic %s: oldest waiting %vs, want %vs", c.tenant, c.topic, got, c.age)
		}
	}
	if _, ok := tenants.get(catalog.CamundaExternalTasks, map[string]string{catalog.TenantLabel: "globex", "topic": "b"}); ok {
		t.Error("a key without tasks is reported: (globex, b)")
	}

	// Locks: two of acme's on a by w1, the tenantless task by w2. Within
	// max_listed_tasks the lists are engine-wide; with 2 they go key by
	// key, and the key of no tenant lists a's tasks (acme's first, by id)
	// and keeps its own.
	f.lock("t01", "w1", time.Hour)
	f.lock("t02", "w1", time.Hour)
	f.lock("t06", "w2", time.Hour)
	cut := fakeExporter(t, f, "", "    tenant_label: true\n    max_listed_tasks: 2\n")
	for name, x := range map[string]*camExporter{"engine-wide lists": tenants, "lists per key": cut} {
		x.collect()
		for _, c := range []struct {
			tenant   string
			locked   float64
			worker   string
			byWorker float64
			waiting  float64
		}{{"acme", 2, "w1", 2, 1}, {"globex", 0, "w1", 0, 2}, {"", 1, "w2", 1, 0}} {
			if got := state(x, c.tenant, "a", vocab.StateLocked); got != c.locked {
				t.Errorf("%s: tenant %q: %v locked, want %v", name, c.tenant, got, c.locked)
			}
			if got := state(x, c.tenant, "a", vocab.StateWaiting); got != c.waiting {
				t.Errorf("%s: tenant %q: %v waiting, want %v", name, c.tenant, got, c.waiting)
			}
			// With lists per key the budget of 2 goes to the key of no
			// tenant (its key sorts first) and one of acme's.
			if name == "engine-wide lists" || c.tenant == "" {
				got, _ := x.get(catalog.CamundaExternalTasksLockedByWorker, map[string]string{catalog.TenantLabel: c.tenant, "topic": "a", "worker_id": c.worker})
				if got != c.byWorker {
					t.Errorf("%s: tenant %q: %v locked by %s, want %v", name, c.tenant, got, c.worker, c.byWorker)
				}
			}
		}
	}
}

// budgetTopic is one topic of a request-budget scenario: its open tasks
// by state.
type budgetTopic struct{ waiting, locked, lapsed, suspended, exhausted int }

// restSteadyBudget is the formula of docs/camunda-states.md ("The cost of a
// collection", REST mode) for a steady collection (the telemetry product
// name cached, camunda_history not due, no new history or job log entry,
// no job, no new deletion, every definition id cached, nothing folded, the
// status page on): p is the page size, b max_listed_tasks.
func restSteadyBudget(topics []budgetTopic, p, b int) int {
	var t, w, s, e, l, x int
	for _, tp := range topics {
		n := tp.waiting + tp.locked + tp.lapsed + tp.suspended + tp.exhausted
		if n == 0 {
			continue
		}
		t++
		s, e, l, x = s+tp.suspended, e+tp.exhausted, l+tp.locked, x+tp.lapsed
		if tp.waiting+tp.lapsed > 0 {
			w++ // a fetchable task: its oldest is asked for
		}
	}
	// pages is how many requests list n items (0: none): one page more
	// than whole pages, as the last one must come back short.
	pages := func(n int) int {
		if n == 0 {
			return 0
		}
		return n/p + 1
	}
	// group is a state group listed engine-wide when that costs less than
	// a count per topic (ItemsPerCountRequest = 50).
	group := func(n int) int {
		switch {
		case n == 0:
			return 0
		case pages(n)+n/50 < t:
			return pages(n)
		}
		return t
	}
	r := 1 + // GET /version
		1 + // topic names
		4 + // engine-wide counts S, E, L, X
		1 + // the history page (nothing new)
		1 + // incident count
		t + // a total per topic holding tasks
		group(s) + group(e) +
		w // the oldest fetchable task per topic that has one
	if l+x <= b {
		r += pages(l) + pages(x)
	} else {
		// Counted per topic, listed topic by topic in name order within
		// b (each list here fits one page).
		r += 2 * t
		left := b
		for _, tp := range topics {
			for _, n := range []int{tp.locked, tp.lapsed} {
				if take := min(n, left); take > 0 {
					r++
					left -= take
				}
			}
		}
	}
	if e > 0 {
		// One failedExternalTask incident per exhausted task: the incident
		// list, and the tasks out of retries for the incidents' topics;
		// the status page (on, as by default) lists the oldest
		// status.max_items of those incidents and their tasks by id, 100
		// ids a request.
		listed := min(e, config.DefaultStatusMaxItems)
		r += pages(e) + pages(e) + 1 + (listed+99)/100
	}
	return r + 3 + 1 // camunda_jobs: two counts and the job log page; camunda_processes
}

// TestCamundaRequestBudgetFormula checks the request budget formula of
// docs/camunda-states.md against the fake engine's count of a steady
// collection, for topics and states that take every branch of the formula:
// state groups listed engine-wide or counted per topic, the lists' pages at
// a page size (max_results_limit) that the counts fill exactly or not, the
// in-flight tasks within max_listed_tasks or beyond it.
func TestCamundaRequestBudgetFormula(t *testing.T) {
	uniform := func(n int, tp budgetTopic) []budgetTopic {
		out := make([]budgetTopic, n)
		for i := range out {
			out[i] = tp
		}
		return out
	}
	for _, c := range []struct {
		name   string
		topics []budgetTopic
		p, b   int
	}{
		{"waiting only", uniform(3, budgetTopic{waiting: 4}), 1000, 10000},
		{"the B mix on 40 topics", append(uniform(38, budgetTopic{waiting: 20, locked: 3, lapsed: 1, exhausted: 1}),
			budgetTopic{suspended: 25}, budgetTopic{suspended: 25}), 1000, 10000},
		{"pages filled exactly", uniform(10, budgetTopic{waiting: 1, locked: 2, lapsed: 1}), 10, 10000},
		{"pages of 7", uniform(12, budgetTopic{waiting: 3, locked: 5, lapsed: 2, exhausted: 1}), 7, 10000},
		{"suspended on many topics: counted per topic", uniform(6, budgetTopic{waiting: 1, suspended: 60}), 1000, 10000},
		{"in flight beyond max_listed_tasks", uniform(8, budgetTopic{waiting: 2, locked: 3, lapsed: 2}), 1000, 20},
		{"a topic with nothing fetchable", append(uniform(4, budgetTopic{waiting: 2}), budgetTopic{locked: 3}), 1000, 10000},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeCamunda(t)
			n := 0
			for i, tp := range c.topics {
				topic := fmt.Sprintf("t%03d", i)
				add := func(k int, set func(id string)) {
					for range k {
						n++
						id := fmt.Sprintf("task%05d", n)
						f.add(&fakeTask{id: id, topic: topic})
						set(id)
					}
				}
				add(tp.waiting, func(string) {})
				add(tp.locked, func(id string) { f.lock(id, "w1", time.Hour) })
				add(tp.lapsed, func(id string) { f.lock(id, "w2", -time.Minute) })
				add(tp.suspended, func(id string) { f.mu.Lock(); f.task(id).suspended = true; f.mu.Unlock() })
				add(tp.exhausted, func(id string) { f.lock(id, "w1", time.Hour); f.failure(id, 0, 0, "boom") })
			}
			// The history entries of the set-up leave the lookback.
			f.advance(5 * time.Minute)
			e := fakeExporter(t, f, "", fmt.Sprintf("    max_results_limit: %d\n    max_listed_tasks: %d\n", c.p, c.b))
			e.collect()
			e.collect()
			f.resetRequests()
			e.collect()
			if got, want := f.requestCount(), restSteadyBudget(c.topics, c.p, c.b); got != want {
				t.Fatalf("a steady collection made %d requests, the formula says %d: %v", got, want, f.requests)
			}
		})
	}
}
