package collectors

import (
	"sort"
	"sync"
	"time"
)

// Sink receives the lists one collector finds in one collection: the
// identifiers behind its gauges (the tasks in doubt, the records stuck, the
// oldest events), for the on-call status page (internal/status). poll gives
// every collector of a source its own sink with each collection (the
// second argument of Collect) and keeps the lists only when the collector
// succeeds, exactly like its metrics: a failed collection leaves nothing
// stale on the page.
type Sink struct {
	source   SourceRef
	maxItems int

	mu    sync.Mutex
	lists []List
}

// NewSink returns a sink for a collection of source, whose lists keep at
// most maxItems items each.
func NewSink(source SourceRef, maxItems int) *Sink {
	return &Sink{source: source, maxItems: max(maxItems, 1)}
}

// MaxItems is how many items a list keeps: the LIMIT of a list's query.
func (s *Sink) MaxItems() int { return s.maxItems }

// Add reports one list. Its items are put in order, oldest first (items
// without a time last, otherwise in the order given), and cut to MaxItems;
// Total is at least the number of items given. A list whose identifiers
// are hidden keeps no item.
func (s *Sink) Add(l List) {
	l.Source = s.source
	if l.IdentifiersHidden {
		l.Items = nil
	}
	sort.SliceStable(l.Items, func(i, j int) bool {
		a, b := l.Items[i].Since, l.Items[j].Since
		return a != nil && (b == nil || a.Before(*b))
	})
	l.Total = max(l.Total, len(l.Items))
	if len(l.Items) > s.maxItems {
		l.Items = l.Items[:s.maxItems:s.maxItems]
	}
	l.More = l.Total > len(l.Items)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists = append(s.lists, l)
}

// Lists returns what was added.
func (s *Sink) Lists() []List {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]List(nil), s.lists...)
}

// SourceRef names a source.
type SourceRef struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// List is one kind of problem found by one source in one table or engine.
type List struct {
	// Kind is the kind of problem (vocab.Kind*).
	Kind   string    `json:"kind"`
	Source SourceRef `json:"source"`
	// Engine is the Camunda engine whose tasks the list names: the source
	// itself for an engine's lists, the joined engine for a database's
	// join lists (shown only while that engine is up).
	Engine string `json:"engine,omitempty"`
	// Database and Table name the table of a database's list (for a
	// delivery's list, the producer's outbox).
	Database string `json:"database,omitempty"`
	Table    string `json:"table,omitempty"`
	// Delivery names the delivery (deliveries[].name) of a delivery's
	// list; its items name the producer's and the consumer's database.
	Delivery string `json:"delivery,omitempty"`
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
	Engine string `json:"engine,omitempty"`
	// Tenant is the tenant of the task, job or incident with
	// camunda[].tenant_label, where it has one.
	Tenant            string `json:"tenant,omitempty"`
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
	// Producer and Consumer name the databases of a delivery's event: the
	// one whose outbox published it, the one whose inbox should hold it
	// (under MessageID, when that differs from EventID).
	Producer string `json:"producer,omitempty"`
	Consumer string `json:"consumer,omitempty"`
	// Status is the row's stored status value.
	Status string `json:"status,omitempty"`

	// A failure group (the failure_groups kinds): the signature of the
	// error messages, how many failures it holds, when the latest was
	// (Since is the first), how many distinct workers (job executor hosts,
	// for jobs) reported them, and the latest failure's job (its task is
	// ExternalTaskID) under its process definition key.
	ErrorSignature string `json:"error_signature,omitempty"`
	Count          int    `json:"count,omitempty"`
	// ExampleIDs are a table's error group's examples: the ids of its
	// newest rows (events, messages), at most three.
	ExampleIDs      []string   `json:"example_ids,omitempty"`
	LastSeen        *time.Time `json:"last_seen,omitempty"`
	DistinctWorkers int        `json:"distinct_workers,omitempty"`
	JobID           string     `json:"job_id,omitempty"`
	// IncidentType is an incident group's incident type.
	IncidentType         string `json:"incident_type,omitempty"`
	ProcessDefinitionKey string `json:"process_definition_key,omitempty"`

	// Since is when the problem started, by the source's clock (what it
	// means per kind: docs/status.md); AgeSeconds is how long before the
	// collection that was, by the same clock.
	Since      *time.Time `json:"since,omitempty"`
	AgeSeconds float64    `json:"age_seconds"`
}
