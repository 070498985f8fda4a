package dashboards

import (
	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/catalog"
)

// outboxInbox is the workflow-outbox-inbox dashboard: a row for each table.
func outboxInbox(c rules.Config) *board {
	d := newBoard(c, UIDOutboxInbox, "Workflow outbox and inbox",
		"Transactional outbox and inbox tables per database: backlog, age of the oldest event or message, inflow against outflow, publish delay and failures. Stalled means work waits and nothing moves; growing means it moves but falls behind. Deliveries compare one database's outbox with another's inbox: events lost, in flight, received twice, and how long delivery takes.",
		databaseVar(), eventTypeVar(), deliveryVar())
	outboxRow(d)
	relayRow(d)
	inboxRow(d)    // inbox.go
	deliveryRow(d) // delivery.go
	return d
}

// relayRow: is the change-data-capture relay (tables.outbox.relay) keeping
// up with the outbox's writes, and is its slot's WAL safe? Its panels show
// data only for databases whose outbox names a relay.
func relayRow(d *board) {
	d.row("Change-data-capture relay")
	d.stat(panel{title: "Oldest unconfirmed outbox write", unit: "s",
		desc:     "How long the oldest outbox write the relay has not confirmed to its replication slot has waited (workflow_outbox_relay_lag_seconds): only outbox writes count, so a relay idle while other tables write reads 0. Red past relay.lag of the alerts config (plus relay.lag_for where set, orange in between), where WorkflowOutboxRelayBehind pages. Empty for databases whose outbox has no relay.",
		targets:  []target{{expr: "max(" + sel(catalog.OutboxRelayLagSeconds, mDatabase) + ")"}},
		steps:    d.steps(d.relayLagSteps),
		runbooks: []string{rules.WorkflowOutboxRelayBehind}})
	d.downStat(sel(catalog.OutboxRelaySlotActive, mDatabase), panel{title: "Relays disconnected",
		desc:     "Relay slots no relay streams from (workflow_outbox_relay_slot_active 0): the relay is stopped, failing or cannot connect, and every outbox write waits.",
		runbooks: []string{rules.WorkflowOutboxRelayBehind}})
	d.stat(panel{title: "Slots at risk", unit: "short",
		desc:     "Relay slots whose WAL is due for removal (wal_status unreserved) or gone (lost): the relay loses the events it has not read (WorkflowOutboxRelayWALAtRisk).",
		targets:  []target{{expr: sumBy(sel(catalog.OutboxRelayWALStatus, mDatabase, `status=~"unreserved|lost"`))}},
		steps:    []step{{1, "red"}},
		runbooks: []string{rules.WorkflowOutboxRelayWALAtRisk}})
	d.stat(panel{title: "WAL retained by relay slots", unit: "bytes",
		desc:     "The most WAL a relay slot keeps from removal (the server's position less restart_lsn). It grows while the relay is stopped, and on an idle outbox with a relay that confirms only what it was sent (Debezium's default lsn.flush.mode).",
		targets:  []target{{expr: "max(" + sel(catalog.OutboxRelayRetainedWALBytes, mDatabase) + ")"}},
		runbooks: []string{rules.WorkflowOutboxRelayWALAtRisk}})
	d.stat(panel{title: "Outbox write rate", unit: "ops", w: 8,
		desc:    "Inserts into relayed outbox tables per second, from the tables' statistics (rolled-back inserts included).",
		targets: []target{{expr: sumBy(rate(catalog.OutboxEventsWritten, mDatabase))}}})

	d.series(panel{title: "Oldest outbox write the relay has not confirmed", unit: "s",
		desc:     "Per database and slot. A relay that confirms as it publishes stays near 0 (for a moment up to a collection interval, or its offset commit interval, after a write); a steady climb is a relay that stopped or does not confirm. Debezium without heartbeats climbs on a quiet outbox: it confirms a transaction only when the next one arrives. The dashed lines are WorkflowOutboxRelayBehind's thresholds.",
		targets:  []target{{expr: "max by (database, slot) (" + sel(catalog.OutboxRelayLagSeconds, mDatabase) + ")", legend: relayLegend}},
		steps:    d.steps(d.relayLagSteps),
		runbooks: []string{rules.WorkflowOutboxRelayBehind}})
	d.series(panel{title: "Relay connected", unit: "short", min: ptr(0.0),
		desc:     "1 while a relay streams from the slot, 0 while none does.",
		targets:  []target{{expr: "max by (database, slot) (" + sel(catalog.OutboxRelaySlotActive, mDatabase) + ")", legend: relayLegend}},
		runbooks: []string{rules.WorkflowOutboxRelayBehind}})
	d.series(panel{title: "WAL the slot retains, and its limit", unit: "bytes",
		desc: "The WAL each relay slot keeps from removal, and max_slot_wal_keep_size (absent when unlimited: the slot then retains WAL until the disk is full). WorkflowOutboxRelayWALAtRisk pages past relay.wal_keep_ratio of the limit.",
		targets: []target{
			{expr: "max by (database, slot) (" + sel(catalog.OutboxRelayRetainedWALBytes, mDatabase) + ")", legend: "retained " + relayLegend},
			{expr: "max by (database, slot) (" + sel(catalog.OutboxRelayWALKeepLimitBytes, mDatabase) + ")", legend: "limit " + relayLegend},
		},
		runbooks: []string{rules.WorkflowOutboxRelayWALAtRisk}})
	d.series(panel{title: "WAL behind the server's position", unit: "bytes",
		desc:    "The server's WAL position less the slot's confirmed_flush_lsn (workflow_outbox_relay_lag_bytes). Not a count of unpublished events: it includes every table's WAL, which a relay confirming only what it was sent leaves unconfirmed while its outbox is idle. The oldest unconfirmed outbox write is the figure to judge the relay by.",
		targets: []target{{expr: "max by (database, slot) (" + sel(catalog.OutboxRelayLagBytes, mDatabase) + ")", legend: relayLegend}}})
	d.series(panel{title: "Outbox writes", unit: "ops",
		desc:    "Inserts into the relayed outbox per second per database, from the table's statistics: the inflow the relay must keep up with.",
		targets: []target{{expr: sumBy(rate(catalog.OutboxEventsWritten, mDatabase), "database"), legend: "{{database}}"}}})
}

// outboxRow: is the publisher draining the outbox? Stats on top, then the
// same signals per event type over time.
func outboxRow(d *board) {
	d.row("Outbox")
	d.downStat(sel(catalog.ExporterSourceUp, mSourceDatabase), panel{title: "Databases down",
		desc:     "Selected databases the exporter could not read in its last collection. Their outbox and inbox series are then absent, so the panels below go blank: blank is not healthy.",
		runbooks: []string{rules.WorkflowExporterSourceDown}})
	d.stat(panel{title: "Oldest pending event", unit: "s",
		desc:     "Age of the oldest unpublished outbox event, by the database clock: the paging signal. Orange past outbox.stalled_window of the alerts config (the stall's age gate), red past outbox.oldest_age (WorkflowOutboxOldestEventTooOld). 0 means drained.",
		targets:  []target{{expr: "max(" + sel(catalog.OutboxOldestPendingAge, mDatabase, mEventType) + ")"}},
		steps:    d.steps(d.outboxAgeSteps),
		runbooks: []string{rules.WorkflowOutboxOldestEventTooOld, rules.WorkflowOutboxBacklogStalled}})
	d.stat(panel{title: "Pending events", unit: "short",
		desc:     "Outbox events not yet published and not failed.",
		targets:  []target{{expr: sumBy(sel(catalog.OutboxEventsPending, mDatabase, mEventType))}},
		runbooks: []string{rules.WorkflowOutboxBacklogStalled, rules.WorkflowOutboxBacklogGrowing}})
	d.stat(panel{title: "Failed events", unit: "short",
		desc:     "Outbox events in a failed or dead status: they will not be published without an operator.",
		targets:  []target{{expr: sumBy(sel(catalog.OutboxEventsFailed, mDatabase, mEventType))}},
		steps:    []step{{1, "orange"}},
		runbooks: []string{rules.WorkflowOutboxEventsFailed}})
	d.stat(panel{title: "Publish rate", unit: "ops",
		desc:     "Outbox events published per second. 0 while events are pending is a stalled publisher.",
		targets:  []target{{expr: sumBy(rate(catalog.OutboxEventsPublished, mDatabase, mEventType))}},
		runbooks: []string{rules.WorkflowOutboxBacklogStalled}})
	d.stat(panel{title: "Publish delay p95", unit: "s",
		desc:    "95th percentile of published_at minus created_at of the events published in the rate interval.",
		targets: []target{{expr: quantile(0.95, catalog.OutboxPublishDelay, nil, mDatabase)}},
		steps:   []step{{60, "orange"}, {300, "red"}}})

	d.series(panel{title: "Oldest pending event by type", unit: "s",
		desc:      "Age of the oldest unpublished event per database, aggregate type and event type. A steady climb is a stalled publisher; a saw-tooth is a publisher that keeps up. The dashed lines are the alerts' thresholds (outbox.stalled_window, outbox.oldest_age), per series where the alerts config tunes them for a selector.",
		targets:   []target{{expr: "max by (database, aggregate_type, event_type) (" + sel(catalog.OutboxOldestPendingAge, mDatabase, mEventType) + ")", legend: outboxAgeLegend}},
		steps:     d.steps(d.outboxAgeSteps),
		overrides: d.overrides(outboxAgeLegend, d.outboxAgeSteps, rules.WorkflowOutboxOldestEventTooOld, rules.WorkflowOutboxBacklogStalled),
		runbooks:  []string{rules.WorkflowOutboxOldestEventTooOld, rules.WorkflowOutboxBacklogStalled}})
	d.series(panel{title: "Pending events by type", unit: "short",
		desc:     "Unpublished events per database and event type.",
		targets:  []target{{expr: sumBy(sel(catalog.OutboxEventsPending, mDatabase, mEventType), "database", "event_type"), legend: "{{database}} {{event_type}}"}},
		runbooks: []string{rules.WorkflowOutboxBacklogGrowing}})
	d.series(panel{title: "Inflow and outflow", unit: "ops",
		desc: "Events created and published per second per database. Created above published for long is a growing backlog; published at 0 with events pending is a stalled one.",
		targets: []target{
			{expr: sumBy(rate(catalog.OutboxEventsCreated, mDatabase, mEventType), "database"), legend: "created {{database}}"},
			{expr: sumBy(rate(catalog.OutboxEventsPublished, mDatabase, mEventType), "database"), legend: "published {{database}}"},
		},
		runbooks: []string{rules.WorkflowOutboxBacklogGrowing, rules.WorkflowOutboxBacklogStalled}})
	d.series(panel{title: "Publish delay", unit: "s",
		desc:    "Quantiles of published_at minus created_at per database, over the events published in the rate interval.",
		targets: percentiles(catalog.OutboxPublishDelay, "database", []int{50, 95, 99}, mDatabase)})
	d.series(panel{title: "Failed events by type", unit: "short",
		desc:     "Outbox events in a failed or dead status per database and event type.",
		targets:  []target{{expr: sumBy(sel(catalog.OutboxEventsFailed, mDatabase, mEventType), "database", "event_type"), legend: "{{database}} {{event_type}}"}},
		runbooks: []string{rules.WorkflowOutboxEventsFailed}})
	d.series(panel{title: "Oldest pending event against its consumers' retention horizon", unit: "s",
		desc: "The oldest pending event of each outbox, and the retention horizon of each table that deduplicates its events downstream " +
			"(the inboxes its deliveries take the events to: by the source system a delivery names, or the inbox's shortest where it names none). " +
			"A pending event older than a consumer's horizon, where that consumer deletes rows, can reach it after the record of its first delivery is gone. Empty without deliveries.",
		targets: []target{
			{expr: "max by (database) (" + sel(catalog.OutboxOldestPendingAge, mDatabase, mEventType) + ")", legend: "oldest pending {{database}}"},
			{expr: consumerHorizon(), legend: "horizon of {{consumer_database}} {{source_system}} (consumer of {{database}})"},
		},
		runbooks: []string{rules.WorkflowDeduplicationWindowExceeded}})
	d.series(panel{title: "Outbox publish failures", unit: "cpm", min: ptr(0.0),
		desc:     "Events newly in a failed or dead status per minute, per database and event type (the rise of the failed count; events an operator requeues do not count against it). Above 0, the publisher keeps giving up on events of that type.",
		targets:  []target{{expr: "60 * " + sumBy("clamp_min(deriv("+sel(catalog.OutboxEventsFailed, mDatabase, mEventType)+rateInterval+"), 0)", "database", "event_type"), legend: "{{database}} {{event_type}}"}},
		runbooks: []string{rules.WorkflowOutboxEventsFailed}})
	d.series(panel{title: "Oldest failed event by type", unit: "s",
		desc:     "Age of the oldest failed, dead or blocked event per database and event type, by the database clock: how long its consumers have missed it. Absent where the table keeps no creation time or no failed state (docs/outbox-shapes.md).",
		targets:  []target{{expr: "max by (database, event_type) (" + sel(catalog.OutboxOldestFailedAge, mDatabase, mEventType) + ")", legend: "{{database}} {{event_type}}"}},
		runbooks: []string{rules.WorkflowOutboxEventsFailed}})
	d.series(panel{title: "Events retrying by type", unit: "short",
		desc:     "Pending events the publisher has retried at least retrying_after_attempts times (exporter config, default 3), per database and event type: it fails on them again and again. Only tables that keep an attempt count (docs/outbox-shapes.md); the status page groups their last errors by cause.",
		targets:  []target{{expr: sumBy(sel(catalog.OutboxEventsRetrying, mDatabase, mEventType), "database", "event_type"), legend: "{{database}} {{event_type}}"}},
		runbooks: []string{rules.WorkflowOutboxEventsRetrying}})
}

// consumerHorizon is the retention horizon of each inbox the deliveries
// from the selected outboxes take their events to, labelled as the consumer
// info is (database is the outbox's): the source system's where the
// delivery names one, the inbox's shortest where it names none.
func consumerHorizon() string {
	horizon := sel(catalog.InboxRetentionHorizon)
	return sel(catalog.OutboxConsumerInfo, mDatabase, `source_system!=""`) + "\n* on (job, instance, consumer_database, source_system) group_left ()\n" +
		`label_replace(` + horizon + `, "consumer_database", "$1", "database", "(.*)")` +
		"\nor\n" +
		sel(catalog.OutboxConsumerInfo, mDatabase, `source_system=""`) + "\n* on (job, instance, consumer_database) group_left ()\n" +
		`label_replace(min by (job, instance, database) (` + horizon + `), "consumer_database", "$1", "database", "(.*)")`
}
