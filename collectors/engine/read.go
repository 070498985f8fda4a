package engine

import (
	"context"
	"time"
)

// An engineReader reads what one collection needs from a Camunda engine.
// There are two: restReader (rest.go) asks the REST API, and
// engineDBReader (enginedb.go) reads the engine's own tables. Both
// fill an engineRead with the same meaning, so every rule downstream (the
// state partition, the lock tracking, the counters, the label limits) is
// one piece of code whichever way the engine was read.
type engineReader interface {
	read(ctx context.Context, rq readRequest) (*engineRead, error)
}

// readRequest is what a reader needs to know of the collector's state.
type readRequest struct {
	// now is the engine's clock as GET /version reported it (the REST
	// reader's clock; the database reader uses the database's).
	now time.Time
	// known are the topics reported so far (configured, or seen once):
	// each keeps reporting after it drains. Sorted, without "other".
	known []string
	// otherKnown: "other" (folded topics) is reported.
	otherKnown bool
	// admit is called for each topic the engine holds that is not known:
	// true admits it to its own label, false folds it into "other".
	admit func(topic string) bool
	// budget bounds the tasks listed (max_listed_tasks).
	budget int
	// history says where the previous collection's history reading ended.
	history historyRequest
}

// engineRead is what one collection learned from an engine.
type engineRead struct {
	// now is the engine's clock for this collection (ages, rule L5).
	now time.Time
	// topics holds every reported topic (known and newly admitted),
	// including drained ones (all counts 0).
	topics map[string]*topicRead
	// other holds the counts of the topics folded into "other"; nil when
	// no topic is folded. Their tasks are not listed.
	other *topicCounts
	// truncated: the task lists did not cover every in-flight task of the
	// reported topics (max_listed_tasks); unwatched: how many they left out.
	truncated bool
	unwatched int64
	// noCreateTime: the engine's tasks carry no create time, so no oldest
	// waiting age can be reported.
	noCreateTime bool
	history      historyRead
	// bpmn is the evidence of BPMN errors for the new deletion entries.
	bpmn      bpmnEvidence
	incidents incidentRead
	// incidentsIncomplete: over REST, the incident list or the list of
	// tasks with no retries left was cut by max_listed_tasks, so a topic
	// without a resolved failedExternalTask incident may still have one.
	incidentsIncomplete bool
}

// topicRead is one reported topic as read.
type topicRead struct {
	counts topicCounts
	// oldest is the create time of the oldest fetchable task (active,
	// retries left or null, not locked); zero when none is fetchable.
	oldest time.Time
	// locked and lapsed are the listed tasks behind counts.locked and
	// counts.lapsed, sorted by id.
	locked, lapsed []taskObs
	// oldestIncident is the timestamp of the topic's oldest open
	// failedExternalTask incident; zero when it has none, or when
	// incidentsIncomplete and none was resolved.
	oldestIncident time.Time
}

// topicCounts are the exact per-topic counts, each evaluated by the engine's
// SQL (or the same SQL in the engine database) against the engine's clock.
type topicCounts struct {
	total     int64 // all open tasks of the topic
	suspended int64 // suspended=true
	exhausted int64 // active, noRetriesLeft (retries = 0)
	locked    int64 // active, withRetriesLeft, locked (E > now): worker locks and backoffs
	lapsed    int64 // active, withRetriesLeft, notLocked, lockExpirationBefore=far future (E < now)
}

func (a *topicCounts) add(b topicCounts) {
	a.total += b.total
	a.suspended += b.suspended
	a.exhausted += b.exhausted
	a.locked += b.locked
	a.lapsed += b.lapsed
}

// fetchable is how many tasks a worker could fetch now: active, retries
// left or null, not locked (waiting tasks and lapsed locks).
func (a topicCounts) fetchable() int64 {
	return a.total - a.suspended - a.exhausted - a.locked
}

// incidentRead is the open incidents, grouped.
type incidentRead struct {
	// groups are in the order their labels are to be admitted (oldest
	// incident first), so both readers fold the same tuples.
	groups []incidentGroup
	// oldest is the oldest open incident per incident type, for the types
	// whose oldest incident is known.
	oldest map[string]time.Time
}

// incidentGroup is one camunda_incidents series before label limits.
type incidentGroup struct {
	key incidentKey
	n   int64
	// folded: the reader already put these incidents under "other" (the
	// REST list was cut short); they bypass the label limiter.
	folded bool
}
