package dashboards

import (
	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/alerts/slo"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

func externalTasks(c rules.Config) *board {
	d := newBoard(c, UIDExternalTask, "Camunda external tasks",
		"External tasks of Camunda 7 (and Operaton, CIB seven) per engine and topic: backlog, locks, lapsed locks, retries, failures and incidents, as polled by the workflow exporter.",
		engineVar(), tenantVar(), topicVar())

	d.row("Summary")
	d.downStat(sel(catalog.CamundaUp, mEngine), panel{title: "Engines down",
		desc:     "Selected engines whose last poll failed. A down engine has no data series, so the panels below go blank for it: blank is not healthy.",
		runbooks: []string{rules.WorkflowExporterSourceDown}})
	d.stat(panel{title: "Open external tasks", unit: "short",
		desc:    "Open external tasks of the selected topics in every state.",
		targets: []target{{expr: sumBy(sel(catalog.CamundaExternalTasks, mEngine, mTopic))}}})
	d.stat(panel{title: "Oldest waiting task", unit: "s",
		desc:     "Age of the oldest task waiting to be fetched, by the engine's clock. Growing while tasks wait means no worker fetches this topic.",
		targets:  []target{{expr: "max(" + sel(catalog.CamundaExternalTaskOldestWaitingAge, mEngine, mTopic) + ")"}},
		steps:    d.steps(d.waitingAgeSteps),
		runbooks: []string{rules.CamundaExternalTaskBacklogStalled}})
	d.stat(panel{title: "Out of retries", unit: "short",
		desc:     "Open external tasks with no retries left: each is an incident and waits for an operator.",
		targets:  []target{{expr: sumBy(sel(catalog.CamundaExternalTasks, mEngine, mTopic, `state="`+vocab.StateRetriesExhausted+`"`))}},
		steps:    []step{{1, "orange"}},
		runbooks: []string{rules.CamundaExternalTaskRetriesExhausted}})
	d.stat(panel{title: "Lapsed locks now", unit: "short",
		desc:     "Tasks a worker fetched whose lock lapsed without complete or failure; the next fetch will execute them again.",
		targets:  []target{{expr: sumBy(sel(catalog.CamundaExternalTasks, mEngine, mTopic, `state="`+vocab.StateLockExpired+`"`))}},
		steps:    []step{{1, "orange"}},
		runbooks: []string{rules.CamundaExternalTaskLockExpirations}})
	d.stat(panel{title: "Oldest executable job", unit: "s",
		desc:     "Since when the oldest async job that could run now has been due (its due date, or its creation without one), by the engine's clock. Growing while no job succeeds or fails means the job executor runs nothing.",
		targets:  []target{{expr: "max(" + sel(catalog.CamundaJobOldestExecutableAge, mEngine) + ")"}},
		steps:    d.steps(d.jobAgeSteps),
		runbooks: []string{rules.CamundaJobExecutorStalled}})
	d.stat(panel{title: "Open incidents", unit: "short",
		desc:     "Open incidents of every type on the selected engines. 0 when every selected engine is up and none has an incident; No data when an engine is down or its camunda collector fails.",
		targets:  []target{{expr: zeroWhenUp(sumBy(sel(catalog.CamundaIncidents, mEngine)), sel(catalog.CamundaUp, mEngine), sel(catalog.ExporterCollectorUp, mSourceEngine, `collector="`+vocab.CollectorCamunda+`"`))}},
		steps:    []step{{1, "orange"}},
		runbooks: []string{rules.CamundaIncidentsOpen}})

	d.row("Backlog and locks")
	d.series(panel{title: "External tasks by state", unit: "short", stack: true,
		desc:     "Open tasks per state, stacked: waiting (not locked), locked (a worker has it), retry_backoff (failed, waiting out its retry timeout), lock_expired, retries_exhausted, suspended.",
		targets:  []target{{expr: sumBy(sel(catalog.CamundaExternalTasks, mEngine, mTopic), "state"), legend: "{{state}}"}},
		runbooks: []string{rules.CamundaExternalTaskBacklogStalled}})
	d.series(panel{title: "Waiting tasks by topic", unit: "short",
		desc:     "Tasks waiting to be fetched per engine and topic.",
		targets:  []target{{expr: sumBy(sel(catalog.CamundaExternalTasks, mEngine, mTopic, `state="`+vocab.StateWaiting+`"`), "engine", "topic"), legend: "{{engine}} {{topic}}"}},
		runbooks: []string{rules.CamundaExternalTaskBacklogStalled}})
	d.series(panel{title: "Oldest waiting task by topic", unit: "s",
		desc:      "Age of the oldest waiting task per engine and topic; 0 when none waits. Dashed: camunda.backlog_stalled_age of the alerts config, and that plus backlog_stalled_for (the page, if nothing completes or fails), per series where the alerts config tunes them for a selector.",
		targets:   []target{{expr: "max by (engine, topic) (" + sel(catalog.CamundaExternalTaskOldestWaitingAge, mEngine, mTopic) + ")", legend: waitingAgeLegend}},
		steps:     d.steps(d.waitingAgeSteps),
		overrides: d.overrides(waitingAgeLegend, d.waitingAgeSteps, rules.CamundaExternalTaskBacklogStalled),
		runbooks:  []string{rules.CamundaExternalTaskBacklogStalled, rules.CamundaExternalTaskWaitingAgeMissing}})
	d.series(panel{title: "Locked tasks by worker", unit: "short",
		desc:     "Tasks each worker holds locked now; worker ids past the configured limit are folded into \"other\".",
		targets:  []target{{expr: sumBy(sel(catalog.CamundaExternalTasksLockedByWorker, mEngine, mTopic), "worker_id"), legend: "{{worker_id}}"}},
		runbooks: []string{rules.CamundaExternalTaskWorkerSilent}})
	d.series(panel{title: "Oldest lock by topic", unit: "s",
		desc:     "How long the longest current lock of each topic has been held by the same worker, extendLock included (a lower bound: counted from the poll that first saw it); 0 when no worker holds a lock. A line that keeps rising is a worker stuck on one task.",
		targets:  []target{{expr: "max by (engine, topic) (" + sel(catalog.CamundaExternalTaskOldestLockAge, mEngine, mTopic) + ")", legend: "{{engine}} {{topic}}"}},
		runbooks: []string{rules.CamundaExternalTaskLockHeldTooLong}})
	d.series(panel{title: "Idle workers", unit: "s",
		desc:     "Per worker holding locks: time since it last completed or failed a task of the topic. A healthy worker resets it with every task; one that rises holds locks without making progress.",
		targets:  []target{{expr: "max by (topic, worker_id) (" + sel(catalog.CamundaExternalTaskWorkerIdle, mEngine, mTopic) + ")", legend: "{{topic}} {{worker_id}}"}},
		runbooks: []string{rules.CamundaExternalTaskWorkerSilent}})

	d.row("Throughput, failures and duplicates")
	d.series(panel{title: "Completions and failures", unit: "ops",
		desc: "Completions, failures and BPMN errors reported by workers per second, by topic, from the external task history log (BPMN errors told apart from cancellations by the activity instance history). Below history level full (see Engines) completions and BPMN errors come from the activity instance history and failures are a lower bound; at level none only failures are shown.",
		targets: []target{
			{expr: sumBy(rate(catalog.CamundaExternalTaskCompletions, mEngine, mTopic), "topic"), legend: "completed {{topic}}"},
			{expr: sumBy(rate(catalog.CamundaExternalTaskFailures, mEngine, mTopic), "topic"), legend: "failed {{topic}}"},
			{expr: sumBy(rate(catalog.CamundaExternalTaskBpmnErrors, mEngine, mTopic), "topic"), legend: "BPMN error {{topic}}"},
		},
		runbooks: []string{rules.CamundaExternalTaskRetryStorm}})
	d.series(panel{title: "Tasks ended", unit: "ops",
		desc:     "Open tasks seen and then gone (completed or deleted) per second, by topic: the progress signal that needs no engine history, so it moves at every history level. A lower bound: tasks created and ended between two polls are not seen; Completions and failures has the exact counts where the history level allows.",
		targets:  []target{{expr: sumBy(rate(catalog.CamundaExternalTasksEnded, mEngine, mTopic), "topic"), legend: "{{topic}}"}},
		runbooks: []string{rules.CamundaExternalTaskBacklogStalled}})
	d.series(panel{title: "Failure ratio", unit: "percentunit", min: ptr(0.0),
		desc: "Failures as a share of completions plus failures, by topic. A high ratio with a steady completion rate is a retry storm.",
		targets: []target{{expr: sumBy(rate(catalog.CamundaExternalTaskFailures, mEngine, mTopic), "topic") +
			" / (" + sumBy(rate(catalog.CamundaExternalTaskCompletions, mEngine, mTopic), "topic") +
			" + " + sumBy(rate(catalog.CamundaExternalTaskFailures, mEngine, mTopic), "topic") + ")", legend: "{{topic}}"}},
		runbooks: []string{rules.CamundaExternalTaskRetryStorm}})
	d.series(panel{title: "Top failure causes", unit: "ops",
		desc: "The five causes failing most per second: failures by topic and the signature of the worker's error message (ids, numbers, quoted values, timestamps, e-mail addresses and tokens masked). The status page lists each cause with its count, workers and an example task. Absent where failure_signatures is off.",
		targets: []target{{expr: "topk(5, " + sumBy(rate(catalog.CamundaExternalTaskFailuresByError, mEngine, mTopic), "topic", "error") + ")",
			legend: "{{topic}}: {{error}}"}},
		runbooks: []string{rules.CamundaExternalTaskRetryStorm}})
	d.series(panel{title: "Task duration", unit: "s",
		desc:    "External task duration, creation to successful completion (retries included), p50 and p95 per topic, from the history log. Tasks created before the exporter started are not in it.",
		targets: percentiles(catalog.CamundaExternalTaskDuration, "topic", []int{50, 95}, mEngine, mTopic)})
	d.series(panel{title: "Lock expirations", unit: "ops",
		desc:     "Locks seen to lapse without complete, failure or extendLock, per second, by topic. The worker is gone or slower than its lock duration.",
		targets:  []target{{expr: sumBy(rate(catalog.CamundaExternalTaskLockExpirations, mEngine, mTopic), "topic"), legend: "{{topic}}"}},
		runbooks: []string{rules.CamundaExternalTaskLockExpirations}})
	d.series(panel{title: "Redeliveries (duplicate executions)", unit: "ops",
		desc:     "Tasks locked again after a lapsed lock, per second, by topic: the task ran (at least partly) twice. The idempotency table must absorb each of these.",
		targets:  []target{{expr: sumBy(rate(catalog.CamundaExternalTaskRedeliveries, mEngine, mTopic), "topic"), legend: "{{topic}}"}},
		runbooks: []string{rules.CamundaExternalTaskDuplicateExecution, rules.CamundaExternalTaskLockExpirations, rules.WorkflowDuplicatePreventionSpike}})

	d.row("Incidents")
	d.series(panel{title: "Open incidents", unit: "short",
		desc:     "Open incidents per type and process definition.",
		targets:  []target{{expr: sumBy(sel(catalog.CamundaIncidents, mEngine), "incident_type", "process_definition_key"), legend: "{{incident_type}} {{process_definition_key}}"}},
		runbooks: []string{rules.CamundaIncidentsOpen}})
	d.series(panel{title: "Oldest open incident", unit: "s",
		desc:     "Age of the oldest open incident per engine and type, by the engine's clock.",
		targets:  []target{{expr: "max by (engine, incident_type) (" + sel(catalog.CamundaIncidentOldestAge, mEngine) + ")", legend: "{{engine}} {{incident_type}}"}},
		runbooks: []string{rules.CamundaIncidentsOpen}})
	d.series(panel{title: "Oldest external task incident by topic", unit: "s",
		desc:     "Age of the oldest open failedExternalTask incident (a task out of retries) per engine and topic, by the engine's clock; 0 when the topic has none.",
		targets:  []target{{expr: "max by (engine, topic) (" + sel(catalog.CamundaExternalTaskOldestIncidentAge, mEngine, mTopic) + ")", legend: "{{engine}} {{topic}}"}},
		runbooks: []string{rules.CamundaExternalTaskRetriesExhausted}})
	d.labelTable(panel{title: "Engines", unit: "none",
		desc:    "Version and flavor (camunda, operaton, cibseven) of each selected engine, as reported by its /version endpoint, and the history level the exporter reads it at (none, activity, audit, full, unknown): below full failures are lower bounds, idle workers and job executions are not shown, and at none completions, BPMN errors and durations neither.",
		targets: []target{{expr: sel(catalog.CamundaEngineInfo, mEngine)}}},
		"job", "instance")
	d.labelTable(panel{title: "What each engine provides", unit: "none",
		desc: "Per engine, the metrics whose values depend on its version, the mode and its history level, with what the exporter can report of each: exact, lower_bound or absent. " +
			"The oldest waiting age is a lower bound where the engine keeps no creation time (history level none before Camunda 7.21): it counts from the exporter's first sighting of each task (docs/camunda-states.md).",
		targets:  []target{{expr: sel(catalog.CamundaEngineCapability, mEngine)}},
		runbooks: []string{rules.CamundaExternalTaskWaitingAgeMissing}},
		"job", "instance")

	d.row("Async jobs")
	d.series(panel{title: "Oldest executable job", unit: "s",
		desc:      "Per engine, since when the oldest async job that could run now has been due (its due date, or its creation for a continuation without one); 0 when none is executable. A stopped job executor shows here first.",
		targets:   []target{{expr: "max by (engine) (" + sel(catalog.CamundaJobOldestExecutableAge, mEngine) + ")", legend: "{{engine}}"}},
		steps:     d.steps(d.jobAgeSteps),
		overrides: d.overrides("{{engine}}", d.jobAgeSteps, rules.CamundaJobExecutorStalled),
		runbooks:  []string{rules.CamundaJobExecutorStalled}})
	d.series(panel{title: "Executable jobs", unit: "short",
		desc:     "Async jobs the job executor could run now (retries left, due, not suspended), per process definition. Short-lived with a healthy executor; a pile-up means it falls behind or stopped.",
		targets:  []target{{expr: sumBy(sel(catalog.CamundaJobsExecutable, mEngine), "engine", "process_definition_key"), legend: "{{engine}} {{process_definition_key}}"}},
		runbooks: []string{rules.CamundaJobExecutorStalled}})
	d.series(panel{title: "Job executions", unit: "ops",
		desc: "Successful and failed job executions per second, per process definition, from the job history log.",
		targets: []target{
			{expr: sumBy(rate(catalog.CamundaJobSuccesses, mEngine), "process_definition_key"), legend: "succeeded {{process_definition_key}}"},
			{expr: sumBy(rate(catalog.CamundaJobFailures, mEngine), "process_definition_key"), legend: "failed {{process_definition_key}}"},
		},
		runbooks: []string{rules.CamundaJobExecutorStalled, rules.CamundaIncidentsOpen}})
	d.series(panel{title: "Top job failure causes", unit: "ops",
		desc: "The five causes failing most per second: job failures by process definition and the signature of the exception message (ids, numbers, quoted values, timestamps, e-mail addresses and tokens masked). The status page lists each cause with its count and an example job. Absent where failure_signatures is off.",
		targets: []target{{expr: "topk(5, " + sumBy(rate(catalog.CamundaJobFailuresByError, mEngine), "process_definition_key", "error") + ")",
			legend: "{{process_definition_key}}: {{error}}"}},
		runbooks: []string{rules.CamundaIncidentsOpen}})
	d.series(panel{title: "Async jobs out of retries", unit: "short",
		desc:     "Async continuations and timers with no retries left, per process definition: each has a failedJob incident.",
		targets:  []target{{expr: sumBy(sel(catalog.CamundaJobsRetriesExhausted, mEngine), "engine", "process_definition_key"), legend: "{{engine}} {{process_definition_key}}"}},
		runbooks: []string{rules.CamundaIncidentsOpen}})

	d.row("Process instances")
	d.series(panel{title: "Running process instances", unit: "short",
		desc:    "Running process instances per process definition key (all versions, suspended ones included), from the engine's process definition statistics.",
		targets: []target{{expr: sumBy(sel(catalog.CamundaProcessInstances, mEngine), "engine", "process_definition_key"), legend: "{{engine}} {{process_definition_key}}"}}})

	d.row("History and cleanup")
	d.series(panel{title: "Cleanable process instances", unit: "short",
		desc:     "Finished process instances past their history time to live, still in the history, per process definition: what history cleanup has yet to remove. It should fall after every cleanup window; flat or rising across windows means cleanup is off, failing or behind. Read every history_cleanup.interval.",
		targets:  []target{{expr: sumBy(sel(catalog.CamundaHistoryCleanable, mEngine), "engine", "process_definition_key"), legend: "{{engine}} {{process_definition_key}}"}},
		runbooks: []string{rules.CamundaHistoryCleanupBehind}})
	d.series(panel{title: "Finished instances in the history", unit: "short", stack: true,
		desc: "Finished process instances the history holds, per engine, and the part of them whose definitions have no history time to live: cleanup never removes those.",
		targets: []target{
			{expr: sumBy(sel(catalog.CamundaHistoryFinished, mEngine), "engine"), legend: "finished {{engine}}"},
			{expr: sumBy(sel(catalog.CamundaHistoryWithoutTTL, mEngine), "engine"), legend: "without time to live {{engine}}"},
		}})
	d.series(panel{title: "History cleanup jobs", unit: "short",
		desc: "History cleanup jobs per engine, those failing (an exception, or out of retries), and whether cleanup is enabled (1) in the engine's configuration.",
		targets: []target{
			{expr: sumBy(sel(catalog.CamundaHistoryCleanupJobs, mEngine), "engine"), legend: "jobs {{engine}}"},
			{expr: sumBy(sel(catalog.CamundaHistoryCleanupJobsFailing, mEngine), "engine"), legend: "failing {{engine}}"},
			{expr: "max by (engine) (" + sel(catalog.CamundaHistoryCleanupEnabled, mEngine) + ")", legend: "enabled {{engine}}"},
		},
		runbooks: []string{rules.CamundaHistoryCleanupFailing}})
	d.series(panel{title: "Largest engine tables", unit: "bytes",
		desc:    "The engine's ten largest tables with indexes and TOAST, per engine (engine-database mode only: the REST API does not tell). History tables that keep growing are what cleanup should hold flat.",
		targets: []target{{expr: "max by (engine, table) (" + sel(catalog.CamundaEngineTableBytes, mEngine) + ")", legend: "{{engine}} {{table}}"}}})

	// The SLOs' recording rules (workflow-exporter render slos,
	// docs/slos.md) carry the label slo and no engine: every objective
	// Prometheus evaluates shows, whatever the variables.
	d.row("Service level objectives")
	d.series(panel{title: "Error budget remaining", unit: "percentunit",
		desc:     "Per objective, the share of the period's error budget left: 100% untouched, 0 spent, below 0 overspent. From the recording rules of workflow-exporter render slos; empty until Prometheus evaluates them.",
		targets:  []target{{expr: "max by (slo) (" + slo.RecordBudgetRemaining + ")", legend: "{{slo}}"}},
		runbooks: []string{slo.BudgetBurnRunbook}})
	d.series(panel{title: "Burn rate (1h)", unit: "short", min: ptr(0.0),
		desc: "Per objective, how fast the error budget burns over the last hour: 1 spends it exactly over the period, 14.4 (with the 5m window) pages, 3 over a day files a ticket.",
		targets: []target{{expr: "max by (slo) (" + slo.RecordErrorRatio + "1h) / on (slo) max by (slo) (" + slo.RecordBudget + ")",
			legend: "{{slo}}"}},
		runbooks: []string{slo.BudgetBurnRunbook}})
	return d
}
