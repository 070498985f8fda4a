package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
)

// oneAtATime keeps the package's tests that use sharedEngine to one at a
// time: an exporter of one would count the others' tasks. The alert
// matrix, the longest by far, has an engine of its own (its exporter
// watches every topic of its engine, and nothing but its simulator may
// raise an alert there), and the tests without an engine need none: they
// run beside them all (TestMain sets how many at a time).
var oneAtATime sync.Mutex

// besideTheMatrix runs a test of sharedEngine in parallel with the
// package's other tests, one such test at a time (oneAtATime).
func besideTheMatrix(t *testing.T) {
	t.Parallel()
	oneAtATime.Lock()
	t.Cleanup(oneAtATime.Unlock)
}

// sharedEngine is the one Camunda 7.24 engine of the package's tests, with
// its job executor off: an async job then stays executable, as behind a job
// executor that stopped, which is what the dashboards' job panels need to
// show data. The simulator's processes and the other tests use external
// tasks only, which need no job executor.
func sharedEngine(t *testing.T) *camundatest.Engine {
	t.Helper()
	flavor := camundatest.FlavorCamunda
	return camundatest.SharedWith(t, camundatest.Options{Flavor: flavor,
		ExtraArgs: []string{"--" + flavor.PropertyPrefix() + ".job-execution.enabled=false"}})
}

// taskFetcher returns fetch, which locks one task of topic for a worker or
// fails the test, and ok, which fails the test on an error.
func taskFetcher(t *testing.T, ctx context.Context, topic string) (fetch func(*engineclient.Worker, time.Duration) engineclient.ExternalTask, ok func(error)) {
	fetch = func(w *engineclient.Worker, lock time.Duration) engineclient.ExternalTask {
		t.Helper()
		ts, err := w.FetchAndLock(ctx, topic, lock, 1)
		if err != nil || len(ts) != 1 {
			t.Fatalf("fetch: %v (%d tasks)", err, len(ts))
		}
		return ts[0]
	}
	ok = func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	return fetch, ok
}
