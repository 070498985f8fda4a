package status

import (
	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// kindInfo is what the page says of a kind: its title, the alert that
// fires for it (whose runbook the rows link) and the first thing to do.
type kindInfo struct {
	kind, title, alert, action string
}

// kinds lists every kind in the order of the page: the alert that pages
// first, then the lost completions and outcomes nobody can prove, then the
// engine's own trouble and the backlogs.
var kinds = []kindInfo{
	{vocab.KindOutboxPending, "Oldest pending outbox events", rules.WorkflowOutboxOldestEventTooOld,
		"Consumers wait for these events: find out why the publisher does not publish them (it is stopped, or fails on the oldest)."},
	{vocab.KindDeliveryLost, "Published, never received (delivery lost)", rules.WorkflowDeliveryEventsLost,
		"Confirm the consumer's inbox lacks these message ids, then replay exactly these events from the outbox; never re-run the business operation."},
	{vocab.KindCompletedTaskOpen, "Side effect completed, Camunda task still open", rules.WorkflowCompletedSideEffectTaskOpen,
		"Complete the task with the stored result; do not redo the side effect."},
	{vocab.KindProcessedJobTaskOpen, "Processed job, Camunda task still open", rules.WorkflowProcessedJobTaskOpen,
		"Complete the task with the row's stored result; do not process the job again."},
	{vocab.KindInDoubt, "In doubt: in progress, and the task's lock lapsed or moved", rules.WorkflowIdempotencyInDoubt,
		"Reconcile with the external system by the idempotency key before any retry."},
	{vocab.KindUnknownOutcome, "Unknown outcome", rules.WorkflowUnknownOutcomeRecords,
		"Ask the external system whether it happened; never retry blindly."},
	{vocab.KindStaleInProgress, "Stuck in progress (not updated within stale_after)", rules.WorkflowIdempotencyStaleInProgress,
		"Check whether the attempt is still alive; otherwise reconcile, then resume safely."},
	{vocab.KindRetriesExhausted, "Retries exhausted (incident)", rules.CamundaExternalTaskRetriesExhausted,
		"Fix the cause, then give the task retries again; the process instance waits until then."},
	{vocab.KindLockExpired, "Lock lapsed", rules.CamundaExternalTaskLockExpirations,
		"The worker did not complete within its lock: the task will run again; check its idempotency record."},
	{vocab.KindRedelivered, "Redelivered after a lapsed lock", rules.CamundaExternalTaskDuplicateExecution,
		"A second attempt ran or runs: check that the idempotency record absorbed it."},
	{vocab.KindTaskFailureGroups, "External task failures grouped by cause", rules.CamundaExternalTaskRetryStorm,
		"Fix the cause with the most recent and most frequent failures first; the example task shows one occurrence (docs/failure-groups.md)."},
	{vocab.KindJobFailureGroups, "Job failures grouped by cause", rules.CamundaIncidentsOpen,
		"Fix the cause the signature names; jobs out of retries become incidents, which need their retries set again after the fix."},
	{vocab.KindIncidentGroups, "Open incidents grouped by cause", rules.CamundaIncidentsOpen,
		"Fix the cause the signature names, then retry the incidents (set retries again); the example is the newest incident's process instance."},
	{vocab.KindInboxWaiting, "Oldest waiting inbox messages", rules.WorkflowInboxBacklogOld,
		"Find out why the consumer does not finish them (down, stuck in PROCESSING, or a poison message)."},
	{vocab.KindOutboxErrorGroups, "Outbox errors grouped by cause", rules.WorkflowOutboxEventsRetrying,
		"Fix the cause the signature names; the publisher's next attempt then publishes the events (the example ids show some of them)."},
	{vocab.KindInboxErrorGroups, "Inbox errors and dead letters grouped by cause", rules.WorkflowInboxMessagesRetrying,
		"Fix the cause the signature names, then let the retries run or replay the dead letters (the example ids show some of them)."},
}

func lookupKind(kind string) (kindInfo, int, bool) {
	for i, k := range kinds {
		if k.kind == kind {
			return k, i, true
		}
	}
	return kindInfo{}, len(kinds), false
}

// Kinds returns every kind, in the order of the page.
func Kinds() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.kind
	}
	return out
}
