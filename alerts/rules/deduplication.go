package rules

import (
	"fmt"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// deduplication is WorkflowDeduplicationWindowExceeded (docs/alerts.md,
// "The deduplication window"): something that can still be redelivered is
// older than the retention horizon of the table that would recognise the
// redelivery. Three kinds of redelivery, each against its own table:
//
//   - an open external task on a topic the Camunda join has tied to an
//     idempotency scope (a record of the scope was found for a task of the
//     topic), against the scope's horizon. Its age is the largest the
//     engine reports for the topic: the oldest task waiting for a fetch
//     (by its creation), the longest-held lock and the oldest incident
//     (lower bounds of the task's age);
//   - an inbox message still being retried (FAILED_RETRYABLE), against its
//     source system's horizon;
//   - a pending outbox event, against the horizon of each inbox a delivery
//     takes the outbox's events to (deliveries[], as
//     workflow_outbox_consumer_info): by the source system the delivery
//     names, or the shortest of the inbox's where it names none.
//
// A horizon counts only where it fell within deduplication.deletion_window:
// it only grows while the oldest finished row stays, and falls when that
// row goes away, so a fall is the evidence that rows of the scope are
// deleted. Without it a new scope, whose horizon is just its age, would
// fire for every older task of its topic, though every record it ever
// wrote is still there. resets() counts the falls of the gauge.
func (b builder) deduplication() []Rule {
	c := b.c.Deduplication
	window := dur(c.DeletionWindow)
	// deleting is the horizon of the groups whose oldest row went away
	// within the window.
	deleting := func(metric string, group string) string {
		h := b.sel(metric)
		return fmt.Sprintf("(%[1]s and on (job, database, %[4]s) %[2]s > 0)", one(h), one("resets("+h+"["+window+"])"), window, group)
	}
	idem := deleting(catalog.IdempotencyRetentionHorizon, "scope")
	inbox := deleting(catalog.InboxRetentionHorizon, "source_system")
	taskAge := "max by (job, engine, topic) (\n" +
		"      label_replace(" + b.sel(catalog.CamundaExternalTaskOldestWaitingAge) + `, "age_of", "waiting", "", "")` + "\n" +
		"    or label_replace(" + b.sel(catalog.CamundaExternalTaskOldestLockAge) + `, "age_of", "lock", "", "")` + "\n" +
		"    or label_replace(" + b.sel(catalog.CamundaExternalTaskOldestIncidentAge) + `, "age_of", "incident", "", "")` + "\n" +
		"  )"
	// The topics the join tied to a scope: the join's series exist for
	// every (scope, engine, topic) it has matched a record of. (After
	// group_right, "()" ends its empty label list: "group by" would be
	// read as that list.)
	tied := "group by (job, database, scope, engine, topic) (" + b.sel(catalog.IdempotencyInDoubt) + ")"
	retried := "max by (job, database, source_system, message_type) (" +
		b.sel(catalog.InboxOldestMessageAge, `status="`+vocab.StatusFailedRetryable+`"`) + ")"
	// The outbox's oldest pending event per consumer inbox (the
	// deliveries from it: workflow_outbox_consumer_info), labelled as the
	// consumer's table is (database, and the source system where the
	// delivery names one), with the outbox's database as outbox_database.
	pending := func(sources string) string {
		return fmt.Sprintf(`max without (consumer_database) (
    label_replace(
      label_replace(
        max by (job, database) (%[1]s)
        * on (job, database) group_right ()
        group by (job, database, consumer_database, source_system) (%[2]s),
        "outbox_database", "$1", "database", "(.*)"),
      "database", "$1", "consumer_database", "(.*)")
  )`, b.sel(catalog.OutboxOldestPendingAge), b.sel(catalog.OutboxConsumerInfo, sources))
	}
	// A delivery that names no source system reaches any source of the
	// inbox: its shortest horizon among the sources being deleted.
	anySource := "min by (job, database) (" + inbox + ")"
	expr := fmt.Sprintf(`
(
  %[1]s
  * on (job, engine, topic) group_right ()
  %[2]s
)
> on (job, database, scope) group_left ()
%[3]s
or
%[4]s
> on (job, database, source_system) group_left ()
%[5]s
or
%[6]s
> on (job, database, source_system) group_left ()
%[5]s
or
%[7]s
> on (job, database) group_left ()
%[8]s
`, taskAge, tied, idem, retried, inbox, pending(`source_system!=""`), pending(`source_system=""`), anySource)
	where := "{{ if $labels.scope }}idempotency scope {{ $labels.scope }}{{ else if $labels.source_system }}the inbox's source system {{ $labels.source_system }}{{ else }}the inbox (any source system){{ end }} of database {{ $labels.database }}"
	what := "{{ if $labels.topic }}The oldest open external task on topic {{ $labels.topic }} of engine {{ $labels.engine }}" +
		"{{ else if $labels.outbox_database }}The oldest pending event of the outbox of database {{ $labels.outbox_database }}" +
		"{{ else }}The oldest message from {{ $labels.source_system }} of type {{ $labels.message_type }} still being retried{{ end }}"
	return []Rule{
		b.rule(WorkflowDeduplicationWindowExceeded, c.For, expr,
			what+" is {{ $value | humanizeDuration }} old, older than the oldest finished record left in "+where+
				", whose retention deleted rows within the last "+window+". A redelivery from before that record finds nothing to be recognised by and runs its side effect again. "+
				"Keep that table's records longer than what can still be redelivered lives, or resolve the old task, message or event."),
	}
}
