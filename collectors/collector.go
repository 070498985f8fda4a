// Package collectors is what a collector is: the small interface every
// collector implements (Collector) and the lists of identifiers a collector
// hands to the status page (Sink, List, Item). The collectors themselves
// live in its subpackages, one per kind of source:
//
//   - collectors/engine: a Camunda 7 engine (or fork), read through its REST
//     API or its own database, one collector per aspect of the engine;
//   - collectors/tables: the worker tables of a PostgreSQL database
//     (idempotency, processed jobs, inbox, outbox) and their Camunda joins.
//
// Their building blocks sit beside them: labellimit bounds label values,
// correlate carries the engine's in-flight tasks to the joins, pgschema
// declares what a collector needs of a table, pgsource reads PostgreSQL in
// read-only, time-bounded transactions. Which collectors a configuration
// asks for is decided in one place, internal/sources; internal/poll runs
// them on behalf of scrapes.
package collectors

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector reads one aspect of a source (one table, one aspect of an
// engine) and returns const metrics. A source calls its collectors one at a
// time, never concurrently, so a collector may keep state between calls
// (watermarks, counters) without locking; it commits that state only when
// the whole collection succeeded.
type Collector interface {
	// Name is the value of the collector label on the exporter's
	// self-metrics (workflow_exporter_collector_up{collector}).
	Name() string
	// Collect reads the source once. sink receives the identifiers behind
	// the collector's gauges for the status page (the tasks in doubt, the
	// records stuck); it is nil when the page is off, and the collector then
	// skips every reading only the page needs. On error the collector's
	// metrics and lists of this collection are discarded and its state must
	// stay as it was.
	Collect(ctx context.Context, sink *Sink) ([]prometheus.Metric, error)
}

// Stateful is a Collector whose committed state can outlive the process
// (--storage.path; docs/production.md, "Restarts"). The source saves it
// after collections and when the exporter stops, and restores it into the
// collector of the next process before its first collection. Never called
// while Collect runs.
type Stateful interface {
	// StateKey says what the state is about: the collector's state
	// version and what it reads (a table, its key columns). A state saved
	// under another key is not restored.
	StateKey() string
	// SaveState encodes the state the last successful collection
	// committed.
	SaveState() ([]byte, error)
	// LoadState restores a state SaveState encoded. resume says the state
	// was saved as the previous process stopped, after its last
	// collection: the collector may go on counting from where it stopped.
	// Without it the state may be older than what the previous process
	// counted, and the collector restores only what it remembers (lock
	// first sightings, redeliveries, label admissions), and counts from a
	// baseline as a fresh start does. On error the collector stays fresh.
	LoadState(data []byte, resume bool) error
}

// Remembering is a Collector that reports the sizes of what it keeps
// between collections, by kind (vocab.RememberedKinds), for
// workflow_exporter_remembered_entries. Never called while Collect runs.
type Remembering interface {
	Remembered(note func(kind string, n int))
}
