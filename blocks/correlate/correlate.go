// Package correlate carries what the Camunda side knows about in-flight
// external tasks to the database side, so the two can be joined: a COMPLETED
// idempotency record whose task is still open means the completion was lost;
// a STARTED record whose lock lapsed means the outcome is in doubt. Neither
// side can see these alone.
//
// The Camunda collector publishes a View after each successful collection
// and withdraws it when a collection fails; the database collectors read
// the latest View. A Registry is created once in main and shared; it is safe
// for concurrent use.
package correlate

import (
	"sync"
	"time"
)

// State is the in-flight state of an external task, in the vocabulary of
// camunda_external_tasks{state}.
type State string

// States a View holds. Waiting tasks that were never fetched are not in
// it (no worker touched them; a seen lapse not re-fetched yet is
// lock_expired); Waiting ones are, once a worker failed them and their
// retry backoff ended: a task redelivered after a lapse is still in doubt
// while it waits for its next fetch.
const (
	Locked       State = "locked"
	RetryBackoff State = "retry_backoff"
	LockExpired  State = "lock_expired"
	Waiting      State = "waiting"
)

// Task is one external task the engine holds open and a worker has touched.
type Task struct {
	ID    string
	Topic string
	// Tenant is the task's tenant with camunda[].tenant_label ("" without
	// it, or for a task of no tenant); the joins go by topic alone.
	Tenant            string
	WorkerID          string
	ProcessInstanceID string
	ActivityID        string
	// BusinessKey is the process instance's business key, if it has one.
	BusinessKey string
	State       State
	// LockExpiration is the task's lock expiration time (for a lapsed
	// lock: when it lapsed), by the engine's clock.
	LockExpiration time.Time
	// Redelivered is true when the task was seen locked again after a lapse
	// of an earlier lock: another attempt runs (or ran) alongside the first.
	// RedeliveredAt is the engine time of the collection that counted it.
	Redelivered   bool
	RedeliveredAt time.Time
}

// View is the engine's in-flight tasks as of one collection.
type View struct {
	Engine string
	// Taken is when the collection started, by the exporter's clock. The
	// database side uses only its age, so clocks need not agree.
	Taken time.Time
	Tasks []Task
	// Truncated is true when the engine held more in-flight tasks than the
	// collector lists; the join then undercounts and says so in the log.
	Truncated bool
	// HideIdentifiers is the engine's status: {identifiers: false}: the
	// status page shows no identifier of its tasks, in the joins neither.
	HideIdentifiers bool
}

// Registry holds the latest View per engine.
type Registry struct {
	mu    sync.Mutex
	views map[string]*View
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{views: map[string]*View{}} }

// Publish replaces the engine's view. The view must not be changed afterwards.
func (r *Registry) Publish(v *View) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.views[v.Engine] = v
}

// Withdraw removes the engine's view: the engine is down, and a join
// against an old view would report stale facts as current.
func (r *Registry) Withdraw(engine string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.views, engine)
}

// Get returns the engine's latest view.
func (r *Registry) Get(engine string) (*View, bool) {
	if r == nil {
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.views[engine]
	return v, ok
}
