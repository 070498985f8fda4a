package dashboards

import (
	"strings"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

func idempotency(c rules.Config) *board {
	d := newBoard(c, UIDIdempotency, "Workflow idempotency",
		"Idempotency and processed-job tables of the external-task workers per database and scope: work in progress, stale and in-doubt records, unknown outcomes, lost completions, conflicts and duplicates absorbed.",
		databaseVar(), scopeVar())

	d.row("What needs a human")
	d.stat(panel{title: "Unknown outcome", unit: "short",
		desc:     "Records in UNKNOWN_OUTCOME: the side effect may or may not have happened. Reconcile with the downstream system before any retry.",
		targets:  []target{{expr: sumBy(sel(catalog.IdempotencyRecords, mDatabase, mScope, `status="`+vocab.StatusUnknownOutcome+`"`))}},
		steps:    []step{{1, "orange"}},
		runbooks: []string{rules.WorkflowUnknownOutcomeRecords}})
	d.stat(panel{title: "Stale in progress", unit: "short",
		desc:     "Non-terminal records not updated within the configured stale threshold (default 15m): a worker started and never finished.",
		targets:  []target{{expr: sumBy(sel(catalog.IdempotencyStaleRecords, mDatabase, mScope))}},
		steps:    []step{{1, "orange"}},
		runbooks: []string{rules.WorkflowIdempotencyStaleInProgress}})
	d.stat(panel{title: "In doubt", unit: "short",
		desc:     strings.Join(vocab.IdempotencyInProgressStatuses(), " or ") + " records whose Camunda task lock has lapsed or moved to another worker: two executions may overlap. Reconcile before retrying. 0 needs the database and every engine up; No data means one is down.",
		targets:  []target{{expr: joinZeroWhenUp(sumBy(sel(catalog.IdempotencyInDoubt, mDatabase, mScope)))}},
		steps:    []step{{1, "orange"}},
		runbooks: []string{rules.WorkflowIdempotencyInDoubt}})
	d.stat(panel{title: "Completed, task still open", unit: "short",
		desc:     "COMPLETED records whose Camunda task is still open: the side effect happened and the completion was lost. The next attempt must replay the stored result, not redo the work. 0 needs the database and every engine up; No data means one is down.",
		targets:  []target{{expr: joinZeroWhenUp(sumBy(sel(catalog.IdempotencyCompletedTaskOpen, mDatabase, mScope)))}},
		steps:    []step{{1, "orange"}},
		runbooks: []string{rules.WorkflowCompletedSideEffectTaskOpen}})
	d.stat(panel{title: "Conflicts", unit: "cpm",
		desc:     "Records with a configured conflict error code (same key, different request) per minute: a client reuses idempotency keys.",
		targets:  []target{{expr: "60 * " + sumBy(rate(catalog.IdempotencyConflicts, mDatabase, mScope))}},
		steps:    []step{{0.01, "orange"}},
		runbooks: []string{rules.WorkflowIdempotencyConflicts}})
	d.stat(panel{title: "Duplicates prevented", unit: "cpm",
		desc:     "Duplicate attempts detected and absorbed per minute. This is the protection working; a rising trend against its usual level is the smell.",
		targets:  []target{{expr: "60 * " + sumBy(rate(catalog.IdempotencyDuplicatesPrevented, mDatabase, mScope))}},
		runbooks: []string{rules.WorkflowDuplicatePreventionSpike}})

	d.row("Records")
	d.series(panel{title: "Records by status", unit: "short", stack: true,
		desc:     "Non-terminal records per status (" + strings.Join(vocab.IdempotencyOpenStatuses(), ", ") + "), stacked.",
		targets:  []target{{expr: sumBy(sel(catalog.IdempotencyRecords, mDatabase, mScope), "status"), legend: "{{status}}"}},
		runbooks: []string{rules.WorkflowIdempotencyStaleInProgress, rules.WorkflowUnknownOutcomeRecords}})
	d.series(panel{title: "Oldest record by status", unit: "s",
		desc:     "Time since the least recently updated record in each non-terminal status, per scope, by the database clock.",
		targets:  []target{{expr: "max by (scope, status) (" + sel(catalog.IdempotencyOldestRecordAge, mDatabase, mScope) + ")", legend: "{{scope}} {{status}}"}},
		runbooks: []string{rules.WorkflowIdempotencyStaleInProgress}})
	d.series(panel{title: "Stale records by scope", unit: "short",
		desc:     "Non-terminal records past the stale threshold per scope and status.",
		targets:  []target{{expr: sumBy(sel(catalog.IdempotencyStaleRecords, mDatabase, mScope), "scope", "status"), legend: "{{scope}} {{status}}"}},
		runbooks: []string{rules.WorkflowIdempotencyStaleInProgress}})
	d.series(panel{title: "Transitions by status", unit: "ops",
		desc:    "Records reaching each status per second (COMPLETED, RECONCILED, FAILED_FINAL, UNKNOWN_OUTCOME, ...).",
		targets: []target{{expr: sumBy(rate(catalog.IdempotencyTransitions, mDatabase, mScope), "status"), legend: "{{status}}"}}})

	d.row("Camunda cross-checks")
	d.series(panel{title: "In doubt by topic", unit: "short",
		desc:     "In-progress records whose Camunda task lock lapsed or moved, per scope, engine and topic.",
		targets:  []target{{expr: sumBy(sel(catalog.IdempotencyInDoubt, mDatabase, mScope), "scope", "engine", "topic"), legend: "{{scope}} {{engine}} {{topic}}"}},
		runbooks: []string{rules.WorkflowIdempotencyInDoubt}})
	d.series(panel{title: "Completed with task open by topic", unit: "short",
		desc:     "COMPLETED records whose Camunda task is still open, per scope, engine and topic.",
		targets:  []target{{expr: sumBy(sel(catalog.IdempotencyCompletedTaskOpen, mDatabase, mScope), "scope", "engine", "topic"), legend: "{{scope}} {{engine}} {{topic}}"}},
		runbooks: []string{rules.WorkflowCompletedSideEffectTaskOpen}})

	d.row("Deduplication window")
	d.series(panel{title: "Retention horizon and oldest open task by scope", unit: "s",
		desc: "Horizon: seconds since the least recently updated finished record (" + strings.Join(vocab.IdempotencyTerminalStatuses(), ", ") +
			") of the scope, how far back a redelivery is still recognised. Where a retention job deletes by age it is a saw-tooth near the retention period; " +
			"in a scope nothing was deleted from it only grows (the scope's age). Oldest task: the oldest open external task on the topics the Camunda join tied to the scope " +
			"(waiting age, longest lock, oldest incident). A task line above its scope's saw-tooth can be redelivered after its record is gone.",
		targets: []target{
			{expr: "max by (database, scope) (" + sel(catalog.IdempotencyRetentionHorizon, mDatabase, mScope) + ")", legend: "horizon {{database}} {{scope}}"},
			{expr: "max by (database, scope) (\n" + oldestTaskAge() + "\n* on (job, instance, engine, topic) group_right ()\n" +
				"group by (job, instance, database, scope, engine, topic) (" + sel(catalog.IdempotencyInDoubt, mDatabase, mScope) + "))", legend: "oldest task {{database}} {{scope}}"},
		},
		runbooks: []string{rules.WorkflowDeduplicationWindowExceeded}})

	d.row("Conflicts, duplicates and processed jobs")
	d.series(panel{title: "Conflicts and duplicates by scope", unit: "ops",
		desc: "Per second by scope: key conflicts (same key, different request) and duplicate attempts absorbed.",
		targets: []target{
			{expr: sumBy(rate(catalog.IdempotencyConflicts, mDatabase, mScope), "scope"), legend: "conflicts {{scope}}"},
			{expr: sumBy(rate(catalog.IdempotencyDuplicatesPrevented, mDatabase, mScope), "scope"), legend: "duplicates {{scope}}"},
		},
		runbooks: []string{rules.WorkflowIdempotencyConflicts, rules.WorkflowDuplicatePreventionSpike}})
	d.series(panel{title: "Processed jobs by activity", unit: "ops",
		desc:    "Processed-job rows written per second, by activity and status.",
		targets: []target{{expr: sumBy(rate(catalog.ProcessedJobs, mDatabase), "activity_id", "status"), legend: "{{activity_id}} {{status}}"}}})
	d.series(panel{title: "Processed jobs with task open", unit: "short",
		desc:     "Processed-job rows whose Camunda task is still open: the job was done and its completion did not reach the engine.",
		targets:  []target{{expr: sumBy(sel(catalog.ProcessedJobTaskOpen, mDatabase), "engine", "activity_id"), legend: "{{engine}} {{activity_id}}"}},
		runbooks: []string{rules.WorkflowProcessedJobTaskOpen}})
	return d
}

// joinZeroWhenUp is zeroWhenUp for the Camunda join's gauges: their series
// appear once a record matched, so 0 is shown only while the selected
// databases, all their collectors, every engine and its camunda collector
// (which publishes the in-flight tasks the join looks up) are up.
func joinZeroWhenUp(inner string) string {
	return zeroWhenUp(inner, sel(catalog.ExporterSourceUp, mSourceDatabase), sel(catalog.ExporterCollectorUp, mSourceDatabase), sel(catalog.CamundaUp),
		sel(catalog.ExporterCollectorUp, `source="`+string(catalog.SourceCamunda)+`"`, `collector="`+vocab.CollectorCamunda+`"`))
}

// oldestTaskAge is the age of each topic's oldest open external task as
// far as the engine reports it: the oldest waiting for a fetch, the
// longest-held lock, the oldest incident (label_replace keeps the three
// apart through "or"). The engine's selectors carry no tenant matcher:
// this dashboard has no tenant variable, and the maximum is over tenants.
func oldestTaskAge() string {
	engineSel := func(metric string) string {
		catalog.MustGet(metric)
		return metric + "{" + mJob + "," + mInstance + "}"
	}
	return "max by (job, instance, engine, topic) (" +
		"label_replace(" + engineSel(catalog.CamundaExternalTaskOldestWaitingAge) + `, "age_of", "waiting", "", "")` +
		" or label_replace(" + engineSel(catalog.CamundaExternalTaskOldestLockAge) + `, "age_of", "lock", "", "")` +
		" or label_replace(" + engineSel(catalog.CamundaExternalTaskOldestIncidentAge) + `, "age_of", "incident", "", ""))`
}
