package dashboards

import (
	"strings"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// inboxRow: are consumed messages being processed? Stats on top, then the
// statuses and ages per message kind over time.
func inboxRow(d *board) {
	d.row("Inbox")
	d.stat(panel{title: "Oldest inbox message", unit: "s",
		desc:     "Age of the oldest message in a non-terminal status (" + strings.Join(vocab.InboxOpenStatuses(), ", ") + "), by the database clock. Orange past inbox.stalled_window of the alerts config (the stall's age gate), red past inbox.oldest_age (WorkflowInboxBacklogOld pages).",
		targets:  []target{{expr: "max(" + sel(catalog.InboxOldestMessageAge, mDatabase) + ")"}},
		steps:    d.steps(d.inboxAgeSteps),
		runbooks: []string{rules.WorkflowInboxBacklogOld}})
	d.stat(panel{title: "Messages in progress", unit: "short",
		desc:     "Inbox messages in a non-terminal status.",
		targets:  []target{{expr: sumBy(sel(catalog.InboxMessages, mDatabase))}},
		runbooks: []string{rules.WorkflowInboxBacklogStalled, rules.WorkflowInboxBacklogGrowing}})
	d.stat(panel{title: "Unknown-outcome messages", unit: "short",
		desc:     "Inbox messages in UNKNOWN_OUTCOME: processing may or may not have taken effect; reconcile before reprocessing.",
		targets:  []target{{expr: sumBy(sel(catalog.InboxMessages, mDatabase, `status="`+vocab.StatusUnknownOutcome+`"`))}},
		steps:    []step{{1, "orange"}},
		runbooks: []string{rules.WorkflowUnknownOutcomeRecords}})
	d.stat(panel{title: "Processed rate", unit: "ops",
		desc:    "Inbox messages reaching a terminal status (" + strings.Join(vocab.InboxTerminalStatuses(), ", ") + ") per second.",
		targets: []target{{expr: sumBy(rate(catalog.InboxMessagesProcessed, mDatabase))}}})
	d.stat(panel{title: "Duplicates ignored", unit: "ops",
		desc:    "Inbox messages recognised as duplicates (IGNORED_DUPLICATE) per second: the inbox doing its job.",
		targets: []target{{expr: sumBy(rate(catalog.InboxMessagesProcessed, mDatabase, `status="`+vocab.StatusIgnoredDuplicate+`"`))}}})
	d.stat(panel{title: "Final failures", unit: "ops",
		desc:    "Inbox messages reaching FAILED_FINAL per second: they will not be retried.",
		targets: []target{{expr: sumBy(rate(catalog.InboxMessagesProcessed, mDatabase, `status="`+vocab.StatusFailedFinal+`"`))}},
		steps:   []step{{0.001, "orange"}}})

	d.series(panel{title: "Messages by status", unit: "short",
		desc:     "Inbox messages per database and non-terminal status. Waiting with nothing processed is a stalled consumer; growing while processed is one that falls behind.",
		targets:  []target{{expr: sumBy(sel(catalog.InboxMessages, mDatabase), "database", "status"), legend: "{{database}} {{status}}"}},
		runbooks: []string{rules.WorkflowInboxBacklogStalled, rules.WorkflowInboxBacklogGrowing, rules.WorkflowInboxBacklogOld}})
	d.series(panel{title: "Oldest message by source and type", unit: "s",
		desc:      "Age of the oldest non-terminal message per source system and message type. The dashed lines are the alerts' thresholds (inbox.stalled_window, inbox.oldest_age), per series where the alerts config tunes them for a selector.",
		targets:   []target{{expr: "max by (source_system, message_type) (" + sel(catalog.InboxOldestMessageAge, mDatabase) + ")", legend: inboxAgeLegend}},
		steps:     d.steps(d.inboxAgeSteps),
		overrides: d.overrides(inboxAgeLegend, d.inboxAgeSteps, rules.WorkflowInboxBacklogOld, rules.WorkflowInboxBacklogStalled),
		runbooks:  []string{rules.WorkflowInboxBacklogOld}})
	d.series(panel{title: "Inbox retention horizon and retried messages", unit: "s",
		desc: "Horizon: seconds since the oldest processed_at of a finished message (" + strings.Join(vocab.InboxTerminalStatuses(), ", ") +
			") per source system, how far back a redelivered message is still recognised; a saw-tooth where a retention job deletes by age, a line that only grows where nothing was deleted. " +
			"Retried: the oldest message per source system still in FAILED_RETRYABLE. A retried line above its source's saw-tooth: the broker redelivers from further back than the inbox remembers.",
		targets: []target{
			{expr: "max by (database, source_system) (" + sel(catalog.InboxRetentionHorizon, mDatabase) + ")", legend: "horizon {{database}} {{source_system}}"},
			{expr: "max by (database, source_system) (" + sel(catalog.InboxOldestMessageAge, mDatabase, `status="`+vocab.StatusFailedRetryable+`"`) + ")", legend: "retried {{database}} {{source_system}}"},
		},
		runbooks: []string{rules.WorkflowDeduplicationWindowExceeded}})
	d.series(panel{title: "Messages processed by status", unit: "ops",
		desc:     "Inbox messages reaching a terminal status per second, by status. No processed messages while some wait: the consumer is stalled.",
		targets:  []target{{expr: sumBy(rate(catalog.InboxMessagesProcessed, mDatabase), "status"), legend: "{{status}}"}},
		runbooks: []string{rules.WorkflowInboxBacklogStalled}})
	d.series(panel{title: "Messages retrying by source and type", unit: "short",
		desc:     "Unfinished messages the consumer has attempted at least retrying_after_attempts times (exporter config, default 3), per source system and message type: poison messages or a failing dependency. Only inboxes that keep an attempt count (docs/outbox-shapes.md).",
		targets:  []target{{expr: sumBy(sel(catalog.InboxMessagesRetrying, mDatabase), "source_system", "message_type"), legend: "{{source_system}} {{message_type}}"}},
		runbooks: []string{rules.WorkflowInboxMessagesRetrying}})
	d.series(panel{title: "Dead letters by source and type", unit: "short",
		desc:     "Messages the consumer gave up on, waiting in the library's dead-letter table (Wolverine's wolverine_dead_letters) for an operator to fix the cause and replay them.",
		targets:  []target{{expr: sumBy(sel(catalog.InboxMessagesFailed, mDatabase), "source_system", "message_type"), legend: "{{source_system}} {{message_type}}"}},
		runbooks: []string{rules.WorkflowInboxMessagesFailed}})
	d.series(panel{title: "Oldest dead letter", unit: "s",
		desc:     "Seconds since the oldest dead-lettered message was sent (the table keeps no time of dead-lettering), per source system and message type.",
		targets:  []target{{expr: "max by (source_system, message_type) (" + sel(catalog.InboxOldestFailedAge, mDatabase) + ")", legend: "{{source_system}} {{message_type}}"}},
		runbooks: []string{rules.WorkflowInboxMessagesFailed}})
}
