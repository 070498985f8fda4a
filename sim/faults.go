package sim

import (
	"fmt"
	"sort"
	"strings"
)

// Fault names. Each is one failure window of at-least-once workers; the
// descriptions say what the simulator does and what the exporter should
// show. docs/alerts.md maps each to the metrics and the alert it raises.
const (
	FaultCrashAfterSideEffect = "crash-after-side-effect"
	FaultSlowWorker           = "slow-worker"
	FaultUnknownOutcome       = "unknown-outcome"
	FaultDuplicateDelivery    = "duplicate-delivery"
	FaultPublisherStopped     = "publisher-stopped"
	FaultRelayStopped         = "relay-stopped"
	FaultConsumerStopped      = "consumer-stopped"
	FaultMessagesLost         = "messages-lost"
	FaultRetriesExhausted     = "retries-exhausted"
	FaultRetryStorm           = "retry-storm"
	FaultStuckInProgress      = "stuck-in-progress"
	FaultIdempotencyConflict  = "idempotency-conflict"
	FaultBPMNError            = "bpmn-error"
	FaultWorkersStopped       = "workers-stopped"
	FaultDatabaseDown         = "database-down"
	FaultEngineDown           = "engine-down"
	FaultEngine500            = "engine-500"
)

// Target says what a fault is injected on.
type Target string

// Targets.
const (
	TargetLane     Target = "lane"     // one lane's workers, publisher or consumer
	TargetDatabase Target = "database" // the exporter's connection to one database (a proxy)
	TargetEngine   Target = "engine"   // the exporter's connection to the engine (a proxy)
)

// Fault describes one fault of the catalogue.
type Fault struct {
	Name        string `json:"name"`
	Target      Target `json:"target"`
	Description string `json:"description"`
	// NeedsEngine: a lane fault that acts through the workers' engine (a
	// lock that lapses, a failure or BPMN error reported, tasks left
	// waiting), refused when the simulator runs without one.
	NeedsEngine bool `json:"needs_engine,omitempty"`
}

// Faults is the catalogue, sorted by name.
func Faults() []Fault {
	fs := []Fault{
		{FaultCrashAfterSideEffect, TargetLane, "the worker commits its side effect (record COMPLETED, outbox event, processed-job row) and crashes before completing the task (once per task; it restarts under an id no unreplayed crash was under): the task stays locked until its lock lapses, then another worker finds the record COMPLETED and replays the completion", true},
		{FaultSlowWorker, TargetLane, "one worker of the lane hangs between SIDE_EFFECT_SUBMITTED and COMPLETED for as long as the fault lasts: its lock lapses, another worker fetches the task (a redelivery: the record is in progress, so the outcome is in doubt and it backs off for ten lock durations), and once the fault is lifted the late worker's complete is refused; the task completes from the record", true},
		{FaultUnknownOutcome, TargetLane, "the downstream service accepts the command but answers after the worker's timeout; the worker marks the record UNKNOWN_OUTCOME and backs off, and reconciliation cannot resolve it while the fault lasts", false},
		{FaultDuplicateDelivery, TargetLane, "the broker delivers every inbox message twice (the second time under a new message id); the consumer records the duplicate as IGNORED_DUPLICATE: the protection working", false},
		{FaultPublisherStopped, TargetLane, "the outbox publisher of the lane stops: events stay pending", false},
		{FaultConsumerStopped, TargetLane, "the inbox consumer of the lane stops: messages stay RECEIVED", false},
		{FaultMessagesLost, TargetLane, "the broker drops every event of the lane's delivery between publish and receive: the outbox marks them published, the consumer's inbox never gets them (a lane with a consumer database only)", false},
		{FaultRelayStopped, TargetLane, "the change-data-capture relay of a relay lane (pg_recvlogical on the lane's replication slot) stops while the workers keep writing events: the slot goes inactive and confirms none of them; refused on a lane without a relay", false},
		{FaultRetriesExhausted, TargetLane, "the worker reports a failure with no retries left: the task waits for an operator (an incident)", true},
		{FaultRetryStorm, TargetLane, "the downstream service is down: the worker fails every task, with retries left and a 1 s retry timeout, so the failures come straight back", true},
		{FaultStuckInProgress, TargetLane, "the worker completes the task but its record update is lost: the idempotency record stays STARTED", false},
		{FaultIdempotencyConflict, TargetLane, "the downstream service answers 409 (same idempotency key, different request): the worker marks the record FAILED_FINAL with error code IDEMPOTENCY_CONFLICT and reports a BPMN error", false},
		{FaultBPMNError, TargetLane, "the worker rejects every task with a BPMN error (a business outcome the process models)", true},
		{FaultWorkersStopped, TargetLane, "the lane's workers stop fetching (scaled to zero, a wrong topic name, an auth failure): tasks wait", true},
		{FaultDatabaseDown, TargetDatabase, "the exporter's connections to the database are refused and cut (the simulator's proxy in front of it); the workers keep writing", false},
		{FaultEngineDown, TargetEngine, "the exporter's connections to the engine's REST API are refused (the simulator's proxy in front of it); the workers keep working", false},
		{FaultEngine500, TargetEngine, "the engine's REST API answers every request of the exporter with HTTP 500 (the simulator's proxy in front of it)", false},
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].Name < fs[j].Name })
	return fs
}

// LookupFault returns a fault by name, or an error that lists the valid
// names.
func LookupFault(name string) (Fault, error) {
	var names []string
	for _, f := range Faults() {
		if f.Name == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	return Fault{}, fmt.Errorf("unknown fault %q; valid faults: %s", name, strings.Join(names, ", "))
}

// FaultHelp renders the catalogue for --help and `workflow-sim faults`.
func FaultHelp() string {
	var b strings.Builder
	for _, f := range Faults() {
		fmt.Fprintf(&b, "  %-24s (%s) %s\n", f.Name, f.Target, f.Description)
	}
	return b.String()
}
