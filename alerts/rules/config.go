// Package rules builds the Prometheus alerting rules of the workflow exporter
// from one small configuration (alerts/config.yml): the job selector, the
// runbook base URL and every threshold and duration. The exporter's
// `workflow-exporter render rules` command writes the result, as a rule file
// or a PrometheusRule; `go generate ./...` (make generate) runs it for the
// committed alerts/workflow-alerts.yml, deploy/kubernetes/prometheusrule.yaml
// and the Helm chart's copy, and tests fail when a committed file drifts
// from what the committed config generates.
//
// It needs only YAML and the metric catalog, so it lives in the exporter's
// module; the Alertmanager routing tests, which need the alertmanager
// module, stay in checks/alertrouting.
package rules

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/workflow-exporter/workflow-exporter/blocks/promlabel"
	"github.com/workflow-exporter/workflow-exporter/blocks/yamlfile"
)

// Config is the one place to tune the shipped alerts. Every field has a
// default (Default); a config file only needs the keys it changes.
type Config struct {
	// Selector is added to every metric selector of every rule, e.g.
	// `job="workflow-exporter"`. It must also match the `up` series of the
	// exporter's scrape job (WorkflowExporterDown). Empty selects all jobs.
	Selector promlabel.Selector `yaml:"selector"`
	// RunbookBaseURL is the prefix of every runbook_url; the alert name and
	// ".md" are appended. Default: this repository's runbooks at the
	// released tag (DefaultRunbookBaseURL).
	RunbookBaseURL string `yaml:"runbook_base_url"`
	// DashboardBaseURL is Grafana's address: every alert with a dashboard
	// carries a dashboard_url annotation under it, the alert's labels set as
	// the dashboard's variables. Empty: no dashboard_url.
	DashboardBaseURL string `yaml:"dashboard_base_url"`
	// StatusPageURL is the exporter's status page as on-call reaches it,
	// e.g. https://workflow-exporter.example.com/status or
	// https://workflow-exporter.{{ $labels.namespace }}.example.com/status
	// (a template over the alert's labels, which carry no instance or pod:
	// the rules merge an exporter's replicas); set, every alert but the
	// watchdog carries it as the status_page_url annotation. Empty: none.
	StatusPageURL string `yaml:"status_page_url"`

	// Thresholds are every window, age, count and `for` of the rules.
	Thresholds `yaml:",inline"`

	// Alerts tunes single alerts by name: on or off, severity, extra
	// labels, and thresholds for the series a selector matches.
	Alerts map[string]AlertConfig `yaml:"alerts"`
}

// Thresholds are the windows, ages, counts and for: durations of the rules,
// by the area they watch.
type Thresholds struct {
	Outbox      OutboxConfig      `yaml:"outbox"`
	Relay       RelayConfig       `yaml:"relay"`
	Inbox       InboxConfig       `yaml:"inbox"`
	Delivery    DeliveryConfig    `yaml:"delivery"`
	Idempotency IdempotencyConfig `yaml:"idempotency"`
	Camunda     CamundaConfig     `yaml:"camunda"`
	Exporter    ExporterConfig    `yaml:"exporter"`
	// Deduplication tunes the alert on the deduplication window.
	Deduplication DeduplicationConfig `yaml:"deduplication"`
}

// AlertConfig tunes one alert.
type AlertConfig struct {
	// Enabled false leaves the alert out of the rule file.
	Enabled *bool `yaml:"enabled"`
	// Severity replaces the alert's severity (critical, warning, info),
	// and with it the receiver it reaches.
	Severity string `yaml:"severity"`
	// Labels are added to the alert (team, service, ...), for routing.
	Labels map[string]string `yaml:"labels"`
	// Selectors give the series a selector matches their own thresholds,
	// labels or severity; the first selector that matches a series wins,
	// series no selector matches keep the alert's.
	Selectors []SelectorConfig `yaml:"selectors"`
}

// SelectorConfig is one per-selector override of an alert.
type SelectorConfig struct {
	// Match is a list of label matchers without braces, on labels the
	// alert carries (its Lane), e.g. topic="billing.charge".
	Match promlabel.Selector `yaml:"match"`
	// Set holds the thresholds this selector changes, in the sections of
	// the config, e.g. {camunda: {backlog_stalled_age: 30m}}; keys left out
	// keep the config's values.
	Set Thresholds `yaml:"set"`
	// Severity and Labels replace the alert's (Labels are added to them).
	Severity string            `yaml:"severity"`
	Labels   map[string]string `yaml:"labels"`

	// set is Set as written (only the keys given).
	set *yaml.Node
}

// UnmarshalYAML keeps the set node, so only the keys it names change.
func (s *SelectorConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain SelectorConfig
	if err := n.Decode((*plain)(s)); err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "set" {
			s.set = n.Content[i+1]
		}
	}
	return nil
}

// OutboxConfig tunes the outbox alerts.
type OutboxConfig struct {
	StalledWindow      model.Duration `yaml:"stalled_window"`
	StalledFor         model.Duration `yaml:"stalled_for"`
	OldestAge          model.Duration `yaml:"oldest_age"`
	OldestAgeFor       model.Duration `yaml:"oldest_age_for"`
	GrowingWindow      model.Duration `yaml:"growing_window"`
	GrowingMinIncrease float64        `yaml:"growing_min_increase"`
	GrowingFor         model.Duration `yaml:"growing_for"`
	// FailedFor: unpublished events in a failed or dead status, for this
	// long. They will not be published without someone's help.
	FailedFor model.Duration `yaml:"failed_for"`
	// RetryingFor: pending events retried at least the exporter's
	// retrying_after_attempts times, for this long.
	RetryingFor model.Duration `yaml:"retrying_for"`
}

// RelayConfig tunes the alerts on an outbox's change-data-capture relay
// (databases[].tables.outbox.relay).
type RelayConfig struct {
	// Lag: the oldest outbox write the relay has not confirmed has waited
	// longer than this, for LagFor (default 0: the lag is a duration that
	// grows only while a write waits, so it cannot spike past the
	// threshold, and a root cause with no for: fits under every for: of
	// the outbox pages it inhibits).
	Lag    model.Duration `yaml:"lag"`
	LagFor model.Duration `yaml:"lag_for"`
	// WALKeepRatio: the slot retains more than this fraction of
	// max_slot_wal_keep_size (where it is set), or its wal_status is
	// unreserved or lost, for WALRiskFor.
	WALKeepRatio float64        `yaml:"wal_keep_ratio"`
	WALRiskFor   model.Duration `yaml:"wal_risk_for"`
}

// InboxConfig tunes the inbox alerts.
type InboxConfig struct {
	OldestAge model.Duration `yaml:"oldest_age"`
	For       model.Duration `yaml:"for"`
	// StalledWindow: messages wait, the oldest longer than this, and none
	// was processed within it (the consumer stopped).
	StalledWindow model.Duration `yaml:"stalled_window"`
	StalledFor    model.Duration `yaml:"stalled_for"`
	// GrowingWindow: messages are processed but the backlog grew by more
	// than GrowingMinIncrease over this window (the consumer falls behind).
	GrowingWindow      model.Duration `yaml:"growing_window"`
	GrowingMinIncrease float64        `yaml:"growing_min_increase"`
	GrowingFor         model.Duration `yaml:"growing_for"`
	// RetryingFor: unfinished messages attempted at least the exporter's
	// retrying_after_attempts times, for this long.
	RetryingFor model.Duration `yaml:"retrying_for"`
	// FailedFor: messages in the library's dead-letter table, for this
	// long.
	FailedFor model.Duration `yaml:"failed_for"`
}

// DeliveryConfig tunes the alerts on deliveries (deliveries[] of the
// exporter config: outbox to inbox across databases).
type DeliveryConfig struct {
	// LostFor: events of a delivery published longer ago than its
	// deadline and not received, for this long.
	LostFor model.Duration `yaml:"lost_for"`
	// DuplicatesMin and DuplicatesRatio: more than Min receipts beyond the
	// first among the events of the delivery's window, and more than Ratio
	// of those events, for DuplicatesFor.
	DuplicatesMin   float64        `yaml:"duplicates_min"`
	DuplicatesRatio float64        `yaml:"duplicates_ratio"`
	DuplicatesFor   model.Duration `yaml:"duplicates_for"`
}

// IdempotencyConfig tunes the idempotency-table alerts.
type IdempotencyConfig struct {
	UnknownOutcomeAge    model.Duration `yaml:"unknown_outcome_age"`
	UnknownOutcomeFor    model.Duration `yaml:"unknown_outcome_for"`
	StaleFor             model.Duration `yaml:"stale_for"`
	ConflictsWindow      model.Duration `yaml:"conflicts_window"`
	ConflictsMax         float64        `yaml:"conflicts_max"`
	CompletedTaskOpenFor model.Duration `yaml:"completed_task_open_for"`
	InDoubtFor           model.Duration `yaml:"in_doubt_for"`
	// ProcessedJobTaskOpenFor is CompletedTaskOpenFor's twin for the
	// processed-job table: a row says the job was done, its task is still
	// open. Teams that keep only that table get the same warning.
	ProcessedJobTaskOpenFor model.Duration `yaml:"processed_job_task_open_for"`
	DuplicatesWindow        model.Duration `yaml:"duplicates_window"`
	DuplicatesBaseline      model.Duration `yaml:"duplicates_baseline"`
	DuplicatesFactor        float64        `yaml:"duplicates_factor"`
	DuplicatesMin           float64        `yaml:"duplicates_min"`
	DuplicatesFor           model.Duration `yaml:"duplicates_for"`
}

// DeduplicationConfig tunes WorkflowDeduplicationWindowExceeded: something
// that can still be redelivered is older than the retention horizon of the
// table that would recognise it.
type DeduplicationConfig struct {
	// DeletionWindow: a horizon counts only where it fell within this
	// window, that is where the table's oldest finished row went away
	// (a retention job deletes them). A horizon that only grows is the age
	// of a table or scope nothing was deleted from yet: every row it ever
	// held is still there. Longer than the interval of the retention job.
	DeletionWindow model.Duration `yaml:"deletion_window"`
	For            model.Duration `yaml:"for"`
}

// CamundaConfig tunes the Camunda alerts.
type CamundaConfig struct {
	RetriesExhaustedFor   model.Duration `yaml:"retries_exhausted_for"`
	LockExpirationsWindow model.Duration `yaml:"lock_expirations_window"`
	LockExpirationsMax    float64        `yaml:"lock_expirations_max"`
	// LockExpirationsFor is never shorter than the for: of the alerts
	// that inhibit it (the crash and in-doubt alerts of the same topic).
	LockExpirationsFor     model.Duration `yaml:"lock_expirations_for"`
	RetryStormWindow       model.Duration `yaml:"retry_storm_window"`
	RetryStormMinFailures  float64        `yaml:"retry_storm_min_failures"`
	RetryStormFailureRatio float64        `yaml:"retry_storm_failure_ratio"`
	RetryStormFor          model.Duration `yaml:"retry_storm_for"`
	BacklogStalledAge      model.Duration `yaml:"backlog_stalled_age"`
	BacklogStalledWindow   model.Duration `yaml:"backlog_stalled_window"`
	BacklogStalledFor      model.Duration `yaml:"backlog_stalled_for"`
	IncidentsFor           model.Duration `yaml:"incidents_for"`
	// DuplicateExecutionWindow and DuplicateExecutionMax: external tasks
	// locked again after a lapsed lock (redeliveries) in the window, more
	// than Max of them: the duplicate execution happened.
	DuplicateExecutionWindow model.Duration `yaml:"duplicate_execution_window"`
	DuplicateExecutionMax    float64        `yaml:"duplicate_execution_max"`
	DuplicateExecutionFor    model.Duration `yaml:"duplicate_execution_for"`
	// LockHeldAge: a worker has held one external task's lock (through
	// extendLock) longer than this.
	LockHeldAge model.Duration `yaml:"lock_held_age"`
	LockHeldFor model.Duration `yaml:"lock_held_for"`
	// WorkerSilentAge: a worker holds locks on a topic and has completed or
	// failed none of its tasks for longer than this.
	WorkerSilentAge model.Duration `yaml:"worker_silent_age"`
	WorkerSilentFor model.Duration `yaml:"worker_silent_for"`
	// JobExecutorStalledAge and JobExecutorStalledWindow: an executable
	// async job has been due longer than the age, and no job was executed
	// (succeeded or failed) within the window: the job executor runs
	// nothing.
	JobExecutorStalledAge    model.Duration `yaml:"job_executor_stalled_age"`
	JobExecutorStalledWindow model.Duration `yaml:"job_executor_stalled_window"`
	JobExecutorStalledFor    model.Duration `yaml:"job_executor_stalled_for"`
	// HistoryCleanupFailingFor: a history cleanup job has failed (an
	// exception, or out of retries) this long.
	HistoryCleanupFailingFor model.Duration `yaml:"history_cleanup_failing_for"`
	// HistoryCleanupBehindMin and HistoryCleanupBehindWindow: the engine's
	// cleanable process instances stayed above Min for the whole window
	// (a day: a daily batch window brings them down at least once).
	HistoryCleanupBehindMin    float64        `yaml:"history_cleanup_behind_min"`
	HistoryCleanupBehindWindow model.Duration `yaml:"history_cleanup_behind_window"`
	HistoryCleanupBehindFor    model.Duration `yaml:"history_cleanup_behind_for"`
}

// ExporterConfig tunes the alerts on the exporter itself.
type ExporterConfig struct {
	SourceDownFor model.Duration `yaml:"source_down_for"`
	// PagesKeepFiringFor keeps the pages on a source's data (the critical
	// alerts but the exporter's own) firing after their series vanish,
	// and bridges their for: over such a gap. A source the exporter cannot
	// read drops its series at once, while WorkflowExporterSourceDown
	// fires only after source_down_for; without this a page would resolve
	// in between (an outage looking like "all clear"), and one failed
	// poll would start a pending page's for: over. Longer than
	// source_down_for, so the outage alert fires (and inhibits the page)
	// first. 0 turns it off.
	PagesKeepFiringFor model.Duration `yaml:"pages_keep_firing_for"`
	// StaleAfter: a source whose last fully successful collection is this
	// old while its snapshot still says up (a collection that hangs)
	// counts as down.
	StaleAfter model.Duration `yaml:"stale_after"`
	// CollectorDownFor: a collector no paging alert reads fails this long.
	CollectorDownFor model.Duration `yaml:"collector_down_for"`
	DownFor          model.Duration `yaml:"down_for"`
	// UnwatchedTasksFor: in-flight external tasks beyond the exporter's
	// lists this long (their lapses and redeliveries go unseen).
	UnwatchedTasksFor model.Duration `yaml:"unwatched_tasks_for"`
	// HistoryReadsCutWindow: a collection read less of the history log
	// than was written within this window.
	HistoryReadsCutWindow model.Duration `yaml:"history_reads_cut_window"`
	// LabelValuesFoldedWindow: label values folded into "other" within
	// this window.
	LabelValuesFoldedWindow model.Duration `yaml:"label_values_folded_window"`
	// MinInterval is the exporter's min_interval (and the scrape interval)
	// the rules are written for: every rate/increase window must hold at
	// least windowPolls polls of it.
	MinInterval model.Duration `yaml:"min_interval"`
}

// windowPolls is how many polls a rate or increase window must hold, so a
// single late or missed poll does not empty it.
const windowPolls = 4

func d(s string) model.Duration {
	v, err := model.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return v
}

// RepositoryURL is where this repository is published.
const RepositoryURL = "https://github.com/workflow-exporter/workflow-exporter"

// RunbookRef is the git ref the default runbook links point at: the tag of
// the released version (v plus VERSION) once CHANGELOG.md dates its
// section, "main" while it is unreleased, so a released rule file links
// the runbooks of its own release. TestRunbookRefFollowsTheRelease holds
// it to VERSION and CHANGELOG.md.
const RunbookRef = "main"

// DefaultRunbookBaseURL is where the runbooks of this release are served.
const DefaultRunbookBaseURL = RepositoryURL + "/blob/" + RunbookRef + "/" + RunbookDir

// DefaultDashboardBaseURL is Grafana's address in this repository's
// compose setup and Grafana's default port; set dashboard_base_url to
// yours.
const DefaultDashboardBaseURL = "http://localhost:3000"

// Default returns the shipped thresholds; docs/alerts.md gives the reasoning.
func Default() Config {
	return Config{
		Selector:         `job="workflow-exporter"`,
		RunbookBaseURL:   DefaultRunbookBaseURL,
		DashboardBaseURL: DefaultDashboardBaseURL,
		Thresholds:       DefaultThresholds(),
	}
}

// DefaultThresholds returns the shipped thresholds.
func DefaultThresholds() Thresholds {
	return Thresholds{
		Outbox: OutboxConfig{
			StalledWindow:      d("5m"),
			StalledFor:         d("2m"),
			OldestAge:          d("15m"),
			OldestAgeFor:       d("2m"),
			FailedFor:          d("5m"),
			GrowingWindow:      d("30m"),
			GrowingMinIncrease: 10,
			GrowingFor:         d("15m"),
			RetryingFor:        d("15m"),
		},
		Relay: RelayConfig{
			Lag:          d("5m"),
			LagFor:       0,
			WALKeepRatio: 0.8,
			WALRiskFor:   d("1m"),
		},
		Inbox: InboxConfig{
			OldestAge:          d("30m"),
			For:                d("5m"),
			StalledWindow:      d("10m"),
			StalledFor:         d("5m"),
			GrowingWindow:      d("30m"),
			GrowingMinIncrease: 20,
			GrowingFor:         d("15m"),
			RetryingFor:        d("15m"),
			FailedFor:          d("5m"),
		},
		Delivery: DeliveryConfig{
			LostFor:         d("2m"),
			DuplicatesMin:   10,
			DuplicatesRatio: 0.01,
			DuplicatesFor:   d("15m"),
		},
		Idempotency: IdempotencyConfig{
			UnknownOutcomeAge:       d("15m"),
			UnknownOutcomeFor:       d("5m"),
			StaleFor:                d("15m"),
			ConflictsWindow:         d("1h"),
			ConflictsMax:            2,
			CompletedTaskOpenFor:    d("15m"),
			InDoubtFor:              d("15m"),
			ProcessedJobTaskOpenFor: d("15m"),
			DuplicatesWindow:        d("1h"),
			DuplicatesBaseline:      d("1d"),
			DuplicatesFactor:        3,
			DuplicatesMin:           10,
			DuplicatesFor:           d("15m"),
		},
		Camunda: CamundaConfig{
			RetriesExhaustedFor:      d("5m"),
			LockExpirationsWindow:    d("30m"),
			LockExpirationsMax:       2,
			LockExpirationsFor:       d("15m"),
			RetryStormWindow:         d("10m"),
			RetryStormMinFailures:    30,
			RetryStormFailureRatio:   0.5,
			RetryStormFor:            d("10m"),
			BacklogStalledAge:        d("10m"),
			BacklogStalledWindow:     d("10m"),
			BacklogStalledFor:        d("10m"),
			IncidentsFor:             d("5m"),
			DuplicateExecutionWindow: d("30m"),
			DuplicateExecutionMax:    0,
			DuplicateExecutionFor:    d("15m"),
			LockHeldAge:              d("1h"),
			LockHeldFor:              d("5m"),
			WorkerSilentAge:          d("20m"),
			WorkerSilentFor:          d("5m"),
			JobExecutorStalledAge:    d("10m"),
			JobExecutorStalledWindow: d("10m"),
			JobExecutorStalledFor:    d("10m"),

			HistoryCleanupFailingFor:   d("1h"),
			HistoryCleanupBehindMin:    1000,
			HistoryCleanupBehindWindow: d("1d"),
			HistoryCleanupBehindFor:    d("1h"),
		},
		Deduplication: DeduplicationConfig{
			DeletionWindow: d("1d"),
			For:            d("1h"),
		},
		Exporter: ExporterConfig{
			SourceDownFor:           d("5m"),
			PagesKeepFiringFor:      d("10m"),
			StaleAfter:              d("10m"),
			CollectorDownFor:        d("15m"),
			DownFor:                 d("5m"),
			UnwatchedTasksFor:       d("15m"),
			HistoryReadsCutWindow:   d("1h"),
			LabelValuesFoldedWindow: d("1h"),
			MinInterval:             d("30s"),
		},
	}
}

// Load reads a config file on top of Default: keys left out keep their
// default, unknown keys are an error (a typo must not silently keep a default).
func Load(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	return Parse(b)
}

// Parse decodes a config document on top of Default and validates it.
// Every error names its key and line (blocks/yamlfile), all at once.
func Parse(b []byte) (Config, error) {
	cfg := Default()
	doc, err := yamlfile.Decode(b, &cfg, yamlfile.Options{})
	if err != nil {
		return Config{}, fmt.Errorf("alerts config: %w", err)
	}
	if err := cfg.validate(doc); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Validate reports every invalid setting, each naming its key.
func (c Config) Validate() error { return c.validate(nil) }

// validate reports every invalid setting, each naming its key and, for a
// config decoded from doc, its line.
func (c Config) validate(doc *yamlfile.Document) error {
	errs := doc.Errors()
	add := errs.Add
	if _, err := c.Selector.Matchers(); err != nil {
		add("selector", "%v", err)
	}
	if c.RunbookBaseURL == "" {
		add("runbook_base_url", "must not be empty")
	}
	if u := c.DashboardBaseURL; u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		add("dashboard_base_url", "must be an http:// or https:// URL (Grafana's address), got %q", u)
	}
	c.Thresholds.validate("", add)
	c.validateAlerts(errs)
	// The order of the for: durations is read from the rules, which only
	// a config valid so far builds.
	if errs.Len() == 0 {
		c.validateInhibitionOrder(add)
	}
	if err := errs.Err(); err != nil {
		return fmt.Errorf("alerts config: %w", err)
	}
	return nil
}

// validate checks the thresholds; its keys are prefix (a selector's
// set:, or "" for the config's own) followed by the key from the
// thresholds' root (outbox.stalled_window).
func (c Thresholds) validate(prefix string, add func(key, format string, args ...any)) {
	if c.Exporter.MinInterval <= 0 {
		add(prefix+"exporter.min_interval", "must be positive (the exporter's min_interval, default 30s)")
	} else {
		minWindow := windowPolls * time.Duration(c.Exporter.MinInterval)
		for _, w := range []struct {
			key string
			v   model.Duration
		}{
			{"outbox.stalled_window", c.Outbox.StalledWindow},
			{"outbox.growing_window", c.Outbox.GrowingWindow},
			{"inbox.stalled_window", c.Inbox.StalledWindow},
			{"inbox.growing_window", c.Inbox.GrowingWindow},
			{"idempotency.conflicts_window", c.Idempotency.ConflictsWindow},
			{"idempotency.duplicates_window", c.Idempotency.DuplicatesWindow},
			{"camunda.duplicate_execution_window", c.Camunda.DuplicateExecutionWindow},
			{"camunda.lock_expirations_window", c.Camunda.LockExpirationsWindow},
			{"camunda.retry_storm_window", c.Camunda.RetryStormWindow},
			{"camunda.backlog_stalled_window", c.Camunda.BacklogStalledWindow},
			{"camunda.job_executor_stalled_window", c.Camunda.JobExecutorStalledWindow},
			{"camunda.history_cleanup_behind_window", c.Camunda.HistoryCleanupBehindWindow},
			{"exporter.history_reads_cut_window", c.Exporter.HistoryReadsCutWindow},
			{"exporter.label_values_folded_window", c.Exporter.LabelValuesFoldedWindow},
			{"exporter.stale_after", c.Exporter.StaleAfter},
			{"deduplication.deletion_window", c.Deduplication.DeletionWindow},
		} {
			if time.Duration(w.v) < minWindow {
				add(prefix+w.key, "%s is shorter than %s, %d polls of exporter.min_interval %s: shorter windows hold too few samples and are noise", w.v, model.Duration(minWindow), windowPolls, c.Exporter.MinInterval)
			}
		}
	}
	for _, p := range []struct {
		key string
		v   model.Duration
	}{
		{"outbox.oldest_age", c.Outbox.OldestAge},
		{"relay.lag", c.Relay.Lag},
		{"inbox.oldest_age", c.Inbox.OldestAge},
		{"idempotency.unknown_outcome_age", c.Idempotency.UnknownOutcomeAge},
		{"camunda.backlog_stalled_age", c.Camunda.BacklogStalledAge},
		{"camunda.job_executor_stalled_age", c.Camunda.JobExecutorStalledAge},
		{"camunda.lock_held_age", c.Camunda.LockHeldAge},
		{"camunda.worker_silent_age", c.Camunda.WorkerSilentAge},
	} {
		if p.v <= 0 {
			add(prefix+p.key, "must be positive")
		}
	}
	if k := c.Exporter.PagesKeepFiringFor; k < 0 || (k > 0 && k <= c.Exporter.SourceDownFor) {
		add(prefix+"exporter.pages_keep_firing_for", "%s must be 0 (off) or longer than exporter.source_down_for %s, so a source outage cannot resolve a page before WorkflowExporterSourceDown fires", k, c.Exporter.SourceDownFor)
	}
	if c.Idempotency.DuplicatesBaseline <= c.Idempotency.DuplicatesWindow {
		add(prefix+"idempotency.duplicates_baseline", "%s must be longer than duplicates_window %s", c.Idempotency.DuplicatesBaseline, c.Idempotency.DuplicatesWindow)
	}
	if c.Idempotency.DuplicatesFactor <= 1 {
		add(prefix+"idempotency.duplicates_factor", "must be above 1 (a rise against the baseline)")
	}
	if r := c.Relay.WALKeepRatio; r <= 0 || r > 1 {
		add(prefix+"relay.wal_keep_ratio", "must be above 0 and at most 1 (a fraction of max_slot_wal_keep_size), got %v", r)
	}
	if r := c.Delivery.DuplicatesRatio; r <= 0 || r > 1 {
		add(prefix+"delivery.duplicates_ratio", "must be above 0 and at most 1 (a share of the window's events), got %v", r)
	}
	if r := c.Camunda.RetryStormFailureRatio; r <= 0 || r >= 1 {
		add(prefix+"camunda.retry_storm_failure_ratio", "must be between 0 and 1, got %v", r)
	}
	for _, n := range []struct {
		key string
		v   float64
	}{
		{"outbox.growing_min_increase", c.Outbox.GrowingMinIncrease},
		{"inbox.growing_min_increase", c.Inbox.GrowingMinIncrease},
		{"idempotency.conflicts_max", c.Idempotency.ConflictsMax},
		{"idempotency.duplicates_min", c.Idempotency.DuplicatesMin},
		{"delivery.duplicates_min", c.Delivery.DuplicatesMin},
		{"camunda.duplicate_execution_max", c.Camunda.DuplicateExecutionMax},
		{"camunda.lock_expirations_max", c.Camunda.LockExpirationsMax},
		{"camunda.retry_storm_min_failures", c.Camunda.RetryStormMinFailures},
	} {
		if n.v < 0 {
			add(prefix+n.key, "must not be negative")
		}
	}
}
