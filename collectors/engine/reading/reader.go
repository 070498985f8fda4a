package reading

import (
	"context"
	"time"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
)

// Reader reads a Camunda engine for the engine's collectors; the package
// comment says what every implementation must keep to.
type Reader interface {
	// ReadTasks is the reading of the "camunda" collector: the external
	// tasks per topic (counts by state group, the in-flight tasks, the
	// oldest fetchable one), the external-task history log entries since
	// the request's cursor with the BPMN error evidence of the new deletion
	// entries, and the open incidents. The database reader reads it from
	// one snapshot; the REST reader reads the history before any task list
	// (see locks.go in collectors/engine).
	ReadTasks(ctx context.Context, rq TasksRequest) (*TasksRead, error)
	// ReadJobs is the reading of "camunda_jobs": jobs with no retries
	// left and executable jobs grouped by process definition key, the
	// oldest executable job, and the job log entries since the request's
	// cursor.
	ReadJobs(ctx context.Context, rq JobsRequest) (*JobsRead, error)
	// ReadProcesses is the reading of "camunda_processes": the running
	// process instances per process definition key (every deployed key,
	// 0 without instances).
	ReadProcesses(ctx context.Context, rq ProcessesRequest) (map[string]int64, error)
	// ReadExhausted is the status page's list of the tasks out of
	// retries: the oldest failedExternalTask incidents with their tasks.
	ReadExhausted(ctx context.Context, rq ExhaustedRequest) ([]ExhaustedTask, error)
	// HistoryLevel finds the engine's history level (capability.Level): the
	// database reader from the engine's historyLevel property, the REST
	// reader from evidence in the history, starting from what prev found.
	HistoryLevel(ctx context.Context, prev LevelFinding) (LevelFinding, error)
	// CatchEvents lists the error catch events (bpmn.go) that started
	// between from and to, at most max.
	CatchEvents(ctx context.Context, from, to time.Time, max int) ([]CatchEvent, error)
	// ReadCleanup is the reading of "camunda_history": finished process
	// instances per key (all, cleanable, without a time to live), the
	// history cleanup's switch and jobs, and in engine-database mode the
	// largest engine tables' sizes.
	ReadCleanup(ctx context.Context, rq CleanupRequest) (*CleanupRead, error)
	// WaitingAgeSource says where the reader finds the oldest waiting
	// tasks' creation on this engine at the probe's history level
	// (capability/waitingage.go), for `workflow-exporter check`; why
	// explains an answer it could not learn from the engine.
	WaitingAgeSource(ctx context.Context, at Probe) (src capability.AgeSource, why string, err error)
	// Close releases what the reader holds (the database's connections).
	Close()
}

// Probe is what the probe of the current collection read (GET
// /version), handed to every request of the collection.
type Probe struct {
	// Now is the engine's clock (the Date header of the answer), the
	// reference time of the collection. The database reader compares with
	// the database clock instead, read in its own snapshot.
	Now time.Time
	// Version is the engine version: what a reader learns of an engine
	// version (a field the engine does not return) it remembers per
	// version.
	Version string
	// Level is the history level the collection reads the engine at.
	Level capability.Level
}

// ProcessesRequest is what the processes reading needs.
type ProcessesRequest struct {
	Probe
}
