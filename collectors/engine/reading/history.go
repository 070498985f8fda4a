package reading

import "time"

// LogKind is the kind of an external-task history log entry.
type LogKind int

const (
	LogCreation LogKind = iota
	LogFailure
	LogSuccess
	LogDeletion
)

// HistoryEntry is one external-task history log entry.
type HistoryEntry struct {
	ID, TaskID, Topic, Worker string
	// Activity, ActInst and RootPI are the task's activity, its activity
	// instance and root process instance (bpmn.go in collectors/engine).
	Activity, ActInst, RootPI string
	// PI is the task's process instance; Message a failure entry's
	// error message (failures.go in collectors/engine).
	PI, Message string
	TS          time.Time
	Kind        LogKind
}

func (e HistoryEntry) EntryID() string { return e.ID }

func (e HistoryEntry) Stamp() time.Time { return e.TS }

// HistoryRequest says which entries a reader must return.
type HistoryRequest struct {
	// First: no earlier reading; what is read is a baseline (nothing of it
	// is counted).
	First bool
	// From: entries with a timestamp at or after it are wanted; it is base
	// less Back. The engine-database reader reckons its range on the clock
	// face of the engine's zone instead (enginedb.FaceRange): from Base's
	// local time less Back to before the later of Base's and Now's local
	// times plus Ahead (see the history cursor's request in
	// collectors/engine).
	From, Base, Now time.Time
	Back, Ahead     time.Duration
	// Max is max_history_entries.
	Max int
	// Seen are the ids of the entries the previous reading saw within the
	// window, with their times (read-only): a reader looks up the BPMN
	// error evidence of new deletion entries only.
	Seen map[string]time.Time
}

// HistoryRead is what a reader returned.
type HistoryRead struct {
	// Entries are the entries wanted, each once, newest first.
	Entries []HistoryEntry
	// Cut: max_history_entries were read before reaching the start; the
	// older entries of this interval are not counted.
	Cut bool
}

// ActivityEntry is one ended activity instance of an external task type.
type ActivityEntry struct {
	ID, Activity, DefID, RootPI string
	// Tenant is the activity instance's tenant ("" for none).
	Tenant                  string
	Start, End              time.Time
	Canceled, CompleteScope bool
}

func (e ActivityEntry) EntryID() string { return e.ID }

func (e ActivityEntry) Stamp() time.Time { return e.End }

// ActivitiesRead is what a reader returned of the activity stream.
type ActivitiesRead struct {
	// Entries are the activity instances wanted, each once, newest first.
	Entries []ActivityEntry
	// Cut: max_history_entries were read before reaching the start.
	Cut bool
}
