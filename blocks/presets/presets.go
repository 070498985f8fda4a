// Package presets describes the outbox and inbox tables of messaging
// libraries as data: for each library, the SQL expressions over its own
// table that give the table collectors (collectors/tables) what they read
// from a table mapped column by column: an event's or message's id and
// labels, which rows are open work (unpublished, unfinished), which of those
// the library gave up on, the times, the attempts and the last error. A
// preset is chosen with one line of config (databases[].tables.outbox.preset,
// tables.inbox.preset); the collectors then read the library's table with
// the same queries as any other, and leave out the series the library's
// schema cannot support (an absent series is honest, a 0 would not be).
//
// The expressions were written against each library's own PostgreSQL DDL
// (collectors/tables/testdata/presets, with the repository, file and version
// in each file's header) and are tested there with rows in every state the
// library's code writes. docs/outbox-shapes.md is generated from this
// package: per preset, which series it reports, from what, and why the
// others are absent.
package presets

import (
	"slices"
	"strings"
)

// TimeKind says how a time column holds its instants.
type TimeKind string

const (
	// Timestamp: timestamp with time zone, or timestamp without time zone
	// (read as a wall clock of the session's zone: docs/database.md, "Time
	// columns and time zones").
	Timestamp TimeKind = "timestamp"
	// EpochMillis: a bigint of milliseconds since the Unix epoch.
	EpochMillis TimeKind = "epoch_ms"
)

// Time is a time column, or none (Column empty).
type Time struct {
	Column string
	Kind   TimeKind
}

// Present reports whether the table has the time.
func (t Time) Present() bool { return t.Column != "" }

// Outbox is one library's outbox table (or one schema version of it).
type Outbox struct {
	// Preset is the name config uses; Variant tells schema versions of one
	// preset apart ("" when there is one).
	Preset, Variant string
	// When lists the columns that identify the variant: the first variant
	// of a preset whose table has all of them applies (the last has none).
	When []string
	// Library and Source name the library, the versions and the DDL the
	// preset was written against (the docs).
	Library, Source string
	// Table is the library's default table name, "" when it has none (the
	// config must then name it).
	Table string
	// Columns are the columns the expressions read: each must exist.
	Columns []string
	// ID, AggregateType and EventType are text expressions: the event's
	// identity and its labels ("" for no label: the label is empty).
	ID, AggregateType, EventType string
	// Status is the row's stored status as text for the status page, ""
	// for none.
	Status string
	// Open is the predicate of the rows not yet published; "" when every
	// row is (the library deletes a row once it is sent), with OpenRows
	// saying so.
	Open, OpenRows string
	// Failed is the predicate, among open rows, of the events the library
	// gave up on (failed, dead, blocked); "" for none.
	Failed string
	// Created and Published are the event's creation and publication
	// times.
	Created, Published Time
	// RowsStay says published rows stay in the table (at least for a
	// while), so a counter of created events can see every one.
	RowsStay bool
	// Attempts is an integer expression: how often the library retried
	// the event so far; "" when it keeps no count.
	Attempts string
	// Error is the text of the last error, "" when none is kept.
	Error string
	// OpenIndex are the key columns of the partial index on Open the
	// exporter recommends.
	OpenIndex []string
	// LibraryIndexes name the library's own indexes that serve a query
	// (by the query's name: pending, created, published).
	LibraryIndexes map[string]string
	// Absent says, per series the preset does not report, why.
	Absent map[string]string
	// Notes are what an operator must know of the preset (the docs).
	Notes []string
}

// Inbox is one library's consumer-side table: its inbox, or the record
// of messages it handled that it deduplicates against.
type Inbox struct {
	Preset, Library, Source string
	Table                   string
	Columns                 []string
	// MessageID, SourceSystem and MessageType are text expressions.
	MessageID, SourceSystem, MessageType string
	// Status is a text expression yielding the canonical inbox status of
	// the row (vocab.InboxStatuses).
	Status string
	// Open is the predicate of the unfinished rows; "" when every row is;
	// NoOpenRows when the library never lets an unfinished message be
	// seen (OpenRows says why in either case).
	Open, OpenRows string
	NoOpenRows     bool
	// Received and Processed are the times a message was received and
	// finished.
	Received, Processed Time
	Attempts, Error     string
	OpenIndex           []string
	LibraryIndexes      map[string]string
	// DeadLetters is the table the library moves the messages it gave up
	// on to, nil for none.
	DeadLetters *DeadLetters
	Absent      map[string]string
	Notes       []string
}

// DeadLetters is a dead-letter table beside an inbox: every row (that
// Where selects) is a message the consumer gave up on, waiting for an
// operator.
type DeadLetters struct {
	// Table is the table's name in the schema of the inbox table.
	Table                                string
	Columns                              []string
	MessageID, SourceSystem, MessageType string
	// Since is when the message's wait began, as near as the table says.
	Since Time
	Error string
	// Where selects the rows that wait ("" all); Rows says why no index is
	// needed.
	Where, Rows string
}

// The series of the table kinds, as the catalog names them; Absent maps
// are keyed by these.
const (
	OutboxPending      = "workflow_outbox_events_pending"
	OutboxOldestAge    = "workflow_outbox_oldest_pending_age_seconds"
	OutboxFailed       = "workflow_outbox_events_failed"
	OutboxOldestFailed = "workflow_outbox_oldest_failed_age_seconds"
	OutboxRetrying     = "workflow_outbox_events_retrying"
	OutboxCreated      = "workflow_outbox_events_created_total"
	OutboxPublished    = "workflow_outbox_events_published_total"
	OutboxDelay        = "workflow_outbox_publish_delay_seconds"
	InboxMessages      = "workflow_inbox_messages"
	InboxOldestAge     = "workflow_inbox_oldest_message_age_seconds"
	InboxProcessed     = "workflow_inbox_messages_processed_total"
	InboxRetrying      = "workflow_inbox_messages_retrying"
	InboxFailed        = "workflow_inbox_messages_failed"
	InboxOldestFailed  = "workflow_inbox_oldest_failed_age_seconds"
)

// Why the same series are absent from several presets.
const (
	noFailedState   = "the library stores no failed state: an event it cannot send stays pending"
	noAttempts      = "the table keeps no attempt count"
	rowsDeleted     = "rows are deleted once sent: an event created and sent between two polls is never seen"
	noPublishedTime = "no publication time is stored"
)

// OutboxPresets returns every outbox preset's variants, in the order of the
// docs (variants of one preset in the order they are tried).
func OutboxPresets() []Outbox {
	return []Outbox{
		{
			Preset: "spring-modulith", Variant: "2.x", When: []string{"status", "completion_attempts"},
			Library: "Spring Modulith 2.0 and later, JDBC event publication registry, schema v2 (the 2.x default)",
			Source:  "spring-projects/spring-modulith 2.0.7 (same at 2.0.3 and 2.1.0): spring-modulith-events-jdbc .../schemas/v2/schema-postgresql.sql",
			Table:   "event_publication",
			Columns: []string{"id", "listener_id", "event_type", "publication_date", "completion_date", "status", "completion_attempts"},
			ID:      `"id"::text`, AggregateType: `"listener_id"`, EventType: `"event_type"`, Status: `"status"`,
			Open: `"completion_date" IS NULL`,
			// The library's own reading of failed (findFailedPublications):
			// FAILED, and incomplete legacy rows without a status.
			Failed:  `("status" = 'FAILED' OR "status" IS NULL)`,
			Created: Time{"publication_date", Timestamp}, Published: Time{"completion_date", Timestamp}, RowsStay: true,
			// completion_attempts is 1 at the first attempt and grows by
			// one with each resubmission.
			Attempts:       `COALESCE("completion_attempts", 1) - 1`,
			OpenIndex:      []string{"publication_date"},
			LibraryIndexes: map[string]string{"pending": "event_publication_by_completion_date_idx", "published": "event_publication_by_completion_date_idx"},
			Absent:         map[string]string{},
			Notes: []string{
				"One row per event and listener: `aggregate_type` is the listener's id, `event_type` the event's class.",
				"Pending are the publications without a completion date (PUBLISHED, PROCESSING, RESUBMITTED); failed are FAILED ones and, as the library reads them, incomplete rows left by 1.x without a status. Retried counts resubmissions (`completion_attempts` less the first attempt). The table keeps no error text.",
				"Completion mode UPDATE (the default) keeps completed rows. With DELETE the published counter and the publish delay stay at 0 (completed rows vanish) and created events completed between two polls are not counted; with ARCHIVE completed rows move to `event_publication_archive`, which the exporter does not read.",
			},
		},
		{
			Preset: "spring-modulith", Variant: "1.x",
			Library: "Spring Modulith 1.x, JDBC event publication registry (and 2.x with use-legacy-structure)",
			Source:  "spring-projects/spring-modulith 1.4.12 (unchanged since 1.4.0): spring-modulith-events-jdbc .../schema-postgresql.sql",
			Table:   "event_publication",
			Columns: []string{"id", "listener_id", "event_type", "publication_date", "completion_date"},
			ID:      `"id"::text`, AggregateType: `"listener_id"`, EventType: `"event_type"`,
			Open:    `"completion_date" IS NULL`,
			Created: Time{"publication_date", Timestamp}, Published: Time{"completion_date", Timestamp}, RowsStay: true,
			OpenIndex:      []string{"publication_date"},
			LibraryIndexes: map[string]string{"pending": "event_publication_by_completion_date_idx", "published": "event_publication_by_completion_date_idx"},
			Absent: map[string]string{
				OutboxFailed:       "1.x writes nothing when a listener fails: its publication looks like a pending one, only older",
				OutboxOldestFailed: "1.x writes nothing when a listener fails",
				OutboxRetrying:     noAttempts,
			},
			Notes: []string{
				"Told apart from 2.x by the columns at each collection: a table without `status` and `completion_attempts` is read as 1.x.",
				"A failed listener's publication stays pending: `workflow_outbox_oldest_pending_age_seconds` is the signal.",
			},
		},
		{
			Preset: "namastack", Library: "namastack-outbox (Spring Boot), JDBC module",
			Source:  "namastack/namastack-outbox v1.8.1: namastack-outbox-jdbc/src/main/resources/schema/postgres/outbox-tables.sql",
			Table:   "outbox_record",
			Columns: []string{"id", "status", "record_type", "handler_id", "created_at", "completed_at", "failure_count", "failure_reason"},
			ID:      `"id"`, AggregateType: `"handler_id"`, EventType: `"record_type"`, Status: `"status"`,
			Open: `"completed_at" IS NULL`, Failed: `"status" = 'FAILED'`,
			Created: Time{"created_at", Timestamp}, Published: Time{"completed_at", Timestamp}, RowsStay: true,
			Attempts: `"failure_count"`, Error: `"failure_reason"`,
			OpenIndex: []string{"created_at"},
			Absent:    map[string]string{},
			Notes: []string{
				"`aggregate_type` is the handler's id, `event_type` the record type. NEW records are pending (there is no in-progress status), FAILED ones failed; `failure_count` counts the failed attempts and `failure_reason` holds the last error, grouped by signature on the status page.",
				"With `processing.delete-completed-records: true` completed rows are deleted: the published counter and the publish delay stay at 0 and records completed between two polls are not counted as created. A NEW record blocked behind a FAILED one of the same key (stop-on-first-failure) counts as pending and ages.",
			},
		},
		{
			Preset: "gruelbox", Library: "gruelbox transaction-outbox (Java), DefaultPersistor, PostgreSQL dialect",
			Source:  "gruelbox/transaction-outbox 7.0.715: the migrations of DefaultDialect.java and Dialect.java (POSTGRESQL_9), table TXNO_OUTBOX",
			Table:   "txno_outbox",
			Columns: []string{"id", "invocation", "topic", "attempts", "blocked", "processed"},
			ID:      `"id"`, AggregateType: `"topic"`,
			// The invocation's class and method, from its JSON text (a
			// pattern match cannot fail on a malformed row, a cast to json
			// could).
			EventType: `COALESCE(substring("invocation" from '"c":"([^"]*)"') || '.' || substring("invocation" from '"m":"([^"]*)"'), '')`,
			Open:      `"processed" = false`, Failed: `"blocked" IS TRUE`,
			Attempts:       `COALESCE("attempts", 0)`,
			LibraryIndexes: map[string]string{"pending": "ix_txno_outbox_1"},
			Absent: map[string]string{
				OutboxOldestAge:    "the table keeps no creation time: nextattempttime and lastattempttime are rewritten at every attempt",
				OutboxOldestFailed: "the table keeps no creation time",
				OutboxCreated:      "the table keeps no creation time, and rows are deleted once sent",
				OutboxPublished:    "rows are deleted once sent; only entries with a uniqueRequestId stay (processed), so a count of them would miss the others",
				OutboxDelay:        "neither time is stored",
			},
			Notes: []string{
				"`aggregate_type` is the topic (`*` for unordered entries), `event_type` the invocation's class and method. Blocked entries (attempts reached blockAfterAttempts) are failed; an ordered entry is never blocked and retries forever, holding back its topic: it counts as retrying.",
				"Without a creation time neither age can be read, so WorkflowOutboxOldestEventTooOld cannot fire: alert on `workflow_outbox_events_pending` and `workflow_outbox_events_retrying` instead.",
			},
		},
		{
			Preset: "eventuate-tram", Library: "Eventuate Tram transactional messaging, with the polling CDC service",
			Source:  "eventuate-foundation/eventuate-common (master 6de8d54d, 0.22.0-SNAPSHOT): postgres/2.initialize-database.sql",
			Table:   "eventuate.message",
			Columns: []string{"id", "destination", "headers", "published", "creation_time"},
			ID:      `"id"`, AggregateType: `"destination"`,
			EventType: `COALESCE(substring("headers" from '"event-type":"([^"]*)"'), '')`,
			Open:      `"published" = 0`,
			Created:   Time{"creation_time", EpochMillis}, RowsStay: true,
			LibraryIndexes: map[string]string{"pending": "message_published_idx"},
			Absent: map[string]string{
				OutboxFailed:       noFailedState,
				OutboxOldestFailed: noFailedState,
				OutboxRetrying:     noAttempts,
				OutboxPublished:    noPublishedTime + " (the CDC service sets published = 1)",
				OutboxDelay:        noPublishedTime,
			},
			Notes: []string{
				"`aggregate_type` is the destination, `event_type` the `event-type` header of domain events (empty for commands and plain messages). `creation_time` is epoch milliseconds, compared as such so its index serves the window.",
				"Only with the polling CDC: the WAL-reading CDC never sets `published`, so every message would look pending forever. With it, watch its replication slot instead (`tables.outbox.relay`).",
			},
		},
		{
			Preset: "nservicebus", Library: "NServiceBus SQL persistence, outbox, PostgreSQL dialect",
			Source:         "Particular/NServiceBus.Persistence.Sql 9.0.3 (unchanged since 2017): src/ScriptBuilder/Outbox/Create_PostgreSql.sql",
			Columns:        []string{"MessageId", "Dispatched", "DispatchedAt"},
			ID:             `"MessageId"`,
			Open:           `"Dispatched" = false`,
			Published:      Time{"DispatchedAt", Timestamp},
			RowsStay:       true,
			LibraryIndexes: map[string]string{"pending": "Index_Dispatched", "published": "Index_DispatchedAt"},
			Absent: map[string]string{
				OutboxOldestAge:    "the table keeps no time of the incoming message's handling, only of the dispatch",
				OutboxFailed:       noFailedState + " (the incoming message is retried by recoverability and dispatches the stored operations again)",
				OutboxOldestFailed: noFailedState,
				OutboxRetrying:     noAttempts,
				OutboxCreated:      "the table keeps no creation time",
				OutboxDelay:        "the table keeps no creation time",
			},
			Notes: []string{
				"The table is named after the endpoint (`<Endpoint>_OutboxData`): `table:` is required. One row per handled incoming message: pending while its outgoing messages are not dispatched (normally milliseconds). The labels are empty: the message types are inside `Operations`, emptied at dispatch.",
				"`DispatchedAt` is a timestamp without time zone written in the writer session's zone: run the exporter's role in the same `TimeZone` (docs/database.md).",
				"The library's indexes `Index_Dispatched` and `Index_DispatchedAt` carry no table prefix: a second endpoint's outbox table in the same schema gets none of them (`check` says so); create them from `deploy/sql/presets/nservicebus.sql` with that table's name.",
			},
		},
		{
			Preset: "masstransit", Library: "MassTransit Entity Framework Core transactional outbox (bus and consumer outbox), Npgsql",
			Source:  "MassTransit/MassTransit v8.5.8: the EF Core model of EntityFrameworkOutboxConfigurationExtensions.cs and OutboxMessage.cs, as Npgsql's provider generates it",
			Table:   "OutboxMessage",
			Columns: []string{"MessageId", "MessageType", "SentTime"},
			ID:      `"MessageId"::text`, EventType: `"MessageType"`,
			OpenRows: "every row of the table is pending: the delivery service deletes a message once it is sent",
			Created:  Time{"SentTime", Timestamp},
			Absent: map[string]string{
				OutboxFailed:       "a send fault is logged and the message retried, never stored as failed",
				OutboxOldestFailed: "a send fault is logged, never stored",
				OutboxRetrying:     noAttempts,
				OutboxCreated:      rowsDeleted,
				OutboxPublished:    rowsDeleted,
				OutboxDelay:        rowsDeleted,
			},
			Notes: []string{
				"`event_type` is the message type URN, `aggregate_type` is empty. Rows of the bus outbox and of the consumer outbox count alike. Projects that use EFCore.NamingConventions have snake_case names and need the column mapping instead of the preset.",
				"Without a published counter, WorkflowOutboxBacklogStalled fires on the age alone: the oldest pending message older than the stalled window.",
			},
		},
		{
			Preset: "wolverine", Library: "Wolverine (JasperFx) PostgreSQL message store, default durability settings",
			Source:  "JasperFx/wolverine V6.29.2 with Weasel 9.25.1: OutgoingEnvelopeTable.cs, as Weasel creates it",
			Table:   "wolverine.wolverine_outgoing_envelopes",
			Columns: []string{"id", "destination", "message_type"},
			ID:      `"id"::text`, AggregateType: `"destination"`, EventType: `"message_type"`,
			OpenRows: "every row of the table is pending: the sending agent deletes an envelope once it is sent (or expired)",
			Absent: map[string]string{
				OutboxOldestAge:    "the table keeps no time by default (only with OutboxStaleTime)",
				OutboxFailed:       "the outgoing side stores no failed state (inbound failures go to wolverine_dead_letters: the inbox preset)",
				OutboxOldestFailed: "the outgoing side stores no failed state",
				OutboxRetrying:     "attempts is written once at insert and never updated",
				OutboxCreated:      rowsDeleted,
				OutboxPublished:    rowsDeleted,
				OutboxDelay:        rowsDeleted,
			},
			Notes: []string{
				"`aggregate_type` is the destination URI, `event_type` the message type. The default schema is `wolverine`; name the table with yours.",
			},
		},
	}
}

// InboxPresets returns every inbox preset, in the order of the docs.
func InboxPresets() []Inbox {
	return []Inbox{
		{
			Preset: "eventuate-tram", Library: "Eventuate Tram consumer-side deduplication (SqlTableBasedDuplicateMessageDetector)",
			Source:    "eventuate-foundation/eventuate-common (master 6de8d54d): postgres/2.initialize-database.sql, table received_messages",
			Table:     "eventuate.received_messages",
			Columns:   []string{"consumer_id", "message_id", "creation_time"},
			MessageID: `"message_id"`, SourceSystem: `COALESCE("consumer_id", '')`, Status: `'PROCESSED'`,
			NoOpenRows: true,
			OpenRows:   "the row is inserted in the handler's transaction: it commits with the handling, so no unfinished message is ever visible",
			Processed:  Time{"creation_time", EpochMillis},
			Absent: map[string]string{
				InboxMessages:     "no unfinished message is ever visible (the row commits with the handling)",
				InboxOldestAge:    "no unfinished message is ever visible",
				InboxRetrying:     noAttempts,
				InboxFailed:       "a failed handler rolls its row back; nothing of the failure is stored",
				InboxOldestFailed: "nothing of a failure is stored",
			},
			Notes: []string{
				"`source_system` is the consumer's id; the table has no message type. Every row is a handled message (status PROCESSED): the processed counter is the consumer's throughput.",
			},
		},
		{
			Preset: "masstransit", Library: "MassTransit Entity Framework Core consumer outbox: the inbox (InboxState), Npgsql",
			Source:    "MassTransit/MassTransit v8.5.8: the EF Core model of InboxState.cs, as Npgsql's provider generates it",
			Table:     "InboxState",
			Columns:   []string{"MessageId", "ConsumerId", "Received", "Consumed", "Delivered"},
			MessageID: `"MessageId"::text`, SourceSystem: `"ConsumerId"::text`,
			// No status column: the state is which of Consumed and Delivered
			// are set.
			Status:   `CASE WHEN "Delivered" IS NOT NULL THEN 'PROCESSED' WHEN "Consumed" IS NOT NULL THEN 'PROCESSING' ELSE 'RECEIVED' END`,
			Open:     `"Delivered" IS NULL`,
			Received: Time{"Received", Timestamp}, Processed: Time{"Delivered", Timestamp},
			LibraryIndexes: map[string]string{"open": "IX_InboxState_Delivered", "processed": "IX_InboxState_Delivered"},
			Absent: map[string]string{
				InboxRetrying:     "ReceiveCount is raised in the same transaction as the consumer runs in: a fault rolls it back, so it never counts a failed attempt",
				InboxFailed:       "faulted messages go to the broker's _error queue; the table keeps no failure",
				InboxOldestFailed: "the table keeps no failure",
			},
			Notes: []string{
				"`source_system` is the consumer's id (a GUID), the message type is not stored. RECEIVED: not consumed yet (or the consumer keeps faulting); PROCESSING: consumed, its outgoing messages not all delivered; PROCESSED: delivered. Rows that never succeed are never cleaned up and age.",
			},
		},
		{
			Preset: "wolverine", Library: "Wolverine (JasperFx) PostgreSQL message store: durable inbox and dead letters, default durability settings",
			Source:    "JasperFx/wolverine V6.29.2 with Weasel 9.25.1: IncomingEnvelopeTable.cs and DeadLettersTable.cs, as Weasel creates them",
			Table:     "wolverine.wolverine_incoming_envelopes",
			Columns:   []string{"id", "status", "attempts", "message_type", "received_at"},
			MessageID: `"id"::text`, SourceSystem: `COALESCE("received_at", '')`, MessageType: `"message_type"`,
			Status:    `CASE WHEN "status" = 'Handled' THEN 'PROCESSED' WHEN "status" = 'Scheduled' AND COALESCE("attempts", 0) > 0 THEN 'FAILED_RETRYABLE' ELSE 'RECEIVED' END`,
			Open:      `"status" <> 'Handled'`,
			Attempts:  `COALESCE("attempts", 0)`,
			OpenIndex: []string{"message_type"},
			DeadLetters: &DeadLetters{
				Table:     "wolverine_dead_letters",
				Columns:   []string{"id", "message_type", "received_at", "exception_type", "exception_message", "sent_at", "replayable"},
				MessageID: `"id"::text`, SourceSystem: `COALESCE("received_at", '')`, MessageType: `"message_type"`,
				Since: Time{"sent_at", Timestamp},
				Error: `COALESCE("exception_type", '') || ': ' || COALESCE("exception_message", '')`,
				Where: `"replayable" IS NOT TRUE`,
				Rows:  "every row is a dead letter waiting for an operator (a replayed one moves back to the incoming table)",
			},
			Absent: map[string]string{
				InboxOldestAge: "the table keeps no receive time by default (only with InboxStaleTime)",
				InboxProcessed: "handled rows keep only keep_until, whose distance from the handling is the application's KeepAfterMessageHandling",
			},
			Notes: []string{
				"`source_system` is the listener's URI (`received_at`), `message_type` the message type. Incoming and scheduled envelopes are RECEIVED, scheduled ones with attempts (retry later) FAILED_RETRYABLE, handled ones PROCESSED (kept 5 minutes for deduplication).",
				"Dead letters (`wolverine_dead_letters` in the same schema, less those marked for replay) are the failed messages; their age counts from `sent_at`, when the sender sent the message (the table keeps no time of dead-lettering), and their exceptions are grouped by signature on the status page.",
			},
		},
	}
}

// OutboxNames returns the outbox preset names, sorted.
func OutboxNames() []string {
	var out []string
	for _, p := range OutboxPresets() {
		if !slices.Contains(out, p.Preset) {
			out = append(out, p.Preset)
		}
	}
	slices.Sort(out)
	return out
}

// InboxNames returns the inbox preset names, sorted.
func InboxNames() []string {
	var out []string
	for _, p := range InboxPresets() {
		out = append(out, p.Preset)
	}
	slices.Sort(out)
	return out
}

// OutboxVariants returns the variants of the named outbox preset, in the
// order they are tried, or none.
func OutboxVariants(name string) []Outbox {
	var out []Outbox
	for _, p := range OutboxPresets() {
		if p.Preset == name {
			out = append(out, p)
		}
	}
	return out
}

// InboxPreset returns the named inbox preset.
func InboxPreset(name string) (Inbox, bool) {
	for _, p := range InboxPresets() {
		if p.Preset == name {
			return p, true
		}
	}
	return Inbox{}, false
}

// OutboxVariant returns the variant of the named preset that applies to a
// table with the given columns: the first whose When columns all exist.
func OutboxVariant(name string, has func(column string) bool) (Outbox, bool) {
	for _, p := range OutboxVariants(name) {
		ok := true
		for _, c := range p.When {
			ok = ok && has(c)
		}
		if ok {
			return p, true
		}
	}
	return Outbox{}, false
}

// DefaultTable returns a preset's default table for the kind (outbox or
// inbox), "" when it has none.
func DefaultTable(kind, name string) string {
	switch kind {
	case "outbox":
		if v := OutboxVariants(name); len(v) > 0 {
			return v[0].Table
		}
	case "inbox":
		if p, ok := InboxPreset(name); ok {
			return p.Table
		}
	}
	return ""
}

// SchemaOf returns the schema of a possibly qualified table name, with its
// dot ("wolverine."), or "".
func SchemaOf(table string) string {
	if i := strings.LastIndex(table, "."); i >= 0 {
		return table[:i+1]
	}
	return ""
}
