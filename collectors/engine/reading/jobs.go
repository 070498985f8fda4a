package reading

import "time"

// JobsRequest is what the jobs reading needs to know.
type JobsRequest struct {
	Probe
	// Budget bounds the jobs listed per list (max_listed_tasks).
	Budget int
	// Log says which job log entries are wanted.
	Log HistoryRequest
}

// JobsRead is what one collection learned of the jobs.
type JobsRead struct {
	// Now is the engine's clock for this reading (ages).
	Now time.Time
	// Exhausted are the jobs with no retries left; Executable the jobs the
	// job executor could run now, grouped by process definition key.
	Exhausted, Executable []JobGroup
	// OldestDue is when the oldest executable job became due (its due
	// date, or its creation when it has none); zero when none is
	// executable or, over REST, when the engine's jobs carry no createTime.
	OldestDue time.Time
	// NoCreateTime: executable jobs without a due date carry no createTime
	// (engines before 7.15), so the age cannot be told.
	NoCreateTime bool
	// Log holds the job log entries wanted, newest first; LogCut says
	// max_history_entries cut the reading.
	Log    []JobLogEntry
	LogCut bool
}

// JobGroup is one process definition key's jobs, in the order their labels
// are to be admitted; Folded: the reader already put them under "other"
// (a REST list cut by max_listed_tasks), so they bypass the label limiter.
type JobGroup struct {
	Key    string
	N      int64
	Folded bool
}

// JobLogEntry is one job history log entry.
type JobLogEntry struct {
	ID, Key string
	// JobID, PI and Host are the job, its process instance and the node
	// that ran it; Message a failure entry's exception message
	// (failures.go in collectors/engine).
	JobID, PI, Host, Message string
	TS                       time.Time
	Kind                     LogKind
}

func (e JobLogEntry) EntryID() string { return e.ID }

func (e JobLogEntry) Stamp() time.Time { return e.TS }
