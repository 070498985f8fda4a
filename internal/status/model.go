// Package status is the on-call status page: which tasks and records are in
// trouble right now, by their identifiers (docs/status.md).
//
// The collectors gather the identifiers during the collections that already
// run and hand them to a Sink they find in their context (NewContext); the
// poll package keeps them in each source's snapshot next to the metrics, so
// a page load reads snapshots and collects nothing a scrape would not have
// collected (it goes through the same min_interval gate). Build turns the
// snapshots into a Report, the versioned schema of GET /status.json, and
// the handlers render it as JSON or as one server-rendered HTML page
// (page.html, embedded).
//
// Only identifiers ever enter a Report: ids, keys, names, statuses and
// times; never payloads, result payloads, error messages or request hashes.
package status

import "time"

// SchemaVersion is the version of the JSON schema below (docs/status.md).
// It changes when a field changes its meaning or goes away; fields may be
// added within a version, so readers ignore fields they do not know.
const SchemaVersion = 1

// Report is the whole page: GET /status.json.
type Report struct {
	SchemaVersion int       `json:"schema_version"`
	GeneratedAt   time.Time `json:"generated_at"`
	// MaxItems bounds the items of each list.
	MaxItems int      `json:"max_items"`
	Sources  []Source `json:"sources"`
	// Lists are the current problems, one list per kind of problem and
	// table or engine, most urgent kind first; lists whose total is 0 are
	// included (checked, nothing found). A source that is down contributes
	// no list.
	Lists []List `json:"lists"`
}

// Source states.
const (
	StateUp           = "up"            // the last collection succeeded in full
	StateDegraded     = "degraded"      // reachable, but some collector failed (its lists are missing)
	StateDown         = "down"          // not reachable: nothing from it is listed
	StateNotCollected = "not_collected" // no collection has finished since the exporter started
)

// Source is one configured Camunda engine or database.
type Source struct {
	Kind  string `json:"kind"` // "camunda" or "database"
	Name  string `json:"name"`
	State string `json:"state"`
	Up    bool   `json:"up"`
	// CollectedAt is when the last collection started, by the exporter's
	// clock; the lists are as of then.
	CollectedAt *time.Time `json:"collected_at,omitempty"`
	// LastSuccessAt is when a collection last succeeded in full.
	LastSuccessAt *time.Time `json:"last_success_at,omitempty"`
	// MinIntervalSeconds is the source's min_interval: the page is at most
	// that old (plus one collection's duration).
	MinIntervalSeconds float64 `json:"min_interval_seconds"`
	// Failures are the collectors that failed in the last collection, with
	// the class of the failure (never the error's text).
	Failures []Failure `json:"failures,omitempty"`
}

// Failure is one failed step of a collection.
type Failure struct {
	// Collector is the collector's name ("connect" for the reachability
	// check), as in workflow_exporter_collector_up.
	Collector string `json:"collector"`
	Class     string `json:"class"`
}

// SourceRef names a source.
type SourceRef struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// List is one kind of problem found by one source in one table or engine.
type List struct {
	Kind  string `json:"kind"`
	Title string `json:"title"`
	// Alert is the alert that fires for this kind; RunbookURL its runbook.
	Alert      string `json:"alert"`
	Severity   string `json:"severity"`
	RunbookURL string `json:"runbook_url"`
	// Action is the first thing to do, in one sentence.
	Action string    `json:"action"`
	Source SourceRef `json:"source"`
	// Engine is the Camunda engine whose tasks the list names: the source
	// itself for an engine's lists, the joined engine for a database's
	// join lists (shown only while that engine is up).
	Engine string `json:"engine,omitempty"`
	// Database and Table name the table of a database's list.
	Database string `json:"database,omitempty"`
	Table    string `json:"table,omitempty"`
	// Total is how many there are; Items shows at most MaxItems of them,
	// oldest first, and More says Total exceeds them.
	Total int  `json:"total"`
	More  bool `json:"more"`
	// Partial says Total is a lower bound: the engine held more in-flight
	// tasks than one collection lists (max_listed_tasks, or topics beyond
	// label_value_limit).
	Partial bool `json:"partial,omitempty"`
	// IdentifiersHidden says the config switched identifiers off for the
	// table or engine (status: {identifiers: false}): Items is empty and
	// Total still counts.
	IdentifiersHidden bool   `json:"identifiers_hidden,omitempty"`
	Items             []Item `json:"items"`
}

// Item is one task, record, message or event. Every field is an
// identifier, a status or a time; fields that do not apply are left out.
type Item struct {
	// The Camunda side.
	Engine            string `json:"engine,omitempty"`
	Topic             string `json:"topic,omitempty"`
	ExternalTaskID    string `json:"external_task_id,omitempty"`
	ProcessInstanceID string `json:"process_instance_id,omitempty"`
	// BusinessKey is the process instance's business key, where it has one.
	BusinessKey string `json:"business_key,omitempty"`
	ActivityID  string `json:"activity_id,omitempty"`
	WorkerID    string `json:"worker_id,omitempty"`
	// TaskState is the task's state as camunda_external_tasks names it
	// (locked, retry_backoff, lock_expired, retries_exhausted, suspended).
	TaskState string `json:"task_state,omitempty"`

	// The worker tables.
	Scope          string `json:"scope,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// JobReference is the row's reference to its task (the external task
	// id by default).
	JobReference  string `json:"job_reference,omitempty"`
	SourceSystem  string `json:"source_system,omitempty"`
	MessageID     string `json:"message_id,omitempty"`
	MessageType   string `json:"message_type,omitempty"`
	EventID       string `json:"event_id,omitempty"`
	AggregateType string `json:"aggregate_type,omitempty"`
	EventType     string `json:"event_type,omitempty"`
	// Status is the row's stored status value.
	Status string `json:"status,omitempty"`

	// Since is when the problem started, by the source's clock (what it
	// means per kind: docs/status.md); AgeSeconds is how long before the
	// collection that was, by the same clock.
	Since      *time.Time `json:"since,omitempty"`
	AgeSeconds float64    `json:"age_seconds"`
}
