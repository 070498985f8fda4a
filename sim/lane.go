package sim

import (
	"regexp"
	"strings"
	"sync"

	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
)

// A Lane is one independent workload: its own process and external-task
// topic, idempotency scope, outbox aggregate type and inbox message type,
// so a fault injected on one lane shows on that lane's series only and
// faults on different lanes run side by side.
type Lane struct {
	// Name is the lane's name: lower-case letters, digits and '-'.
	Name string
	// Database names the database (Config.Databases) the lane writes to.
	Database string
	// Consumer, when set, names the database (Config.Databases) whose
	// inbox receives the lane's published outbox events: a delivery, as the
	// exporter's deliveries[] watch it. The lane's broker carries each
	// event the publisher marks published to that inbox (message id: the
	// event id), and the lane's consumer processes them there.
	Consumer string
	// Relay: the lane's outbox is drained by change data capture (relay.go):
	// its events go to its own Debezium-shaped outbox table, inserted and
	// deleted in one transaction, and pg_recvlogical reads them from its
	// replication slot. Its database's server needs wal_level=logical.
	Relay bool
}

var laneNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}$`)

// The identifiers each lane's workers, tables and messages use. They are
// derived from the lane name, so the exporter's labels name the lane.
func (l Lane) Topic() string         { return "sim." + l.Name }
func (l Lane) ProcessKey() string    { return "sim-" + l.Name }
func (l Lane) Scope() string         { return "SIM_" + strings.ToUpper(strings.ReplaceAll(l.Name, "-", "_")) }
func (l Lane) AggregateType() string { return "sim-" + l.Name }
func (l Lane) EventType() string {
	if l.Consumer != "" {
		// A delivering lane's own event type, so that the delivery the
		// exporter watches (its event_types) holds its events only.
		return l.Name + "-submitted"
	}
	return "Submitted"
}
func (l Lane) MessageType() string { return l.Name + ".validated" }
func (l Lane) ActivityID() string  { return "submit-" + l.Name }

// SourceSystem is the inbox source_system of every lane's own messages.
const SourceSystem = "sim-broker"

// The identifiers of a delivering lane (Consumer set): the exporter's
// delivery name for it, the source system and message type its events
// arrive under in the consumer's inbox.
func (l Lane) Delivery() string             { return "sim-" + l.Name }
func (l Lane) DeliverySourceSystem() string { return "sim-" + l.Database }
func (l Lane) DeliveredMessageType() string { return l.Name + ".delivered" }

// bpmn is the lane's process: start, the external task on the lane's topic
// with a boundary event for BPMN errors, end.
func (l Lane) bpmn() []byte {
	return engineclient.Chain(l.ProcessKey(), engineclient.Task{ID: l.ActivityID(), Name: "submit", Topic: l.Topic(), CatchErrors: true})
}

// faultSet is the faults active on one lane or target.
type faultSet struct {
	mu     sync.Mutex
	active map[string]bool
}

func (f *faultSet) on(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.active[name]
}

func (f *faultSet) set(name string, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.active == nil {
		f.active = map[string]bool{}
	}
	if on {
		f.active[name] = true
	} else {
		delete(f.active, name)
	}
}

func (f *faultSet) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for n := range f.active {
		out = append(out, n)
	}
	return out
}
