//go:build !pgonly

package engine_test

import (
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
)

// TestExposition: everything one engine serves over REST (the fake engine
// of fakeengine_test.go, whose clock only moves when the test says), after
// two collections of a scenario with every kind of thing the collectors
// read: waiting, locked, failed and exhausted tasks, a lock that lapsed, a
// completion, incidents, async jobs with a failure, finished instances and
// the history cleanup's report, compared with testdata/exposition-rest.prom:
// a change to any series shows up in review.
func TestExposition(t *testing.T) {
	f := newFakeCamunda(t)
	f.defs["p:1:x"] = "p"
	f.defs["q:1:y"] = "q"
	f.add(&fakeTask{id: "t1", topic: "charge"})
	f.add(&fakeTask{id: "t2", topic: "charge"})
	f.add(&fakeTask{id: "t3", topic: "charge"})
	f.add(&fakeTask{id: "t4", topic: "ship"})
	f.add(&fakeTask{id: "t5", topic: "ship"})
	f.lock("t2", "worker-a", time.Minute)
	f.lock("t3", "worker-b", 10*time.Second)
	f.lock("t4", "worker-a", time.Hour)
	f.incidents = []fakeIncident{{id: "i1", typ: "failedJob", defID: "p:1:x", activity: "a1", ts: f.now.Add(-time.Hour)}}
	f.jobs = []fakeJob{{id: "j1", defID: "p:1:x", defKey: "p", retries: 0}}
	f.addJob(fakeJob{id: "j2", defID: "q:1:y", defKey: "q", retries: 3})
	f.cleanable = []fakeCleanable{{defID: "p:1:x", key: "p", ttl: new(30), finished: 12, cleanable: 5}}
	f.cleanupJobs = []map[string]any{{"id": "hc1", "retries": 3, "exceptionMessage": nil}}
	e := fakeExporter(t, f, "", "")
	e.collect()

	// Half a minute later: t3's lock lapsed, t1 failed with retries left
	// and a backoff, t5 ran out of retries, t2 completed, a job failed.
	f.advance(30 * time.Second)
	f.failure("t1", 2, time.Minute, "order 4711 timed out after 30000 ms")
	f.failure("t5", 0, 0, "card declined")
	f.complete("t2")
	f.executeJob("j2", false)
	e.collect()

	collectortest.Golden(t, e.set, "exposition-rest")
}
