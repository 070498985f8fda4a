package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/workflow-exporter/workflow-exporter/blocks/presets"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// StatusMap maps a canonical status to the values a table stores for it.
type StatusMap map[string][]string

// Canonical returns the canonical status for a stored value, or vocab.Unmapped.
func (m StatusMap) Canonical(value string) string {
	for canon, vals := range m {
		for _, v := range vals {
			if v == value {
				return canon
			}
		}
	}
	return vocab.Unmapped
}

// Values returns the stored values of the given canonical statuses, sorted.
func (m StatusMap) Values(canonical ...string) []string {
	var out []string
	for _, c := range canonical {
		out = append(out, m[c]...)
	}
	sort.Strings(out)
	return out
}

func (m *StatusMap) applyDefaults(canonical []string) {
	if *m == nil {
		*m = StatusMap{}
	}
	for _, c := range canonical {
		if _, ok := (*m)[c]; !ok {
			(*m)[c] = []string{c}
		}
	}
}

func (m StatusMap) validate(key string, canonical []string, add func(string, string, ...any)) {
	known := map[string]bool{}
	for _, c := range canonical {
		known[c] = true
	}
	owner := map[string]string{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, c := range keys {
		if !known[c] {
			add(key+"."+c, "is not a status of this table; known: %s", strings.Join(canonical, ", "))
			continue
		}
		if len(m[c]) == 0 {
			add(key+"."+c, "maps to no value; list at least one stored value")
		}
		for _, v := range m[c] {
			if v == "" {
				add(key+"."+c, "contains an empty value")
			}
			if prev, dup := owner[v]; dup {
				add(key+"."+c, "value %q is already mapped to %s", v, prev)
			}
			owner[v] = c
		}
	}
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*$`)

// validIdent accepts a plain SQL identifier; table names may be schema-qualified.
func validIdent(s string, qualified bool) bool {
	parts := []string{s}
	if qualified {
		parts = strings.Split(s, ".")
		if len(parts) > 2 {
			return false
		}
	}
	for _, p := range parts {
		if !identRE.MatchString(p) {
			return false
		}
	}
	return true
}

func checkTable(key, table string, add func(string, string, ...any)) {
	if !validIdent(table, true) {
		add(key+".table", "%q is not a table name (letters, digits, _; optionally schema.table)", table)
	}
}

// column is one configurable column of a table kind: its key under
// columns:, where the config holds it (nil: an optional column left out),
// its default ("" for none) and whether it must name a column.
type column struct {
	key      string
	value    *string
	def      string
	required bool
}

// defaultColumns fills in the defaults of the columns left empty.
func defaultColumns(cols []column) {
	for _, c := range cols {
		if c.value != nil {
			def(c.value, c.def)
		}
	}
}

// checkColumns reports, by key in name order, a required column left empty
// and a value that is no column name.
func checkColumns(key string, cols []column, add func(string, string, ...any)) {
	cols = slices.Clone(cols)
	slices.SortFunc(cols, func(a, b column) int { return strings.Compare(a.key, b.key) })
	for _, c := range cols {
		if c.value == nil {
			continue
		}
		switch v := *c.value; {
		case v == "" && c.required:
			add(key+".columns."+c.key, "must not be empty")
		case v != "" && !validIdent(v, false):
			add(key+".columns."+c.key, "%q is not a column name (letters, digits, _)", v)
		}
	}
}

func def(p *string, v string) {
	if *p == "" {
		*p = v
	}
}

// IdempotencyTable maps the idempotency record table (docs/design.md, "The
// idempotency record").
type IdempotencyTable struct {
	Table   string `yaml:"table"`
	Columns struct {
		Scope     string `yaml:"scope"`
		Key       string `yaml:"key"`
		Status    string `yaml:"status"`
		UpdatedAt string `yaml:"updated_at"`
		ErrorCode string `yaml:"error_code"`
		// JobReference holds the Camunda external task id of the attempt.
		JobReference string `yaml:"job_reference"`
		// ProcessInstanceID and ActivityID identify the task when
		// camunda.reference is process_instance_activity. The reference table has
		// process_instance_id but no activity column.
		ProcessInstanceID string `yaml:"process_instance_id"`
		ActivityID        string `yaml:"activity_id"`
		// DuplicateCount is the optional schema extension counting duplicate
		// attempts absorbed by the record. Unset: used when a column named
		// duplicate_count exists. Set: required.
		DuplicateCount *string `yaml:"duplicate_count"`
	} `yaml:"columns"`
	Statuses StatusMap `yaml:"statuses"`
	// StaleAfter marks a non-terminal record stale when not updated this long.
	StaleAfter model.Duration `yaml:"stale_after"`
	// ConflictCodes are error codes meaning "same key, different request".
	ConflictCodes []string `yaml:"conflict_codes"`
	// Camunda joins records with the engine's in-flight external tasks.
	Camunda Correlation `yaml:"camunda"`
	// Status says what the status page may show of the records.
	Status SourceStatus `yaml:"status"`
	// MaxRememberedDuplicates bounds the records whose duplicate_count the
	// exporter remembers (duplicate_count extension); past it the records
	// updated longest ago are forgotten.
	MaxRememberedDuplicates int `yaml:"max_remembered_duplicates"`
}

// DefaultDuplicateCountColumn is the column name looked for when
// columns.duplicate_count is not set.
const DefaultDuplicateCountColumn = "duplicate_count"

// columns are the idempotency table's columns: activity_id has no
// default (the reference table names the activity unless
// camunda.reference is process_instance_activity), duplicate_count is
// looked for when left out (DefaultDuplicateCountColumn).
func (t *IdempotencyTable) columns() []column {
	c := &t.Columns
	return []column{
		{"scope", &c.Scope, "scope", true}, {"key", &c.Key, "idempotency_key", true}, {"status", &c.Status, "status", true},
		{"updated_at", &c.UpdatedAt, "updated_at", true}, {"error_code", &c.ErrorCode, "error_code", true},
		{"job_reference", &c.JobReference, "job_reference", true}, {"process_instance_id", &c.ProcessInstanceID, "process_instance_id", true},
		{"activity_id", &c.ActivityID, "", false}, {"duplicate_count", c.DuplicateCount, "", true},
	}
}

func (t *IdempotencyTable) applyDefaults() {
	def(&t.Table, "workflow_idempotency_record")
	defaultColumns(t.columns())
	t.Camunda.applyDefaults()
	t.Statuses.applyDefaults(vocab.IdempotencyStatuses())
	orDefault(&t.StaleAfter, model.Duration(DefaultStaleAfter))
	orDefault(&t.MaxRememberedDuplicates, DefaultMaxRememberedDuplicates)
	if t.ConflictCodes == nil {
		t.ConflictCodes = []string{"IDEMPOTENCY_CONFLICT"}
	}
}

func (t *IdempotencyTable) validate(key string, add func(string, string, ...any)) {
	checkTable(key, t.Table, add)
	checkColumns(key, t.columns(), add)
	t.Statuses.validate(key+".statuses", vocab.IdempotencyStatuses(), add)
	positive(add, key+".stale_after", time.Duration(t.StaleAfter))
	if t.MaxRememberedDuplicates < 1000 {
		add(key+".max_remembered_duplicates", "must be at least 1000 (records whose duplicate_count is remembered), got %d", t.MaxRememberedDuplicates)
	}
	t.Camunda.validate(key+".camunda", add)
	if t.Camunda.Reference == ReferenceProcessInstanceActivity && t.Columns.ActivityID == "" {
		add(key+".columns.activity_id", "must name the activity column when camunda.reference is %s (the reference table has none)", ReferenceProcessInstanceActivity)
	}
}

// TerminalValues are the stored values of statuses after which a record
// never changes again; everything else (including unmapped values) is open.
func (t *IdempotencyTable) TerminalValues() []string {
	return t.Statuses.Values(vocab.IdempotencyTerminalStatuses()...)
}

// Correlation returns how the records name Camunda tasks (the camunda: section).
func (t IdempotencyTable) Correlation() Correlation { return t.Camunda }

// ProcessedJobTable maps the processed-job table (docs/design.md, "The
// processed-job table").
type ProcessedJobTable struct {
	Table   string `yaml:"table"`
	Columns struct {
		Engine       string `yaml:"engine"`
		JobReference string `yaml:"job_reference"`
		ActivityID   string `yaml:"activity_id"`
		Status       string `yaml:"status"`
		CompletedAt  string `yaml:"completed_at"`
		// ProcessInstance is used when camunda.reference is
		// process_instance_activity.
		ProcessInstance string `yaml:"process_instance"`
	} `yaml:"columns"`
	// Camunda joins rows with the engine's in-flight external tasks. The
	// engine column of each row names the engine (a configured camunda name).
	Camunda Correlation `yaml:"camunda"`
	// Status says what the status page may show of the rows.
	Status SourceStatus `yaml:"status"`
}

func (t *ProcessedJobTable) columns() []column {
	c := &t.Columns
	return []column{
		{"engine", &c.Engine, "engine", true}, {"job_reference", &c.JobReference, "job_reference", true},
		{"activity_id", &c.ActivityID, "activity_id", true}, {"status", &c.Status, "status", true},
		{"completed_at", &c.CompletedAt, "completed_at", true}, {"process_instance", &c.ProcessInstance, "process_instance", true},
	}
}

func (t *ProcessedJobTable) applyDefaults() {
	def(&t.Table, "workflow_processed_job")
	defaultColumns(t.columns())
	t.Camunda.applyDefaults()
}

func (t *ProcessedJobTable) validate(key string, add func(string, string, ...any)) {
	checkTable(key, t.Table, add)
	checkColumns(key, t.columns(), add)
	t.Camunda.validate(key+".camunda", add)
}

// Correlation returns how the rows name Camunda tasks (the camunda: section).
func (t ProcessedJobTable) Correlation() Correlation { return t.Camunda }

// InboxTable maps the message inbox (docs/design.md, "The inbox").
type InboxTable struct {
	Table string `yaml:"table"`
	// Preset reads a messaging library's own consumer-side table
	// (docs/outbox-shapes.md): the preset maps its columns and statuses,
	// and its table is the default of table.
	Preset  string `yaml:"preset"`
	Columns struct {
		SourceSystem string `yaml:"source_system"`
		MessageID    string `yaml:"message_id"`
		MessageType  string `yaml:"message_type"`
		Status       string `yaml:"status"`
		ReceivedAt   string `yaml:"received_at"`
		ProcessedAt  string `yaml:"processed_at"`
		// Attempts and Error are optional: unset, the columns named
		// DefaultAttemptsColumn and DefaultErrorColumn are used if they
		// exist; set, they are required.
		Attempts *string `yaml:"attempts"`
		Error    *string `yaml:"error"`
	} `yaml:"columns"`
	Statuses StatusMap `yaml:"statuses"`
	// RetryingAfterAttempts: unfinished messages attempted at least this
	// often count as retrying.
	RetryingAfterAttempts int `yaml:"retrying_after_attempts"`
	// Status says what the status page may show of the messages.
	Status SourceStatus `yaml:"status"`
}

// Defaults of the optional attempts and error columns of the inbox and the
// outbox, looked for when columns.attempts and columns.error are not set.
const (
	DefaultAttemptsColumn = "attempts"
	DefaultErrorColumn    = "error_message"
	// DefaultRetryingAfterAttempts is retrying_after_attempts' default.
	DefaultRetryingAfterAttempts = 3
)

func (t *InboxTable) columns() []column {
	c := &t.Columns
	return []column{
		{"source_system", &c.SourceSystem, "source_system", true}, {"message_id", &c.MessageID, "message_id", true},
		{"message_type", &c.MessageType, "message_type", true}, {"status", &c.Status, "processing_status", true},
		{"received_at", &c.ReceivedAt, "received_at", true}, {"processed_at", &c.ProcessedAt, "processed_at", true},
		{"attempts", c.Attempts, "", true}, {"error", c.Error, "", true},
	}
}

func (t *InboxTable) applyDefaults() {
	orDefault(&t.RetryingAfterAttempts, DefaultRetryingAfterAttempts)
	if t.Preset != "" {
		def(&t.Table, presets.DefaultTable("inbox", t.Preset))
		return
	}
	def(&t.Table, "message_inbox")
	defaultColumns(t.columns())
	t.Statuses.applyDefaults(vocab.InboxStatuses())
}

func (t *InboxTable) validate(key string, add func(string, string, ...any)) {
	if t.RetryingAfterAttempts < 1 {
		add(key+".retrying_after_attempts", "must be at least 1, got %d", t.RetryingAfterAttempts)
	}
	if t.Preset != "" {
		if _, ok := presets.InboxPreset(t.Preset); !ok {
			known := presets.InboxNames()
			hint := ""
			if slices.Contains(presets.OutboxNames(), t.Preset) {
				hint = fmt.Sprintf(" (%s keeps no consumer-side table)", t.Preset)
			}
			add(key+".preset", "unknown inbox preset %q%s; known: %s", t.Preset, hint, strings.Join(known, ", "))
			return
		}
		checkPresetOnly(key, t.Preset, t.columns(), t.Statuses != nil, "statuses", add)
		checkTable(key, t.Table, add)
		return
	}
	checkTable(key, t.Table, add)
	checkColumns(key, t.columns(), add)
	t.Statuses.validate(key+".statuses", vocab.InboxStatuses(), add)
}

// checkPresetOnly refuses the keys a preset replaces: the columns and the
// status mapping (other, named by other).
func checkPresetOnly(key, preset string, cols []column, otherSet bool, other string, add func(string, string, ...any)) {
	for _, c := range cols {
		if c.value != nil && *c.value != "" {
			add(key+".columns."+c.key, "is not used with preset %s, which maps the library's columns; remove it, or the preset", preset)
		}
	}
	if otherSet {
		add(key+"."+other, "is not used with preset %s, which maps the library's states; remove it, or the preset", preset)
	}
}

// TerminalValues are the stored values of finished messages.
func (t *InboxTable) TerminalValues() []string {
	return t.Statuses.Values(vocab.InboxTerminalStatuses()...)
}

// OutboxTable maps the event outbox (docs/design.md, "The outbox").
type OutboxTable struct {
	Table string `yaml:"table"`
	// Preset reads a messaging library's own outbox table
	// (docs/outbox-shapes.md): the preset maps its columns and states, and
	// its table is the default of table.
	Preset  string `yaml:"preset"`
	Columns struct {
		EventID       string `yaml:"event_id"`
		AggregateType string `yaml:"aggregate_type"`
		EventType     string `yaml:"event_type"`
		Status        string `yaml:"status"`
		CreatedAt     string `yaml:"created_at"`
		PublishedAt   string `yaml:"published_at"`
		// Attempts and Error are optional, as the inbox's.
		Attempts *string `yaml:"attempts"`
		Error    *string `yaml:"error"`
	} `yaml:"columns"`
	// FailedStatuses are status values of events that will not be published
	// without help; they count as failed, not pending.
	FailedStatuses []string `yaml:"failed_statuses"`
	// RetryingAfterAttempts: pending events attempted at least this often
	// count as retrying.
	RetryingAfterAttempts int `yaml:"retrying_after_attempts"`
	// PublishDelayBuckets are the upper bounds, in seconds, of the
	// publish-delay histogram.
	PublishDelayBuckets []float64 `yaml:"publish_delay_buckets"`
	// Status says what the status page may show of the events.
	Status SourceStatus `yaml:"status"`
	// Consumers are the inboxes that deduplicate the outbox's events
	// downstream, derived from deliveries: (not a key of its own: a
	// delivery is the one place that says where an outbox's events go), so
	// a pending event can be compared with how far back they still
	// recognise a redelivery (WorkflowDeduplicationWindowExceeded).
	Consumers []OutboxConsumer `yaml:"-"`
	// Relay names the logical replication slot a change-data-capture relay
	// (Debezium's outbox event router, pg_recvlogical, ...) reads the
	// outbox's writes from. With it the table may have any shape and be
	// empty at all times; its columns are read only where columns: names
	// some (status columns beside the relay).
	Relay *OutboxRelay `yaml:"relay"`
}

// OutboxRelay is the change-data-capture relay of an outbox.
type OutboxRelay struct {
	// Slot is the logical replication slot the relay reads (Debezium's
	// slot.name).
	Slot string `yaml:"slot"`
	// Publication, optional, is the publication a pgoutput relay streams
	// (Debezium's publication.name): checked to publish the table's
	// inserts. Empty: some publication must.
	Publication string `yaml:"publication"`
}

// slotNameRE is what PostgreSQL accepts as a replication slot name.
var slotNameRE = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

func (r *OutboxRelay) validate(key string, add func(string, string, ...any)) {
	if !slotNameRE.MatchString(r.Slot) {
		add(key+".slot", "%q is not a replication slot name (1-63 lower-case letters, digits, _): name the logical replication slot the relay reads", r.Slot)
	}
	if r.Publication != "" && !validIdent(r.Publication, false) {
		add(key+".publication", "%q is not a publication name (letters, digits, _)", r.Publication)
	}
}

// ReadsColumns says whether the outbox's columns are read: always without
// a relay or with a preset, and beside a relay only where columns: names
// some (applyDefaults leaves them all empty otherwise).
func (t *OutboxTable) ReadsColumns() bool {
	if t.Preset != "" {
		return true // the preset reads the library's columns
	}
	for _, c := range t.columns() {
		if c.value != nil && *c.value != "" {
			return true
		}
	}
	return t.Relay == nil
}

// OutboxConsumer is an inbox a delivery takes the outbox's events to: the
// delivery's to.database, and one of its to.source_systems ("" when the
// delivery names none: any source of that inbox).
type OutboxConsumer struct {
	Database     string
	SourceSystem string
}

// DefaultPublishDelayBuckets spans a healthy sub-second publisher to an
// hour-long stall.
func DefaultPublishDelayBuckets() []float64 {
	return []float64{0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}
}

func (t *OutboxTable) columns() []column {
	c := &t.Columns
	return []column{
		{"event_id", &c.EventID, "event_id", true}, {"aggregate_type", &c.AggregateType, "aggregate_type", true},
		{"event_type", &c.EventType, "event_type", true}, {"status", &c.Status, "status", true},
		{"created_at", &c.CreatedAt, "created_at", true}, {"published_at", &c.PublishedAt, "published_at", true},
		{"attempts", c.Attempts, "", true}, {"error", c.Error, "", true},
	}
}

func (t *OutboxTable) applyDefaults() {
	orDefault(&t.RetryingAfterAttempts, DefaultRetryingAfterAttempts)
	if t.PublishDelayBuckets == nil {
		t.PublishDelayBuckets = DefaultPublishDelayBuckets()
	}
	if t.Preset != "" {
		def(&t.Table, presets.DefaultTable("outbox", t.Preset))
		return
	}
	def(&t.Table, "event_outbox")
	// Beside a relay the table may have any shape: its columns get their
	// defaults only where columns: names some.
	if t.ReadsColumns() {
		defaultColumns(t.columns())
	}
	if t.FailedStatuses == nil {
		t.FailedStatuses = []string{"FAILED", "DEAD"}
	}
}

func (t *OutboxTable) validate(key string, add func(string, string, ...any)) {
	if t.RetryingAfterAttempts < 1 {
		add(key+".retrying_after_attempts", "must be at least 1, got %d", t.RetryingAfterAttempts)
	}
	if t.Preset != "" {
		if len(presets.OutboxVariants(t.Preset)) == 0 {
			add(key+".preset", "unknown outbox preset %q; known: %s", t.Preset, strings.Join(presets.OutboxNames(), ", "))
			return
		}
		checkPresetOnly(key, t.Preset, t.columns(), t.FailedStatuses != nil, "failed_statuses", add)
		if t.Relay != nil {
			t.Relay.validate(key+".relay", add)
		}
		if t.Table == "" {
			add(key+".table", "preset %s has no default table (the library names it after the application): name it", t.Preset)
			return
		}
		checkTable(key, t.Table, add)
		return
	}
	checkTable(key, t.Table, add)
	if t.Relay != nil {
		t.Relay.validate(key+".relay", add)
	}
	if t.ReadsColumns() {
		checkColumns(key, t.columns(), add)
	}
	buckets(add, key+".publish_delay_buckets", t.PublishDelayBuckets, false)
	noneEmpty(add, key+".failed_statuses", t.FailedStatuses)
}

// CanonicalNames returns the canonical statuses of the map, sorted.
func (m StatusMap) CanonicalNames() []string { return slices.Sorted(maps.Keys(m)) }

// References: how a row names its Camunda external task.
const (
	// ReferenceExternalTaskID: the job_reference column holds the external
	// task id (the reference schema's convention).
	ReferenceExternalTaskID = "external_task_id"
	// ReferenceProcessInstanceActivity: the row holds the process instance
	// id and the activity id of the service task.
	ReferenceProcessInstanceActivity = "process_instance_activity"
)

// DefaultCorrelationGrace is how long before the Camunda view a record must
// have reached its status to be joined, so a worker that wrote COMPLETED and
// is completing the task right now is not reported as a lost completion.
const DefaultCorrelationGrace = 10 * time.Second

// Correlation says how rows refer to Camunda external tasks and which
// engine they belong to.
type Correlation struct {
	// Disabled turns the join off.
	Disabled bool `yaml:"disabled"`
	// Engine is a configured camunda name. For the idempotency table it
	// defaults to the only configured engine (required when there are
	// several); for the processed-job table the engine column decides and
	// this, if set, restricts the join to one engine.
	Engine string `yaml:"engine"`
	// Reference is external_task_id (default) or process_instance_activity.
	Reference string `yaml:"reference"`
	// Grace: see DefaultCorrelationGrace.
	Grace model.Duration `yaml:"grace"`
}

// ByProcessInstance reports whether rows name their task by process instance
// and activity rather than by external task id.
func (c Correlation) ByProcessInstance() bool { return c.Reference == ReferenceProcessInstanceActivity }

func (c *Correlation) applyDefaults() {
	orDefault(&c.Reference, ReferenceExternalTaskID)
	if c.Grace == 0 {
		c.Grace = model.Duration(DefaultCorrelationGrace)
	}
}

func (c *Correlation) validate(key string, add func(string, string, ...any)) {
	switch c.Reference {
	case ReferenceExternalTaskID, ReferenceProcessInstanceActivity:
	default:
		add(key+".reference", "must be %s or %s, got %q", ReferenceExternalTaskID, ReferenceProcessInstanceActivity, c.Reference)
	}
	if c.Grace < 0 {
		add(key+".grace", "must not be negative")
	}
}

// deriveOutboxConsumers gives each outbox the inboxes its deliveries take
// its events to, once each, in the order of deliveries:. A delivery whose
// databases are not configured as it needs is left out (resolveDeliveries
// names the key).
func (c *Config) deriveOutboxConsumers() {
	tables := map[string]*Tables{}
	for _, d := range c.Databases {
		tables[d.Name] = d.Tables
	}
	for _, d := range c.Deliveries {
		from, to := tables[d.From.Database], tables[d.To.Database]
		if from == nil || from.Outbox == nil || to == nil || to.Inbox == nil {
			continue
		}
		sources := d.To.SourceSystems
		if len(sources) == 0 {
			sources = []string{""}
		}
		for _, s := range sources {
			cons := OutboxConsumer{Database: d.To.Database, SourceSystem: s}
			if !slices.Contains(from.Outbox.Consumers, cons) {
				from.Outbox.Consumers = append(from.Outbox.Consumers, cons)
			}
		}
	}
}
