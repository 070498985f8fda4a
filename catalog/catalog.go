// Package catalog is the single source of truth for every metric the exporter
// serves: name, type, labels and HELP text. Collectors build their descriptors
// from it, the dashboard generator and the rule tests check their expressions
// against it, and docs/metrics.md's metric table is generated from it, so a rename
// here cannot leave a panel or an alert pointing at nothing.
//
// Names and labels are a contract with the dashboards and alerts shipped in
// this repository and with users' queries: extend, do not rename (see
// docs/design.md, "The metric catalog is a contract").
package catalog

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// Type is the Prometheus metric type.
type Type string

// Metric types used by the exporter.
const (
	Gauge     Type = "gauge"
	Counter   Type = "counter"
	Histogram Type = "histogram"
)

// Source groups metrics by the side they describe.
type Source string

// Sources of metrics.
const (
	SourceCamunda  Source = "camunda"
	SourceDatabase Source = "database"
	// SourceDelivery: a delivery, from one database's outbox to one
	// database's inbox (deliveries[] of the config).
	SourceDelivery Source = "delivery"
	SourceExporter Source = "exporter"
)

// Metric describes one metric family.
type Metric struct {
	Name   string
	Type   Type
	Source Source
	Labels []string
	Help   string
}

// Desc returns the Prometheus descriptor for the metric.
func (m Metric) Desc() *prometheus.Desc {
	return prometheus.NewDesc(m.Name, m.Help, m.Labels, nil)
}

// Metric names. Use these constants, never string literals, so the compiler
// finds every user of a name.
const (
	CamundaUp                            = "camunda_up"
	CamundaEngineInfo                    = "camunda_engine_info"
	CamundaExternalTasks                 = "camunda_external_tasks"
	CamundaExternalTaskOldestWaitingAge  = "camunda_external_task_oldest_waiting_age_seconds"
	CamundaExternalTaskLockExpirations   = "camunda_external_task_lock_expirations_total"
	CamundaExternalTaskRedeliveries      = "camunda_external_task_redeliveries_total"
	CamundaExternalTaskFailures          = "camunda_external_task_failures_total"
	CamundaExternalTaskCompletions       = "camunda_external_task_completions_total"
	CamundaExternalTaskBpmnErrors        = "camunda_external_task_bpmn_errors_total"
	CamundaExternalTasksEnded            = "camunda_external_tasks_ended_total"
	CamundaExternalTaskFailuresByError   = "camunda_external_task_failures_by_error_total"
	CamundaExternalTasksLockedByWorker   = "camunda_external_tasks_locked_by_worker"
	CamundaExternalTaskDuration          = "camunda_external_task_duration_seconds"
	CamundaExternalTaskOldestLockAge     = "camunda_external_task_oldest_lock_age_seconds"
	CamundaExternalTaskWorkerIdle        = "camunda_external_task_worker_idle_seconds"
	CamundaExternalTaskOldestIncidentAge = "camunda_external_task_oldest_incident_age_seconds"
	CamundaIncidents                     = "camunda_incidents"
	CamundaIncidentOldestAge             = "camunda_incident_oldest_age_seconds"
	CamundaJobsRetriesExhausted          = "camunda_jobs_retries_exhausted"
	CamundaProcessInstances              = "camunda_process_instances"
	CamundaJobsExecutable                = "camunda_jobs_executable"
	CamundaJobOldestExecutableAge        = "camunda_job_oldest_executable_age_seconds"
	CamundaJobFailures                   = "camunda_job_failures_total"
	CamundaJobSuccesses                  = "camunda_job_successes_total"
	CamundaJobFailuresByError            = "camunda_job_failures_by_error_total"
	CamundaHistoryCleanable              = "camunda_history_cleanable_process_instances"
	CamundaHistoryFinished               = "camunda_history_finished_process_instances"
	CamundaHistoryWithoutTTL             = "camunda_history_process_instances_without_ttl"
	CamundaHistoryCleanupEnabled         = "camunda_history_cleanup_enabled"
	CamundaHistoryCleanupJobs            = "camunda_history_cleanup_jobs"
	CamundaHistoryCleanupJobsFailing     = "camunda_history_cleanup_jobs_failing"
	CamundaEngineTableBytes              = "camunda_engine_table_bytes"

	IdempotencyRecords             = "workflow_idempotency_records"
	IdempotencyOldestRecordAge     = "workflow_idempotency_oldest_record_age_seconds"
	IdempotencyStaleRecords        = "workflow_idempotency_stale_records"
	IdempotencyTransitions         = "workflow_idempotency_transitions_total"
	IdempotencyConflicts           = "workflow_idempotency_conflicts_total"
	IdempotencyDuplicatesPrevented = "workflow_idempotency_duplicates_prevented_total"
	IdempotencyCompletedTaskOpen   = "workflow_idempotency_completed_task_open"
	IdempotencyInDoubt             = "workflow_idempotency_in_doubt"
	ProcessedJobs                  = "workflow_processed_jobs_total"
	ProcessedJobTaskOpen           = "workflow_processed_job_task_open"
	InboxMessages                  = "workflow_inbox_messages"
	InboxOldestMessageAge          = "workflow_inbox_oldest_message_age_seconds"
	InboxMessagesProcessed         = "workflow_inbox_messages_processed_total"
	OutboxEventsPending            = "workflow_outbox_events_pending"
	OutboxOldestPendingAge         = "workflow_outbox_oldest_pending_age_seconds"
	OutboxEventsCreated            = "workflow_outbox_events_created_total"
	OutboxEventsPublished          = "workflow_outbox_events_published_total"
	OutboxPublishDelay             = "workflow_outbox_publish_delay_seconds"
	OutboxEventsFailed             = "workflow_outbox_events_failed"
	OutboxOldestFailedAge          = "workflow_outbox_oldest_failed_age_seconds"
	OutboxEventsRetrying           = "workflow_outbox_events_retrying"
	InboxMessagesRetrying          = "workflow_inbox_messages_retrying"
	InboxMessagesFailed            = "workflow_inbox_messages_failed"
	InboxOldestFailedAge           = "workflow_inbox_oldest_failed_age_seconds"

	DeliveryPublishedEvents      = "workflow_delivery_published_events"
	DeliveryLostEvents           = "workflow_delivery_lost_events"
	DeliveryInFlightEvents       = "workflow_delivery_in_flight_events"
	DeliveryDuplicateReceipts    = "workflow_delivery_duplicate_receipts"
	DeliveryLatency              = "workflow_delivery_latency_seconds"
	DeliveryClockOffset          = "workflow_delivery_clock_offset_seconds"
	DeliveryWindow               = "workflow_delivery_window_seconds"
	OutboxEventsWritten          = "workflow_outbox_events_written_total"
	OutboxRelaySlotActive        = "workflow_outbox_relay_slot_active"
	OutboxRelayLagSeconds        = "workflow_outbox_relay_lag_seconds"
	OutboxRelayLagBytes          = "workflow_outbox_relay_lag_bytes"
	OutboxRelayRetainedWALBytes  = "workflow_outbox_relay_retained_wal_bytes"
	OutboxRelayWALStatus         = "workflow_outbox_relay_wal_status"
	OutboxRelayWALKeepLimitBytes = "workflow_outbox_relay_wal_keep_limit_bytes"

	ExporterSourceUp              = "workflow_exporter_source_up"
	ExporterCollectorUp           = "workflow_exporter_collector_up"
	ExporterCollectDuration       = "workflow_exporter_collect_duration_seconds"
	ExporterCollectErrors         = "workflow_exporter_collect_errors_total"
	ExporterLastSuccessfulCollect = "workflow_exporter_last_successful_collect_timestamp_seconds"
	ExporterLabelValuesFolded     = "workflow_exporter_label_values_folded_total"
	ExporterUnwatchedTasks        = "workflow_exporter_unwatched_external_tasks"
	ExporterHistoryReadsCut       = "workflow_exporter_history_reads_cut_total"
	ExporterJobHistoryReadsCut    = "workflow_exporter_job_history_reads_cut_total"
	ExporterBuildInfo             = "workflow_exporter_build_info"
)

// The deduplication window: how far back the records a retention job
// deletes still reach, and who deduplicates an outbox's events.
const (
	IdempotencyRetentionHorizon = "workflow_idempotency_retention_horizon_seconds"
	InboxRetentionHorizon       = "workflow_inbox_retention_horizon_seconds"
	OutboxConsumerInfo          = "workflow_outbox_consumer_info"
)

const polled = " Value as of the last poll, at most min_interval old."

// all builds the catalog. It is a function, not a package variable, so no
// caller can change the contract at run time.
func all() []Metric {
	return []Metric{
		// Camunda engine, read over its REST API or from its database.
		{CamundaUp, Gauge, SourceCamunda, []string{"engine"},
			"Camunda engine: 1 when the engine answered GET /version in the last poll, 0 when it did not (every other series of the engine is then absent). Each aspect of the engine (collector camunda, camunda_jobs, camunda_processes) can fail alone: see workflow_exporter_collector_up."},
		{CamundaEngineInfo, Gauge, SourceCamunda, []string{"engine", "version", "flavor", "history_level"},
			"Camunda engine (REST API or engine database): constant 1 labelled with the engine version from /version, the detected flavor (camunda, operaton, cibseven) and the history level the exporter reads the engine at (none, activity, audit, full, or unknown: camunda[].history_level, else the engine database's historyLevel property, else the history the REST API shows); below full some series are lower bounds or absent (docs/camunda-states.md)." + polled},
		{CamundaExternalTasks, Gauge, SourceCamunda, []string{"engine", "topic", "state"},
			"Camunda engine (REST API or engine database): open external tasks per topic, partitioned by state (" + strings.Join(vocab.ExternalTaskStates(), ", ") + ")." + polled},
		{CamundaExternalTaskOldestWaitingAge, Gauge, SourceCamunda, []string{"engine", "topic"},
			"Camunda engine (REST API or engine database): age in seconds of the oldest external task waiting to be fetched, by the engine's clock; 0 when none waits." + polled},
		{CamundaExternalTaskLockExpirations, Counter, SourceCamunda, []string{"engine", "topic"},
			"Camunda engine (REST API or engine database): external task locks seen to lapse without complete, failure or extendLock, detected by watching locked tasks across polls since the exporter started."},
		{CamundaExternalTaskRedeliveries, Counter, SourceCamunda, []string{"engine", "topic"},
			"Camunda engine (REST API or engine database): external tasks seen locked again after a lapsed lock, by the same or another worker: a duplicate execution happened."},
		{CamundaExternalTaskFailures, Counter, SourceCamunda, []string{"engine", "topic"},
			"Camunda engine (REST API or engine database): failures reported by workers, each external task history log entry written since the exporter started counted once (history cleanup never lowers it). Below history level full (no log) a lower bound: listed tasks seen with other retries or another error message than at the previous poll."},
		{CamundaExternalTaskFailuresByError, Counter, SourceCamunda, []string{"engine", "topic", "error"},
			"Camunda engine (REST API or engine database): the failures of camunda_external_task_failures_total by the signature of the worker's error message (ids, long numbers, UUIDs, quoted values, timestamps, e-mail addresses and tokens masked; docs/failure-groups.md), counted from the same history log entries. The first camunda[].failure_signature_limit signatures per topic keep their own error label for the exporter's lifetime, later ones count under error=\"other\". Absent with camunda[].failure_signatures: false, and below history level full (no log)."},
		{CamundaExternalTaskCompletions, Counter, SourceCamunda, []string{"engine", "topic"},
			"Camunda engine (REST API or engine database): completions reported by workers, each external task history log entry written since the exporter started counted once (history cleanup never lowers it); at history levels activity and audit each external task's activity instance that ended normally, from the activity instance history; absent at level none or unknown."},
		{CamundaExternalTaskDuration, Histogram, SourceCamunda, []string{"engine", "topic"},
			"Camunda engine (REST API or engine database): seconds from an external task's creation to its successful completion, retries included, observed once per success entry of the external task history log (history cleanup and restarts never observe one twice). Not observed: tasks created before the exporter's first reading, successes the reading missed (see workflow_exporter_history_reads_cut_total); completions_total minus _count is what went unobserved. At history levels activity and audit the start to end of each external task's activity instance that ended normally; absent at level none or unknown. Buckets: camunda[].duration_buckets."},
		{CamundaExternalTaskOldestLockAge, Gauge, SourceCamunda, []string{"engine", "topic"},
			"Camunda engine (REST API or engine database): seconds the longest current lock on the topic has been held by the same worker (extendLock keeps it; another worker, a failure's retry backoff or a lapse starts a new lock), by the engine's clock, counted from the first poll that saw it held: a lower bound, short by up to min_interval, and counted from the exporter's start for older locks; 0 when no worker holds a lock. Only the tasks within max_listed_tasks are watched; none for topic=\"other\"." + polled},
		{CamundaExternalTaskWorkerIdle, Gauge, SourceCamunda, []string{"engine", "topic", "worker_id"},
			"Camunda engine (REST API or engine database): seconds since this worker, which holds locks on the topic now, last completed or failed a task of the topic (external task history log), counted at most from the first poll that saw it hold a lock there (a lower bound); only workers holding locks have a series, and only at history level full. Worker ids beyond worker_id_limit fold into worker_id=\"other\" (the longest idle of them), as in camunda_external_tasks_locked_by_worker." + polled},
		{CamundaExternalTaskOldestIncidentAge, Gauge, SourceCamunda, []string{"engine", "topic"},
			"Camunda engine (REST API or engine database): age in seconds of the topic's oldest open failedExternalTask incident (a task out of retries), by the engine's clock; 0 when it has none. Over REST, when more incidents or tasks out of retries exist than max_listed_tasks, a topic none of whose incidents was listed has no value; none for topic=\"other\"." + polled},
		{CamundaExternalTaskBpmnErrors, Counter, SourceCamunda, []string{"engine", "topic"},
			"Camunda engine (REST API or engine database): BPMN errors reported by workers, each external task history log deletion entry written since the exporter started counted once when the activity instance history shows a BPMN error: the task's activity instance completed its scope (uncaught), or an error catch event (boundaryError, errorStartEvent) started in the same root process instance within a second (caught). Deletions by cancellation, modification or an interrupting message, timer or signal are not counted; one within a second of an error caught in the same root process instance that belongs to no external task is (see docs/camunda-states.md). At history levels activity and audit the same evidence against the external tasks' activity instances; absent at level none or unknown."},
		{CamundaExternalTasksEnded, Counter, SourceCamunda, []string{"engine", "topic"},
			"Camunda engine (REST API or engine database): open external tasks seen and then gone (completed, deleted), whatever the history level: per poll the larger of the fall of the topic's open tasks and the tasks listed in flight at the previous poll that no list holds now less the rise of its suspended and retries-exhausted tasks. A lower bound: tasks created and ended between two polls are not seen (behind a load balancer whose engine nodes' clocks differ, a lock lapsing between their clocks may count as ended)."},
		{CamundaExternalTasksLockedByWorker, Gauge, SourceCamunda, []string{"engine", "topic", "worker_id"},
			"Camunda engine (REST API or engine database): external tasks currently locked per worker; worker ids beyond the configured limit fold into worker_id=\"other\"." + polled},
		{CamundaIncidents, Gauge, SourceCamunda, []string{"engine", "incident_type", "process_definition_key", "activity_id"},
			"Camunda engine (REST API or engine database): open incidents." + polled},
		{CamundaIncidentOldestAge, Gauge, SourceCamunda, []string{"engine", "incident_type"},
			"Camunda engine (REST API or engine database): age in seconds of the oldest open incident of this type, by the engine's clock." + polled},
		{CamundaJobsRetriesExhausted, Gauge, SourceCamunda, []string{"engine", "process_definition_key"},
			"Camunda engine (REST API or engine database): async jobs (continuations, timers) with no retries left." + polled},
		{CamundaJobsExecutable, Gauge, SourceCamunda, []string{"engine", "process_definition_key"},
			"Camunda engine (REST API or engine database): async jobs the job executor could run now: the engine's executable filter (retries left, due date null or past, process instance not suspended) on jobs that are not suspended, jobs being executed included. Over REST, jobs beyond max_listed_tasks count under process_definition_key=\"other\"." + polled},
		{CamundaJobOldestExecutableAge, Gauge, SourceCamunda, []string{"engine"},
			"Camunda engine (REST API or engine database): seconds since the oldest executable job became due (its due date, or its creation for a job without one), by the engine's clock; 0 when no job is executable. It rises while the job executor runs nothing. Over REST exact up to max_listed_tasks executable jobs, a lower bound beyond (the list cannot be sorted by creation)." + polled},
		{CamundaJobFailures, Counter, SourceCamunda, []string{"engine", "process_definition_key"},
			"Camunda engine (REST API or engine database): failed job executions, each job history log entry written since the exporter started counted once (history cleanup never lowers it); absent below history level full (the engine writes the job log at full only)."},
		{CamundaJobFailuresByError, Counter, SourceCamunda, []string{"engine", "process_definition_key", "error"},
			"Camunda engine (REST API or engine database): the failures of camunda_job_failures_total by the signature of the job's exception message (as for camunda_external_task_failures_by_error_total; docs/failure-groups.md); the first camunda[].failure_signature_limit signatures per key keep their own error label, later ones count under error=\"other\". Absent with camunda[].failure_signatures: false, and below history level full."},
		{CamundaHistoryCleanable, Gauge, SourceCamunda, []string{"engine", "process_definition_key"},
			"Camunda engine (REST API or engine database): finished process instances past their history time to live, still in the history: what history cleanup may remove now (the engine's cleanable process instance report, all versions of the key; in engine-database mode by removal time, the default removal-time-based strategy). Read at most once per camunda[].history_cleanup.interval; keys beyond label_value_limit fold into \"other\"." + polled},
		{CamundaHistoryFinished, Gauge, SourceCamunda, []string{"engine", "process_definition_key"},
			"Camunda engine (REST API or engine database): finished process instances in the history, all versions of the key (the cleanable process instance report). Read at most once per camunda[].history_cleanup.interval." + polled},
		{CamundaHistoryWithoutTTL, Gauge, SourceCamunda, []string{"engine", "process_definition_key"},
			"Camunda engine (REST API or engine database): finished process instances of definition versions without a history time to live: history cleanup never removes them. Read at most once per camunda[].history_cleanup.interval." + polled},
		{CamundaHistoryCleanupEnabled, Gauge, SourceCamunda, []string{"engine"},
			"Camunda engine (REST API): 1 when the engine node that answered takes part in history cleanup, 0 when its configuration took it out (GET /history/cleanup/configuration, 7.17 and later; absent when the engine does not say). Behind a load balancer it is the answering node's setting. Read at most once per camunda[].history_cleanup.interval." + polled},
		{CamundaHistoryCleanupJobs, Gauge, SourceCamunda, []string{"engine"},
			"Camunda engine (REST API or engine database): history cleanup jobs (one per degree of parallelism once cleanup was scheduled; 0 when it never was). Read at most once per camunda[].history_cleanup.interval." + polled},
		{CamundaHistoryCleanupJobsFailing, Gauge, SourceCamunda, []string{"engine"},
			"Camunda engine (REST API or engine database): history cleanup jobs whose last run failed (an exception message) or that are out of retries. Read at most once per camunda[].history_cleanup.interval." + polled},
		{CamundaEngineTableBytes, Gauge, SourceCamunda, []string{"engine", "table"},
			"Camunda engine database (engine-database mode only): bytes of the engine's ten largest tables, indexes and TOAST included (pg_total_relation_size). Read at most once per camunda[].history_cleanup.interval." + polled},
		{CamundaJobSuccesses, Counter, SourceCamunda, []string{"engine", "process_definition_key"},
			"Camunda engine (REST API or engine database): successful job executions, each job history log entry written since the exporter started counted once (history cleanup never lowers it); absent below history level full (the engine writes the job log at full only)."},
		{CamundaProcessInstances, Gauge, SourceCamunda, []string{"engine", "process_definition_key"},
			"Camunda engine (REST API or engine database): running process instances of all versions of the process definition, suspended ones included, as the engine's process definition statistics count them (0 for a deployed definition without instances); keys beyond label_value_limit fold into \"other\"." + polled},

		// Worker tables in PostgreSQL.
		{IdempotencyRecords, Gauge, SourceDatabase, []string{"database", "scope", "status"},
			"Idempotency table: records in a non-terminal status (" + strings.Join(vocab.IdempotencyOpenStatuses(), ", ") + ", or unmapped)." + polled},
		{IdempotencyOldestRecordAge, Gauge, SourceDatabase, []string{"database", "scope", "status"},
			"Idempotency table: seconds since the least recently updated record in this non-terminal status, by the database clock." + polled},
		{IdempotencyStaleRecords, Gauge, SourceDatabase, []string{"database", "scope", "status"},
			"Idempotency table: non-terminal records not updated within the configured stale threshold." + polled},
		{IdempotencyTransitions, Counter, SourceDatabase, []string{"database", "scope", "status"},
			"Idempotency table: records seen reaching this status since the exporter started (late commits counted once; a record updated again in the same status after late_commit_window counts again)."},
		{IdempotencyConflicts, Counter, SourceDatabase, []string{"database", "scope"},
			"Idempotency table: records seen with one of the configured conflict error codes (same key, different request) since the exporter started."},
		{IdempotencyDuplicatesPrevented, Counter, SourceDatabase, []string{"database", "scope"},
			"Idempotency table: increments of the duplicate counter column (duplicate attempts detected and absorbed) since the exporter started."},
		{IdempotencyCompletedTaskOpen, Gauge, SourceDatabase, []string{"database", "scope", "engine", "topic"},
			"Idempotency table joined with Camunda: COMPLETED records whose external task is still open; the side effect happened, the completion was lost, the next attempt must replay the stored result." + polled},
		{IdempotencyInDoubt, Gauge, SourceDatabase, []string{"database", "scope", "engine", "topic"},
			"Idempotency table joined with Camunda: " + strings.Join(vocab.IdempotencyInProgressStatuses(), " or ") + " records whose external task lock has lapsed or moved to another worker; reconcile before retrying." + polled},
		{ProcessedJobs, Counter, SourceDatabase, []string{"database", "engine", "activity_id", "status"},
			"Processed-job table: rows seen written since the exporter started (each row counted once; late commits counted once)."},
		{ProcessedJobTaskOpen, Gauge, SourceDatabase, []string{"database", "engine", "topic", "activity_id"},
			"Processed-job table joined with Camunda: rows whose external task is still open in the engine, by the task's topic and activity." + polled},
		{InboxMessages, Gauge, SourceDatabase, []string{"database", "source_system", "message_type", "status"},
			"Inbox table: messages in a non-terminal status (" + strings.Join(vocab.InboxOpenStatuses(), ", ") + ", or unmapped)." + polled},
		{InboxOldestMessageAge, Gauge, SourceDatabase, []string{"database", "source_system", "message_type", "status"},
			"Inbox table: seconds since the oldest message in this non-terminal status was received, by the database clock." + polled},
		{InboxMessagesProcessed, Counter, SourceDatabase, []string{"database", "source_system", "message_type", "status"},
			"Inbox table: messages seen reaching a terminal status (" + strings.Join(vocab.InboxTerminalStatuses(), ", ") + ") since the exporter started."},
		{OutboxEventsPending, Gauge, SourceDatabase, []string{"database", "aggregate_type", "event_type"},
			"Outbox table: events not yet published and not in a failed status." + polled},
		{OutboxOldestPendingAge, Gauge, SourceDatabase, []string{"database", "aggregate_type", "event_type"},
			"Outbox table: seconds since the oldest unpublished event was created, by the database clock; 0 when none is pending." + polled},
		{OutboxEventsCreated, Counter, SourceDatabase, []string{"database", "aggregate_type", "event_type"},
			"Outbox table: events seen created since the exporter started (inflow)."},
		{OutboxEventsPublished, Counter, SourceDatabase, []string{"database", "aggregate_type", "event_type"},
			"Outbox table: events seen published since the exporter started (outflow)."},
		{OutboxPublishDelay, Histogram, SourceDatabase, []string{"database"},
			"Outbox table: published_at minus created_at of events seen published since the exporter started."},
		{OutboxEventsFailed, Gauge, SourceDatabase, []string{"database", "aggregate_type", "event_type"},
			"Outbox table: unpublished events in a failed or dead status." + polled},
		{OutboxOldestFailedAge, Gauge, SourceDatabase, []string{"database", "aggregate_type", "event_type"},
			"Outbox table: seconds since the oldest failed (dead, blocked) event was created, by the database clock; 0 when none is failed. Absent where the table keeps no creation time or no failed state (docs/outbox-shapes.md)." + polled},
		{OutboxEventsRetrying, Gauge, SourceDatabase, []string{"database", "aggregate_type", "event_type"},
			"Outbox table: pending events (not failed) the publisher has already retried at least retrying_after_attempts times (tables.outbox.retrying_after_attempts, default 3). Only where the table keeps an attempt count (docs/outbox-shapes.md)." + polled},
		{InboxMessagesRetrying, Gauge, SourceDatabase, []string{"database", "source_system", "message_type"},
			"Inbox table: unfinished messages the consumer has already attempted at least retrying_after_attempts times (tables.inbox.retrying_after_attempts, default 3). Only where the table keeps an attempt count (docs/outbox-shapes.md)." + polled},
		{InboxMessagesFailed, Gauge, SourceDatabase, []string{"database", "source_system", "message_type"},
			"Inbox: messages the consumer gave up on that wait in the library's dead-letter table for an operator (Wolverine's wolverine_dead_letters, less those marked for replay; docs/outbox-shapes.md). A mapped inbox's FAILED_FINAL is a terminal status, counted by workflow_inbox_messages_processed_total." + polled},
		{InboxOldestFailedAge, Gauge, SourceDatabase, []string{"database", "source_system", "message_type"},
			"Inbox: seconds since the oldest dead-lettered message was sent (the dead-letter table keeps no time of dead-lettering), by the database clock; 0 when none waits." + polled},
		{IdempotencyRetentionHorizon, Gauge, SourceDatabase, []string{"database", "scope"},
			"Idempotency table: seconds since the least recently updated record of the scope in a terminal status (" + strings.Join(vocab.IdempotencyTerminalStatuses(), ", ") + "), by the database clock: how far back the records a retention job deletes still reach, so how old a redelivery the scope can still recognise; 0 when the scope has no finished record. Where records are deleted by age it is about the retention period; in a scope that deletes nothing it is simply the scope's age." + polled},
		{InboxRetentionHorizon, Gauge, SourceDatabase, []string{"database", "source_system"},
			"Inbox table: seconds since the oldest processed_at of a finished message (" + strings.Join(vocab.InboxTerminalStatuses(), ", ") + ") from the source system, by the database clock: how far back the inbox can still recognise a redelivered message of that source; 0 when it has no finished message with a processed_at." + polled},
		{OutboxConsumerInfo, Gauge, SourceDatabase, []string{"database", "consumer_database", "source_system"},
			"Outbox table: constant 1 per inbox a delivery (deliveries[]) takes the outbox's events to: the consumer's database, and the source system its rows give these events (\"\" when the delivery names none: any). The alert on the deduplication window compares the oldest pending event with that inbox's retention horizon. Absent for an outbox no delivery starts from."},

		// Deliveries: a producer database's outbox compared with a consumer
		// database's inbox (docs/delivery-ledger.md).
		{DeliveryPublishedEvents, Gauge, SourceDelivery, []string{"delivery", "event_type"},
			"Delivery: events of the delivery's event types published within its window (deliveries[].window, by the producer database's clock): the events the comparison covers." + polled},
		{DeliveryLostEvents, Gauge, SourceDelivery, []string{"delivery", "event_type"},
			"Delivery: events published within the window longer ago than deliveries[].deadline (by the producer database's clock) whose message id the consumer's inbox does not hold: published and never received. An event published before the window is never counted." + polled},
		{DeliveryInFlightEvents, Gauge, SourceDelivery, []string{"delivery", "event_type"},
			"Delivery: events published within the deadline (by the producer database's clock) whose message id the consumer's inbox does not hold yet." + polled},
		{DeliveryDuplicateReceipts, Gauge, SourceDelivery, []string{"delivery", "event_type"},
			"Delivery: receipts beyond the first of the events published within the window: inbox rows of one event's message id past the first, or at least as many as the event's rows in IGNORED_DUPLICATE (the inbox kept the duplicate as such)." + polled},
		{DeliveryLatency, Histogram, SourceDelivery, []string{"delivery", "event_type"},
			"Delivery: seconds from an event's created_at in the outbox to its first receipt's received_at in the inbox, the consumer's clock corrected by workflow_delivery_clock_offset_seconds; observed once per event, when a collection first finds it received (events received before the exporter's first collection are not observed). Buckets: deliveries[].latency_buckets."},
		{DeliveryClockOffset, Gauge, SourceDelivery, []string{"delivery"},
			"Delivery: the consumer database's clock minus the producer database's, as measured at the last collection (each server's now() with the exporter's clock around both readings) and subtracted from each latency; 0 when the difference is within the measurement's own uncertainty, or both ends are one database." + polled},
		{DeliveryWindow, Gauge, SourceDelivery, []string{"delivery"},
			"Delivery: seconds of publishes the last comparison covered: deliveries[].window, or less when the window held more than deliveries[].max_events events and the comparison kept the newest of them." + polled},

		// The outbox's change-data-capture relay (tables.outbox.relay):
		// the logical replication slot it reads.
		{OutboxEventsWritten, Counter, SourceDatabase, []string{"database"},
			"Outbox table with a relay: inserts into the table since the exporter started, from PostgreSQL's table statistics (pg_stat_user_tables.n_tup_ins, which counts rolled-back inserts too; it may lag a write by the statistics' flush delay, up to 10 s after an idle session's commit)."},
		{OutboxRelaySlotActive, Gauge, SourceDatabase, []string{"database", "slot"},
			"Outbox relay: 1 while a relay streams from its logical replication slot (pg_replication_slots.active), 0 while none is connected." + polled},
		{OutboxRelayLagSeconds, Gauge, SourceDatabase, []string{"database", "slot"},
			"Outbox relay: seconds the oldest outbox write the relay has not confirmed to its slot has waited, by the database clock; 0 when it has confirmed every write. Only writes to the outbox table count (its insert statistics), never other WAL. Counted from the collection before the one that saw the write, so up to a collection interval high (when it reads low: docs/metrics.md, The outbox relay); absent at the exporter's first collection, which has nothing to compare with." + polled},
		{OutboxRelayLagBytes, Gauge, SourceDatabase, []string{"database", "slot"},
			"Outbox relay: bytes of WAL between the server's current position and the slot's confirmed_flush_lsn. Not a count of unpublished events: it includes the WAL of every other table and database, which a relay such as Debezium (lsn.flush.mode=connector) does not confirm while its outbox is idle." + polled},
		{OutboxRelayRetainedWALBytes, Gauge, SourceDatabase, []string{"database", "slot"},
			"Outbox relay: bytes of WAL the slot keeps from removal (the server's current position less restart_lsn); absent once the slot has lost its WAL." + polled},
		{OutboxRelayWALStatus, Gauge, SourceDatabase, []string{"database", "slot", "status"},
			"Outbox relay: 1 for the slot's wal_status (" + strings.Join(vocab.SlotWALStatuses(), ", ") + "), 0 for the others: unreserved means the WAL the relay needs is due for removal at the next checkpoint, lost that it is gone and the relay cannot resume." + polled},
		{OutboxRelayWALKeepLimitBytes, Gauge, SourceDatabase, []string{"database", "slot"},
			"Outbox relay: max_slot_wal_keep_size in bytes, the WAL a slot may retain before PostgreSQL invalidates it; absent when unlimited (-1, the default: the slot retains WAL until the disk is full)." + polled},

		// The exporter itself.
		{ExporterSourceUp, Gauge, SourceExporter, []string{"source", "name"},
			"Exporter: 1 when the last collection could reach this source (Camunda engine, database or delivery), 0 when it could not; the source's data series are then absent."},
		{ExporterCollectorUp, Gauge, SourceExporter, []string{"source", "name", "collector"},
			"Exporter: 1 when this collector's last collection succeeded, 0 when it failed (its data series are then absent)."},
		{ExporterCollectDuration, Gauge, SourceExporter, []string{"source", "name", "collector"},
			"Exporter: duration in seconds of this collector's last collection."},
		{ExporterCollectErrors, Counter, SourceExporter, []string{"source", "name", "collector"},
			"Exporter: failed collections of this collector since the exporter started."},
		{ExporterLastSuccessfulCollect, Gauge, SourceExporter, []string{"source", "name"},
			"Exporter: Unix time of the last collection of this source in which every collector succeeded."},
		{ExporterLabelValuesFolded, Counter, SourceExporter, []string{"metric"},
			"Exporter: series folded into the label value \"other\" because the metric reached its label value limit, summed over collections."},
		{ExporterUnwatchedTasks, Gauge, SourceExporter, []string{"engine"},
			"Exporter: in-flight external tasks (locked or lock lapsed) of this engine the last poll did not list, beyond max_listed_tasks or on topics folded into \"other\": their lock expirations and redeliveries are not detected and the database joins do not see them; 0 when every in-flight task is watched." + polled},
		{ExporterHistoryReadsCut, Counter, SourceExporter, []string{"engine"},
			"Exporter: collections of this engine that found more new external task history log entries (below history level full: external task activity instances) than max_history_entries, so that the reading stopped before it reached the previous collection's time; the failures and completions of those intervals are undercounted. A reading cut further back, inside the late_commit_window it reads again, lost no new entry and is not counted."},
		{ExporterJobHistoryReadsCut, Counter, SourceExporter, []string{"engine"},
			"Exporter: collections of this engine that found more new job history log entries than max_history_entries, so that the reading stopped before it reached the previous collection's time; the job failures and successes of those intervals are undercounted. A reading cut inside the late_commit_window it reads again is not counted."},
		// Served by client_golang's version collector
		// (prometheus/collectors/version), with its labels and HELP text.
		{ExporterBuildInfo, Gauge, SourceExporter, []string{"version", "revision", "branch", "goversion", "goos", "goarch", "tags"},
			"A metric with a constant '1' value labeled by version, revision, branch, goversion from which workflow_exporter was built, and the goos and goarch for the build."},
	}
}

// All returns every metric of the catalog, sorted by name. The slice is a
// fresh copy on each call.
func All() []Metric {
	ms := all()
	sort.Slice(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
	return ms
}

// Lookup returns the metric with the given family name.
func Lookup(name string) (Metric, bool) {
	for _, m := range all() {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// MustGet returns the metric with the given family name and panics when it is
// not in the catalog: that is a programming error, caught by the first test.
func MustGet(name string) Metric {
	m, ok := Lookup(name)
	if !ok {
		panic(fmt.Sprintf("catalog: metric %q is not in the catalog", name))
	}
	return m
}

// Desc returns the descriptor of the named metric; see MustGet. It looks the
// catalog up and builds a new descriptor on each call: collectors keep
// theirs in Descs, built once.
func Desc(name string) *prometheus.Desc { return MustGet(name).Desc() }

// TenantLabel is the label camunda[].tenant_label adds to the engine's
// series per topic or process definition key (Tenanted), before that
// label: the tenant of the tasks, jobs, incidents or process definitions,
// "" for those without one.
const TenantLabel = "tenant"

// TenantKeyIndex is the index of the label a tenant breaks down (topic or
// process_definition_key) in an engine family's labels, -1 for a family
// camunda[].tenant_label leaves alone.
func (m Metric) TenantKeyIndex() int {
	if m.Source != SourceCamunda {
		return -1
	}
	for i, l := range m.Labels {
		if l == "topic" || l == "process_definition_key" {
			return i
		}
	}
	return -1
}

// Tenanted reports whether camunda[].tenant_label breaks the family down by
// tenant: the engine's series per topic or process definition key, each of
// whose tasks, jobs, incidents or definitions belongs to one tenant or
// none.
func (m Metric) Tenanted() bool { return m.TenantKeyIndex() >= 0 }

// WithTenant returns the metric with TenantLabel before the label it breaks
// down, as the engine serves it with camunda[].tenant_label on; a family
// that is not Tenanted is returned as it is.
func (m Metric) WithTenant() Metric {
	i := m.TenantKeyIndex()
	if i < 0 {
		return m
	}
	m.Labels = slices.Insert(slices.Clone(m.Labels), i, TenantLabel)
	return m
}

// Descs holds the descriptors of some catalog metrics, built once when a
// collector is constructed and looked up for every series it emits.
type Descs map[string]*prometheus.Desc

// NewTenantDescs is NewDescs with the tenant label on every Tenanted
// family (camunda[].tenant_label).
func NewTenantDescs(names ...string) Descs {
	d := make(Descs, len(names))
	for _, n := range names {
		d[n] = MustGet(n).WithTenant().Desc()
	}
	return d
}

// NewDescs returns the descriptors of the named metrics; it panics on a name
// that is not in the catalog (see MustGet).
func NewDescs(names ...string) Descs {
	d := make(Descs, len(names))
	for _, n := range names {
		d[n] = Desc(n)
	}
	return d
}

// Get returns the descriptor of the named metric. It panics when the name
// was not given to NewDescs: that is a programming error, caught by the
// first test that emits the metric.
func (d Descs) Get(name string) *prometheus.Desc {
	desc, ok := d[name]
	if !ok {
		panic(fmt.Sprintf("catalog: no descriptor of %q was built (add it to NewDescs)", name))
	}
	return desc
}

// SeriesNames returns the series names a metric family exposes: the family
// name itself, or for a histogram its _bucket, _sum and _count series. PromQL
// expressions name series, so checks of dashboards and rules use these.
func (m Metric) SeriesNames() []string {
	if m.Type == Histogram {
		return []string{m.Name + "_bucket", m.Name + "_sum", m.Name + "_count"}
	}
	return []string{m.Name}
}

// KnownSeries reports whether name is a series the exporter serves (a family
// name or a histogram's _bucket/_sum/_count).
func KnownSeries(name string) bool {
	_, ok := FamilyOf(name)
	return ok
}

// FamilyOf returns the metric whose series name is (the family itself, or
// a histogram's _bucket, _sum or _count).
func FamilyOf(series string) (Metric, bool) {
	for _, m := range all() {
		if slices.Contains(m.SeriesNames(), series) {
			return m, true
		}
	}
	return Metric{}, false
}

// StandardSeries reports whether name is served by the standard collectors the
// exporter registers beside the catalog (Go runtime, process, and the metrics
// handler's own promhttp_metric_handler_*) or is synthesised by Prometheus for
// every scrape target (up, scrape_*). Checks of dashboards and rules accept
// these too.
func StandardSeries(name string) bool {
	switch {
	case name == "up", strings.HasPrefix(name, "scrape_"):
		return true
	case strings.HasPrefix(name, "go_"), strings.HasPrefix(name, "process_"), strings.HasPrefix(name, "promhttp_metric_handler_"):
		return true
	}
	return false
}
