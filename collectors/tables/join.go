package tables

import (
	"time"

	"github.com/workflow-exporter/workflow-exporter/internal/config"
	"github.com/workflow-exporter/workflow-exporter/internal/correlate"
)

// The Camunda joins (join_idempotency.go, join_processed_jobs.go) see what
// neither side sees alone: the side effect happened, and the worker died
// before completing the Camunda task (docs/design.md, "The Camunda join").
// Each collection takes the engine's latest view of in-flight tasks (locked,
// in retry backoff, or with a lapsed lock; bounded by the Camunda
// collector's max_listed_tasks) and looks exactly those tasks up in the
// table with `= ANY($1)` on an indexed column. It never scans either side.
// While the engine's view is missing (engine down), the join's series are
// absent: "unknown", never "all clear". That is not this collector's
// failure: the engine's own camunda_up and WorkflowExporterSourceDown say
// it, so the join reports no series and no error (one alert per outage,
// not one per database that joins with the engine).

// JoinOptions configures the Camunda join of a table: the table's options
// and the engines' side.
type JoinOptions[T any] struct {
	Options[T]
	// Views carries the in-flight tasks each engine's collector publishes.
	Views *correlate.Registry
	// Engines are the configured Camunda engine names the join may use.
	Engines []string
	// Now is the exporter clock, used only for the age of a view.
	Now func() time.Time
}

// taskLookup is one engine's view of its in-flight tasks as a join looks
// them up in its table: by external task id, or by process instance and
// activity (camunda.reference).
type taskLookup struct {
	engine string
	// tasks are the tasks by the reference the join query returns.
	tasks map[string]correlate.Task
	// refs (task ids), or pis and acts (process instances and activities
	// in pairs), are the query's arguments.
	refs, pis, acts []string
	// minAge is how long, in seconds, a row must have been in its status to
	// count: it was written before the view was taken (less the grace), so
	// a worker that is completing the task right now is not reported. Only
	// the view's age is used, so the clocks need not agree.
	minAge float64
}

func newTaskLookup(engine string, view *correlate.View, corr config.Correlation, now time.Time) taskLookup {
	l := taskLookup{engine: engine, tasks: map[string]correlate.Task{}}
	for _, t := range view.Tasks {
		ref := t.ID
		if corr.ByProcessInstance() {
			ref = t.ProcessInstanceID + "/" + t.ActivityID
			l.pis, l.acts = append(l.pis, t.ProcessInstanceID), append(l.acts, t.ActivityID)
		}
		l.refs = append(l.refs, t.ID)
		l.tasks[ref] = t
	}
	l.minAge = (now.Sub(view.Taken) + time.Duration(corr.Grace)).Seconds()
	return l
}

// exampleLookup gives the join queries arguments for EXPLAIN (see
// pgschema.Query).
var exampleLookup = taskLookup{engine: "main", refs: []string{"task-id"}, pis: []string{"pi"}, acts: []string{"act"}, minAge: 10}
