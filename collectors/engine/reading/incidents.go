package reading

import "time"

// IncidentKey is one camunda_incidents series.
type IncidentKey struct{ Type, Key, Activity string }

// IncidentRead is the open incidents, grouped.
type IncidentRead struct {
	// Groups are in the order their labels are to be admitted (oldest
	// incident first), so both readers fold the same tuples.
	Groups []IncidentGroup
	// Oldest is the oldest open incident per incident type, for the types
	// whose oldest incident is known.
	Oldest map[string]time.Time
	// Messages are the open incidents with their messages, oldest first,
	// at most max_listed_tasks, for the status page's incident groups
	// (failures.go in collectors/engine); read only when the request asks
	// (TasksRequest.IncidentMessages).
	Messages []IncidentMessage
	// MessagesCut: more incidents are open than Messages holds.
	MessagesCut bool
}

// IncidentMessage is one open incident as the incident groups need it.
type IncidentMessage struct {
	Type, Key, Message, PI string
	TS                     time.Time
}

// IncidentGroup is one camunda_incidents series before label limits.
type IncidentGroup struct {
	Key IncidentKey
	N   int64
	// Folded: the reader already put these incidents under "other" (the
	// REST list was cut short); they bypass the label limiter.
	Folded bool
}

// ExhaustedTask is a task whose retries ran out, with its incident's time.
type ExhaustedTask struct {
	Incident  time.Time
	Obs       TaskObs
	Suspended bool
}

// ExhaustedRequest asks for the oldest failedExternalTask incidents with
// their tasks, at most max (the page's status.max_items).
type ExhaustedRequest struct {
	Probe
	Max int
}
