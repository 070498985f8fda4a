// Package status is the on-call status page: which tasks and records are in
// trouble right now, by their identifiers (docs/status.md).
//
// The collectors gather the identifiers during the collections that already
// run and hand them to a Sink they find in their context (NewContext); the
// poll package keeps them in each source's snapshot next to the metrics, so
// a page load reads snapshots and collects nothing a scrape would not have
// collected (it goes through the same min_interval gate). Build turns the
// snapshots into a Report, the versioned schema of GET /status.json, and
// the handlers render it as JSON or as one server-rendered HTML page
// (page.html, embedded).
//
// Only identifiers ever enter a Report: ids, keys, names, statuses and
// times; never payloads, result payloads, error messages or request hashes.
package status

import (
	"time"

	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
)

// SchemaVersion is the version of the JSON schema below (docs/status.md).
// It changes when a field changes its meaning or goes away; fields may be
// added within a version, so readers ignore fields they do not know.
const SchemaVersion = 1

// Report is the whole page: GET /status.json.
type Report struct {
	SchemaVersion int       `json:"schema_version"`
	GeneratedAt   time.Time `json:"generated_at"`
	// MaxItems bounds the items of each list.
	MaxItems int      `json:"max_items"`
	Sources  []Source `json:"sources"`
	// Lists are the current problems, one list per kind of problem and
	// table or engine, most urgent kind first; lists whose total is 0 are
	// included (checked, nothing found). A source that is down contributes
	// no list.
	Lists []List `json:"lists"`
}

// Source states.
const (
	StateUp           = "up"            // the last collection succeeded in full
	StateDegraded     = "degraded"      // reachable, but some collector failed (its lists are missing)
	StateDown         = "down"          // not reachable: nothing from it is listed
	StateNotCollected = "not_collected" // no collection has finished since the exporter started
)

// Source is one configured Camunda engine, database or delivery.
type Source struct {
	Kind  string `json:"kind"` // "camunda", "database" or "delivery"
	Name  string `json:"name"`
	State string `json:"state"`
	Up    bool   `json:"up"`
	// CollectedAt is when the last collection started, by the exporter's
	// clock; the lists are as of then.
	CollectedAt *time.Time `json:"collected_at,omitempty"`
	// LastSuccessAt is when a collection last succeeded in full.
	LastSuccessAt *time.Time `json:"last_success_at,omitempty"`
	// MinIntervalSeconds is the source's min_interval: the page is at most
	// that old (plus one collection's duration).
	MinIntervalSeconds float64 `json:"min_interval_seconds"`
	// Failures are the collectors that failed in the last collection, with
	// the class of the failure (never the error's text).
	Failures []Failure `json:"failures,omitempty"`
	// HistoryLevel is a Camunda engine's history level as the last
	// collection read it (camunda_engine_info's history_level: none,
	// activity, audit, full or unknown); HistorySupport what it means for
	// each metric that depends on it. Absent for databases and while the
	// engine's camunda collector has not succeeded.
	HistoryLevel   string                    `json:"history_level,omitempty"`
	HistorySupport []capability.SupportGroup `json:"history_support,omitempty"`
}

// Failure is one failed step of a collection.
type Failure struct {
	// Collector is the collector's name ("connect" for the reachability
	// check), as in workflow_exporter_collector_up.
	Collector string `json:"collector"`
	Class     string `json:"class"`
}

// List is one list of the page: what a collector reported
// (collectors.List) with what the page knows of its kind.
type List struct {
	collectors.List
	Title string `json:"title"`
	// Alert is the alert that fires for this kind; RunbookURL its runbook.
	Alert      string `json:"alert"`
	Severity   string `json:"severity"`
	RunbookURL string `json:"runbook_url"`
	// Action is the first thing to do, in one sentence.
	Action string `json:"action"`
}
