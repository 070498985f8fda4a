package rules

// Inhibition is one root cause and the consequences it mutes in
// Alertmanager while both fire for the same lane (deploy/alertmanager.yml's
// inhibit_rules; checks/alertrouting holds the file to this list). Equal
// names the lane labels both carry, so a root cause mutes only its own
// lane's consequences, never another topic's or database's.
//
// Inhibition works only while the root cause fires when a consequence's
// notification is due, so the root must fire first: a consequence's `for`
// is never shorter than its root's (Validate checks it for every config,
// checks/alertrouting for the shipped files).
//
// The outages are not listed here: WorkflowExporterDown and
// WorkflowExporterSourceDown mute everything of the exporter or source they
// blind (by design, every lane of it); the alerts they mute cannot fire
// while the data is gone, so no order is needed.
type Inhibition struct {
	Source  string
	Targets []string
	Equal   []string
	// Why the source is the root cause of the targets, for docs/alerts.md.
	Why string
}

// Inhibitions returns the lane inhibitions of the bundle.
func Inhibitions() []Inhibition {
	return []Inhibition{
		{WorkflowOutboxBacklogStalled, []string{WorkflowOutboxOldestEventTooOld}, outboxLane,
			"a stalled publisher lets the oldest event age past the limit: one page, the stall, which names the cause"},
		{WorkflowOutboxRelayBehind, []string{WorkflowOutboxBacklogStalled, WorkflowOutboxOldestEventTooOld}, []string{"database"},
			"an outbox with status columns beside its change-data-capture relay (one per database) stalls when the relay stops: one page, the relay's, which names the cause (every event type of the database is behind it)"},
		{WorkflowInboxBacklogOld, []string{WorkflowInboxBacklogStalled, WorkflowInboxBacklogGrowing}, inboxLane,
			"once messages are late enough to page, the stall or lag ticket of the same inbox adds nothing"},
		{WorkflowDeliveryEventsLost, []string{WorkflowDeliveryDuplicateReceipts}, deliveryLane,
			"a consumer that loses events (acknowledged before committing, crashing and restarting) usually redelivers others too: while events of the delivery and type are lost, the page is the incident and the duplicates ticket adds nothing"},
		{WorkflowCompletedSideEffectTaskOpen, []string{WorkflowProcessedJobTaskOpen, CamundaExternalTaskLockExpirations, CamundaExternalTaskDuplicateExecution}, topicLane,
			"a worker that crashed after its side effect leaves the processed-job row of the same task, its lock lapses and the task is fetched again: one incident, the lost completion"},
		{WorkflowProcessedJobTaskOpen, []string{CamundaExternalTaskLockExpirations, CamundaExternalTaskDuplicateExecution}, topicLane,
			"the processed-job table's view of the same crash, for teams without an idempotency table"},
		{WorkflowIdempotencyInDoubt, []string{CamundaExternalTaskLockExpirations, CamundaExternalTaskDuplicateExecution}, topicLane,
			"a worker slower than its lock lets the lock lapse and the task run again: the outcome in doubt is what to act on"},
		{WorkflowIdempotencyInDoubt, []string{WorkflowIdempotencyStaleInProgress}, scopeLane,
			"a record in doubt stays in progress until someone reconciles it, so it goes stale too: the in-doubt page names its task"},
		{CamundaExternalTaskLockExpirations, []string{CamundaExternalTaskDuplicateExecution}, topicLane,
			"a lapsed lock is why the task ran again"},
		{CamundaExternalTaskRetryStorm, []string{CamundaExternalTaskLockExpirations, CamundaExternalTaskDuplicateExecution}, topicLane,
			"in a storm of failures the end of a retry backoff can read as a lapsed lock (a worker failing with an unchanged retry count and message while the history read falls behind), and lapses beside the failures are the same incident: one ticket, the storm"},
		{CamundaExternalTaskWorkerSilent, []string{CamundaExternalTaskLockHeldTooLong}, topicLane,
			"a worker that finishes nothing holds its locks: the old lock is its symptom, and the worker alert fires first"},
	}
}
