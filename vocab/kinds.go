package vocab

// Source kinds: the values of the source label of the exporter's
// self-metrics and of the status page's sources.
const (
	SourceCamunda  = "camunda"
	SourceDatabase = "database"
	// SourceDelivery is a delivery (deliveries[]): a poll source of its
	// own, reading its producer's outbox and its consumer's inbox.
	SourceDelivery = "delivery"
)

// Table kinds: the keys under databases[].tables and the kind a table's
// requirements and status lists name.
const (
	TableIdempotency   = "idempotency"
	TableProcessedJobs = "processed_jobs"
	TableInbox         = "inbox"
	TableOutbox        = "outbox"
)

// CollectorOutboxRelay is the collector label of the outbox's
// change-data-capture relay (databases[].tables.outbox.relay), which fails
// apart from the outbox table's collector.
const CollectorOutboxRelay = "outbox_relay"

// SlotWALStatuses are the values of a replication slot's wal_status
// (pg_replication_slots), from healthy to gone: the status label of
// workflow_outbox_relay_wal_status.
func SlotWALStatuses() []string { return []string{"reserved", "extended", "unreserved", "lost"} }

// TableKinds returns every table kind, in the order their collectors run.
func TableKinds() []string {
	return []string{TableIdempotency, TableProcessedJobs, TableInbox, TableOutbox}
}

// Problem kinds: what one list of the status page holds (the kind field of
// /status.json). Each names the items behind one alert.
const (
	KindOutboxPending        = "outbox_pending"
	KindCompletedTaskOpen    = "completed_task_open"
	KindProcessedJobTaskOpen = "processed_job_task_open"
	KindInDoubt              = "in_doubt"
	KindUnknownOutcome       = "unknown_outcome"
	KindStaleInProgress      = "stale_in_progress"
	KindRetriesExhausted     = "retries_exhausted"
	KindLockExpired          = "lock_expired"
	KindRedelivered          = "redelivered"
	KindInboxWaiting         = "inbox_waiting"
	KindTaskFailureGroups    = "task_failure_groups"
	KindJobFailureGroups     = "job_failure_groups"
	KindIncidentGroups       = "incident_groups"
	KindOutboxErrorGroups    = "outbox_error_groups"
	KindInboxErrorGroups     = "inbox_error_groups"
	// KindDeliveryLost: events a delivery's producer published that its
	// consumer's inbox never received (workflow_delivery_lost_events).
	KindDeliveryLost = "delivery_lost"
)

// CollectorDelivery is the collector label of a delivery's one collector
// (source="delivery"): it reads the producer's outbox and the consumer's
// inbox and compares them.
const CollectorDelivery = "delivery"
