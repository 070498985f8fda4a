package vocab

// External task states: the values of the state label of
// camunda_external_tasks. They partition a topic's open tasks; the rules
// that assign them are in docs/camunda-states.md. Locked, RetryBackoff and
// LockExpired are also the in-flight states the engine side hands to the
// joins (blocks/correlate).
const (
	StateWaiting          = "waiting"
	StateLocked           = "locked"
	StateRetryBackoff     = "retry_backoff"
	StateLockExpired      = "lock_expired"
	StateRetriesExhausted = "retries_exhausted"
	StateSuspended        = "suspended"
)

// ExternalTaskStates returns every value of the state label.
func ExternalTaskStates() []string {
	return []string{StateWaiting, StateLocked, StateRetryBackoff, StateLockExpired, StateRetriesExhausted, StateSuspended}
}

// Collectors of a Camunda engine: the values of the collector label of the
// exporter's self-metrics (workflow_exporter_collector_up and friends) for
// a source="camunda". Each fails alone: its series disappear, the others
// stay; camunda_up says whether the engine answers at all (GET /version,
// the collector label CollectorConnect).
const (
	CollectorCamunda          = "camunda"           // external tasks, their history log, incidents, camunda_engine_info
	CollectorCamundaJobs      = "camunda_jobs"      // async jobs and the job history log
	CollectorCamundaProcesses = "camunda_processes" // running process instances
	CollectorCamundaHistory   = "camunda_history"   // history growth and the history cleanup, at its own interval
)

// CollectorConnect is the collector label of a source's reachability check
// (its probe): a failure there takes the whole source down.
const CollectorConnect = "connect"
