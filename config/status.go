package config

import (
	"net/url"
)

// Defaults and bounds of the status page (/status, /status.json).
const (
	// DefaultStatusMaxItems is how many items each list of the status page
	// shows (per kind of problem and source); the page says how many more
	// exist.
	DefaultStatusMaxItems = 50
	// MaxStatusMaxItems bounds max_items: every list is read with a LIMIT
	// of it, so it bounds what one collection adds for the page.
	MaxStatusMaxItems = 1000
)

// Status is the top-level status: section, the on-call status page
// (docs/status.md). `--web.disable-status` turns the page and the reading
// it needs off.
type Status struct {
	// MaxItems bounds each list of the page (one kind of problem of one
	// source or table).
	MaxItems int `yaml:"max_items"`
	// RunbookBaseURL is the prefix of the runbook links, as the alert
	// rules' runbook_base_url (alerts/config.yml); empty: the rules'
	// default.
	RunbookBaseURL string `yaml:"runbook_base_url"`
}

func (s *Status) applyDefaults() {
	if s.MaxItems == 0 {
		s.MaxItems = DefaultStatusMaxItems
	}
}

func (s *Status) validate(add func(string, string, ...any)) {
	between(add, "status.max_items", s.MaxItems, 1, MaxStatusMaxItems)
	if s.RunbookBaseURL != "" {
		u, err := url.Parse(s.RunbookBaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("status.runbook_base_url", "must be an http:// or https:// URL, got %q", s.RunbookBaseURL)
		}
	}
}

// SourceStatus is the status: section of an engine (camunda[]) or a table
// (databases[].tables.<kind>): what the status page may show of it.
type SourceStatus struct {
	// Identifiers: false keeps the identifiers of this engine's tasks or
	// this table's rows off the status page (and out of /status.json): its
	// lists show how many, never which. Unset: shown.
	Identifiers *bool `yaml:"identifiers"`
}

// ShowIdentifiers reports whether the status page may name this source's
// tasks or rows.
func (s SourceStatus) ShowIdentifiers() bool { return s.Identifiers == nil || *s.Identifiers }
