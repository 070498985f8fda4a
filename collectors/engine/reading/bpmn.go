package reading

import "time"

// CatchWindow bounds the distance between a deletion entry and the error
// catch event of the same transaction (milliseconds apart, measured on
// both engines).
const CatchWindow = time.Second

// Activity types of the events that catch a BPMN error.
const (
	ActivityBoundaryError   = "boundaryError"
	ActivityErrorStartEvent = "errorStartEvent"
)

// CatchEvent is an error catch event's activity instance.
type CatchEvent struct {
	ID, RootPI string
	Start      time.Time
}

// BPMNEvidence is what a reader found in the activity instance history
// for the new deletion entries.
type BPMNEvidence struct {
	// ScopeCompleted holds the activity instances of deleted tasks that
	// completed their scope (uncaught BPMN errors).
	ScopeCompleted map[string]bool
	// Catches are the error catch events started near the deletions.
	Catches []CatchEvent
}

// NewDeletions returns the deletion entries of a reading that the cursor
// has not seen: those the readers look up evidence for.
func NewDeletions(entries []HistoryEntry, hr HistoryRequest) []HistoryEntry {
	if hr.First {
		return nil
	}
	var out []HistoryEntry
	for _, e := range entries {
		if _, seen := hr.Seen[e.ID]; !seen && e.Kind == LogDeletion {
			out = append(out, e)
		}
	}
	return out
}

// DeletionSpan returns the earliest and latest timestamp of the deletions.
func DeletionSpan(dels []HistoryEntry) (first, last time.Time) {
	for _, e := range dels {
		if first.IsZero() || e.TS.Before(first) {
			first = e.TS
		}
		if e.TS.After(last) {
			last = e.TS
		}
	}
	return first, last
}
