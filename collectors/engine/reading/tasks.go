package reading

import (
	"time"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
)

// TasksRequest is what the tasks reading needs to know of the collector's
// state.
type TasksRequest struct {
	Probe
	// Topics chooses the topics the reading reports (TopicChoice).
	Topics TopicChoice
	// Budget bounds the tasks listed (max_listed_tasks).
	Budget int
	// History says where the previous collection's history reading ended
	// (at history level full: the external task log).
	History HistoryRequest
	// Activities is the same for the activity instance stream below full
	// (activities.go in collectors/engine), of the activity types
	// ActTypes.
	Activities HistoryRequest
	ActTypes   []string
	// IncidentMessages asks for the open incidents' messages (the status
	// page's incident groups, failures.go in collectors/engine).
	IncidentMessages bool
	// BusinessKeys asks for the listed tasks' business keys (TaskObs), which
	// only the status page shows: the engine-database reader joins the
	// process instances for them only then.
	BusinessKeys bool
	// IncidentTypes are the incident types earlier collections reported:
	// the REST reader counts each of them when its incident list is cut,
	// so a type beyond the list keeps its count.
	IncidentTypes []string
	// RecentLapses are the tracked tasks whose lock expires within
	// LapsedMargin of the reference time (mayBeSkewed in
	// collectors/engine): the REST reader asks whether those no list holds,
	// and whose lock a node may call lapsed by then, are still open. A
	// function, called only by a reader that asks (the engine-database
	// reader lists from one clock and never does): finding them walks
	// every tracked task.
	RecentLapses func() []Lapse
}

// Lapse is a tracked task and the expiration of its lock.
type Lapse struct {
	ID  string
	Exp time.Time
}

// TasksRead is what the tasks reading learned from an engine.
type TasksRead struct {
	// Now is the engine's clock for this collection (ages, rule L5).
	Now time.Time
	// Topics holds every reported topic (known and newly admitted),
	// including drained ones (all counts 0), as TopicChoice.Choose chose
	// them.
	Topics map[string]*TopicRead
	// All are the engine-wide counts, over every topic, reported or
	// folded (the REST reader counts the total only when folded): the
	// counts of "other" are what they leave beyond the reported topics
	// (OtherCounts). Folded: topics are folded into "other" (their tasks
	// are not listed).
	All    TopicCounts
	Folded bool
	// Truncated: the task lists did not cover every in-flight task of the
	// reported topics (max_listed_tasks); Unwatched: how many they left out.
	Truncated bool
	Unwatched int64
	// Age is where this reading found the creation of each topic's oldest
	// fetchable task (capability.AgeSource; capability/waitingage.go):
	// AgeNone when no age can be reported.
	Age     capability.AgeSource
	History HistoryRead
	// Activities are the ended activity instances below full.
	Activities ActivitiesRead
	// BPMN is the evidence of BPMN errors for the new deletion entries.
	BPMN      BPMNEvidence
	Incidents IncidentRead
	// IncidentsIncomplete: over REST, the incident list or the list of
	// tasks with no retries left was cut by max_listed_tasks, so a topic
	// without a resolved failedExternalTask incident may still have one.
	IncidentsIncomplete bool
	// StillOpen are the RecentLapses no list holds that the engine still
	// has (REST only: behind a load balancer a node whose clock runs
	// behind calls such a lock held, and the task is in neither list).
	StillOpen map[string]bool
}

// TopicRead is one reported topic as read.
type TopicRead struct {
	Counts TopicCounts
	// Oldest is the create time of the oldest fetchable task (active,
	// retries left or null, not locked); zero when none is fetchable.
	// OldestUnknown: the REST reader could not find it (the topic's tasks
	// without a tenant, tenants.go in collectors/engine/rest), and no age
	// is reported.
	Oldest        time.Time
	OldestUnknown bool
	// OldestPartial: Oldest is the oldest of a part of the topic's
	// fetchable tasks only (over REST on engines before 7.21, a list cut by
	// max_listed_tasks or a history lookup that gave up), so the age is a
	// lower bound.
	OldestPartial bool
	// Undated are fetchable tasks the reader could not date (no create
	// time, no activity instance: history level none), by id, at most
	// max_listed_tasks over the reading: the collector dates each by the
	// first collection that saw it (a lower bound of its age) and takes
	// the oldest of those and Oldest. UndatedCut: the topic has more
	// undated tasks than listed.
	Undated    []string
	UndatedCut bool
	// Locked and Lapsed are the listed tasks behind Counts.Locked and
	// Counts.Lapsed, sorted by id.
	Locked, Lapsed []TaskObs
	// OldestIncident is the timestamp of the topic's oldest open
	// failedExternalTask incident; zero when it has none, or when
	// IncidentsIncomplete and none was resolved.
	OldestIncident time.Time
}

// TopicCounts are the exact per-topic counts, each evaluated by the engine's
// SQL (or the same SQL in the engine database) against the engine's clock.
type TopicCounts struct {
	Total     int64 // all open tasks of the topic
	Suspended int64 // suspended=true
	Exhausted int64 // active, noRetriesLeft (retries = 0)
	Locked    int64 // active, withRetriesLeft, locked (E > now): worker locks and backoffs
	Lapsed    int64 // active, withRetriesLeft, notLocked, lockExpirationBefore=far future (E < now)
}

// Add adds b's counts.
func (a *TopicCounts) Add(b TopicCounts) {
	a.Total += b.Total
	a.Suspended += b.Suspended
	a.Exhausted += b.Exhausted
	a.Locked += b.Locked
	a.Lapsed += b.Lapsed
}

// Fetchable is how many tasks a worker could fetch now: active, retries
// left or null, not locked (waiting tasks and lapsed locks).
func (a TopicCounts) Fetchable() int64 {
	return a.Total - a.Suspended - a.Exhausted - a.Locked
}

// OtherCounts are the counts of the topics folded into "other": the
// engine-wide counts less the reported topics' (over REST separate
// requests, so clamped at 0). nil when no topic is folded: the REST reader
// then counts no engine-wide total.
func (rd *TasksRead) OtherCounts() *TopicCounts {
	if !rd.Folded {
		return nil
	}
	var rep TopicCounts
	for _, tr := range rd.Topics {
		rep.Add(tr.Counts)
	}
	sub := func(a, b int64) int64 { return max(0, a-b) }
	return &TopicCounts{
		Total:     sub(rd.All.Total, rep.Total),
		Suspended: sub(rd.All.Suspended, rep.Suspended),
		Exhausted: sub(rd.All.Exhausted, rep.Exhausted),
		Locked:    sub(rd.All.Locked, rep.Locked),
		Lapsed:    sub(rd.All.Lapsed, rep.Lapsed),
	}
}

// TaskObs is one listed task as a reader listed it.
type TaskObs struct {
	ID, Topic, Worker string
	PI, Activity      string // process instance and activity, for the join
	BusinessKey       string // the process instance's, for the status page
	// ActInst and DefID are its activity instance and process definition
	// (activities.go in collectors/engine: the topic and the model of its
	// activity instance).
	ActInst, DefID string
	Exp            time.Time
	Retries        *int
	ErrMsg         string
}

// LapsedMargin bounds how far past the reference time a node's clock may
// be for the lapsed filter to be its own: the Date header's truncation (a
// second) and the longest collection.
const LapsedMargin = 2 * time.Minute

// Listed is how many in-flight tasks the reading listed.
func (rd *TasksRead) Listed() int {
	n := 0
	for _, tr := range rd.Topics {
		n += len(tr.Locked) + len(tr.Lapsed)
	}
	return n
}
