package engine

import (
	"context"
	"time"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
)

// A reader reads a Camunda engine for the engine's collectors. There are
// two, chosen once per engine (New): restReader (rest.go, rest_*.go) asks
// the REST API, and dbReader (db.go, db_*.go) reads the engine's own tables
// (camunda[].database). Both return the same raw facts with the same
// meaning (per topic, per history entry, per group), and neither admits a
// label: the topics a reading reports are chosen by topicChoice (topics.go),
// which both call as soon as they know the topics the engine holds, and
// every other label limit is applied after the read (the REST reader only
// marks the groups beyond a list it had to cut as folded). So every rule (topic
// admission, the state partition, the lock tracking, the counters, the
// label limits) is one piece of code whichever way the engine was read.
//
// Every request carries the probe of its collection (probeRead): the
// engine's clock, which is the reference time of every reading of that
// collection, and the engine version.
type reader interface {
	// readTasks is the reading of the "camunda" collector: the external
	// tasks per topic (counts by state group, the in-flight tasks, the
	// oldest fetchable one), the external-task history log entries since
	// the request's cursor with the BPMN error evidence of the new deletion
	// entries, and the open incidents. The database reader reads it from
	// one snapshot; the REST reader reads the history before any task list
	// (see locks.go).
	readTasks(ctx context.Context, rq tasksRequest) (*tasksRead, error)
	// readJobs is the reading of "camunda_jobs": jobs with no retries
	// left and executable jobs grouped by process definition key, the
	// oldest executable job, and the job log entries since the request's
	// cursor.
	readJobs(ctx context.Context, rq jobsRequest) (*jobsRead, error)
	// readProcesses is the reading of "camunda_processes": the running
	// process instances per process definition key (every deployed key,
	// 0 without instances).
	readProcesses(ctx context.Context, rq processesRequest) (map[string]int64, error)
	// readExhausted is the status page's list of the tasks out of
	// retries: the oldest failedExternalTask incidents with their tasks.
	readExhausted(ctx context.Context, rq exhaustedRequest) ([]exhaustedTask, error)
	// historyLevel finds the engine's history level (levels.go): the
	// database reader from the engine's historyLevel property, the REST
	// reader from evidence in the history, starting from what prev found.
	historyLevel(ctx context.Context, prev levelFinding) (levelFinding, error)
	// catchEvents lists the error catch events (bpmn.go) that started
	// between from and to, at most max.
	catchEvents(ctx context.Context, from, to time.Time, max int) ([]catchEvent, error)
	// readCleanup is the reading of "camunda_history": finished process
	// instances per key (all, cleanable, without a time to live), the
	// history cleanup's switch and jobs, and in engine-database mode the
	// largest engine tables' sizes.
	readCleanup(ctx context.Context, rq cleanupRequest) (*cleanupRead, error)
	// close releases what the reader holds (the database's connections).
	close()
}

// probeRead is what the probe of the current collection read (GET
// /version), handed to every request of the collection.
type probeRead struct {
	// now is the engine's clock (the Date header of the answer), the
	// reference time of the collection. The database reader compares with
	// the database clock instead, read in its own snapshot.
	now time.Time
	// version is the engine version: what a reader learns of an engine
	// version (a field the engine does not return) it remembers per
	// version.
	version string
	// level is the history level the collection reads the engine at.
	level capability.Level
}
