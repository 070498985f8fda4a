package vocab

// Canonical statuses: the values of the status label. A table's own values
// are mapped to them with `statuses:` in its configuration.
const (
	StatusStarted             = "STARTED"
	StatusSideEffectSubmitted = "SIDE_EFFECT_SUBMITTED"
	StatusCompleted           = "COMPLETED"
	StatusFailedRetryable     = "FAILED_RETRYABLE"
	StatusFailedFinal         = "FAILED_FINAL"
	StatusUnknownOutcome      = "UNKNOWN_OUTCOME"
	StatusReconciled          = "RECONCILED"
	StatusReceived            = "RECEIVED"
	StatusProcessing          = "PROCESSING"
	StatusProcessed           = "PROCESSED"
	StatusIgnoredDuplicate    = "IGNORED_DUPLICATE"
)

// Unmapped is the status label of rows whose status value is in no mapping.
// Such rows are counted, never dropped: they are treated as non-terminal so
// they show up where someone will look.
const Unmapped = "unmapped"

// statusSet is the canonical statuses of one table kind, in the order of the
// reference schema (deploy/sql/001_reference_schema.sql), each either open
// (a row in it may still change: the gauges count it) or terminal (a row in
// it never changes again). This is the one definition of both lists; the
// collectors, their indexes, the catalog's HELP texts, the dashboards and
// the alert rules derive theirs from it.
type statusSet []struct {
	name     string
	terminal bool
}

func idempotencyStatuses() statusSet {
	return statusSet{{StatusStarted, false}, {StatusSideEffectSubmitted, false}, {StatusCompleted, true},
		{StatusFailedRetryable, false}, {StatusFailedFinal, true}, {StatusUnknownOutcome, false}, {StatusReconciled, true}}
}

func inboxStatuses() statusSet {
	return statusSet{{StatusReceived, false}, {StatusProcessing, false}, {StatusProcessed, true},
		{StatusFailedRetryable, false}, {StatusFailedFinal, true}, {StatusIgnoredDuplicate, true}, {StatusUnknownOutcome, false}}
}

// names returns the statuses whose terminal flag is one of want.
func (s statusSet) names(want ...bool) []string {
	var out []string
	for _, st := range s {
		for _, w := range want {
			if st.terminal == w {
				out = append(out, st.name)
			}
		}
	}
	return out
}

func (s statusSet) all() []string      { return s.names(false, true) }
func (s statusSet) open() []string     { return s.names(false) }
func (s statusSet) terminal() []string { return s.names(true) }

// IdempotencyStatuses are the canonical statuses of the idempotency table.
func IdempotencyStatuses() []string { return idempotencyStatuses().all() }

// IdempotencyOpenStatuses are the statuses a record may leave again: the
// gauges report them (with 0) for every known scope.
func IdempotencyOpenStatuses() []string { return idempotencyStatuses().open() }

// IdempotencyTerminalStatuses are the canonical statuses after which a record
// never changes.
func IdempotencyTerminalStatuses() []string { return idempotencyStatuses().terminal() }

// IdempotencyInProgressStatuses are the open statuses of a record whose
// attempt started and recorded no outcome yet: when its task's lock lapsed,
// the side effect is in doubt.
func IdempotencyInProgressStatuses() []string {
	return []string{StatusStarted, StatusSideEffectSubmitted}
}

// InboxStatuses are the canonical statuses of the inbox table.
func InboxStatuses() []string { return inboxStatuses().all() }

// InboxOpenStatuses are the statuses of messages not finished: the gauges
// report them (with 0) for every known message kind.
func InboxOpenStatuses() []string { return inboxStatuses().open() }

// InboxTerminalStatuses are the statuses of finished messages, counted by
// workflow_inbox_messages_processed_total.
func InboxTerminalStatuses() []string { return inboxStatuses().terminal() }
